import Foundation

/// A read-only source of layers under a ``LayeredStore``'s top: a file, a drop-in directory (a layer per
/// file), a directory of lock files, or a store.
protocol LayerSource: Sendable {
    /// Reads every layer the source holds now, in order, and the token of exactly what was read. Never
    /// throws: a file that cannot be read or parsed is a layer whose content is
    /// ``StoredLayer/Content/unreadable(_:)``.
    func load() -> (layers: [StoredLayer], token: ChangeToken)

    /// The token of what the source holds now, as cheaply as it can be had (a `stat` for a file read
    /// before and unchanged since).
    func token() -> ChangeToken

    /// Starts reporting changes; nil when the source cannot report them (it is then read again before
    /// each write, and on `reload()`).
    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)?

    /// Where the values at `paths` are written in the file `source` of this source's layers, as last read
    /// (see ``StoreTextPositions``); nil when no layer of it is that file or its format cannot say.
    func positions(of paths: [ValuePath], inFile source: String) -> [TextPosition?]?
}

extension LayerSource {
    func positions(of paths: [ValuePath], inFile source: String) -> [TextPosition?]? { nil }
}

/// One file of a layer: read without a lock or a write, so a reader allowed only to read it follows every
/// change.
final class LayerFile: LayerSource {
    /// The layer as read, and the text it was read from (where its values' lines are).
    private let file: WatchedFile<(content: StoredLayer.Content, text: Data)>
    /// The file's format, when it is a document whose values' positions the format can tell.
    private let codec: (any DocumentCodec)?

    var path: String { file.path }

    init(
        path: String, name: String, fileSystem: any ReadableFileSystem, codec: (any DocumentCodec)? = nil,
        parse: @escaping @Sendable (Data, _ name: String) throws -> StoredLayer.Content
    ) {
        self.codec = codec
        file = WatchedFile(path: path, name: name, fileSystem: fileSystem) { (try parse($0, name), $0) }
    }

    /// A layer file in `codec`'s format.
    convenience init(path: String, codec: any DocumentCodec, fileSystem: any ReadableFileSystem) {
        self.init(path: path, name: "\(codec.formatName) file \(path)", fileSystem: fileSystem, codec: codec) {
            data, name in .document(try codec.parseDocument(data, store: name))
        }
    }

    func load() -> (layers: [StoredLayer], token: ChangeToken) {
        do {
            guard let read = try file.read() else { return ([], .absent) }
            return (
                [StoredLayer(source: file.path, name: file.name, content: read.content.content, writers: read.writers)],
                read.token
            )
        } catch {
            return (
                [
                    StoredLayer(
                        source: file.path, name: file.name, content: .unreadable(.reading(error, store: file.name)))
                ], unreadableToken()
            )
        }
    }

    /// The version of the file now, its identity and the digest of its bytes: a `stat`, for a file
    /// unchanged since it was read (see ``WatchedFile/read()``).
    func token() -> ChangeToken {
        do {
            return try file.read()?.token ?? .absent
        } catch {
            return unreadableToken()
        }
    }

    /// The token of a file that does not read: its identity alone.
    private func unreadableToken() -> ChangeToken {
        (try? file.token()) ?? ChangeToken("unreadable")
    }

    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        try file.watch(onChange).watch
    }

    func positions(of paths: [ValuePath], inFile source: String) -> [TextPosition?]? {
        guard source == path, let codec, let text = file.lastReadVersion()?.content.text else { return nil }
        return codec.positions(of: paths, in: text)
    }
}

/// A drop-in directory (`/etc/app/settings.d`): each of its files whose name ends in the extension, in
/// name order (bytewise, as systemd orders drop-ins), is a layer over the ones before. Hidden files
/// (editors' and Loupe's own temporary files, Kubernetes' `..data`) are skipped; a directory that does
/// not exist holds no layers.
final class DropInDirectory: LayerSource {
    let path: String
    private let fileSystem: any ReadableFileSystem
    /// Which names are layers.
    private let includes: @Sendable (String) -> Bool
    /// Makes the reader of one file.
    private let makeFile: @Sendable (String) -> LayerFile
    /// The readers of the files listed last, kept so that an unchanged file is not parsed again.
    private let files = Locked<[String: LayerFile]>([:])

