import Foundation
import Logging
import Synchronization

/// The state behind one root lens and every lens derived from it.
///
/// One ``GraphLock`` guards it:
/// - its *update lock* serialises updates. It is held while an update closure runs and while the store
///   saves, so updates are one at a time and each sees the result of the last;
/// - lenses read their part of the committed root under its *read lock*, many at once; readers are held
///   back only while a committed root is swapped in, never while a closure runs or the store does I/O.
///
/// Every commit gets the next version number and is handed to the ``Notifier`` in version order.
final class LensCore<Root: Codable & Sendable>: @unchecked Sendable {
    let store: any ValueStore<Root>
    let defaultValue: Root
    let notifier = Notifier<Root>()
    let logger: Logger

    private let lock = GraphLock()
    /// The committed root, at a stable address so that lenses onto stored properties read their part in
    /// place (``read(at:as:)``). Read under the read lock, or by the update lock's holder; the pointer is
    /// changed only by the update lock's holder, while publishing. (The locks make access exclusive, so the
    /// run-time exclusivity check is left out.)
    @exclusivity(unchecked) private var committed: UnsafeMutablePointer<Root>
    /// Where an update builds the next root: uninitialized between updates. Publishing swaps it with
    /// ``committed``, so a commit moves no root, and the root it replaces is destroyed in place.
    @exclusivity(unchecked) private var spare: UnsafeMutablePointer<Root>
    /// The committed root's version, guarded like the root. (The locks already make access exclusive, so
    /// the run-time exclusivity check is left out.)
    @exclusivity(unchecked) private var version: UInt64 = 0
    /// `==` on roots when `Root` is `Equatable`; otherwise roots are compared by their encoded form.
    private let rootEquality: RuntimeEquality<Root>?
    /// The store's ``ValueStore/hasOtherWriters``, read once.
    private let storeHasOtherWriters: Bool
    private let watch = Locked<(any StoreWatch)?>(nil)
    private let errorHandlers = Locked<[UInt64: @Sendable (any Error) -> Void]>([:])
    private let nextErrorHandlerID = Atomic<UInt64>(0)

    /// How many times an update is run before a store's conflict reports end it.
    ///
    /// A conflict hands the lens the fresh value, so the update is re-run at once, with no back-off: waiting
    /// would only make that value stale again. Under steady contention (two processes incrementing one
    /// etcd key in tight loops) the writer behind a slower link loses dozens of rounds in a row, measured
    /// up to 42; the bound is far above that and still ends a livelock.
    static var maximumConflictRetries: Int { 256 }

    init(default defaultValue: Root, store: some ValueStore<Root>, watch shouldWatch: Bool, logger: Logger) throws {
        self.store = store
        self.defaultValue = defaultValue
        self.logger = logger
        self.rootEquality = RuntimeEquality(Root.self)
        self.storeHasOtherWriters = store.hasOtherWriters
        let initial = try store.load() ?? defaultValue
        committed = .allocate(capacity: 1)
        committed.initialize(to: initial)
        spare = .allocate(capacity: 1)
        if shouldWatch {
            let handle = try store.watch { [weak self] in self?.refreshFromStore() }
            watch.withLock { $0 = handle }
        }
    }

    deinit {
        defer {
            committed.deinitialize(count: 1)
            committed.deallocate()
            spare.deallocate()
        }
        watch.withLock { $0?.cancel() }
        do {
            try store.flush()
        } catch {
            logger.error("could not flush pending writes", metadata: ["store": "\(store)", "error": "\(error)"])
        }
    }

    // MARK: Reading

    /// Runs `body` on the current root under the read lock.
    @inline(__always)
    func read<T>(_ body: (Root) throws -> T) rethrows -> T {
        try lock.withReadLock { try body(committed.pointee) }
    }

    /// The part of the current root at byte `offset`, read in place under the read lock: for lenses whose
    /// path is stored properties only, which then need neither the key-path machinery nor a copy of the root.
    @inline(__always)
    func read<T>(at offset: Int, as type: T.Type) -> T {
        lock.withReadLock {
            UnsafeRawPointer(committed).advanced(by: offset).assumingMemoryBound(to: T.self).pointee
        }
    }

    /// The current root and its version, read together.
    func versionedSnapshot() -> (root: Root, version: UInt64) {
        lock.withReadLock { (committed.pointee, version) }
    }

    // MARK: Updating

    /// Applies `body` to a copy of the root, saves the result, then publishes it and notifies observers.
    ///
    /// `body` gets the address of the copy, which stays put while it runs. Either all of that happens or
    /// none of it: if `body` or the store throws, memory, store and observers are as they were and the
    /// error propagates.
    func update<R>(path: String, _ body: (UnsafeMutablePointer<Root>) throws -> R) throws -> R {
        defer { notifier.drain() }
        return try serialized(path: path) { () throws -> R in
            var attempts = 0
            while true {
                do {
                    return try store.withExclusiveAccess { () throws -> R in
                        try commitOutsideChange()
                        // The root changes only under the update lock, which this thread holds, so it is
                        // read here without the read lock.
                        spare.initialize(to: committed.pointee)
                        let result: R
                        do {
                            result = try body(spare)
                        } catch {
                            destroy(spare)
                            throw error
                        }
                        try commitSpare(saving: true)
                        return result
                    }
                } catch let error as StoreError where error.code == .conflict {
                    attempts += 1
                    guard attempts < Self.maximumConflictRetries else {
                        throw LensError.conflict(path: path, attempts: attempts)
                    }
                    logRetry(attempts: attempts)
                }
            }
        }
    }

