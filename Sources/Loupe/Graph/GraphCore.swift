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
    private let validator: (@Sendable (Root, Bool) -> RuleViolation?)?
    let holdsSecrets: Bool

    /// Held by one update at a time, for its closure and its save (see ``Locked`` for re-entry).
    private let updateLock = Locked(())
    /// The committed root, read fast.
    let committed: CommittedRoot<Root>
    private let rootsEqual: (@Sendable (Root, Root) -> Bool)?
    private let watch = Locked<(any StoreWatch)?>(nil)
    /// Whether the root follows outside changes: its store's, and the files its secret references read.
    private let watching: Bool
    /// The watches of the files secret references read, by path.
    private let referenceWatches = Locked<[String: any StoreWatch]>([:])
    /// What the root knows of what its store holds (the token of what it last read or wrote, the unknown
    /// keys, the version, the layers), to write the next document. Changed only under the update lock.
    private let storedMemory = Locked(StoredMemory.empty)
    /// The locks this root has checked against its type (file, line and path), so that it warns once.
    private let warnedLocks = Locked(Set<String>())
    /// Whether this root has said that its store holds a newer version's document (it says it once).
    private let warnedOfNewerDocument = Locked(false)
    /// The token of a version of the store an outside change brought that could not be applied, so that
    /// it is reported once, not on every look.
    private let rejected = Locked<ChangeToken?>(nil)
    /// The document of the committed root, when a commit saved it: an update whose document does not share
    /// its storage is a change without comparing the roots (see ``commit(_:saving:releasing:)``). Nil after
    /// any other commit, and before the first.
    private let committedDocument = Locked<JSONValue?>(nil)
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
    /// A conflict makes the root load the fresh document and run the update again at once, with no
    /// back-off: waiting would only make that document stale again. A store with a lock runs the retry
    /// under it, so it cannot lose again; a compare-and-swap store (etcd) loses a round only while another
    /// writer keeps winning. The bound ends a livelock.
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
        validator = Self.validator()
        holdsSecrets = store?.holdsSecrets ?? false
        watching = shouldWatch
        let coding = store?.coding ?? DocumentCoding()
        let storeName = store?.description ?? Self.noStoreName
        guard version >= 1 else {
            throw SettingsError(.corrupt, store: storeName, reason: "the program's version must be 1 or more, not \(version)")
        }
        let defaults: JSONValue
        do {
            // Only a store's documents lie over the defaults; a root in memory never encodes them.
            defaults = store == nil ? .object([:]) : try coding.encode(defaultValue)
        } catch {
            throw SettingsError(.unwritable, store: storeName, reason: "cannot encode the default value: \(error)", cause: error)
        }
        pipeline = DocumentPipeline(
            coding: coding, storeName: storeName, revealsValues: !holdsSecrets, defaults: defaults,
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
                error.declaredSecrets = { value, path in pipeline.declaredSecretPaths(in: value, at: path) }
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
        referenceWatches.withLock { $0.values.forEach { $0.cancel() } }
        do {
            try store?.flush()
        } catch {
            logger.error("could not write pending settings", metadata: ["store": "\(storeName)", "error": "\(logDescription(of: error))"])
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
    ///
    /// `route`, when `body` writes through one entry of a dictionary and nothing else, tells the encoder
    /// which (see ``DictionaryEntryRoute``).
    func update<R>(
        path: LensPath, releasing released: [ValuePath] = [], route: DictionaryEntryRoute? = nil,
        _ body: (inout Root) throws -> R
    ) throws -> R {
        var committedAny = false
        defer { afterCommits(committedAny) }
        return try serialized(path: path) { () throws -> R in
            var attempts = 0
            while true {
                do {
                    if store == nil || attempts == 0, let result = try apply(body, saving: store, releasing: released, route: route, committed: &committedAny) {
                        return result
                    }
                    if let store, attempts > 0, let result = try store.withExclusiveAccess({ () throws -> R? in
                        committedAny = try catchUp(with: store) || committedAny
                        return try apply(body, saving: store, releasing: released, route: route, committed: &committedAny)
                    }) {
                        return result
                    }
                } catch let failure as BodyFailure {
                    throw failure.error  // the update's own error, whatever its code: never retried
                } catch let error as SettingsError where error.code == .conflict {
                    logger.debug("conflicting write, retrying", metadata: ["store": "\(storeName)", "attempt": "\(attempts + 1)"])
                } catch let error as SettingsError where error.code == .readOnly {
                    throw SettingsError.readOnly(path, store: storeName)
                }
                attempts += 1
                guard attempts < Self.maximumConflictRetries else {
                    throw SettingsError.conflict(
                        path, attempts: attempts,
                        cause: SettingsError(.conflict, store: storeName, reason: "other writers kept changing it"))
                }
            }
        }
    }

    /// Runs `body` on a copy of the root, checks the result, saves it to `store` and publishes it; returns
    /// `body`'s result, or nil when the update must run again because it changed nothing and the store
    /// holds something newer than the root knew (which is committed first). Call it holding the update lock.
    private func apply<R>(
        _ body: (inout Root) throws -> R, saving store: (any DocumentStore)?, releasing released: [ValuePath],
        route: DictionaryEntryRoute?, committed committedAny: inout Bool
    ) throws -> R? {
        // The root changes only under the update lock, which this thread holds, so it is read here without
        // the read lock.
        var next = committed.rootForUpdate
        let result: R
        do {
            result = try body(&next)
        } catch {
            throw BodyFailure(error: error)
        }
        if let validator, let violation = pipeline.violation(of: next, validator) { throw SettingsError.brokenRule(violation) }
        var entryWrite: DictionaryEntryWrite?
        if let route { entryWrite = route.write(from: committed.rootForUpdate, to: next) }
        if try commit(next, saving: store, releasing: released, entryWrite: entryWrite) {
            committedAny = true
            return result
        }
        // Nothing to write: done, if the store still holds what the root knows.
        guard let store, try catchUp(with: store) else { return result }
        committedAny = true
        return nil
    }

    /// An error thrown by an update's closure, kept apart from the store's: a closure's conflict (a write
    /// that expected another value) is the caller's answer, not a store's race to run again.
    private struct BodyFailure: Error {
        let error: any Error
    }

    /// Loads what `store` holds and commits it if it is newer than what the root knows; says whether it
    /// committed. Call it holding the update lock.
    private func catchUp(with store: any DocumentStore) throws -> Bool {
        let stored = try store.load()
        guard stored.token != storedMemory.withLock({ $0.token }) else { return false }
        _ = try commitOutsideChange(stored)
        return true
    }

    /// Re-reads the store and commits what it holds (the default when it holds nothing). Every layer must
    /// be readable.
    func reload() throws {
        guard let store else { return }
        var committedAny = false
        defer { afterCommits(committedAny) }
        // A read takes no lock across processes: stores replace documents atomically, and a reader that
        // may only read (a daemon and its root-owned file) must not need to write a lock.
        try serialized(path: .root) {
            let loaded = try load(store.load(), keepingLastGood: false)
            rejected.withLock { $0 = nil }
            remember(loaded.memory)
            committedAny = try commit(loaded.root, saving: nil)
        }
    }

    /// Deletes the stored document and returns to what lies below it: the defaults, or the lower layers.
    func removeStored() throws {
        guard let store else { return }
        var committedAny = false
        defer { afterCommits(committedAny) }
        try serialized(path: .root) {
            var token = storedMemory.withLock { $0.token }
            for attempt in 1... {
                do {
                    _ = try store.remove(replacing: token)
                    break
                } catch let error as SettingsError where error.code == .conflict && attempt < Self.maximumConflictRetries {
                    // Whatever another writer stored meanwhile is removed too: that is what was asked.
                    token = try store.load().token
                } catch let error as SettingsError where error.code == .readOnly {
                    throw SettingsError.readOnly(.root, store: storeName)
                }
            }
            rejected.withLock { $0 = nil }
            let below = try load(store.load(), keepingLastGood: true)
            remember(below.memory)
            committedAny = try commit(below.root, saving: nil)
        }
    }

    // MARK: History

    /// The changes the store keeps a record of.
    ///
    /// - Throws: ``SettingsError/Code/unavailable`` when the store keeps none (or there is no store); the
    ///   store's error when its record cannot be read.
    func history() throws -> SettingsHistory {
        guard let store, let history = try store.history() else {
            throw SettingsError(.unavailable, store: storeName, reason: "it keeps no history")
        }
        return history
    }

    /// Takes the values at `path` out of every record of the store's history; returns how many records
    /// held one.
    ///
    /// - Throws: ``SettingsError/Code/unavailable`` when the store keeps no history (or there is no store);
    ///   the store's error when it cannot be rewritten.
    func purgeHistory(of path: ValuePath) throws -> Int {
        guard let store, let purged = try store.purgeHistory(of: path) else {
            throw SettingsError(.unavailable, store: storeName, reason: "it keeps no history")
        }
        return purged
    }

    /// Stores the document the store held after `revision`, as a new change: checked by the type, the
    /// rules and the locks as any update is, and written as any update is (a file's text edited in place).
    /// A path whose values were purged from the history keeps what the store holds there now.
    func rollback(to revision: Int) throws {
        guard let store else { _ = try history(); return }
        var committedAny = false
        defer { afterCommits(committedAny) }
        try serialized(path: .root) {
            let history = try history()
            let document = try history.document(after: revision)
            let purged = history.purgedPaths(through: revision)
            var attempts = 0
            while true {
                do {
                    let restore = { try self.restore(document, revision: revision, keeping: purged, in: store) }
                    committedAny = try (attempts == 0 ? restore() : store.withExclusiveAccess(restore)) || committedAny
                    return
                } catch let error as SettingsError where error.code == .conflict && attempts + 1 < Self.maximumConflictRetries {
                    attempts += 1
                } catch let error as SettingsError where error.code == .readOnly {
                    throw SettingsError.readOnly(.root, store: storeName)
                }
            }
        }
    }

    /// Stores `document` (nil: removes the stored document) if the root it makes with the layers the store
    /// holds now passes the type, the rules and the locks, and commits that root. Call it holding the
    /// update lock.
    private func restore(_ document: JSONValue?, revision: Int, keeping purged: [ValuePath], in store: any DocumentStore) throws -> Bool {
        var stored = try store.load()
        let current = stored.document
        // What the history no longer knows is left as it is now, rather than restored as nothing.
        var document = document
        if purged.contains(where: \.components.isEmpty) {
            document = current
        } else if document != nil {
            for path in purged {
                document![path: path] = current?[path: path]
                // An object the purge left empty, which the store does not hold now either, is not written.
                var parent = path.parent
                while !parent.components.isEmpty, document![path: parent] == .object([:]), current?[path: parent] == nil {
                    document![path: parent] = nil
                    parent = parent.parent
                }
            }
        }
        stored.document = document
        let loaded: Loaded<Root>
        do {
            loaded = try load(stored, keepingLastGood: false)
        } catch let error as SettingsError where error.code == .corrupt || error.code == .invalidValue {
            // The document the revision left does not fit the type (or its rules) as the program is now.
            throw SettingsError(.invalidValue, path: error.path, store: storeName, reason: "revision \(revision) cannot be restored: \(error.reason)", cause: error)
        }
        // A lock keeps its path at the layers below: a rollback that stores another value there is refused,
        // as a `set` there is. (One that takes a held value out, as a reset does, is not.)
        for (path, lock) in loaded.ignored where current?[path: path] != document?[path: path] {
            throw SettingsError.locked(path, by: lock)
        }
        var memory = loaded.memory
        memory.token = try document.map { try store.save($0, replacing: stored.token) } ?? store.remove(replacing: stored.token)
        remember(memory)
        rejected.withLock { $0 = nil }
        return try commit(loaded.root, saving: nil)
    }

    /// Makes every saved change durable now (for stores that write later).
    func flush() throws {
        try store?.flush()
    }

    /// Answers a store's report of an outside change: loads what the store holds and commits it, if it
    /// changed (or, `force`d, when a file a secret reference reads changed, whatever the store's token).
    func refreshFromStore(force: Bool = false) {
        guard let store else { return }
        var committedAny = false
        do {
            // No lock across processes, as for `reload()`.
            try serialized(path: .root) {
                let stored = try store.load()
                guard force || stored.token != storedMemory.withLock({ $0.token }), stored.token != rejected.withLock({ $0 }) else { return }
                do {
                    committedAny = try commitOutsideChange(stored)
                } catch {
                    // Reported once for this version of the store; updates keep refusing it.
                    rejected.withLock { $0 = stored.token }
                    store.rootDidApply(stored.token, refusal: error as? SettingsError ?? SettingsError(.corrupt, store: storeName, reason: "\(error)", cause: error))
                    throw error
                }
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

    /// The root what a store holds gives, and what the root must remember of it; logs what the top layer
    /// held at locked paths.
    ///
    /// A read-only layer that cannot be read, or whose document does not fit the type, fails the load;
    /// with `keepingLastGood` (an outside change, not a load or reload) it keeps the last good content read
    /// from the same source instead (or, new, is left out), its error is reported, and the other layers
    /// apply. The top layer's failure always throws: an update must never overwrite it.
    private func load(_ stored: StoredDocument, keepingLastGood: Bool) throws -> Loaded<Root> {
        let (lastGood, lastBroken) = storedMemory.withLock { ($0.goodLayers, $0.brokenLayers) }
        var good: [String: StoredLayer.Content] = [:]
        var broken: [String: String] = [:]
        var stack = LayerStack(top: stored.document, topSource: stored.source, topWriters: stored.writers)
        var errors: [SettingsError] = []
        /// Notes that the layer from `source` cannot be used, reporting `error` unless it was reported last.
        func note(_ error: SettingsError, of source: String) {
            let text = "\(error)"
            if lastBroken[source] != text { errors.append(error) }
            broken[source] = text
        }
        for layer in stored.layers {
            var content = layer.content
            if case .unreadable(let error) = content {
                guard keepingLastGood else { throw error }
                note(error, of: layer.source)
                guard let known = lastGood[layer.source] else { continue }
                content = known
            }
            good[layer.source] = content
            switch content {
            case .document(let document): stack.lower.append(LayerDocument(source: layer.source, name: layer.name, document: document, writers: layer.writers))
            case .locks(let locks): stack.locks += locks
            case .overrides(let values): stack.overrides.append(OverrideLayer(source: layer.source, values: values))
            case .unreadable: break
            }
        }
        var loaded: Loaded<Root>
        while true {
            do {
                loaded = try pipeline.load(stack)
                break
            } catch {
                guard keepingLastGood, let index = error.layer else { throw error.error }
                // That layer keeps its last good document (or, new, is left out) and the others apply.
                let source = stack.lower[index].source
                note(error.error, of: source)
                if case .document(let known)? = lastGood[source], known != stack.lower[index].document {
                    stack.lower[index].document = known
                    good[source] = .document(known)
                } else {
                    stack.lower.remove(at: index)
                    good[source] = nil
                }
            }
        }
        pendingErrors.withLock { $0 += errors as [any Error] }
        for (path, lock) in loaded.ignored {
            logger.warning("ignored a value at a locked path: the layers below decide it", metadata: [
                "store": "\(storeName)", "path": "\(path)", "lock": "\(lock.file):\(lock.line)",
            ])
        }
        warnOfLocksNamingNothing(stack.locks)
        for (origin, closest) in loaded.unmatched where warnedLocks.withLock({ $0.insert("override:\(origin)").inserted }) {
            logger.warning("an override names no setting: it is ignored", metadata: [
                "override": "\(origin)", "closest": "\(closest.components.isEmpty ? "<root>" : closest.description)",
            ])
        }
        if loaded.memory.stamp > pipeline.version, !warnedOfNewerDocument.withLock({ warned in defer { warned = true }; return warned }) {
            // Once per root: a newer program's document, read with what this program knows of it.
            logger.warning("the stored document is from a newer version of the settings than this program's: what that version moved or added is read as this version knows it, and written back with its stamp kept", metadata: [
                "store": "\(storeName)", "documentVersion": "\(loaded.memory.stamp)", "programVersion": "\(pipeline.version)",
            ])
        }
        watchReferencedFiles(loaded.memory.overrides)
        loaded.memory.token = stored.token
        loaded.memory.goodLayers = good
        loaded.memory.brokenLayers = broken
        return loaded
    }

    /// Watches the files the secret references of the last load read (`file:`, `credential:`), when the
    /// root watches: a secret rotated in its file reaches the root as an outside change does.
    private func watchReferencedFiles(_ applied: [AppliedOverride]) {
        guard watching else { return }
        let files = Set(applied.compactMap(\.referencedFile))
        referenceWatches.withLock { watches in
            for (path, watch) in watches where !files.contains(path) {
                watch.cancel()
                watches[path] = nil
            }
            for path in files where watches[path] == nil {
                watches[path] = try? LocalFileSystem().watch(path, contents: false) { [weak self] in self?.refreshFromStore(force: true) }.watch
            }
        }
    }

    /// Warns, once for each, of locks that name no part of the settings type (a misspelled path locks
    /// nothing, silently): the schema is worked out only when a lock is new.
    private func warnOfLocksNamingNothing(_ locks: [SettingsLock]) {
        let fresh = locks.filter { lock in warnedLocks.withLock { $0.insert("\(lock.file):\(lock.line):\(lock.path)").inserted } }
        guard !fresh.isEmpty, let schema = try? pipeline.schema.schema() else { return }
        for lock in fresh where !schema.describes(lock.path) {
            logger.warning("a lock names no setting: it locks nothing", metadata: [
                "store": "\(storeName)", "lock": "\(lock.file):\(lock.line)", "path": "\(lock.path)",
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

    /// Commits what the store holds, `stored`, another writer's change. Call it holding the update lock.
    ///
    /// - Throws: the failure of a top document that cannot be decoded: it may be a person's edit in
    ///   progress, or a newer program's, and no update may overwrite it.
    private func commitOutsideChange(_ stored: StoredDocument) throws -> Bool {
        let loaded = try load(stored, keepingLastGood: true)
        rejected.withLock { $0 = nil }
        remember(loaded.memory)
        guard try commit(loaded.root, saving: nil) else { return false }
        // Debug, as swift-log asks of a library: a fleet of roots watching one key would log a line each.
        logger.debug("picked up an outside change", metadata: ["store": "\(storeName)"])
        return true
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
    ///
    /// `entryWrite`, when the update wrote through a dictionary's entry alone, tells the encoder which.
    private func commit(
        _ value: Root, saving store: (any DocumentStore)?, releasing released: [ValuePath] = [],
        entryWrite: DictionaryEntryWrite? = nil
    ) throws -> Bool {
        var document: JSONValue?
        var edits: ObjectEdits?
        let unchanged: Bool
        if let rootsEqual {
            let current = committed.rootForUpdate
            if pipeline.comparesBytes, haveSameBytes(value, current) {
                unchanged = true
            } else if store != nil {
                let encoded = try sameDocument(as: current, for: value, entryWrite: entryWrite)
                document = encoded.document
                edits = encoded.edits
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
            guard let store, !released.isEmpty, storedMemory.withLock({ memory in
                released.contains { path in
                    memory.spellings?[path: path] != nil
                        || memory.layers?.heldAside.contains { $0.path.components.starts(with: path.components) } == true
                }
            }) else { return false }
            try save(value, document: document, to: store, releasing: released)
            return false
        }
        if let store {
            let full = try document ?? pipeline.encode(value)
            // The walks that find what changed, in the stored document and in a store's edit of its text,
            // visit only the members the encode set in the objects it made from the last ones.
            if let overridden = try ObjectEdits.$current.withValue(edits ?? ObjectEdits(), operation: {
                try save(value, document: full, to: store, releasing: released)
            }) {
                // Stored, but an override still wins where it changed: the value keeps the override's.
                let current = committed.rootForUpdate
                if let rootsEqual, rootsEqual(overridden, current) { return false }
                publish(overridden)
                return true
            }
            publish(value, document: full)
            return true
        }
        publish(value)
        return true
    }

    /// The document of `value`, and whether it is the document of `current` (the committed root). The
    /// committed root's document is kept from the commit that saved it, or encoded now; when the encoder
    /// started from it, the two are the same exactly when they share their storage, and are compared
    /// otherwise (another encode took what the encoder keeps, or a failed save left another value's).
    private func sameDocument(
        as current: Root, for value: Root, entryWrite: DictionaryEntryWrite?
    ) throws -> (document: JSONValue, same: Bool, edits: ObjectEdits) {
        let known: JSONValue
        if let document = committedDocument.withLock({ $0 }) {
            known = document
        } else {
            known = try pipeline.encode(current)
            committedDocument.withLock { $0 = known }
        }
        let (document, last, edits) = try pipeline.encodeNotingLast(value, entryWrite: entryWrite)
        if let last, last.isShared(with: known) { return (document, document.isShared(with: last), edits) }
        return (document, document == known, edits)
    }

    /// Makes `value` the committed root, with the next version, and queues the commit for its observers,
    /// if it has any; `document`, when known, is its document.
    private func publish(_ value: Root, document: JSONValue? = nil) {
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
    private func save(_ value: Root, document: JSONValue?, to store: any DocumentStore, releasing released: [ValuePath] = []) throws -> Root? {
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
            logger.notice("stored a change an override still wins over: the value stays the override's while it is set", metadata: [
                "store": "\(storeName)", "overrides": "\(overridden.map { "\($0.path) (\($0.origin))" }.joined(separator: ", "))",
            ])
        }
        if !dropped.isEmpty {
            logger.notice("dropped keys this program does not know, with the parts that held them: array elements removed (or changed and moved, so that they cannot be told apart), or parts that changed kind", metadata: [
                "store": "\(storeName)", "paths": "\(dropped.map(\.description).joined(separator: ", "))",
            ])
        }
        guard !overridden.isEmpty else { return nil }
        // The value is what the store now holds with the overrides over it, as a load would make it.
        return try pipeline.coding.decode(Root.self, from: pipeline.applyingOverrides(to: full, memory: memory))
    }

    /// Keeps `memory` as what the root knows of its store, and tells the store when the root runs a
    /// version it did not before (for a store that reports what each reader runs).
    private func remember(_ memory: StoredMemory) {
        let previous = storedMemory.withLock { known in
            defer { known = memory }
            return known.token
        }
        if previous != memory.token { store?.rootDidApply(memory.token, refusal: nil) }
    }

    /// After the locks are released: delivers queued commits to observers, tells Swift Observation, and
    /// reports the errors of layers met meanwhile.
    private func afterCommits(_ committedAny: Bool) {
        notifier.drain()
        if committedAny { observation.graphChanged() }
        guard store != nil else { return }
        let errors = pendingErrors.withLock { errors in
            defer { errors = [] }
            return errors
        }
        for error in errors { report(error) }
    }

    private func serialized<R>(path: LensPath, _ body: () throws -> R) throws -> R {
        if updateLock.isHeldByCurrentThread { throw SettingsError.reentrantUpdate(path) }
        return try updateLock.withLock { _ in try body() }
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

    /// Where the values at `paths` come from, worked out from one state of the root.
    func provenance(ofEach paths: [ValuePath]) throws -> [Provenance] {
        let (memory, full) = try consistentState()
        return paths.map { pipeline.provenance(of: $0, full: full, memory: memory) }
    }

    /// The layers as last read, lowest first, the top one as the current value makes it.
    func layers() throws -> [SettingsLayer] {
        let (memory, full) = try consistentState()
        return pipeline.layers(for: full, memory: memory)
    }

    /// The version the stored document is stamped with (1 when unstamped or when nothing is stored).
    var storedVersion: Int {
        storedMemory.withLock { $0.stamp }
    }

    /// The paths whose values are secrets: those an override layer with secret values sets, and those of
    /// the parts the settings type declares secret (``SecretSettings``) that the value holds.
    var secretPaths: [ValuePath] {
        var paths = storedMemory.withLock { $0.overrides.filter(\.isSecret).map(\.path) }
        guard pipeline.declaresSecrets, let document = try? pipeline.coding.encode(committed.read { $0 }) else { return paths }
        for path in pipeline.declaredSecretPaths(in: document) where !paths.contains(path) { paths.append(path) }
        return paths
    }

    /// Whether an error may quote the value at `path`: the store does not keep secrets, and the value
    /// neither is nor holds one the settings type declares.
    func quotesValue(at path: ValuePath) -> Bool {
        !holdsSecrets && !pipeline.touchesDeclaredSecret(path)
    }

    /// The locks in force.
    var locks: [SettingsLock] {
        storedMemory.withLock { $0.layers?.locks ?? [] }
    }

    /// What the root remembers of its store and the document of its value, read together.
    private func consistentState() throws -> (StoredMemory, JSONValue) {
        try serialized(path: .root) {
            (storedMemory.withLock { $0 }, try pipeline.encode(committed.rootForUpdate))
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
        logger.error("ignored an outside change that could not be applied", metadata: ["store": "\(storeName)", "error": "\(logDescription(of: error))"])
        let handlers = errorHandlers.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
        for handler in handlers { handler(error) }
    }
}
