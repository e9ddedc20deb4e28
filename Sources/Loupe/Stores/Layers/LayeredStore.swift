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
///   without any lock or write, so a daemon that may only read `/etc` follows every edit.
/// - **A bad layer does not stop the others.** When an edited layer does not parse or does not decode,
///   the root keeps that layer's last good document, logs the error naming the file, and reports it on
///   its `errors`; the other layers' changes apply. (On load and `reload()`, a bad layer is an error, so a
///   program never starts on settings it cannot read.)
/// - **Locks**, as dconf's lockdown: text files, one path per line (`upstream.url`, or dconf's
///   `/upstream/url`), `#` starting a comment, given as files or directories of them. A locked path and
///   everything under it keep the value of the layers below the top: a write there throws
///   ``LensError/Code/locked`` naming the path and the lock's file, and a value the top layer already
///   holds there is ignored, with a log line.
/// - **Provenance**: `RootLens.provenance(ofPath:)` says which layer gave a value and which it overrides
///   (`loupe explain PATH`).
///
/// Reading it as a plain store (``load()``, ``save(_:)``) reads and writes the top layer's document.
public final class LayeredStore: WritableDocumentStore, LockingStore, WatchingStore, DeferredWriteStore {
    /// A read-only layer.
    public struct Layer: Sendable {
        let source: any LayerSource
        /// How the layer shows in the store's description.
        let label: String

        /// A file, in `format`. A missing file is an empty layer, and is read when it appears.
        public static func file(_ path: String, format: any DocumentCodec = JSONCodec()) -> Layer {
            Layer(source: LayerFile(path: path, codec: format), label: path)
        }

        /// A drop-in directory: each file named with one of `format`'s extensions (`*.json`), in name order,
        /// is a layer over the ones before, as systemd reads `*.conf.d`. Hidden files are skipped; a missing
        /// directory holds no layers, and files are read as they appear.
        public static func directory(_ path: String, format: any DocumentCodec = JSONCodec()) -> Layer {
            Layer(source: DropInDirectory(path: path, codec: format), label: path + "/")
        }

        /// ``directory(_:format:)`` when `path` names a directory now, else ``file(_:format:)``.
        public static func fileOrDirectory(_ path: String, format: any DocumentCodec = JSONCodec()) -> Layer {
            var info = stat()
            let isDirectory = stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
            return isDirectory ? directory(path, format: format) : file(path, format: format)
        }

        /// Any store, read only: etcd for a fleet's defaults, for example. It is watched when it can be.
        public static func store(_ store: some DocumentStore) -> Layer {
            Layer(source: StoreLayer(store), label: store.description)
        }
    }

    /// The writable top layer, where updates are stored.
    public let top: any WritableDocumentStore
    private let layers: [Layer]
    private let lockSources: [any LayerSource]
    /// The last good documents of each layer and each lock source, for rebuilding the stack when one
    /// changes.
    private let state = Locked<(layers: [[LayerDocument]], locks: [[LayerDocument]])>(([], []))

    /// Creates a store of `layers` (read-only, lowest first) under the writable `top`.
    ///
    /// - Parameters:
    ///   - layers: The read-only layers, lowest first.
    ///   - top: Where updates are stored: the user's file, usually.
    ///   - locks: Lock files, or directories of them (every file not hidden and not ending in `~`).
    public init(layers: [Layer], top: some WritableDocumentStore, locks: [String] = []) {
        self.layers = layers
        self.top = top
        lockSources = locks.map(LockFiles.source)
    }

    /// `JSON file /home/me/.config/app/settings.json over 3 layers`; never a value.
    public var description: String {
        "\(top.description) over \(layers.count) layer\(layers.count == 1 ? "" : "s")"
    }

    /// The top layer's date and key strategies.
    public var coding: DocumentCoding { top.coding }

    /// Where the top layer is, in provenance: its path for a file.
    var topSource: String { (top as? FileStore)?.path ?? top.description }

    // MARK: The stack

    /// Reads every layer, lock and the top afresh.
    ///
    /// - Throws: ``StoreError`` naming the first layer that cannot be read or parsed.
    func loadStack() throws -> LayerStack {
        let documents = try layers.map { try $0.source.load() }
        let locks = try lockSources.map { try $0.load() }
        let topDocument = try top.load()
        state.withLock { $0 = (documents, locks) }
        return LayerStack(
            lower: documents.flatMap { $0 }, top: topDocument, topSource: topSource,
            locks: LockFiles.locks(in: locks.flatMap { $0 }))
    }

