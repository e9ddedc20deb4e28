#if Commands
import ArgumentParser
import Loupe

/// A settings command group for a program's own settings type, mounted in one line:
///
/// ```swift
/// @main
/// struct MyApp: ParsableCommand {
///     static let configuration = CommandConfiguration(
///         subcommands: [Serve.self, SettingsCommand<AppSettingsFile>.self])
/// }
///
/// /// Where `myapp config` finds the settings.
/// struct AppSettingsFile: SettingsLocation {
///     func openSettings(watching: Bool) throws -> OpenSettings {
///         OpenSettings(try RootLens(default: AppSettings(), store: FileStore(path: "/etc/myapp/settings.json"), watch: watching))
///     }
/// }
/// ```
///
/// Then `myapp config get server.port`, `myapp config set server.port 9000`, and:
///
/// | Verb | What it does |
/// |---|---|
/// | `get PATH` | Prints the value at a path, as JSON. |
/// | `set PATH VALUE` | Sets it: VALUE is JSON, a bare word, or `-` for standard input. Checked against the type and its rules. |
/// | `unset PATH` | Resets it to the default (which is then not stored, so a later default reaches it). |
/// | `show` | Prints the whole value; `--stored` the document as stored, `--defaults` the defaults, `--layers` each layer. |
/// | `edit` | Opens the settings in `$EDITOR`, checks the edit, and saves it unless someone else changed them meanwhile. |
/// | `watch [PATH]` | Prints the value, then each change, one JSON line each. |
/// | `list` | Every path with its value, as `gsettings list-recursively`. |
/// | `describe PATH` | The part's type, default, current value, allowed values and description. |
/// | `schema` | The JSON Schema of the settings, for editors. |
/// | `explain [PATH]` | Where each value comes from: the layer that set it, those it overrides, its lock. |
/// | `history [PATH]` | The changes the store keeps a record of: revision, time, who, the paths changed. |
/// | `history --purge PATH` | Takes the values at a path out of every record of the history (an `unset` value's, say). |
/// | `diff REV [REV2]` | What a revision changed, or what changed between two: each path's old and new value. `diff --files A B`: between two settings files. |
/// | `rollback REV` | Stores the settings as a revision left them, as a new change, checked like any write. |
/// | `status` | For a shared store (etcd): the revision each reader runs, how far behind, and what it refused. |
/// | `check FILE…` | Checks settings files against the type, its rules and the locks: every problem, as `FILE:LINE:COLUMN: PATH: message`. |
///
/// Errors are one line on standard error, `myapp: server.port: expected UInt16, found String "x"`, with an
/// exit status from sysexits(3): 64 usage, 65 a value the type or its rules refuse, 66 nothing at the path,
/// 69 the store is unavailable, 74 output could not be written, 75 a conflict (try again), 77 a locked path.
public struct SettingsCommand<Location: SettingsLocation>: ParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: Location.commandName,
            abstract: Location.abstract,
            discussion: Location.discussion.isEmpty ? ExitStatus.help : Location.discussion + "\n\n" + ExitStatus.help,
            subcommands: [
                Get.self, Set.self, Unset.self, Show.self, Edit.self, Watch.self, List.self, Describe.self,
                Schema.self, Template.self, Explain.self, History.self, Diff.self, Rollback.self, Status.self,
                Check.self,
            ])
    }

    /// The options that say where the settings are.
    @OptionGroup public var location: Location

    public init() {}
}

/// Where a ``SettingsCommand`` finds its settings: the program's own location (a type with no options), or
/// options that choose a store (as the `loupe` example's `--file`, `--layer`, `--keyring`).
///
/// The options are the group's, given before the verb: `loupe --file settings.json get server.port`.
public protocol SettingsLocation: ParsableArguments {
    /// The group's name; `config` by default (`myapp config get server.port`).
    static var commandName: String { get }
    /// The group's one-line help.
    static var abstract: String { get }
    /// More help, before the exit statuses; none by default.
    static var discussion: String { get }

    /// Opens the settings the verbs read and edit. `watching` is true for `watch`, which follows the
    /// changes other processes make; the others read or write once. Throw ``SettingsCommandUsageError``
    /// for options that do not go together (exit status 64).
    func openSettings(watching: Bool) throws -> OpenSettings

    /// Opens the settings for the verbs that need only their type (`schema`, `describe`, `template`). By
    /// default as ``openSettings(watching:)`` does; a location that knows the type without a store (a
    /// `--schema` option with no store chosen) returns a root without one, so that those verbs need no
    /// store. `describe` then shows the default value as the current one.
    func openSettingsType() throws -> OpenSettings

