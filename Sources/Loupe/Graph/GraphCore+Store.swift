import Foundation
import Logging

// What a root knows of its store: loads (keeping the last good layers), catching up with what the store
// holds, outside changes, the layers and provenance.
extension GraphCore {
    /// Loads what `store` holds and commits it if it is newer than what the root knows; says whether it
    /// committed. Call it holding the update lock.
    func catchUp(with store: any DocumentStore) throws -> Bool {
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
            _ = try retryingConflicts(path: .root) { round in
                // Whatever another writer stored meanwhile is removed too: that is what was asked.
                let token = round == 0 ? storedMemory.withLock { $0.token } : try store.load().token
                return try store.remove(replacing: token)
            }
            rejected.withLock { $0 = nil }
            let below = try load(store.load(), keepingLastGood: true)
            remember(below.memory)
            committedAny = try commit(below.root, saving: nil)
        }
    }

    /// Answers a store's report of an outside change: loads what the store holds and commits it, if it
    /// changed.
    func refreshFromStore() {
        guard let store else { return }
        var committedAny = false
        do {
            // No lock across processes, as for `reload()`.
            try serialized(path: .root) {
                let stored = try store.load()
                guard stored.token != storedMemory.withLock({ $0.token }),
                    stored.token != rejected.withLock({ $0 })
                else { return }
                do {
                    committedAny = try commitOutsideChange(stored)
                } catch {
                    // Reported once for this version of the store; updates keep refusing it.
                    rejected.withLock { $0 = stored.token }
                    store.rootDidApply(
                        stored.token,
                        refusal: error as? SettingsError
                            ?? SettingsError(.corrupt, store: storeName, reason: "\(error)", cause: error))
                    throw error
                }
            }
        } catch {
            report(error)
        }
        afterCommits(committedAny)
    }

    /// The root what a store holds gives, and what the root must remember of it; logs what the top layer
    /// held at locked paths.
    ///
    /// A read-only layer that cannot be read, or whose document does not fit the type, fails the load;
    /// with `keepingLastGood` (an outside change, not a load or reload) it keeps the last good content read
    /// from the same source instead (or, new, is left out), its error is reported, and the other layers
    /// apply. The top layer's failure always throws: an update must never overwrite it.
    func load(_ stored: StoredDocument, keepingLastGood: Bool) throws -> Loaded<Root> {
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
            case .document(let document):
                stack.lower.append(
                    LayerDocument(source: layer.source, name: layer.name, document: document, writers: layer.writers))
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
            logger.warning(
                "ignored a value at a locked path: the layers below decide it",
                metadata: [
                    "store": "\(storeName)", "path": "\(path)", "lock": "\(lock.file):\(lock.line)",
                ])
        }
        warnOfLocksNamingNothing(stack.locks)
        for (origin, closest) in loaded.unmatched
        where warnedLocks.withLock({ $0.insert("override:\(origin)").inserted }) {
            logger.warning(
                "an override names no setting: it is ignored",
                metadata: [
                    "override": "\(origin)",
                    "closest": "\(closest.components.isEmpty ? "<root>" : closest.description)",
                ])
        }
        if loaded.memory.stamp > pipeline.version,
            !warnedOfNewerDocument.withLock({ warned in
                defer { warned = true }; return warned
            })
        {
            // Once per root: a newer program's document, read with what this program knows of it.
            logger.warning(
                "the stored document is from a newer version of the settings than this program's: what that version moved or added is read as this version knows it, and written back with its stamp kept",
                metadata: [
                    "store": "\(storeName)", "documentVersion": "\(loaded.memory.stamp)",
                    "programVersion": "\(pipeline.version)",
                ])
        }
        loaded.memory.token = stored.token
        loaded.memory.goodLayers = good
        loaded.memory.brokenLayers = broken
        return loaded
    }

    /// Warns, once for each, of locks that name no part of the settings type (a misspelled path locks
    /// nothing, silently): the schema is worked out only when a lock is new.
    func warnOfLocksNamingNothing(_ locks: [SettingsLock]) {
        let fresh = locks.filter { lock in
            warnedLocks.withLock { $0.insert("\(lock.file):\(lock.line):\(lock.path)").inserted }
        }
        guard !fresh.isEmpty, let schema = try? pipeline.schema.schema() else { return }
        for lock in fresh where !schema.describes(lock.path) {
            logger.warning(
                "a lock names no setting: it locks nothing",
                metadata: [
                    "store": "\(storeName)", "lock": "\(lock.file):\(lock.line)", "path": "\(lock.path)",
                ])
        }
    }

    /// Commits what the store holds, `stored`, another writer's change. Call it holding the update lock.
    ///
    /// - Throws: the failure of a top document that cannot be decoded: it may be a person's edit in
    ///   progress, or a newer program's, and no update may overwrite it.
    func commitOutsideChange(_ stored: StoredDocument) throws -> Bool {
        let loaded = try load(stored, keepingLastGood: true)
        rejected.withLock { $0 = nil }
        remember(loaded.memory)
        guard try commit(loaded.root, saving: nil) else { return false }
        // Debug, as swift-log asks of a library: a fleet of roots watching one key would log a line each.
        logger.debug("picked up an outside change", metadata: ["store": "\(storeName)"])
        return true
    }

    /// What lies below the store's document: the defaults merged with every read-only layer.
    func baseDocument() throws -> JSONValue {
        try storedMemory.withLock { $0 }.layers?.base ?? defaultDocument()
    }

    /// Where the value at `path` comes from.
    func provenance(of path: ValuePath) throws -> Provenance {
        try provenance(ofEach: [path])[0]
    }

    /// Where the values at `paths` come from, worked out from one state of the root; each file that sets
    /// one is asked once where it writes them.
    func provenance(ofEach paths: [ValuePath]) throws -> [Provenance] {
        let (memory, full) = try consistentState()
        var provenances = pipeline.provenance(of: paths, full: full, memory: memory)
        guard let positions = store?.capabilities.textPositions else { return provenances }
        let byFile = Dictionary(grouping: provenances.indices) { index -> String? in
            if case .layer(let file) = provenances[index].source { file } else { nil }
        }
        for case (let file?, let indices) in byFile {
            let found = positions.positions(of: indices.map { provenances[$0].path }, inFile: file)
            for (index, position) in zip(indices, found) { provenances[index].position = position }
        }
        return provenances
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

    /// The paths whose values are secrets: those an override layer with secret values sets, those the
    /// store keeps secret (``DocumentStore/secretPaths``: the root path for a store whose every value is),
    /// and those of the parts the settings type declares secret (``SecretSettings``) that the value holds.
    var secretPaths: [ValuePath] {
        var paths = storedMemory.withLock { $0.overrides.filter(\.isSecret).map(\.path) }
        for path in store?.secretPaths ?? [] where !paths.contains(path) { paths.append(path) }
        guard pipeline.containsSecrets, let document = try? pipeline.coding.encode(committed.read { $0 }) else {
            return paths
        }
        for path in pipeline.secretPaths(in: document) where !paths.contains(path) { paths.append(path) }
        return paths
    }

    /// Whether an error may quote the value at `path`: the value neither is, lies in nor holds one the
    /// store keeps secret or the settings type declares.
    func quotesValue(at path: ValuePath) -> Bool {
        !pipeline.containsSecrets(at: path)
            && !(store?.secretPaths.contains {
                path.components.starts(with: $0.components) || $0.components.starts(with: path.components)
            } ?? false)
    }

    /// The locks in force.
    var locks: [SettingsLock] {
        storedMemory.withLock { $0.layers?.locks ?? [] }
    }

    /// The defaults merged with every read-only layer, as last read: what the top layer lies over; nil
    /// for a store that is not layered.
    var lowerLayers: JSONValue? {
        storedMemory.withLock { $0.layers?.base }
    }

    /// What the root remembers of its store and the document of its value, read together.
    func consistentState() throws -> (StoredMemory, JSONValue) {
        try serialized(path: .root) {
            (storedMemory.withLock { $0 }, try pipeline.encode(committed.rootForUpdate))
        }
    }
}
