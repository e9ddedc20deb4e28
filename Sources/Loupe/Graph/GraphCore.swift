import Foundation
import Logging
import Synchronization

/// The state behind one root lens and every lens derived from it: the committed root, its store and the
/// document pipeline between them, the observers.
///
/// Updates are serial (the update lock); each runs its closure on a copy of the root, saves the result's
/// document with the token of what the root last read, and only then publishes it, holding readers back
/// just for the assignment. A save the store refuses as a conflict (another writer got there first) makes
/// the root load what the store holds now, commit it, and run the closure again. Every commit gets the
/// next version number and is handed to the ``Notifier`` in version order; observers are called after
/// every lock is released.
final class GraphCore<Root: Codable & Sendable>: Sendable {
    let store: (any DocumentStore)?
    let defaultValue: Root
    let notifier = Notifier<Root>()
    let logger: Logger
    let pipeline: DocumentPipeline<Root>
    /// The first rule a value breaks, when `Root` is ``Validated``.
    let validator: (@Sendable (Root, Bool) -> RuleViolation?)?

    /// Held by one update at a time, for its closure and its save (see ``Locked`` for re-entry).
    let updateLock = Locked(())
    /// The committed root, read fast.
    let committed: CommittedRoot<Root>
    let rootsEqual: (@Sendable (Root, Root) -> Bool)?
    let watch = Locked<(any StoreWatch)?>(nil)
    /// What the root knows of what its store holds (the token of what it last read or wrote, the unknown
    /// keys, the version, the layers), to write the next document. Changed only under the update lock.
    let storedMemory = Locked(StoredMemory.empty)
    /// The locks this root has checked against its type (file, line and path), so that it warns once.
    let warnedLocks = Locked(Set<String>())
    /// Whether this root has said that its store holds a newer version's document (it says it once).
    let warnedOfNewerDocument = Locked(false)
    /// The token of a version of the store an outside change brought that could not be applied, so that
    /// it is reported once, not on every look.
    let rejected = Locked<ChangeToken?>(nil)
    /// The document of the committed root, when a commit saved it: an update whose document does not share
    /// its storage is a change without comparing the roots (see ``commit(_:saving:releasing:)``). Nil after
    /// any other commit, and before the first.
    let committedDocument = Locked<JSONValue?>(nil)
    let errorHandlers = Locked<[UInt64: @Sendable (any Error) -> Void]>([:])
    /// Errors met under the update lock (a layer that changed into something unreadable), reported once
    /// it is released.
    let pendingErrors = Locked<[any Error]>([])
    let nextErrorHandlerID = Atomic<UInt64>(0)
    /// Where the `async` forms of updates, reloads and flushes run: off Swift's cooperative pool, whose few
    /// threads must never wait for a disk, a keyring or a server. One serial queue per graph, so waiting
    /// updates hold one thread, not one each.
    let ioQueue: DispatchQueue
    /// Swift Observation's view of the graph.
    let observation = GraphObservation()

    init(
        default defaultValue: Root, store: (any DocumentStore)?, version: Int = 1,
        migrations: [Int: DocumentPipeline<Root>.Migration] = [:], form: StoredForm = .differencesFromDefaults,
        watch shouldWatch: Bool, equality: RuntimeEquality<Root>?, logger: Logger
    ) throws {
        // The files the secret references of a store's documents read are followed by a layered store, as
        // a layer source: a store that does not follow them itself is the top of one of no layers.
        let store = store.map { store -> any DocumentStore in
            store.capabilities.watchesReferencedFiles ? store : LayeredStore(layers: [], top: store)
        }
        self.store = store
        self.defaultValue = defaultValue
        self.logger = logger
        self.rootsEqual = equality?.areEqual
        validator = Self.validator(coding: store?.coding ?? DocumentCoding())
        let coding = store?.coding ?? DocumentCoding()
        let storeName = store?.description ?? Self.noStoreName
        guard version >= 1 else {
            throw SettingsError(
                .corrupt, store: storeName, reason: "the program's version must be 1 or more, not \(version)")
        }
        let defaults: JSONValue
        do {
            // Only a store's documents lie over the defaults; a root in memory never encodes them.
            defaults = store == nil ? .object([:]) : try coding.encode(defaultValue)
        } catch {
            throw SettingsError(
                .unwritable, store: storeName, reason: "cannot encode the default value: \(error)", cause: error)
        }
        pipeline = DocumentPipeline(
            coding: coding, storeName: storeName, quotesValues: !(store?.secretPaths.contains(.root) ?? false),
            defaults: defaults,
            version: version, migrations: migrations, form: form, validate: validator,
            // A root with a store has encoded its default already.
            schema: store == nil
                ? SchemaCache { try SettingsSchema(for: Root.self, default: defaultValue, coding: coding) }
                : SchemaCache.shared(for: Root.self, encodedDefault: defaults, coding: coding))
        ioQueue = DispatchQueue(label: "loupe.graph")

        committed = CommittedRoot(defaultValue)
        if let store {
            let initial: Loaded<Root>
            do {
                initial = try load(store.load(), keepingLastGood: false)
            } catch var error as SettingsError {
                // A tool that prints what the store holds after the error masks the type's secrets in it.
                let pipeline = pipeline
                error.secretPaths = { value, path in pipeline.secretPaths(in: value, at: path) }
                throw error
            }
            committed.publish(initial.root)
            storedMemory.withLock { $0 = initial.memory }
            store.rootDidApply(initial.memory.token, refusal: nil)  // the first version it runs, even none
            if shouldWatch, let handle = try store.watch({ [weak self] in self?.refreshFromStore() }) {
                watch.withLock { $0 = handle }
            }
        }
    }

