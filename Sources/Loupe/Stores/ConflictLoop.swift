/// The one way a write that can lose a race runs again: an update, a removal, a rollback, and a
/// ``CoalescingStore``'s flush of what it answered at once.
///
/// A store refuses a save made from a version it no longer holds (``SettingsError/Code/conflict``): another
/// writer got there first. The write then runs again on what the store holds. Every round after the first
/// runs holding the store's exclusive access (``DocumentStore/withExclusiveAccess(_:)``), around its load,
/// its change and its save, so that a writer that lost one race cannot lose every next one to a peer
/// writing in a tight loop.
enum ConflictLoop {
    /// The most rounds a write runs before it gives up. A conflict runs the write again at once, with no
    /// back-off: waiting would only make what it loaded stale again. A store with a lock runs the round under
    /// it, so it cannot lose again; a compare-and-swap store (etcd) loses a round only while another writer
    /// keeps winning. The bound ends a livelock.
    static let maximumRounds = 256

    /// Runs `round` until it returns: round 0 as it is, each next one holding `store`'s exclusive access
    /// (with no store, there is no race to lose). A round runs again when the store refused it as a
    /// conflict, or when it threw ``RunAgain`` to ask for another (an update that found the store newer than
    /// it knew).
    ///
    /// - Parameter conflicted: Told of each conflict, with the round it ended.
    /// - Throws: What a round throws, but a conflict; ``Exhausted`` once `maximumRounds` rounds ran.
    static func run<R>(
        on store: (any DocumentStore)?, conflicted: (SettingsError, Int) -> Void = { _, _ in },
        _ round: (_ number: Int) throws -> R
    ) throws -> R {
        var lastConflict: SettingsError?
        for number in 0..<maximumRounds {
            do {
                if number > 0, let store { return try store.withExclusiveAccess { try round(number) } }
                return try round(number)
            } catch let error as SettingsError where error.code == .conflict {
                conflicted(error, number)
                lastConflict = error
            } catch is RunAgain {
                continue
            }
        }
        throw Exhausted(rounds: maximumRounds, lastConflict: lastConflict)
    }

    /// What a round throws to ask for another: it found the store newer than it knew, and caught up.
    struct RunAgain: Error {}

    /// A write that other writers kept beating, round after round.
    struct Exhausted: Error {
        let rounds: Int
        /// The conflict the last refused round met, if a round was refused.
        let lastConflict: SettingsError?
    }
}
