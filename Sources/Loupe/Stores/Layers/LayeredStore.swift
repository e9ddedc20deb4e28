#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Settings in layers, as Linux deploys them: the vendor's defaults, the administrator's file and drop-ins,
/// then the user's file on top, with paths an administrator may lock.
///
/// ```swift
/// let store = LayeredStore(
///     layers: [
///         .file("/usr/share/app/settings.json"),       // the vendor's defaults
///         .file("/etc/app/settings.json"),             // the administrator's
///         .directory("/etc/app/settings.d"),           // drop-ins, in name order
///     ],
///     top: FileStore(path: home + "/.config/app/settings.json"),
///     locks: ["/etc/app/locks"])
/// let root = try RootLens(default: Settings(), store: store)
/// ```
///
/// A store like any other, and the same document pipeline:
///
/// - **Each layer is a merge patch (RFC 7386) over the layers below it**, as a stored document is over
///   the defaults. The value is the defaults merged with every read-only layer in order, then with the top
///   layer. Each document is migrated from its own version stamp.
/// - **Writes go to the top layer only**, and it stores just the patch from everything below to the new
///   value. So a later change an administrator makes to a lower layer still reaches a user wherever the
///   user did not override it.
/// - **Every layer is watched** (files, drop-in directories, and read-only stores that can watch, such as
///   etcd): an edit in `/etc` reaches observers like a local update. Files in lower layers are read
///   without any lock or write, so a daemon that may only read `/etc` follows every edit. So are the files
///   that the secret references in the layers and the top read (``SecretReferences``): a rotated secret
///   reaches the root as an edit does.
/// - **A bad layer does not stop the others.** When an edited layer does not parse or does not decode,
///   the root keeps that layer's last good document, logs the error naming the file, and reports it on
///   its `errors`; the other layers' changes apply. (On load and `reload()`, a bad layer is an error, so a
///   program never starts on settings it cannot read.)
/// - **Locks**, as dconf's lockdown: text files, one path per line (`upstream.url`, or dconf's
///   `/upstream/url`), `#` starting a comment, given as files or directories of them. A locked path and
///   everything under it keep the value of the layers below the top: a write there throws
///   ``SettingsError/Code/locked`` naming the path and the lock's file, and a value the top layer already
///   holds there is ignored, with a log line.
/// - **Provenance**: `RootLens.provenance(ofPath:)` says which layer gave a value and which it overrides
///   (`loupe explain PATH`).
///
/// It keeps the store contract like any other store: a load reads every layer, lock file and the top,
/// and its token identifies all of them, so a save made over layers that changed since is a conflict and
/// the root re-runs the update over the new layers. The store holds secrets when its top or any store
/// layer does.
public final class LayeredStore: DocumentStore {
    /// A read-only layer.
    public struct Layer: Sendable {
        /// Makes the layer's source, reading files through the store's file system.
        let makeSource: @Sendable (any ReadableFileSystem) -> any LayerSource
        /// How the layer shows in the store's description.
        let label: String
        /// Whether the layer's every value is a secret: a store whose secret paths hold the root.
        let isSecret: Bool
        /// Whether the layer lies above the top (the environment, `--set`, credentials): read, never written.
        var isOverride = false

        /// A file, in `format`. A missing file is an empty layer, and is read when it appears.
        public static func file(_ path: String, format: any DocumentCodec = JSONCodec()) -> Layer {
            Layer(
                makeSource: { LayerFile(path: path, codec: format, fileSystem: $0) }, label: path, isSecret: false)
        }

        /// A drop-in directory: each file named with one of `format`'s extensions (`*.json`), in name order,
        /// is a layer over the ones before, as systemd reads `*.conf.d`. Hidden files are skipped; a missing
        /// directory holds no layers, and files are read as they appear.
        public static func directory(_ path: String, format: any DocumentCodec = JSONCodec()) -> Layer {
            Layer(
                makeSource: { DropInDirectory(path: path, codec: format, fileSystem: $0) }, label: path + "/",
                isSecret: false)
        }

        /// ``directory(_:format:)`` when `path` names a directory when the store is made, else
        /// ``file(_:format:)``.
        public static func fileOrDirectory(_ path: String, format: any DocumentCodec = JSONCodec()) -> Layer {
            Layer(
                makeSource: { fileSystem -> any LayerSource in
                    if fileSystem.isDirectory(path) {
                        return DropInDirectory(path: path, codec: format, fileSystem: fileSystem)
                    }
                    return LayerFile(path: path, codec: format, fileSystem: fileSystem)
                },
                label: path, isSecret: false)
        }

        /// Any store, read only: etcd for a fleet's defaults, for example. It is watched when it can be.
        public static func store(_ store: some DocumentStore) -> Layer {
            let source = StoreLayer(store)
            return Layer(
                makeSource: { _ in source }, label: store.description, isSecret: store.secretPaths.contains(.root))
        }