    deinit {
        watch.withLock { $0?.cancel() }
        do {
            try store?.flush()
        } catch {
            logger.error(
                "could not write pending settings",
                metadata: ["store": "\(storeName)", "error": "\(logDescription(of: error))"])
        }
    }

    /// The check of `Root`'s rules, when it is ``Validated``.
    static func validator(coding: DocumentCoding) -> (@Sendable (Root, Bool) -> RuleViolation?)? {
        guard let validated = Root.self as? any Validated.Type else { return nil }
        func checking<V: Validated>(_: V.Type) -> @Sendable (Root, Bool) -> RuleViolation? {
            { root, quoting in (root as? V)?.violation(quotingValues: quoting, coding: coding) }
        }
        return checking(validated)
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
        try committed.read(body)
    }

    /// The stored property at byte `offset` of the current root, read in place under the read lock.
    @inline(__always)
    func read<T>(at offset: Int, as type: T.Type) -> T {
        committed.part(at: offset, as: type)
    }

    /// The current root and its version, read together.
    func versionedSnapshot() -> (root: Root, version: UInt64) {
        committed.snapshot()
    }

    // MARK: Updating

    /// Applies `body` to a copy of the root, saves the result, then publishes it and notifies observers.
    ///
    /// Either all of that happens or none of it: if `body` or the store throws, memory, store and observers
    /// are as they were and the error propagates. `path` names the lens, for errors.
    ///
    /// The save hands the store the token of what the root last read or wrote. When another writer got
    /// there first, the store refuses it as a conflict, and the update runs again, this time holding the
    /// store's exclusive access (``DocumentStore/withExclusiveAccess(_:)``) around a fresh load, `body` and
    /// the save, so that a writer that lost one race cannot lose every next one. An update that changes
    /// nothing asks the store whether it still holds what the root knows, and if not, runs again on what it
    /// holds, so that no update applies to a stale value.
    ///
    /// Keys the store holds under a path in `released` leave it (a reset), even when the value is the
    /// same; every other key the store holds stays.
    func update<R>(
        path: LensPath, releasing released: [ValuePath] = [], _ body: (inout Root) throws -> R
    ) throws -> R {
        var committedAny = false
        defer { afterCommits(committedAny) }
        return try serialized(path: path) { () throws -> R in
            do {
                return try retryingConflicts(path: path) { round in
                    if round > 0, let store { committedAny = try catchUp(with: store) || committedAny }
                    return try apply(body, saving: store, releasing: released, committed: &committedAny)
                }
            } catch let failure as BodyFailure {
                throw failure.error  // the update's own error, whatever its code: never retried
            }
        }
    }

    /// Runs `round` in the conflict loop (``ConflictLoop``) over the store, naming `path` in what it throws
    /// when the store is read-only or other writers kept changing it.
    func retryingConflicts<R>(path: LensPath, _ round: (_ number: Int) throws -> R) throws -> R {
        do {
            return try ConflictLoop.run(
                on: store,
                conflicted: { _, number in
                    logger.debug(
                        "conflicting write, retrying", metadata: ["store": "\(storeName)", "attempt": "\(number + 1)"])
                }, round)
        } catch let error as SettingsError where error.code == .readOnly {
            throw SettingsError.readOnly(path, store: storeName)
        } catch let exhausted as ConflictLoop.Exhausted {
            throw SettingsError.conflict(
                path, attempts: exhausted.rounds,
                cause: exhausted.lastConflict
                    ?? SettingsError(.conflict, store: storeName, reason: "other writers kept changing it"))
        }
    }

