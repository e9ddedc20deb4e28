import Foundation

/// A read-only source of layer documents: a file, a drop-in directory (a document per file), or a store.
///
/// Sources are read under the root's update lock, one call at a time.
protocol LayerSource: Sendable {
    /// Reads every document the source holds now, in order.
    ///
    /// - Throws: ``StoreError`` naming the file or store that cannot be read or parsed.
    func load() throws -> [LayerDocument]

    /// The source's documents when something changed since the last load; nil when nothing did. A file
    /// that cannot be read or parsed keeps its last good document: its error is appended to `errors`,
    /// and it is not read again until it changes.
    func loadIfChanged(errors: inout [StoreError]) -> [LayerDocument]?

    /// Starts reporting changes; nil when the source cannot report them (it is then read again on
    /// `reload()` only).
    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)?
}

/// One file of a layer: read without a lock or a write, so a reader allowed only to read it follows every
/// change.
final class LayerFile: LayerSource {
    let path: String
    /// How the file's bytes become a document.
    private let parse: @Sendable (Data, _ name: String) throws -> JSONValue
    /// The file's name in errors: `JSON file /etc/app/settings.json`.
    let name: String
    private let state = Locked(State())

    private struct State {
        /// The version of the file last read (nil: there was none), and what it held.
        var lastSeen: FileIdentity?
        var document: JSONValue?
        var loaded = false
    }

    init(path: String, name: String, parse: @escaping @Sendable (Data, _ name: String) throws -> JSONValue) {
        self.path = path
        self.name = name
        self.parse = parse
    }

    /// A layer file in `codec`'s format.
    convenience init(path: String, codec: any DocumentCodec) {
        let name = "\(codec.formatName) file \(path)"
        self.init(path: path, name: name) { data, name in try codec.parseDocument(data, store: name) }
    }

    func load() throws -> [LayerDocument] {
        let target = try resolved()
        let read: (JSONValue, FileIdentity)?
        do {
            read = try FileSystem.readSettled(target) { try parse($0, name) }
        } catch let error as SystemCallError {
            throw StoreError(.unreadable, store: name, path: path, error)
        }
        state.withLock { state in
            state.lastSeen = read?.1
            state.document = read?.0
            state.loaded = true
        }
        return documents(read?.0)
    }

    func loadIfChanged(errors: inout [StoreError]) -> [LayerDocument]? {
        let (lastSeen, loaded) = state.withLock { ($0.lastSeen, $0.loaded) }
        let current: FileIdentity?
        do {
            current = try FileSystem.identity(of: resolved())
        } catch {
            errors.append(.reading(error, store: name))
            return nil
        }
        if loaded && current == lastSeen { return nil }
        do {
            return try load()
        } catch {
            // Keep the last good document; look again when the file changes again.
            state.withLock { state in
                state.lastSeen = current
                state.loaded = true
            }
            errors.append(.reading(error, store: name))
            return nil
        }
    }

    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        try FileWatcher(path: path, onChange: onChange)
    }

    /// The document the file held when last read, for a directory that lists it again.
    var lastDocuments: [LayerDocument] { documents(state.withLock { $0.document }) }

    private func documents(_ document: JSONValue?) -> [LayerDocument] {
        document.map { [LayerDocument(source: path, name: name, document: $0)] } ?? []
    }

    private func resolved() throws -> String {
        do {
            return try FileSystem.resolvingSymlinks(path)
        } catch let error as SystemCallError {
            throw StoreError(.unreadable, store: name, path: path, error)
        }
    }
}

/// A drop-in directory (`/etc/app/settings.d`): each of its files whose name ends in the extension, in
/// name order (bytewise, as systemd orders drop-ins), is a layer over the ones before. Hidden files
/// (editors' and Loupe's own temporary files, Kubernetes' `..data`) are skipped; a directory that does
/// not exist holds no layers.
final class DropInDirectory: LayerSource {
    let path: String
    /// Which names are layers.
    private let includes: @Sendable (String) -> Bool
    /// Makes the reader of one file.
    private let makeFile: @Sendable (String) -> LayerFile
    private let files = Locked<[String: LayerFile]>([:])
    /// The names listed last, in order.
    private let listed = Locked<[String]?>(nil)

    init(path: String, includes: @escaping @Sendable (String) -> Bool, makeFile: @escaping @Sendable (String) -> LayerFile) {
        self.path = path
        self.includes = includes
        self.makeFile = makeFile
    }

    /// Drop-ins in `codec`'s format, named with one of its ``DocumentCodec/fileExtensions``.
    convenience init(path: String, codec: any DocumentCodec) {
        let suffixes = codec.fileExtensions.map { "." + $0 }
        self.init(path: path, includes: { name in suffixes.contains { name.hasSuffix($0) } }, makeFile: { LayerFile(path: $0, codec: codec) })
    }

    private var name: String { "drop-in directory \(path)" }

    func load() throws -> [LayerDocument] {
        var documents: [LayerDocument] = []
        for file in try list() { documents += try file.load() }
        return documents
    }

    func loadIfChanged(errors: inout [StoreError]) -> [LayerDocument]? {
        let before = listed.withLock { $0 }
        let current: [LayerFile]
        do {
            current = try list()
        } catch {
            errors.append(.reading(error, store: name))
            return nil
        }
        var changed = before != current.map(\.path)
        var documents: [LayerDocument] = []
        for file in current {
            if let fresh = file.loadIfChanged(errors: &errors) {
                changed = true
                documents += fresh
            } else {
                documents += file.lastDocuments
            }
        }
        return changed ? documents : nil
    }

    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        try FileWatcher(path: path, contents: true, onChange: onChange)
    }

    /// The readers of the directory's layer files now, in name order.
    private func list() throws -> [LayerFile] {
        let names: [String]
        do {
            names = try FileSystem.entries(of: FileSystem.resolvingSymlinks(path)) ?? []
        } catch let error as SystemCallError {
            throw StoreError(.unreadable, store: name, path: path, error)
        }
        let chosen = names
            .filter { !$0.hasPrefix(".") && includes($0) && FileSystem.isRegularFile(path + "/" + $0) }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let paths = chosen.map { path + "/" + $0 }
        listed.withLock { $0 = paths }
        return files.withLock { files in
            files = Dictionary(uniqueKeysWithValues: paths.map { ($0, files[$0] ?? makeFile($0)) })
            return paths.map { files[$0]! }
        }
    }
}

/// A store as a read-only layer (etcd for a fleet's defaults, for example): its document, under its
/// description.
final class StoreLayer: LayerSource {
    let store: any DocumentStore

    init(_ store: any DocumentStore) {
        self.store = store
    }

    func load() throws -> [LayerDocument] {
        documents(try store.load())
    }

    func loadIfChanged(errors: inout [StoreError]) -> [LayerDocument]? {
        guard let detecting = store as? any ChangeDetectingStore else { return nil }
        do {
            guard case .changed(let document) = try detecting.loadIfChanged() else { return nil }
            return documents(document)
        } catch {
            errors.append(.reading(error, store: store.description))
            return nil
        }
    }

    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        try (store as? any WatchingStore)?.watch(onChange)
    }

    private func documents(_ document: JSONValue?) -> [LayerDocument] {
        document.map { [LayerDocument(source: store.description, name: store.description, document: $0)] } ?? []
    }
}

extension StoreError {
    /// `error` as a store error: itself when it is one, else an unreadable `store`.
    fileprivate static func reading(_ error: any Error, store: String) -> StoreError {
        error as? StoreError ?? StoreError(.unreadable, store: store, reason: "\(error)", cause: error)
    }
}