        // MARK: Overrides, above the top

        /// The process's environment variables under `prefix`, over every file, the top's included; never
        /// written.
        ///
        /// Each variable names a path: `__` separates levels, a single `_` separates words that match a
        /// camelCase (or snake_case) coding key (`MYAPP_TICKER__INTERVAL_SECONDS` is `ticker.intervalSeconds`),
        /// a number is an array index (`MYAPP_UPSTREAMS__0__URL`; the index one past the end adds an
        /// element), and a dictionary key matches regardless of case (a new key is in lower case). The
        /// text is typed by the settings type at the path: `9000` is a number for an `Int`, `true` stays a
        /// string for a `String`; a structured part takes JSON. A variable that names no setting is
        /// ignored with a warning naming it and the closest setting; text the type refuses fails the load,
        /// naming the variable and the path.
        ///
        /// - Parameters:
        ///   - prefix: The program's prefix, with its separator: `"MYAPP_"`.
        ///   - variables: The variables to read; by default (nil), the process's environment, read at
        ///     each load.
        public static func environment(prefix: String, variables: (@Sendable () -> [String: String])? = nil) -> Layer {
            let source = EnvironmentLayer(prefix: prefix, variables: variables)
            return Layer(makeSource: { _ in source }, label: source.name, isSecret: false, isOverride: true)
        }

        /// `path=value` arguments, as a program's repeated `--set path=value` options give them, over every
        /// file and the environment listed before; never written. Each value is typed as
        /// ``environment(prefix:variables:)`` types it, and errors name the argument (`--set server.port`).
        /// A path that names no setting fails the load (``SettingsError/Code/invalidPath``): it is a typo.
        public static func arguments(_ arguments: [String]) -> Layer {
            let source = ArgumentsLayer(arguments)
            return Layer(makeSource: { _ in source }, label: ArgumentsLayer.name, isSecret: false, isOverride: true)
        }

        /// A directory of credentials: each regular file is one secret value, its name the path
        /// (`upstream.token`), its content the value without one trailing newline, as systemd's
        /// `$CREDENTIALS_DIRECTORY` and a Kubernetes Secret volume provide them. Over every file; never
        /// written; watched (a Secret volume's `..data` swap included). Its values are secrets: never in
        /// a log or an error, and masked by the `loupe` tool.
        ///
        /// A directory that cannot be read (or is missing) fails the load, naming it.
        public static func directory(credentials path: String) -> Layer {
            Layer(
                makeSource: { CredentialsDirectory(path: path, fileSystem: $0) }, label: "credential directory \(path)",
                isSecret: false, isOverride: true)
        }
    }

    /// The writable top layer, where updates are stored.
    public let top: any DocumentStore
    private let layers: [Layer]
    private let layerSources: [any LayerSource]
    private let lockSources: [any LayerSource]
    /// The sources of the layers above the top, lowest first.
    private let overrideSources: [any LayerSource]
    /// The files the secret references of the last load read.
    private let referencedFiles: ReferencedFiles

    /// Creates a store of `layers` (read-only, lowest first) under the writable `top`.
    ///
    /// The override layers among `layers` (``Layer/environment(prefix:variables:)``, ``Layer/arguments(_:)``,
    /// ``Layer/directory(credentials:)``) lie above `top`, in the order given; the others below it.
    ///
    /// - Parameters:
    ///   - layers: The read-only layers, lowest first.
    ///   - top: Where updates are stored: the user's file, usually.
    ///   - locks: Lock files, or directories of them (every file not hidden and not ending in `~`).
    public convenience init(layers: [Layer], top: some DocumentStore, locks: [String] = []) {
        self.init(layers: layers, top: top, locks: locks, fileSystem: LocalFileSystem())
    }

    /// Creates a store whose layer and lock files are read through `fileSystem`: an
    /// `InMemoryFileSystem` (in `LoupeTesting`) in the logic tests.
    package init(layers: [Layer], top: some DocumentStore, locks: [String] = [], fileSystem: any ReadableFileSystem) {
        self.layers = layers
        self.top = top
        layerSources = layers.filter { !$0.isOverride }.map { $0.makeSource(fileSystem) }
        overrideSources = layers.filter(\.isOverride).map { $0.makeSource(fileSystem) }
        lockSources = locks.map { LockFiles.source($0, fileSystem: fileSystem) }
        referencedFiles = ReferencedFiles(fileSystem: fileSystem)
    }

    /// `JSON file /home/me/.config/app/settings.json over 3 layers`, `… with locks` where there are locks
    /// and no layers, or the top's alone when there are neither; never a value.
    public var description: String {
        if layers.isEmpty { return lockSources.isEmpty ? top.description : "\(top.description) with locks" }
        return "\(top.description) over \(layers.count) layer\(layers.count == 1 ? "" : "s")"
    }