    /// Runs `body` on a copy of the root, checks the result, saves it to `store` and publishes it; returns
    /// `body`'s result. Throws ``ConflictLoop/RunAgain`` when the update must run again because it changed
    /// nothing and the store holds something newer than the root knew (which is committed first). Call it
    /// holding the update lock.
    func apply<R>(
        _ body: (inout Root) throws -> R, saving store: (any DocumentStore)?, releasing released: [ValuePath],
        committed committedAny: inout Bool
    ) throws -> R {
        // The root changes only under the update lock, which this thread holds, so it is read here without
        // the read lock.
        var next = committed.rootForUpdate
        let result: R
        do {
            result = try body(&next)
        } catch {
            throw BodyFailure(error: error)
        }
        if let validator, let violation = pipeline.violation(of: next, validator) {
            throw SettingsError.brokenRule(violation)
        }
        if try commit(next, saving: store, releasing: released) {
            committedAny = true
            return result
        }
        // Nothing to write: done, if the store still holds what the root knows.
        guard let store, try catchUp(with: store) else { return result }
        committedAny = true
        throw ConflictLoop.RunAgain()
    }

    /// An error thrown by an update's closure, kept apart from the store's: a closure's conflict (a write
    /// that expected another value) is the caller's answer, not a store's race to run again.
    struct BodyFailure: Error {
        let error: any Error
    }

    /// Commits `value` if it differs from the current root, saving its document to `store` first, and says
    /// whether it did. If the save throws, nothing changes and the error propagates. Call it holding the
    /// update lock.
    ///
    /// A root saved to a store is unchanged when it encodes to the current root's document and, if it is
    /// `Equatable`, is `==` to it: a value that `==` takes for the current one while it encodes otherwise
    /// is stored (its document is what the store keeps). The encoder, starting from the current root's
    /// document, tells a document that differs by not sharing its storage, so a change costs no `==` of
    /// the roots (which, for a root of many parts, costs as much as an encode). A root with no store is
    /// unchanged when it is `==` to the current one.
    func commit(
        _ value: Root, saving store: (any DocumentStore)?, releasing released: [ValuePath] = []
    ) throws -> Bool {
        var document: JSONValue?
        let unchanged: Bool
        if let rootsEqual {
            let current = committed.rootForUpdate
            if pipeline.comparesBytes, SameBytes.equal(value, current) {
                unchanged = true
            } else if store != nil {
                let encoded = try sameDocument(as: current, for: value)
                document = encoded.document
                unchanged = encoded.same && rootsEqual(value, current)
            } else {
                unchanged = rootsEqual(value, current)
            }
        } else {
            // Not `Equatable`: roots are equal when their documents are.
            document = try pipeline.encode(value)
            unchanged = try document == pipeline.encode(committed.rootForUpdate)
        }
        if unchanged {
            // A reset of a key the store holds at the value it has anyway: the key leaves the store.
            // (Or a value the store holds under a lock, held aside: the reset takes it out too.)
            guard let store, !released.isEmpty,
                storedMemory.withLock({ memory in
                    released.contains { path in
                        memory.spellings?[path: path] != nil
                            || memory.layers?.heldAside.contains { $0.path.components.starts(with: path.components) }
                                == true
                    }
                })
            else { return false }
            try save(value, document: document, to: store, releasing: released)
            return false
        }
        if let store { return try saveAndPublish(value, document: document, to: store, releasing: released) }
        publish(value)
        return true
    }

    /// Saves the changed `value` to `store` and publishes it, or, where an override still wins over what
    /// changed, the value with the override over it; says whether that differs from the current root.
    private func saveAndPublish(
        _ value: Root, document: JSONValue?, to store: any DocumentStore, releasing released: [ValuePath]
    ) throws -> Bool {
        let full = try document ?? pipeline.encode(value)
        if let overridden = try save(value, document: full, to: store, releasing: released) {
            // Stored, but an override still wins where it changed: the value keeps the override's.
            let current = committed.rootForUpdate
            if let rootsEqual, rootsEqual(overridden, current) { return false }
            publish(overridden)
            return true
        }
        publish(value, document: full)
        return true
    }

