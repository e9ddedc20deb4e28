import Loupe

/// A clock that stands still until a test moves it: for testing what happens when an interval ends
/// (`CoalescingStore`'s writes) without waiting for real time, and for asserting that something has *not*
/// happened yet without sleeping.
///
/// ```swift
/// let clock = ManualClock()
/// let store = CoalescingStore(MemoryStore(), interval: .seconds(1), clock: clock)
/// // … save …
/// clock.advance(by: .milliseconds(999))   // nothing written: the interval has not ended
/// clock.advance(by: .milliseconds(1))     // the write is on its way
/// ```
///
/// A sleep whose deadline the clock has reached returns; one that is cancelled throws
/// `CancellationError`.
public final class ManualClock: Clock, Sendable {
    /// A moment on a manual clock: how far it has been moved since it was made.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// Time since the clock was made.
        public var offset: Duration

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "\(offset)" }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    /// A clock at offset zero.
    public init() {}

    public var now: Instant { state.withLock { $0.now } }

    public var minimumResolution: Duration { .zero }

    /// How many sleeps are waiting for the clock to move.
    public var waitingSleeps: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let resumeNow { continuation.resume(with: resumeNow) }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on by `duration`, and wakes every sleep whose deadline it reaches, earliest first.
    /// A clock only moves forward: a negative duration leaves it where it is.
    public func advance(by duration: Duration) {
        guard duration > .zero else { return }
        let woken = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }
}
