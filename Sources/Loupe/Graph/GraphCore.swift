import Foundation
import Logging
import Synchronization

/// The committed root of a graph and its version.
///
/// Guarded by the graph's ``GraphLock``: read under its read lock (or by the update lock's holder),
/// written only while publishing.
///
/// **The one unsafe island of the core.** The root lives at a stable address of its own, so that a lens
/// whose path is stored properties only reads its part where it lies, at the property's byte offset, as
/// `MemoryLayout.offset(of:)` documents; reading through the key path instead costs a copy of the root
/// and the key path machinery's generic metadata on every read (44× the read target, measured). The
/// pointer is allocated and initialized once, assigned only while publishing (no reader inside), and
/// destroyed with the box. Tests run under ASan and TSan.
final class CommittedRoot<Root: Sendable>: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<Root>
    var version: UInt64 = 0

    init(_ root: Root) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: root)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    var root: Root {
        get { storage.pointee }
        set { storage.pointee = newValue }
    }

    /// Runs `body` on the root where it lies, without copying it.
    @inline(__always)
    func withRoot<R>(_ body: (Root) throws -> R) rethrows -> R {
        try body(storage.pointee)
    }

    /// The stored property at byte `offset` in the root (from `MemoryLayout<Root>.offset(of:)`), copied
    /// out where it lies.
    @inline(__always)
    func part<Part>(at offset: Int, as _: Part.Type) -> Part {
        UnsafeRawPointer(storage).advanced(by: offset).assumingMemoryBound(to: Part.self).pointee
    }
}

/// The state behind one root lens and every lens derived from it: the committed root, its store and the
/// document pipeline between them, the observers.
///
/// Updates are serial (the update lock); each runs its closure on a copy of the root, saves the result's
/// document, and only then publishes it, holding readers back just for the assignment. Every commit gets
/// the next version number and is handed to the ``Notifier`` in version order; observers are called after
/// every lock is released.
final class GraphCore<Root: Codable & Sendable>: Sendable {
    let store: (any DocumentStore)?
    let defaultValue: Root
    let notifier = Notifier<Root>()
    let logger: Logger
    let pipeline: DocumentPipeline<Root>
    /// The store's refinements, found once.
    private let writable: (any WritableDocumentStore)?
    private let locking: (any LockingStore)?
    private let changeDetecting: (any ChangeDetectingStore)?
    private let deferred: (any DeferredWriteStore)?
    /// The store, when it is layered: its changes are read layer by layer.
    private let layered: LayeredStore?
    /// The first rule a value breaks, when `Root` is ``Validated``.
    private let validator: (@Sendable (Root, Bool) -> RuleViolation?)?
    let holdsSecrets: Bool

    private let lock = GraphLock()
    let committed: CommittedRoot<Root>
    private let rootsEqual: (@Sendable (Root, Root) -> Bool)?
    private let watch = Locked<(any StoreWatch)?>(nil)
    /// Why the document the store holds now could not be decoded, when an outside change brought one: an
    /// update must not overwrite it (it may be a person's edit in progress, or a newer program's), so
    /// updates fail with this until the store holds a document that decodes.
    private let undecodableOutsideChange = Locked<(any Error)?>(nil)
    /// What the root knows of the document in the store (its unknown keys, its version), to write the next
    /// one. Changed only under the update lock.
    private let storedMemory = Locked(StoredMemory.empty)
    private let errorHandlers = Locked<[UInt64: @Sendable (any Error) -> Void]>([:])
    /// Errors met under the update lock (a layer that changed into something unreadable), reported once
    /// it is released.
    private let pendingErrors = Locked<[any Error]>([])
    private let nextErrorHandlerID = Atomic<UInt64>(0)
    /// Where the `async` forms of updates, reloads and flushes run: off Swift's cooperative pool, whose few
    /// threads must never wait for a disk, a keyring or a server. One serial queue per graph, so waiting
    /// updates hold one thread, not one each.
    let ioQueue: DispatchQueue
    /// Swift Observation's view of the graph.
    let observation = GraphObservation()

    /// How many times an update is run before a store's conflict reports end it.
    ///
    /// A conflict hands the root the fresh document, so the update is re-run at once, with no back-off:
    /// waiting would only make that document stale again. Under steady contention (two processes
    /// incrementing one etcd key in tight loops) the writer behind a slower link loses dozens of rounds in
    /// a row, measured up to 42; the bound is far above that and still ends a livelock.
    static var maximumConflictRetries: Int { 256 }