    /// What changed in the layers since they were last read.
    struct Changes {
        /// Every read-only layer's documents, when any changed.
        var lower: [LayerDocument]?
        /// Every lock, when any lock file changed.
        var locks: [SettingsLock]?
        var top: StoreChange
        /// Layers that changed into something that cannot be read; they keep their last good documents.
        var errors: [StoreError]

        var isEmpty: Bool { lower == nil && locks == nil && top == .unchanged }
    }

    /// Reads what changed since the last read.
    ///
    /// - Throws: ``StoreError`` when the top layer cannot be read (the root then keeps its value and
    ///   refuses updates until it can).
    func loadChanges() throws -> Changes {
        var errors: [StoreError] = []
        let (documents, locks) = state.withLock { $0 }
        var changedLayers = documents
        var layersChanged = false
        for (index, layer) in layers.enumerated() {
            guard let fresh = layer.source.loadIfChanged(errors: &errors) else { continue }
            changedLayers[index] = fresh
            layersChanged = true
        }
        var changedLocks = locks
        var locksChanged = false
        for (index, source) in lockSources.enumerated() {
            guard let fresh = source.loadIfChanged(errors: &errors) else { continue }
            changedLocks[index] = fresh
            locksChanged = true
        }
        state.withLock { $0 = (changedLayers, changedLocks) }
        let topChange = try (top as? any ChangeDetectingStore)?.loadIfChanged() ?? .unchanged
        return Changes(
            lower: layersChanged ? changedLayers.flatMap { $0 } : nil,
            locks: locksChanged ? LockFiles.locks(in: changedLocks.flatMap { $0 }) : nil,
            top: topChange, errors: errors)
    }

    // MARK: DocumentStore, as the top layer

    /// The top layer's document.
    public func load() throws -> JSONValue? {
        try top.load()
    }

    /// Stores `document` in the top layer.
    public func save(_ document: JSONValue) throws {
        try top.save(document)
    }

    /// Saves in the top layer, encoding when it writes if it defers writes.
    public func save(encoding encode: @escaping @Sendable () throws -> JSONValue) throws {
        if let deferred = top as? any DeferredWriteStore {
            try deferred.save(encoding: encode)
        } else {
            try top.save(encode())
        }
    }

    /// Deletes the top layer's document; the value is then the layers below.
    public func remove() throws {
        try top.remove()
    }

    /// Makes the top layer's writes durable, if it defers them.
    public func flush() throws {
        try (top as? any DeferredWriteStore)?.flush()
    }

    /// Holds the top layer's lock across processes, if it has one.
    public func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R {
        guard let locking = top as? any LockingStore else { return try body() }
        return try locking.withExclusiveAccess(body)
    }

    /// Whether the top layer changed; the root itself asks every layer.
    public func loadIfChanged() throws -> StoreChange {
        try (top as? any ChangeDetectingStore)?.loadIfChanged() ?? .unchanged
    }

    /// Watches every layer, every lock file and the top; nil when none of them can be watched. A layer
    /// that cannot be watched here is still read again before each update and on `reload()`.
    public func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        var watches: [any StoreWatch] = []
        for source in layers.map(\.source) + lockSources {
            if let watch = try? source.watch(onChange) { watches.append(watch) }
        }
        if let watching = top as? any WatchingStore, let watch = try? watching.watch(onChange) { watches.append(watch) }
        return watches.isEmpty ? nil : Watches(watches)
    }

    /// Several watches as one.
    private struct Watches: StoreWatch {
        let all: [any StoreWatch]
        init(_ all: [any StoreWatch]) { self.all = all }
        func cancel() { all.forEach { $0.cancel() } }
    }
}

extension LayeredStore: CustomDebugStringConvertible {
    /// The layers, lowest first, the top and the lock files; never a value.
    public var debugDescription: String {
        "LayeredStore(layers: [\(layers.map(\.label).joined(separator: ", "))], top: \(top.description), locks: \(lockSources.count))"
    }
}