    /// The document of `value`, and whether it is the document of `current` (the committed root). The
    /// committed root's document is kept from the commit that saved it, or encoded now; when the encoder
    /// started from it, the two are the same exactly when they share their storage, and are compared
    /// otherwise (another encode took what the encoder keeps, or a failed save left another value's).
    func sameDocument(as current: Root, for value: Root) throws -> (document: JSONValue, same: Bool) {
        let known: JSONValue
        if let document = committedDocument.withLock({ $0 }) {
            known = document
        } else {
            known = try pipeline.encode(current)
            committedDocument.withLock { $0 = known }
        }
        let (document, last) = try pipeline.encodeNotingLast(value)
        if let last, last.isShared(with: known) { return (document, document.isShared(with: last)) }
        return (document, document == known)
    }

    /// Makes `value` the committed root, with the next version, and queues the commit for its observers,
    /// if it has any; `document`, when known, is its document.
    func publish(_ value: Root, document: JSONValue? = nil) {
        committedDocument.withLock { $0 = document }
        let version = committed.publish(value)
        guard notifier.isObserved else { return }
        notifier.enqueue(value, version: version)
    }

    /// Hands `store` the document to keep for `value` (whose whole document is `document`, when it is
    /// already encoded): the patch over what lies below, with the unknown keys and the version stamp,
    /// replacing what the root last read or wrote.
    ///
    /// Returns the value with the override layers over it again, when it changed a part one of them sets
    /// (the override still wins); nil otherwise.
    @discardableResult
    func save(
        _ value: Root, document: JSONValue?, to store: any DocumentStore, releasing released: [ValuePath] = []
    ) throws -> Root? {
        var memory = storedMemory.withLock { $0 }
        var dropped: [ValuePath] = []
        var overridden: [AppliedOverride] = []
        let full = try document ?? pipeline.encode(value)
        let stored = try pipeline.storedDocument(
            for: full, memory: &memory, releasing: released, dropped: &dropped, overridden: &overridden)
        memory.token = try store.save(stored, replacing: memory.token)
        remember(memory)
        if !overridden.isEmpty {
            // A notice, not a warning: the write did what was asked, and a tool (`loupe set`) says it in
            // its own words.
            logger.notice(
                "stored a change an override still wins over: the value stays the override's while it is set",
                metadata: [
                    "store": "\(storeName)",
                    "overrides": "\(overridden.map { "\($0.path) (\($0.origin))" }.joined(separator: ", "))",
                ])
        }
        if !dropped.isEmpty {
            logger.notice(
                "dropped keys this program does not know, with the parts that held them: array elements removed (or changed and moved, so that they cannot be told apart), or parts that changed kind",
                metadata: [
                    "store": "\(storeName)", "paths": "\(dropped.map(\.description).joined(separator: ", "))",
                ])
        }
        guard !overridden.isEmpty else { return nil }
        // The value is what the store now holds with the overrides over it, as a load would make it.
        return try pipeline.coding.decode(Root.self, from: pipeline.applyingOverrides(to: full, memory: memory))
    }

    /// Keeps `memory` as what the root knows of its store, and tells the store when the root runs a
    /// version it did not before (for a store that reports what each reader runs).
    func remember(_ memory: StoredMemory) {
        let previous = storedMemory.withLock { known in
            defer { known = memory }
            return known.token
        }
        if previous != memory.token { store?.rootDidApply(memory.token, refusal: nil) }
    }

    /// After the locks are released: delivers queued commits to observers, tells Swift Observation, and
    /// reports the errors of layers met meanwhile.
    func afterCommits(_ committedAny: Bool) {
        notifier.drain()
        if committedAny { observation.graphChanged() }
        guard store != nil else { return }
        let errors = pendingErrors.withLock { errors in
            defer { errors = [] }
            return errors
        }
        for error in errors { report(error) }
    }

    func serialized<R>(path: LensPath, _ body: () throws -> R) throws -> R {
        if updateLock.isHeldByCurrentThread { throw SettingsError.reentrantUpdate(path) }
        return try updateLock.withLock { _ in try body() }
    }

    /// Runs `work` on the graph's I/O queue and waits for it without holding a thread of the caller's. A
    /// graph with no store does no I/O, so its work runs at once, on the caller's executor.
    func offPool<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        if store == nil { return try work() }
        return try await withCheckedThrowingContinuation { continuation in
            ioQueue.async { continuation.resume(with: Result(catching: work)) }
        }
    }
}
