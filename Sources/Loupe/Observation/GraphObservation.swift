import Observation
import Synchronization

/// A graph as Swift Observation sees it: reading any lens's `value` registers an access, and each commit
/// of the graph is a mutation, so `withObservationTracking { _ = lens.value }` fires on the next commit.
///
/// Observation tracks the graph as a whole: a commit that changes another part of the graph fires too.
/// That is what Observation allows (an `onChange` says "may have changed"); it keeps a read at a few
/// nanoseconds more, where tracking each lens would cost every read a lock. For exactly the changes of
/// one part, use ``ReadableLens/observe(_:)`` or ``ReadableLens/values``.
///
/// A value: the graph holds one and each lens's node a copy (all copies share one registrar). A lens
/// reads through its own copy, which Swift borrows in place; reaching the graph's instead cost every read
/// a retain and a release of an object that all reading threads share, and two threads reading at once
/// did less than one. The subject named is an empty struct: Observation asks only for its type.
struct GraphObservation: Sendable {
    /// What accesses and mutations name: the graph's commits.
    struct Commits: Observable {
        var commits: Void { () }
    }

    private let registrar = ObservationRegistrar()
    /// The key path, made once: a literal is fetched from the runtime on every read.
    private let commitsKeyPath: KeyPath<Commits, Void> & Sendable = \.commits

    @inline(__always)
    func access() {
        registrar.access(Commits(), keyPath: commitsKeyPath)
    }

    func graphChanged() {
        registrar.withMutation(of: Commits(), keyPath: commitsKeyPath) {}
    }
}