    /// Saves the root at `value`. Reached through `inout`, the root is handed to the store in place; an
    /// argument read from `pointee` would be copied first.
    @inline(__always)
    private func save(_ value: inout Root) throws {
        try store.save(value)
    }

    /// Out of line: an update that meets no conflict then never touches the logger.
    @inline(never)
    private func logRetry(attempts: Int) {
        logger.debug("conflicting write, retrying", metadata: ["store": "\(store)", "attempt": "\(attempts)"])
    }

    /// Re-reads the store and commits what it holds (the default when it holds nothing).
    func reload() throws {
        defer { notifier.drain() }
        try serialized(path: rootPathName) {
            try store.withExclusiveAccess {
                let stored = try store.load() ?? defaultValue
                try commitIfChanged(stored)
            }
        }
    }

    /// Deletes the stored value and returns to the default.
    func removeStored() throws {
        defer { notifier.drain() }
        try serialized(path: rootPathName) {
            try store.withExclusiveAccess {
                try store.remove()
                try commitIfChanged(defaultValue)
            }
        }
    }

    /// Answers a store's report of an outside change: commits what the store now holds, if it changed.
    func refreshFromStore() {
        do {
            try serialized(path: rootPathName) {
                try store.withExclusiveAccess { try commitOutsideChange() }
            }
        } catch {
            report(error)
        }
        notifier.drain()
    }

    /// Must be called with the update lock held.
    private func commitOutsideChange() throws {
        // Checked before the call to the part that needs the store's answer: unspecialized generic code
        // looks up the metadata of every generic type it uses (`StoreChange<Root>`) when it starts.
        if storeHasOtherWriters { try loadOutsideChange() }
    }

    @inline(never)
    private func loadOutsideChange() throws {
        guard case .changed(let stored) = try store.loadIfChanged() else { return }
        if try commitIfChanged(stored ?? defaultValue) {
            logger.info("picked up an outside change", metadata: ["store": "\(store)"])
        }
    }

    /// Commits `value` if it differs from the current root, and says whether it did. Must be called with
    /// the update lock held.
    @discardableResult
    private func commitIfChanged(_ value: Root) throws -> Bool {
        spare.initialize(to: value)
        return try commitSpare(saving: false)
    }

    /// Commits the root built in ``spare`` if it differs from the current root, saving it first when
    /// `saving`, and says whether it did. A root that is not committed (unchanged, or the save threw) is
    /// destroyed, and the error propagates. Must be called with the update lock held.
    @inline(__always)
    @discardableResult
    private func commitSpare(saving: Bool) throws -> Bool {
        if isCurrentRoot(spare) {
            destroy(spare)
            return false
        }
        if saving {
            do {
                try save(&spare.pointee)
            } catch {
                destroy(spare)
                throw error
            }
        }
        publishSpare()
        return true
    }

    /// Whether the root at `value` equals the current root. Must be called with the update lock held.
    @inline(__always)
    private func isCurrentRoot(_ value: UnsafeMutablePointer<Root>) -> Bool {
        guard let rootEquality else { return encodedEqual(committed.pointee, value.pointee) }
        return rootEquality(value, committed)
    }

    /// Makes the root built in ``spare`` the committed root, queues the commit's notification, and
    /// destroys the root it replaces. Must be called with the update lock held, so versions are handed to
    /// the notifier in order.
    private func publishSpare() {
        let previous = committed
        lock.publishing {
            committed = spare
            version &+= 1
        }
        // No reader is left inside `previous`: the readers that were have finished, and later ones read
        // the new root.
        spare = previous
        if notifier.isObserved { enqueue(old: previous) }
        destroy(previous)
    }

    /// Out of line, so an update that nobody observes never looks up `Commit<Root>`'s metadata.
    @inline(never)
    private func enqueue(old: UnsafeMutablePointer<Root>) {
        // The root and `version` change only under the update lock, which this thread holds.
        notifier.enqueue(Commit(old: old.pointee, new: committed.pointee, version: version))
    }

    private func serialized<R>(path: String, _ body: () throws -> R) throws -> R {
        try lock.withUpdateLock(orThrow: { LensError.reentrantUpdate(path: path) }, body)
    }

    func flush() throws {
        try store.flush()
    }

    // MARK: Errors from outside changes

    func observeErrors(_ handler: @escaping @Sendable (any Error) -> Void) -> ObservationToken {
        let id = nextErrorHandlerID.add(1, ordering: .relaxed).newValue
        errorHandlers.withLock { $0[id] = handler }
        return ObservationToken { [weak self] in
            _ = self?.errorHandlers.withLock { $0.removeValue(forKey: id) }
        }
    }

    private func report(_ error: any Error) {
        logger.error("ignored an outside change that could not be applied", metadata: ["store": "\(store)", "error": "\(error)"])
        let handlers = errorHandlers.withLock { Array($0.values) }
        for handler in handlers { handler(error) }
    }
}

/// Destroys the one value at `pointer`, which is left uninitialized. (`deinitialize(count:)` goes through
/// the run-time's array loop, twice the cost for a single value of a type only known at run time.)
@inline(__always)
private func destroy<Value>(_ pointer: UnsafeMutablePointer<Value>) {
    _ = pointer.move()
}

/// Equality by encoded form, for roots that are not `Equatable`: two values are equal when they encode to
/// the same bytes with sorted keys.
private func encodedEqual<Root: Encodable>(_ lhs: Root, _ rhs: Root) -> Bool {
    let codec = JSONCodec(prettyPrinted: false)
    guard let left = try? codec.encode(lhs), let right = try? codec.encode(rhs) else { return false }
    return left == right
}
