/// A store that keeps the value in memory only: for tests, previews, and state that must not outlive the
/// process.
///
/// ```swift
/// let root = try MutableLens(default: Settings(), store: MemoryStore<Settings>())
/// ```
public final class MemoryStore<Value: Sendable>: ValueStore, @unchecked Sendable {
    // Guarded by `lock`. The value lives behind a pointer, initialized while `hasValue`, rather than in a
    // `Value?`, so that saving (once per update) builds no optional of a generic type.
    private let lock = PlainMutex()
    private let storage: UnsafeMutablePointer<Value> = .allocate(capacity: 1)
    @exclusivity(unchecked) private var hasValue = false

    /// Creates a store that holds `value`, or nothing (the lens then starts from its default).
    public init(_ value: Value? = nil) {
        if let value {
            storage.initialize(to: value)
            hasValue = true
        }
    }

    deinit {
        if hasValue { storage.deinitialize(count: 1) }
        storage.deallocate()
    }

    public func load() throws -> Value? {
        lock.withLock { hasValue ? storage.pointee : nil }
    }

    public func save(_ value: Value) throws {
        lock.withLock {
            if hasValue {
                storage.pointee = value
            } else {
                storage.initialize(to: value)
                hasValue = true
            }
        }
    }

    public func remove() throws {
        lock.withLock {
            if hasValue {
                storage.deinitialize(count: 1)
                hasValue = false
            }
        }
    }

    /// `false`: only this instance holds the value, so the lens never asks it for outside changes.
    public var hasOtherWriters: Bool { false }

    public var description: String {
        "memory store of \(Value.self)"
    }
}

extension MemoryStore: CustomDebugStringConvertible {
    /// The store's type, place and policy, for a debugger; never its value.
    public var debugDescription: String { "MemoryStore<\(Value.self)>" }
}
