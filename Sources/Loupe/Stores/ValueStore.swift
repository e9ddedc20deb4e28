/// Where a lens graph keeps its value between runs: a file, the keyring, `UserDefaults`, etcd, or memory.
///
/// The root ``MutableLens`` is the store's only client. It calls the store under its update lock, one call
/// at a time, in this order for every update:
///
/// 1. ``withExclusiveAccess(_:)`` around the whole read–modify–write, so a store shared between
///    processes can hold its lock (a `flock`, for example) for exactly that long;
/// 2. inside it, ``loadIfChanged()`` (unless ``hasOtherWriters`` is false), so the update applies to what
///    another process may have stored since;
/// 3. ``save(_:)`` with the new value. The new value becomes visible in memory only after `save` returns;
///    if it throws, nothing changes. A store that detects a lost race (a compare-and-swap that failed)
///    throws ``StoreError`` with code ``StoreError/Code/conflict`` and the lens re-runs the update on the
///    fresh value, a bounded number of times.
///
/// A store that can see outside changes (another process editing a file, an etcd watch) reports them
/// through ``watch(_:)``; the lens then runs ``loadIfChanged()`` and commits what it finds, exactly like an
/// update made in this process.
///
/// Stores must never put a stored value into an error, a log message or their `description`.
public protocol ValueStore<Value>: AnyObject, Sendable, CustomStringConvertible {
    /// The type of value the store holds.
    associatedtype Value: Sendable

    /// Reads the stored value, or returns `nil` when nothing is stored.
    ///
    /// - Throws: ``StoreError`` when something is stored but cannot be read or decoded. A store must never
    ///   treat unreadable data as "nothing stored", or the lens would overwrite it with a default.
    func load() throws -> Value?

    /// Stores `value`, replacing what was stored, atomically: afterwards the store holds either the old
    /// value or the new one, never a mixture.
    func save(_ value: Value) throws

    /// Deletes the stored value; the next ``load()`` returns `nil`. Deleting nothing is not an error.
    func remove() throws

    /// Runs `body` while holding whatever exclusive access the store offers against other processes.
    ///
    /// The default runs `body` directly, which is right for stores no other process writes.
    func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R

    /// Reports whether the stored value changed since this store instance last loaded or saved it, and
    /// if so, what it holds now (`nil` when it was deleted).
    ///
    /// The default reports ``StoreChange/unchanged``, which is right for stores no other process writes.
    func loadIfChanged() throws -> StoreChange<Value>

    /// Whether anything but this store instance may change the stored value: another process, another
    /// host, another store instance over the same place. When it is `false`, the lens never calls
    /// ``loadIfChanged()``.
    ///
    /// The default is `true`, which is always correct; a store that nothing else can write (``MemoryStore``)
    /// returns `false` and so spares every update a call.
    var hasOtherWriters: Bool { get }

    /// Starts reporting outside changes by calling `onChange` (on any thread) whenever the stored value may
    /// have changed; returns nil when the store cannot watch.
    ///
    /// The lens answers each call with ``loadIfChanged()``, so a spurious call costs a check, not a commit.
    /// The default cannot watch.
    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)?

    /// Makes every saved value durable now, for stores that defer writes. The default does nothing.
    func flush() throws

    /// Whether the store keeps secrets (the keyring), so that tools reading through it mask its values and
    /// configuration readers mark them secret. The default is `false`.
    var holdsSecrets: Bool { get }
}

/// What ``ValueStore/loadIfChanged()`` found.
public enum StoreChange<Value: Sendable>: Sendable {
    /// The stored value is the one this store instance last loaded or saved.
    case unchanged
    /// Another writer changed the stored value; it now holds this (`nil`: it was deleted).
    case changed(Value?)
}

/// A running watch started by ``ValueStore/watch(_:)``; the lens cancels it when it is released.
public protocol StoreWatch: Sendable {
    /// Stops the watch. After it returns, `onChange` is not called again.
    func cancel()
}

extension ValueStore {
    public func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R {
        try body()
    }

    public func loadIfChanged() throws -> StoreChange<Value> {
        .unchanged
    }

    public func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        nil
    }

    public var hasOtherWriters: Bool { true }

    public func flush() throws {}

    public var holdsSecrets: Bool { false }
}
