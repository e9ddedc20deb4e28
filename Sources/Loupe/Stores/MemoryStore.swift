import Synchronization

/// A store that keeps the value in memory only: for tests, previews, and state that must not outlive the
/// process.
///
/// ```swift
/// let root = try MutableLens(default: Settings(), store: MemoryStore<Settings>())
/// ```
public final class MemoryStore<Value: Sendable>: ValueStore {
    private let stored: Locked<Value?>

    /// Creates a store that holds `value`, or nothing (the lens then starts from its default).
    public init(_ value: Value? = nil) {
        stored = Locked(value)
    }

    public func load() throws -> Value? {
        stored.withLock { $0 }
    }

    public func save(_ value: Value) throws {
        stored.withLock { $0 = value }
    }

    public func remove() throws {
        stored.withLock { $0 = nil }
    }

    public var description: String {
        "memory store of \(Value.self)"
    }
}

extension MemoryStore: CustomDebugStringConvertible {
    /// The store's type, place and policy, for a debugger; never its value.
    public var debugDescription: String { "MemoryStore<\(Value.self)>" }
}