    /// The store the settings are written to (the user's own file under layers), opened without reading
    /// it, or nil (the default). With it, `unset` can take a value out of stored settings that no longer
    /// read (a value a lifted lock lets through that breaks a rule), which is how a user repairs them, and
    /// `get` and `show` print what is stored before the error.
    func openOwnStore() throws -> (any DocumentStore)?

    /// Opens the settings that `check` and `diff --files` read files against: the type, and the layers
    /// below the user's file and the locks where the location has them; the files named are checked in
    /// the user's file's place. By default as ``openSettingsType()`` does, which reads the user's file
    /// too: a location whose own file may be the one checked (and may not read) opens its layers and
    /// locks over an empty top instead:
    ///
    /// ```swift
    /// func openSettingsToCheck() throws -> OpenSettings {
    ///     OpenSettings(try RootLens(
    ///         default: AppSettings(), store: LayeredStore(layers: layers, top: MemoryStore(), locks: locks), watch: false))
    /// }
    /// ```
    func openSettingsToCheck() throws -> OpenSettings

    /// Other settings types the program registers by name, for `check --schema NAME`: a program with
    /// several settings files of several types checks each against its own. Each opens a root of its type
    /// (over no store, or over its layers and locks). None by default.
    ///
    /// ```swift
    /// static let settingsTypes: [String: @Sendable () throws -> OpenSettings] = [
    ///     "app": { OpenSettings(RootLens(AppSettings())) },
    ///     "plugins": { OpenSettings(RootLens(PluginSettings())) },
    /// ]
    /// ```
    static var settingsTypes: [String: @Sendable () throws -> OpenSettings] { get }
}

extension SettingsLocation {
    public static var commandName: String { "config" }
    public static var abstract: String { "Reads and edits the settings by path, while the program runs." }
    public static var discussion: String { "" }

    public func openSettingsType() throws -> OpenSettings {
        try openSettings(watching: false)
    }

    public func openOwnStore() throws -> (any DocumentStore)? { nil }

    public func openSettingsToCheck() throws -> OpenSettings {
        try openSettingsType()
    }

    public static var settingsTypes: [String: @Sendable () throws -> OpenSettings] { [:] }
}

/// Options of a ``SettingsLocation`` that do not go together: exit status 64, with `message`.
public struct SettingsCommandUsageError: Error, CustomStringConvertible {
    public var description: String

    public init(_ message: String) {
        description = message
    }
}

extension SettingsCommand {
    /// Opens the settings and runs `body` on them, reporting any error as one line and its exit status.
    func withSettings(watching: Bool = false, _ body: (OpenSettings) throws -> Void) throws {
        try reportingErrors {
            try body(try location.openSettings(watching: watching))
        }
    }

    /// Opens the settings and runs `body` on them; when what is stored does not read, runs `fallback` on the
    /// location's own store (see ``SettingsLocation/openOwnStore()``) with the error, which is reported
    /// after it unless `fallback` returns true (it repaired the settings).
    func withSettings(
        _ body: (OpenSettings) throws -> Void, orOwnStore fallback: (any DocumentStore, SettingsError) throws -> Bool
    ) throws {
        try reportingErrors {
            let settings: OpenSettings
            do {
                settings = try location.openSettings(watching: false)
            } catch let error as SettingsError where error.code == .corrupt {
                if let store = try location.openOwnStore(), try fallback(store, error) { return }
                throw error
            }
            try body(settings)
        }
    }

    /// The paths (from the root) of the parts `value`, the part at `path` of a document that does not
    /// read (`error`, opening the settings, says so), holds that the settings type declares secret; nil
    /// when they cannot be known, so that nothing is printed.
    func secretPaths(in value: JSONValue, at path: ValuePath, after error: SettingsError) -> [ValuePath]? {
        if let declared = error.secretPaths { return declared(value, path) }
        return (try? location.openSettingsType().root.schema())?.secretPaths(in: value, at: path)
    }

    /// Opens the settings for a verb that needs only their type (see
    /// ``SettingsLocation/openSettingsType()``) and runs `body` on them, reporting errors as
    /// ``withSettings(watching:_:)`` does.
    func withSettingsType(_ body: (OpenSettings) throws -> Void) throws {
        try reportingErrors {
            try body(try location.openSettingsType())
        }
    }
}
#endif
