import Synchronization

/// Keeps an observation alive; ``cancel()`` it, or release it, to stop the observation.
///
/// ```swift
/// let token = port.observe { print("port is now", $0) }
/// // ...
/// token.cancel()   // or let the token go
/// ```
public final class ObservationToken: Sendable, Hashable, CustomStringConvertible {
    private let onCancel: Locked<(@Sendable () -> Void)?>

    init(_ onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Locked(onCancel)
    }

    deinit { cancel() }

    /// Stops the observation. After `cancel()` returns, the handler is not called for later commits
    /// (a delivery already under way on another thread may still finish). Cancelling twice is harmless.
    public func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    /// Whether ``cancel()`` has been called.
    public var isCancelled: Bool { onCancel.withLock { $0 == nil } }

    /// Keeps this token in `set` (for example a component's set of observations), as with Combine.
    public func store(in set: inout Set<ObservationToken>) {
        set.insert(self)
    }

    public static func == (lhs: ObservationToken, rhs: ObservationToken) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { isCancelled ? "ObservationToken(cancelled)" : "ObservationToken(active)" }
}