    init(
        default defaultValue: Root, store: (any DocumentStore)?, version: Int = 1,
        migrations: [Int: DocumentPipeline<Root>.Migration] = [:], form: StoredForm = .differencesFromDefaults,
        watch shouldWatch: Bool, equality: RuntimeEquality<Root>?, logger: Logger
    ) throws {
        self.store = store
        self.defaultValue = defaultValue
        self.logger = logger
        self.rootsEqual = equality?.areEqual
        writable = store as? any WritableDocumentStore
        locking = store as? any LockingStore
        changeDetecting = store as? any ChangeDetectingStore
        deferred = store as? any DeferredWriteStore
        layered = store as? LayeredStore
        validator = Self.validator()
        holdsSecrets = store is any SecretStore
        let coding = store?.coding ?? DocumentCoding()
        let storeName = store?.description ?? Self.noStoreName
        guard version >= 1 else {
            throw StoreError(.corrupt, store: storeName, reason: "the program's version must be 1 or more, not \(version)")
        }
        let defaults: JSONValue
        do {
            // Only a store's documents lie over the defaults; a root in memory never encodes them.
            defaults = store == nil ? .object([:]) : try coding.encode(defaultValue)
        } catch {
            throw StoreError(.unwritable, store: storeName, reason: "cannot encode the default value: \(error)", cause: error)
        }
        pipeline = DocumentPipeline(
            coding: coding, storeName: storeName, revealsValues: !(store is any SecretStore), defaults: defaults,
            version: version, migrations: migrations, form: form, validate: validator)
        ioQueue = DispatchQueue(label: "loupe.graph")

        committed = CommittedRoot(defaultValue)
        if let initial = try loadStored() {
            committed.root = initial.root
            storedMemory.withLock { $0 = initial.memory }
        }
        if shouldWatch, let watching = store as? any WatchingStore {
            let handle = try watching.watch { [weak self] in self?.refreshFromStore() }
            watch.withLock { $0 = handle }
        }
    }

    deinit {
        watch.withLock { $0?.cancel() }
        do {
            try deferred?.flush()
        } catch {
            logger.error("could not write pending settings", metadata: ["store": "\(storeName)", "error": "\(error)"])
        }
    }

    var storeName: String { store?.description ?? Self.noStoreName }

    /// The encoded default value: the pipeline's, which only a root with a store encodes up front.
    func defaultDocument() throws -> JSONValue {
        store == nil ? try pipeline.coding.encode(defaultValue) : pipeline.defaults
    }

    /// How a graph with no store names where its value is.
    static var noStoreName: String { "memory (no store)" }

    // MARK: Reading

    /// Runs `body` on the current root under the read lock.
    @inline(__always)
    func read<T>(_ body: (Root) throws -> T) rethrows -> T {
        try lock.withReadLock { try body(committed.root) }
    }

    /// The stored property at byte `offset` of the current root, read in place under the read lock.
    @inline(__always)
    func read<T>(at offset: Int, as type: T.Type) -> T {
        lock.withReadLock { committed.part(at: offset, as: type) }
    }

    /// The current root and its version, read together.
    func versionedSnapshot() -> (root: Root, version: UInt64) {
        lock.withReadLock { (committed.root, committed.version) }
    }

    // MARK: Updating

    /// Applies `body` to a copy of the root, saves the result, then publishes it and notifies observers.
    ///
    /// Either all of that happens or none of it: if `body` or the store throws, memory, store and observers
    /// are as they were and the error propagates. `path` names the lens, for errors.
    func update<R>(path: String, _ body: (inout Root) throws -> R) throws -> R {
        if store != nil, writable == nil { throw LensError.readOnly(path: path, store: storeName) }
        var committedAny = false
        defer { afterCommits(committedAny) }
        return try serialized(path: path) { () throws -> R in
            var attempts = 0
            while true {
                do {
                    return try withExclusiveAccess { () throws -> R in
                        // Checked here: unspecialized generic code looks up the metadata of the generic
                        // types a function uses when it starts, so a store that nothing else writes
                        // (the common in-memory case) skips the call altogether.
                        if changeDetecting != nil {
                            committedAny = try commitOutsideChange(refusingUndecodable: true) || committedAny
                        }
                        // The root changes only under the update lock, which this thread holds, so it is
                        // read here without the read lock.
                        var next = committed.root
                        let result = try body(&next)
                        if let validator, let violation = validator(next, !holdsSecrets) { throw violation }
                        committedAny = try commit(next, saving: true) || committedAny
                        return result
                    }
                } catch let error as StoreError where error.code == .conflict {
                    attempts += 1
                    guard attempts < Self.maximumConflictRetries else {
                        throw LensError.conflict(path: path, attempts: attempts, cause: error)
                    }
                    logger.debug("conflicting write, retrying", metadata: ["store": "\(storeName)", "attempt": "\(attempts)"])
                }
            }
        }
    }