    /// The top layer's date and key strategies.
    public var coding: DocumentCoding { top.coding }

    /// The values the top store keeps secret (a sops file's encrypted values); the root path, every value,
    /// where a store layer's every value is a secret (a keyring).
    public var secretPaths: [ValuePath] { layers.contains(where: \.isSecret) ? [.root] : top.secretPaths }

    /// The top store's: its history is the changes written to it (the read-only layers keep none), its
    /// report is what readers share, its lock and deferred writes are where the writes go. The positions of
    /// values are every layer's; the files secret references read are followed here.
    public var capabilities: StoreCapabilities {
        var capabilities = top.capabilities
        capabilities.textPositions = LayerPositions(top: capabilities.textPositions, sources: layerSources)
        capabilities.fleetReport = capabilities.fleetReport.map(TopReport.init)
        capabilities.watchesReferencedFiles = true
        return capabilities
    }

    /// The top's report, told the top's part of the tokens this store makes.
    private struct TopReport: StoreFleetReport {
        let top: any StoreFleetReport

        func rootDidApply(_ token: ChangeToken, refusal: SettingsError?) {
            top.rootDidApply(token.parts?.first ?? token, refusal: refusal)
        }

        func appliedStatus() throws -> AppliedStatus { try top.appliedStatus() }
    }

    /// Where values are written in the top's file or in a read-only layer's.
    private struct LayerPositions: StoreTextPositions {
        let top: (any StoreTextPositions)?
        let sources: [any LayerSource]

        func positions(of paths: [ValuePath], inFile source: String) -> [TextPosition?] {
            for layer in sources {
                if let positions = layer.positions(of: paths, inFile: source) { return positions }
            }
            return top?.positions(of: paths, inFile: source) ?? paths.map { _ in nil }
        }
    }

    private var sources: [any LayerSource] { layerSources + lockSources + overrideSources }

    /// Reads every layer, every lock file and the top, and notes the files their secret references read.
    /// A layer that cannot be read is a layer whose content says so; the top's failure is thrown.
    public func load() throws -> StoredDocument {
        var read: [StoredLayer] = []
        var tokens: [ChangeToken] = []
        for source in sources {
            let (layers, token) = source.load()
            read += layers
            tokens.append(token)
        }
        let stored = try top.load()
        read += stored.layers
        var documents = read.compactMap { layer in
            if case .document(let document) = layer.content { (document, layer.writers) } else { nil }
        }
        if let document = stored.document { documents.append((document, stored.writers)) }
        tokens.append(referencedFiles.read(documents))
        return StoredDocument(
            stored.document, token: ChangeToken(combining: [stored.token] + tokens), layers: read,
            source: stored.source ?? top.description, writers: stored.writers)
    }

    /// Stores `document` in the top layer, if neither the top nor any layer below changed since `token`.
    public func save(_ document: JSONValue, replacing token: ChangeToken) throws -> ChangeToken {
        let (topToken, lower) = try unchangedLayers(since: token)
        return ChangeToken(combining: [try top.save(document, replacing: topToken)] + lower)
    }

    /// Deletes the top layer's document, if nothing changed since `token`; the value is then the layers
    /// below.
    public func remove(replacing token: ChangeToken) throws -> ChangeToken {
        let (topToken, lower) = try unchangedLayers(since: token)
        return ChangeToken(combining: [try top.remove(replacing: topToken)] + lower)
    }

    /// Watches every layer, every lock file, the top and the files secret references read. A layer that
    /// cannot be watched here is still read again before each write and on `reload()`.
    public func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        var watches: [any StoreWatch] = [referencedFiles.watch(onChange)]
        for source in sources {
            if let watch = try? source.watch(onChange) { watches.append(watch) }
        }
        if let watch = try? top.watch(onChange) { watches.append(watch) }
        return StoreWatches(watches)
    }

    /// `token`'s parts, the top's and the others' (the lower layers', the files references read), when the
    /// others are as it says; else a conflict.
    private func unchangedLayers(since token: ChangeToken) throws -> (top: ChangeToken, lower: [ChangeToken]) {
        let tokens = sources.map { $0.token() } + [referencedFiles.token()]
        guard let parts = token.parts, let topToken = parts.first, Array(parts.dropFirst()) == tokens else {
            throw SettingsError(
                .conflict, store: description,
                reason: "a layer, or a file a secret reference reads, changed since the settings were read")
        }
        return (topToken, Array(parts.dropFirst()))
    }
}

extension LayeredStore: CustomDebugStringConvertible {
    /// The layers, lowest first, the top and the lock files; never a value.
    public var debugDescription: String {
        "LayeredStore(layers: [\(layers.map(\.label).joined(separator: ", "))], top: \(top.description), locks: \(lockSources.count))"
    }
}