    init(
        path: String, fileSystem: any ReadableFileSystem, includes: @escaping @Sendable (String) -> Bool,
        makeFile: @escaping @Sendable (String) -> LayerFile
    ) {
        self.path = path
        self.fileSystem = fileSystem
        self.includes = includes
        self.makeFile = makeFile
    }

    /// Drop-ins in `codec`'s format, named with one of its ``DocumentCodec/fileExtensions``.
    convenience init(path: String, codec: any DocumentCodec, fileSystem: any ReadableFileSystem) {
        let suffixes = codec.fileExtensions.map { "." + $0 }
        self.init(
            path: path, fileSystem: fileSystem, includes: { name in suffixes.contains { name.hasSuffix($0) } },
            makeFile: { LayerFile(path: $0, codec: codec, fileSystem: fileSystem) })
    }

    private var name: String { "drop-in directory \(path)" }

    func load() -> (layers: [StoredLayer], token: ChangeToken) {
        let files: [LayerFile]
        do {
            files = try list()
        } catch {
            return (
                [StoredLayer(source: path, name: name, content: .unreadable(.reading(error, store: name)))],
                ChangeToken("unreadable")
            )
        }
        var layers: [StoredLayer] = []
        var tokens: [ChangeToken] = []
        for file in files {
            let (read, token) = file.load()
            layers += read
            tokens += [ChangeToken(file.path), token]
        }
        return (layers, ChangeToken(combining: tokens))
    }

    func token() -> ChangeToken {
        guard let files = try? list() else { return ChangeToken("unreadable") }
        return ChangeToken(combining: files.flatMap { [ChangeToken($0.path), $0.token()] })
    }

    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        try fileSystem.watch(path, contents: true, onChange: onChange).watch
    }

    func positions(of paths: [ValuePath], inFile source: String) -> [TextPosition?]? {
        files.withLock { $0[source] }?.positions(of: paths, inFile: source)
    }

    /// The readers of the directory's layer files now, in name order.
    private func list() throws -> [LayerFile] {
        let names: [String]
        do {
            names = try fileSystem.entries(of: fileSystem.resolvingSymlinks(path)) ?? []
        } catch let error as SystemCallError {
            throw SettingsError(.unreadable, store: name, path: path, error)
        }
        let paths =
            names
            .filter { !$0.hasPrefix(".") && includes($0) && fileSystem.isRegularFile(path + "/" + $0) }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .map { path + "/" + $0 }
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

    func load() -> (layers: [StoredLayer], token: ChangeToken) {
        do {
            let stored = try store.load()
            let layers = stored.document.map {
                [StoredLayer(source: store.description, name: store.description, content: .document($0))]
            }
            return (layers ?? [], stored.token)
        } catch {
            let failure = StoredLayer(
                source: store.description, name: store.description,
                content: .unreadable(.reading(error, store: store.description)))
            return ([failure], ChangeToken("unreadable"))
        }
    }

    func token() -> ChangeToken {
        (try? store.load().token) ?? ChangeToken("unreadable")
    }

    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        try store.watch(onChange)
    }

    func positions(of paths: [ValuePath], inFile source: String) -> [TextPosition?]? {
        store.capabilities.textPositions?.positions(of: paths, inFile: source)
    }
}

extension SettingsError {
    /// `error` as a store error: itself when it is one, else an unreadable `store`.
    static func reading(_ error: any Error, store: String) -> SettingsError {
        error as? SettingsError ?? SettingsError(.unreadable, store: store, reason: "\(error)", cause: error)
    }
}