    /// Re-reads the store and commits what it holds (the default when it holds nothing).
    func reload() throws {
        guard store != nil else { return }
        var committedAny = false
        defer { afterCommits(committedAny) }
        // A read takes no lock across processes: stores replace documents atomically, and a reader that
        // may only read (a daemon and its root-owned file) must not need to write a lock.
        try serialized(path: rootPathName) {
            let stored = try loadStored()
            undecodableOutsideChange.withLock { $0 = nil }
            committedAny = try commit(stored?.root ?? defaultValue, saving: false)
            storedMemory.withLock { $0 = stored?.memory ?? .empty }
        }
    }

    /// Deletes the stored document and returns to the default.
    func removeStored() throws {
        if store != nil, writable == nil { throw LensError.readOnly(path: rootPathName, store: storeName) }
        var committedAny = false
        defer { afterCommits(committedAny) }
        try serialized(path: rootPathName) {
            try withExclusiveAccess {
                try writable?.remove()
                undecodableOutsideChange.withLock { $0 = nil }
                // The value is what lies below the store's document: the defaults, or the lower layers.
                let below = try storedMemory.withLock { $0 }.layers.map {
                    try load(LayerStack(lower: $0.stored, topSource: $0.topSource, locks: $0.locks))
                }
                storedMemory.withLock { $0 = below?.memory ?? .empty }
                committedAny = try commit(below?.root ?? defaultValue, saving: false)
            }
        }
    }

    /// Makes every saved change durable now (for stores that defer writes).
    func flush() throws {
        try deferred?.flush()
    }

    /// Answers a store's report of an outside change: commits what the store now holds, if it changed.
    func refreshFromStore() {
        var committedAny = false
        do {
            // No lock across processes, as for `reload()`.
            try serialized(path: rootPathName) {
                committedAny = try commitOutsideChange(refusingUndecodable: false)
            }
        } catch {
            report(error)
        }
        afterCommits(committedAny)
    }

    /// The check of `Root`'s rules, when it is ``Validated``.
    private static func validator() -> (@Sendable (Root, Bool) -> RuleViolation?)? {
        guard let validated = Root.self as? any Validated.Type else { return nil }
        func checking<V: Validated>(_: V.Type) -> @Sendable (Root, Bool) -> RuleViolation? {
            { root, revealing in (root as? V)?.violation(revealingValues: revealing) }
        }
        return checking(validated)
    }

    /// What the store holds now, read afresh (every layer of a layered store), as a root; nil when it holds
    /// nothing (the root is then the default).
    private func loadStored() throws -> Loaded<Root>? {
        if let layered { return try load(layered.loadStack()) }
        return try store?.load().map { try load(LayerStack(top: $0)) }
    }

    /// The root a stack of layers holds, logging what the top layer held at locked paths.
    private func load(_ stack: LayerStack) throws -> Loaded<Root> {
        do {
            let loaded = try pipeline.load(stack)
            logIgnored(loaded)
            return loaded
        } catch {
            throw error.error
        }
    }

    private func logIgnored(_ loaded: Loaded<Root>) {
        for (path, lock) in loaded.ignored {
            logger.warning("ignored a value at a locked path: the layers below decide it", metadata: [
                "store": "\(storeName)", "path": "\(path)", "lock": "\(lock.file):\(lock.line)",
            ])
        }
    }

