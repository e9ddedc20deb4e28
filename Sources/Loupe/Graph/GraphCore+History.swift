import Foundation
import Logging

// The store's history through the root: reading it, purging it, rolling back to a revision.
extension GraphCore {
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
            committedAny =
                try retryingConflicts(path: .root) { _ in
                    try restore(document, revision: revision, keeping: purged, in: store)
                } || committedAny
        }
    }

    /// Stores `document` (nil: removes the stored document) if the root it makes with the layers the store
    /// holds now passes the type, the rules and the locks, and commits that root. Call it holding the
    /// update lock.
    func restore(
        _ document: JSONValue?, revision: Int, keeping purged: [ValuePath], in store: any DocumentStore
    ) throws -> Bool {
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
                while !parent.components.isEmpty, document![path: parent] == .object([:]), current?[path: parent] == nil
                {
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
            throw SettingsError(
                .invalidValue, path: error.path, store: storeName,
                reason: "revision \(revision) cannot be restored: \(error.reason)", cause: error)
        }
        // A lock keeps its path at the layers below: a rollback that stores another value there is refused,
        // as a `set` there is. (One that takes a held value out, as a reset does, is not.)
        for (path, lock) in loaded.ignored where current?[path: path] != document?[path: path] {
            throw SettingsError.locked(path, by: lock)
        }
        var memory = loaded.memory
        memory.token =
            try document.map { try store.save($0, replacing: stored.token) } ?? store.remove(replacing: stored.token)
        remember(memory)
        rejected.withLock { $0 = nil }
        return try commit(loaded.root, saving: nil)
    }

    /// Makes every saved change durable now (for stores that write later).
    func flush() throws {
        try store?.flush()
    }
}
