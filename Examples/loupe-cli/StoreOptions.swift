import ArgumentParser
import DaemonSettings
import Foundation
import Loupe
import LoupeEtcd
import LoupeKeyring
import LoupeYAML

/// Which store the command works on, and how to read it.
struct StoreOptions: ParsableArguments {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, plist, binaryPlist = "binary-plist", yaml
    }

    enum Schema: String, ExpressibleByArgument, CaseIterable {
        /// The example daemon's typed settings.
        case daemon
    }

    @Option(help: "A settings file; its format comes from its extension (.json, .plist, .yaml/.yml). With --layer, the writable top layer (the user's file).")
    var file: String?

    @Option(name: .customLong("layer"), help: ArgumentHelp(
        "A read-only layer under --file: a file, or a drop-in directory whose *.json files are layers in name order. Repeat it, lowest first.",
        valueName: "path"))
    var layers: [String] = []

    @Option(name: .customLong("locks"), help: ArgumentHelp(
        "A lock file, or a directory of them: one locked path per line, # for comments, as dconf has them. A write to a locked path exits with 77. Repeatable.",
        valueName: "path"))
    var locks: [String] = []

    @Option(help: "The file's format, when its extension does not say it.")
    var format: Format?

    @Option(help: "A UserDefaults suite (with --key).")
    var defaults: String?

    @Option(help: "The key in the UserDefaults suite, or in etcd.")
    var key: String?

    @Option(help: "etcd endpoints, comma-separated (with --key): http://127.0.0.1:2379,...")
    var etcd: String?

    @Option(help: "A keyring item, as SERVICE/ACCOUNT.")
    var keyring: String?

    @Option(help: "Check every change against a typed schema: 'daemon' for the example settings-daemon. Without it, any document.")
    var schema: Schema?

    @Flag(help: "Print values from the keyring as they are instead of masking them.")
    var reveal = false

    func validate() throws {
        let chosen = [file != nil, defaults != nil, keyring != nil, etcd != nil].filter { $0 }.count
        guard chosen == 1 else {
            throw ValidationError("choose one store: --file, --defaults (with --key), --keyring or --etcd (with --key)")
        }
        if defaults != nil && key == nil { throw ValidationError("--defaults needs --key") }
        if file == nil && !(layers.isEmpty && locks.isEmpty) {
            throw ValidationError("--layer and --locks need --file, the writable top layer")
        }
        if etcd != nil && key == nil { throw ValidationError("--etcd needs --key") }
        if let keyring, keyring.split(separator: "/", maxSplits: 1).count != 2 {
            throw ValidationError("--keyring takes SERVICE/ACCOUNT")
        }
    }

    /// Whether values are secrets to mask when printed.
    var masksValues: Bool { keyring != nil && !reveal }

    /// The codec of the file store (JSON for the others).
    var codec: any DocumentCodec {
        Self.codec(of: format ?? file.map(Self.format(ofPath:)) ?? .json)
    }

    private static func codec(of format: Format) -> any DocumentCodec {
        switch format {
        case .json: JSONCodec()
        case .plist: PropertyListCodec(format: .xml)
        case .binaryPlist: PropertyListCodec(format: .binary)
        case .yaml: YAMLCodec()
        }
    }

    private static func format(ofPath path: String) -> Format {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "plist": .plist
        case "yaml", "yml": .yaml
        default: .json
        }
    }

    /// The root lens over the chosen store, for the schema's type or any document.
    func withRoot<R>(watch: Bool = false, _ body: (any SettingsDocument) throws -> R) throws -> R {
        switch schema {
        case .daemon: try body(Document(root: makeRoot(DaemonSettings(), watch: watch)))
        case nil: try body(Document(root: makeRoot(JSONValue.object([:]), watch: watch)))
        }
    }

    private func makeRoot<Root: Codable & Sendable & Equatable>(_ defaultValue: Root, watch: Bool) throws -> RootLens<Root> {
        try RootLens(default: defaultValue, store: makeStore(), watch: watch)
    }

    /// The chosen store.
    private func makeStore() throws -> any DocumentStore {
        if let file {
            let top = FileStore(path: file, format: codec, permissions: 0o644)
            if layers.isEmpty && locks.isEmpty { return top }
            return LayeredStore(
                layers: layers.map { .fileOrDirectory($0, format: Self.codec(of: format ?? Self.format(ofPath: $0))) },
                top: top, locks: locks)
        }
        if let defaults, let key {
            return try DefaultsStore(suite: defaults, key: key)
        }
        if let etcd, let key {
            return try EtcdStore(endpoints: etcd.split(separator: ",").map(String.init), key: key)
        }
        let parts = keyring!.split(separator: "/", maxSplits: 1).map(String.init)
        return KeyringStore(service: parts[0], account: parts[1])
    }
}

/// A settings document of some type, reached by string paths: what every command works on.
protocol SettingsDocument {
    func value(atPath path: String) throws -> JSONValue
    func set(atPath path: String, to value: JSONValue) throws
    func remove(atPath path: String) throws
    /// Resets the part at `path` to the default's.
    func reset(atPath path: String) throws
    /// The document as the store holds it.
    func storedDocument() throws -> JSONValue?
    /// Where the value at `path` comes from.
    func provenance(atPath path: String) throws -> Provenance
    /// The layers, lowest first, and the locks.
    func layers() throws -> [SettingsLayer]
    var locks: [SettingsLock] { get }
    /// The whole value, as JSON.
    var json: JSONValue { get throws }
    /// Replaces the whole value with `edited`, if the value is still `original` (else: a conflict).
    func replace(_ original: JSONValue, with edited: JSONValue) throws
    /// Decodes `json` as the document's type, to check an edit.
    func check(_ json: JSONValue) throws
    /// Calls `handler` after each change, with the whole value.
    func observe(_ handler: @escaping @Sendable (JSONValue) -> Void) -> ObservationToken
    func observeErrors(_ handler: @escaping @Sendable (any Error) -> Void) -> ObservationToken
}

struct Document<Root: Codable & Sendable & Equatable>: SettingsDocument {
    let root: RootLens<Root>

    func value(atPath path: String) throws -> JSONValue { try root.lens.value(atPath: path) }
    func set(atPath path: String, to value: JSONValue) throws { try root.lens.set(atPath: path, to: value) }
    func remove(atPath path: String) throws { try root.lens.remove(atPath: path) }
    func reset(atPath path: String) throws { try root.reset(atPath: path) }
    func storedDocument() throws -> JSONValue? { try root.storedDocument() }
    func provenance(atPath path: String) throws -> Provenance { try root.provenance(ofPath: path) }
    func layers() throws -> [SettingsLayer] { try root.layers() }
    var locks: [SettingsLock] { root.locks }
    var json: JSONValue { get throws { try root.lens.value(atPath: "") } }

    func replace(_ original: JSONValue, with edited: JSONValue) throws {
        let expected = try original.decode(Root.self)
        let replacement = try edited.decode(Root.self)
        try root.update { current in
            guard current == expected else { throw CLIError.conflict("the settings changed while you were editing them; nothing was written") }
            current = replacement
        }
    }

    func check(_ json: JSONValue) throws {
        let value = try json.decode(Root.self)
        try (value as? any Validated)?.check()
    }

    func observe(_ handler: @escaping @Sendable (JSONValue) -> Void) -> ObservationToken {
        let lens = root.readOnly
        return root.observe { _ in
            if let json = try? lens.value(atPath: "") { handler(json) }
        }
    }

    func observeErrors(_ handler: @escaping @Sendable (any Error) -> Void) -> ObservationToken {
        root.observeErrors(handler)
    }
}