    /// Runs `work` on the graph's I/O queue and waits for it without holding a thread of the caller's. A
    /// graph with no store does no I/O, so its work runs at once, on the caller's executor.
    func offPool<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        if store == nil { return try work() }
        return try await withCheckedThrowingContinuation { continuation in
            ioQueue.async { continuation.resume(with: Result(catching: work)) }
        }
    }

    private func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R {
        guard let locking else { return try body() }
        return try locking.withExclusiveAccess(body)
    }

    /// Commits what a store shared with other writers now holds, if that changed. Call it holding the
    /// update lock. With `refusingUndecodable` (before an update), it throws while the store still holds a
    /// document an earlier outside change brought that could not be decoded.
    private func commitOutsideChange(refusingUndecodable: Bool) throws -> Bool {
        if let layered { return try commitLayerChanges(layered, refusingUndecodable: refusingUndecodable) }
        guard let changeDetecting else { return false }
        guard case .changed(let document) = try changeDetecting.loadIfChanged() else {
            if refusingUndecodable, let failure = undecodableOutsideChange.withLock({ $0 }) { throw failure }
            return false
        }
        let loaded: Loaded<Root>?
        do {
            loaded = try document.map { try load(LayerStack(top: $0)) }
        } catch {
            undecodableOutsideChange.withLock { $0 = error }
            throw error
        }
        undecodableOutsideChange.withLock { $0 = nil }
        storedMemory.withLock { $0 = loaded?.memory ?? .empty }
        guard try commit(loaded?.root ?? defaultValue, saving: false) else { return false }
        logger.info("picked up an outside change", metadata: ["store": "\(storeName)"])
        return true
    }

    /// Commits what changed in a layered store's layers, locks and top. A read-only layer that changed into
    /// something that cannot be read or decoded keeps its last good document, and its error is reported;
    /// the other layers' changes apply. Call it holding the update lock.
    private func commitLayerChanges(_ layered: LayeredStore, refusingUndecodable: Bool) throws -> Bool {
        let changes = try layered.loadChanges()
        pendingErrors.withLock { $0 += changes.errors as [any Error] }
        if changes.isEmpty {
            if refusingUndecodable, let failure = undecodableOutsideChange.withLock({ $0 }) { throw failure }
            return false
        }
        let memory = storedMemory.withLock { $0 }
        var stack = LayerStack(
            lower: changes.lower ?? memory.layers?.stored ?? [], topSource: layered.topSource,
            locks: changes.locks ?? memory.layers?.locks ?? [])
        if case .changed(let document) = changes.top {
            stack.top = document
        } else {
            // The top layer is as this root last wrote or read it (or has writes still to come): its
            // document is the patch from the old layers to the current value.
            var known = memory
            var dropped: [ValuePath] = []
            stack.top = try pipeline.storedDocument(for: pipeline.encode(committed.root), memory: &known, dropped: &dropped)
        }
        var loaded: Loaded<Root>
        while true {
            do {
                loaded = try pipeline.load(stack)
                break
            } catch {
                guard let index = error.layer else {
                    undecodableOutsideChange.withLock { $0 = error.error }
                    throw error.error
                }
                // That layer keeps its last good document (or, new, is left out) and the others apply.
                pendingErrors.withLock { $0.append(error.error) }
                let source = stack.lower[index].source
                if let good = memory.layers?.stored.first(where: { $0.source == source }), good != stack.lower[index] {
                    stack.lower[index] = good
                } else {
                    stack.lower.remove(at: index)
                }
            }
        }
        logIgnored(loaded)
        if case .changed = changes.top { undecodableOutsideChange.withLock { $0 = nil } }
        storedMemory.withLock { $0 = loaded.memory }
        guard try commit(loaded.root, saving: false) else { return false }
        logger.info("picked up an outside change", metadata: ["store": "\(storeName)"])
        return true
    }

    /// Commits `value` if it differs from the current root, saving its document first when `saving`, and
    /// says whether it did. If the save throws, nothing changes and the error propagates. Call it holding
    /// the update lock.
    private func commit(_ value: Root, saving: Bool) throws -> Bool {
        var document: JSONValue?
        if let rootsEqual {
            if committed.withRoot({ haveSameBytes(value, $0) || rootsEqual(value, $0) }) { return false }
        } else {
            // Not `Equatable`: roots are equal when their documents are.
            document = try pipeline.encode(value)
            if try document == pipeline.encode(committed.root) { return false }
        }
        if saving, store != nil { try save(value, document: document) }
        publish(value)
        return true
    }

    /// Makes `value` the committed root, with the next version, and queues the commit for its observers.
    ///
    /// A commit is made only when someone observes (the common in-memory update has no observer, and
    /// unspecialized generic code pays a metadata lookup for each generic type it touches).
    private func publish(_ value: Root) {
        guard notifier.isObserved else {
            lock.publishing {
                committed.root = value
                committed.version &+= 1
            }
            return
        }
        let version = lock.publishing { () -> UInt64 in
            committed.root = value
            committed.version &+= 1
            return committed.version
        }
        notifier.enqueue(value, version: version)
    }

    /// Hands the store the document to keep for `value` (whose whole document is `document`, when it is
    /// already encoded): the patch over the defaults, with the unknown keys and the version stamp.
    private func save(_ value: Root, document: JSONValue?) throws {
        var memory = storedMemory.withLock { $0 }
        if let deferred, document == nil, memory.layers?.locks.isEmpty ?? true {
            // Encoded when the store writes, once for a burst of commits, from what the root knows of the
            // store now. (Unknown keys that lose their place are dropped from that write; the root still
            // remembers them, as no store has confirmed the write yet.)
            let pipeline = pipeline
            let logger = logger
            let known = memory
            try deferred.save(encoding: {
                var memory = known
                var dropped: [ValuePath] = []
                let stored = try pipeline.storedDocument(for: try pipeline.encode(value), memory: &memory, dropped: &dropped)
                Self.logDropped(dropped, store: pipeline.storeName, logger: logger)
                return stored
            })
        } else if let writable {
            // Encoded now: a write to a locked path is refused before anything changes.
            var dropped: [ValuePath] = []
            let stored = try pipeline.storedDocument(for: try document ?? pipeline.encode(value), memory: &memory, dropped: &dropped)
            if let deferred {
                try deferred.save(encoding: { stored })
            } else {
                try writable.save(stored)
                storedMemory.withLock { $0 = memory }
            }
            Self.logDropped(dropped, store: storeName, logger: logger)
        }
    }

    private static func logDropped(_ dropped: [ValuePath], store: String, logger: Logger) {
        guard !dropped.isEmpty else { return }
        logger.notice("dropped keys this program does not know: the arrays that held them changed length, or the parts that held them changed kind", metadata: [
            "store": "\(store)", "paths": "\(dropped.map(\.description).joined(separator: ", "))",
        ])
    }

    /// After the locks are released: delivers queued commits to observers and tells Swift Observation.
    private func afterCommits(_ committedAny: Bool) {
        notifier.drain()
        if committedAny { observation.graphChanged() }
        // Only a layered store's layers queue errors.
        guard layered != nil else { return }
        let errors = pendingErrors.withLock { errors in
            defer { errors = [] }
            return errors
        }
        for error in errors { report(error) }
    }

    private func serialized<R>(path: String, _ body: () throws -> R) throws -> R {
        try lock.withUpdateLock(orThrow: { LensError.reentrantUpdate(path: path) }, body)
    }

    // MARK: Layers and provenance

    /// What lies below the store's document: the defaults merged with every read-only layer.
    func baseDocument() throws -> JSONValue {
        try storedMemory.withLock { $0 }.layers?.base ?? defaultDocument()
    }

    /// Where the value at `path` comes from.
    func provenance(of path: ValuePath) throws -> Provenance {
        let (memory, full) = try consistentState()
        return pipeline.provenance(of: path, full: full, memory: memory)
    }

    /// The layers as last read, lowest first, the top one as the current value makes it.
    func layers() throws -> [SettingsLayer] {
        let (memory, full) = try consistentState()
        return pipeline.layers(for: full, memory: memory)
    }

    /// The locks in force.
    var locks: [SettingsLock] {
        storedMemory.withLock { $0.layers?.locks ?? [] }
    }

    /// What the root remembers of its store and the document of its value, read together.
    private func consistentState() throws -> (StoredMemory, JSONValue) {
        try serialized(path: rootPathName) {
            (storedMemory.withLock { $0 }, try pipeline.encode(committed.root))
        }
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
        logger.error("ignored an outside change that could not be applied", metadata: ["store": "\(storeName)", "error": "\(error)"])
        let handlers = errorHandlers.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
        for handler in handlers { handler(error) }
    }
}
