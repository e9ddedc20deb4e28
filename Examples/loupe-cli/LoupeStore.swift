import ArgumentParser
import DaemonSettings
import Foundation
import Loupe
import LoupeCommands
import LoupeEtcd
import LoupeKeyring
import LoupeSOPS
import LoupeYAML
import Logging

/// `loupe`: the settings commands of `LoupeCommands`, over a store its options choose.
@main
enum LoupeCLI {
    static func main() async {
        // A command line says what went wrong on one line of its own; the library's progress (an outside
        // change picked up while watching) is not for its user.
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        // `{"$secret": "keyring:SERVICE/ACCOUNT"}` in a settings file reads the login keyring's item.
        SecretReferences.registerKeyring()
        let arguments = Array(CommandLine.arguments.dropFirst())
        // sops files: `loupe encrypt|decrypt|rotate|updatekeys FILE`.
        if let verb = arguments.first, SOPSCommand.verbs.contains(verb) {
            SOPSCommand.main(arguments)
            return
        }
        // `serve`, the settings page, is a verb of this program's own, beside the command group's.
        if let serving = Serve.serveArguments(arguments) {
            await Serve.main(serving)
            return
        }
        SettingsCommand<LoupeStore>.main(showFlagsApart(arguments))
    }

    /// The arguments with `show --defaults` spelled `show --only-defaults`, and `template --format` and
    /// `check --format` `template --template-format` and `check --check-format`: loupe's own `--defaults
    /// SUITE` (a UserDefaults suite) and `--format` (the file's) would take them, as the group's options
    /// are matched anywhere in the line.
    static func showFlagsApart(_ arguments: [String]) -> [String] {
        var arguments = arguments
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { break }
            if LoupeStore.optionsTakingValues.contains(argument) {
                index += 2
                continue
            }
            if !argument.hasPrefix("-") {
                // The verb. Its own options that share a name with a store option get their other name.
                let renamed = [
                    "show": ("--defaults", "--only-defaults"), "template": ("--format", "--template-format"),
                    "check": ("--format", "--check-format"),
                ]
                guard let (name, otherName) = renamed[argument] else { break }
                for later in arguments.indices.dropFirst(index + 1) where arguments[later] == name {
                    arguments[later] = otherName
                }
                break
            }
            index += 1
        }
        return arguments
    }
}

/// Which store `loupe` works on, of which type, and how to read it.
struct LoupeStore: SettingsLocation {
    static let commandName = "loupe"
    static let abstract =
        "Reads and edits settings by path, in a file, UserDefaults, the keyring or etcd, while their users run."
    static let discussion = """
        Paths name parts of the settings: server.port, features.beta, items[3].name, "key.with.dots"; \
        set at the index one past an array's end appends an element.
        Values are JSON; a bare word of letters, digits and -_.:/ is taken as a string.

        Choose one store: --file, --defaults with --key, --keyring, or --etcd with --key. With --schema, \
        every change is checked against a registered type and its rules, and unset, show --defaults, \
        describe and schema know its defaults; without it, any document.

        Layers: --layer PATH (a file or a drop-in directory, lowest first, repeatable) under --file (the \
        writable top layer), with --locks PATH for an administrator's locks. Every command sees the \
        merged value; set and unset write the top layer only.

        sops files (a sops block, values sealed under age keys) open with the identities sops uses; their \
        encrypted values are masked unless --reveal. loupe encrypt|decrypt|rotate|updatekeys FILE seal and \
        open them (loupe encrypt --help).

        Overrides, over every layer and never written, as a program started with them sees its settings: \
        --env-prefix PREFIX (environment variables: PREFIX_SERVER__PORT=9000), --set PATH=VALUE \
        (repeatable) and --credentials DIR (one secret per file, named by its path, as systemd's \
        $CREDENTIALS_DIRECTORY). explain names each; a set where one wins is stored, with a warning.
        """

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, jsonc, plist, binaryPlist = "binary-plist", yaml, toml
    }

    /// The types `--schema` names.
    enum Schema: String, ExpressibleByArgument, CaseIterable {
        /// The example daemon's typed settings.
        case daemon
    }

    /// The options that take a value, which is never the verb.
    static let optionsTakingValues: Set<String> = [
        "--file", "--layer", "--locks", "--format", "--defaults", "--key", "--etcd", "--keyring", "--schema",
        "--file-mode",
        "--env-prefix", "--set", "--credentials",
    ]

    @Option(
        help:
            "A settings file; its format comes from its extension (.json, .jsonc, .toml, .plist, .yaml/.yml). With --layer, the writable top layer (the user's file)."
    )
    var file: String?

    @Option(
        name: .customLong("layer"),
        help: ArgumentHelp(
            "A read-only layer under --file: a file, or a drop-in directory whose files of the format are layers in name order. Repeat it, lowest first.",
            valueName: "path"))
    var layers: [String] = []

    @Option(
        name: .customLong("locks"),
        help: ArgumentHelp(
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

    @Option(
        help:
            "Check every change against a registered type: 'daemon' for the example settings-daemon. Without it, any document."
    )
    var schema: Schema?

    @Option(
        name: .customLong("env-prefix"),
        help: ArgumentHelp(
            "Read overrides from the environment variables under this prefix, as a program configured so does: PREFIX_SERVER__PORT=9000 sets server.port.",
            valueName: "prefix"))
    var environmentPrefix: String?

    @Option(
        name: .customLong("set"),
        help: ArgumentHelp(
            "An override, as a program's --set option gives it: path=value (typed by --schema). Repeatable; never written.",
            valueName: "path=value"))
    var overrides: [String] = []

    @Option(
        help: ArgumentHelp(
            "A credential directory: each file one secret value, its name the path (upstream.token), as systemd's $CREDENTIALS_DIRECTORY or a Kubernetes Secret volume. Never written; masked unless --reveal.",
            valueName: "dir"))
    var credentials: String?

    @Flag(help: "Print secret values (from the keyring or a credential directory) as they are instead of masking them.")
    var reveal = false

    @Option(
        name: .customLong("file-mode"),
        help: ArgumentHelp(
            "The mode (octal) of a settings file this command creates, less the umask: 600 by default, since settings often hold tokens; 644 for a file others may read. A file that exists keeps its mode.",
            valueName: "octal"))
    var fileMode: FileMode = FileMode(rawValue: 0o600)

    // Checked when the store is opened rather than in `validate()`, so that `loupe set --help` and
    // `loupe help set` need no store.
    private func checkStoreOptions() throws {
        let chosen = [file != nil, defaults != nil, keyring != nil, etcd != nil].filter { $0 }.count
        guard chosen == 1 else {
            throw SettingsCommandUsageError(
                "choose one store: --file, --defaults (with --key), --keyring or --etcd (with --key)")
        }
        if defaults != nil && key == nil { throw SettingsCommandUsageError("--defaults needs --key") }
        if file == nil && !(layers.isEmpty && locks.isEmpty) {
            throw SettingsCommandUsageError("--layer and --locks need --file, the writable top layer")
        }
        if etcd != nil && key == nil { throw SettingsCommandUsageError("--etcd needs --key") }
        if let keyring, keyring.split(separator: "/", maxSplits: 1).count != 2 {
            throw SettingsCommandUsageError("--keyring takes SERVICE/ACCOUNT")
        }
    }

    func openSettings(watching: Bool) throws -> OpenSettings {
        try checkStoreOptions()
        switch schema {
        case .daemon: return OpenSettings(try root(DaemonSettings(), watching: watching), revealingSecrets: reveal)
        case nil: return OpenSettings(try root(JSONValue.object([:]), watching: watching), revealingSecrets: reveal)
        }
    }

    /// The store written to: the file (the user's, under layers), or the suite, key or keyring item.
    func openOwnStore() throws -> (any DocumentStore)? {
        try checkStoreOptions()
        if let file { return fileStore(file) }
        return try makeServerStore()
    }

    /// The types `check --schema` names: the same as loupe's own `--schema`, which takes the option first.
    static let settingsTypes: [String: @Sendable () throws -> OpenSettings] = [
        Schema.daemon.rawValue: { OpenSettings(RootLens(DaemonSettings())) }
    ]

    /// `check` and `diff --files`: the `--schema` type (any document without it) under the `--layer`s and
    /// `--locks` given, which need no `--file` here (the files named are checked in its place); with a
    /// store chosen, that store's layers and locks.
    func openSettingsToCheck() throws -> OpenSettings {
        guard [file, defaults, keyring, etcd].allSatisfy({ $0 == nil }) else {
            return try openSettings(watching: false)
        }
        let store: LayeredStore? =
            layers.isEmpty && locks.isEmpty
            ? nil
            : LayeredStore(
                layers: layers.map { .fileOrDirectory($0, format: Self.codec(of: format ?? Self.format(ofPath: $0))) },
                top: MemoryStore(), locks: locks)
        func root<Root: Codable & Sendable>(_ defaultValue: Root) throws -> OpenSettings {
            guard let store else { return OpenSettings(RootLens(defaultValue), revealingSecrets: reveal) }
            return OpenSettings(
                try RootLens(default: defaultValue, store: store, watch: false), revealingSecrets: reveal)
        }
        switch schema {
        case .daemon: return try root(DaemonSettings())
        case nil: return try root(JSONValue.object([:]))
        }
    }

    /// `schema`, `describe` and `template` with `--schema` and no store: the type alone, over no store.
    func openSettingsType() throws -> OpenSettings {
        let chosen = [file != nil, defaults != nil, keyring != nil, etcd != nil].contains(true)
        guard !chosen, let schema else { return try openSettings(watching: false) }
        switch schema {
        case .daemon: return OpenSettings(RootLens(DaemonSettings()), revealingSecrets: reveal)
        }
    }

    private func root<Root: Codable & Sendable>(_ defaultValue: Root, watching: Bool) throws -> RootLens<Root> {
        try RootLens(default: defaultValue, store: makeStore(), watch: watching)
    }

    /// The codec of the file store (JSON for the others).
    private var codec: any DocumentCodec {
        Self.codec(of: format ?? file.map(Self.format(ofPath:)) ?? .json)
    }

    private static func codec(of format: Format) -> any DocumentCodec {
        switch format {
        case .json: JSONCodec()
        case .jsonc: JSONCCodec()
        case .plist: PropertyListCodec(format: .xml)
        case .binaryPlist: PropertyListCodec(format: .binary)
        case .yaml: YAMLCodec()
        case .toml: TOMLCodec()
        }
    }

    private static func format(ofPath path: String) -> Format {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "plist": .plist
        case "yaml", "yml": .yaml
        case "toml": .toml
        case "jsonc": .jsonc
        default: .json
        }
    }

    /// The override layers the options name: the environment, then `--set`, then the credentials.
    private var overrideLayers: [LayeredStore.Layer] {
        var layers: [LayeredStore.Layer] = []
        if let environmentPrefix { layers.append(.environment(prefix: environmentPrefix)) }
        if !overrides.isEmpty { layers.append(.arguments(overrides)) }
        if let credentials { layers.append(.directory(credentials: credentials)) }
        return layers
    }

    /// The store of the file at `path`: a sops file (one with a `sops` block) opens with the age identities
    /// sops would use, its encrypted values masked unless --reveal.
    private func fileStore(_ path: String) -> any DocumentStore {
        if SOPSFileStore.isSOPSFile(atPath: path, format: codec) {
            return SOPSFileStore(path: path, format: codec, identities: .sopsDefaults(), permissions: fileMode.rawValue)
        }
        return FileStore(path: path, format: codec, permissions: fileMode.rawValue)
    }

    /// The chosen store, under the override layers the options name.
    private func makeStore() throws -> any DocumentStore {
        let overrides = overrideLayers
        if let file {
            let top = fileStore(file)
            if layers.isEmpty && locks.isEmpty && overrides.isEmpty { return top }
            return LayeredStore(
                layers: layers.map { .fileOrDirectory($0, format: Self.codec(of: format ?? Self.format(ofPath: $0))) }
                    + overrides,
                top: top, locks: locks)
        }
        let store = try makeServerStore()
        return overrides.isEmpty ? store : LayeredStore(layers: overrides, top: store)
    }

    /// The chosen store when it is not a file: the suite, the etcd key or the keyring item.
    private func makeServerStore() throws -> any DocumentStore {
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

/// A file mode written in octal on the command line (`--file-mode 644`).
struct FileMode: ExpressibleByArgument, Sendable {
    let rawValue: mode_t

    init(rawValue: mode_t) {
        self.rawValue = rawValue
    }

    init?(argument: String) {
        guard let mode = mode_t(argument, radix: 8), mode <= 0o777 else { return nil }
        rawValue = mode
    }

    var defaultValueDescription: String { String(rawValue, radix: 8) }
}
