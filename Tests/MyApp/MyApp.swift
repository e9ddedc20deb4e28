import ArgumentParser
import Foundation
import Loupe
import LoupeCommands

/// A small program built on Loupe, as a user would write one: its own settings type, one verb of its
/// own (`greet`), and `LoupeCommands` mounted as `myapp config …`.
@main
struct MyApp: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "myapp",
        abstract: "A program with settings.",
        subcommands: [Greet.self, SettingsCommand<AppSettingsFile>.self])

    /// Uses the settings.
    struct Greet: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Prints the greeting, as the settings say.")

        func run() throws {
            let settings = try AppSettingsFile().open(watching: false).value
            print(settings.shouting ? settings.greeting.uppercased() : settings.greeting)
        }
    }
}

/// The program's settings.
struct AppSettings: Codable, Sendable, Equatable, Validated, DescribedSettings, SecretSettings {
    enum Level: String, Codable, Sendable, CaseIterable { case quiet, normal, verbose }
    struct Server: Codable, Sendable, Equatable {
        var host = "localhost"
        var port: UInt16 = 8080
    }

    var greeting = "hello"
    var shouting = false
    var level = Level.normal
    var server = Server()
    var features: [String: Bool] = ["beta": false]
    var mirrors: [String] = []
    var nickname: String?
    /// The token the program presents upstream: a secret, masked wherever its value comes from.
    var token: String?

    static let rules: [Rule<AppSettings>] = [
        Rule(\.server.port, .atLeast(1024)),
        Rule(\.greeting, .satisfying("must not be empty") { !$0.isEmpty }),
    ]

    static let secretPaths: [ValuePath] = ["token"]

    static let descriptions: [ValuePath: String] = [
        "greeting": "What greet prints.",
        "level": "How much the program says.",
        "server.port": "The port the program listens on.",
        "features": "Features turned on or off, by name.",
    ]
}

/// The settings of myapp's plugins, a file of their own: another type `myapp config check --schema
/// plugins` checks files against.
struct PluginSettings: Codable, Sendable, Equatable, Validated {
    var enabled: [String] = []
    var retries = 3

    static let rules: [Rule<PluginSettings>] = [Rule(\.retries, .within(0...10))]
}

/// Where `myapp config` finds the settings: the file `MYAPP_SETTINGS` names, or `myapp.json` here, under
/// the environment variables that start with `MYAPP_ENV_` (`MYAPP_ENV_TOKEN`), and the administrator's
/// lock file `MYAPP_LOCKS` names, if any.
struct AppSettingsFile: SettingsLocation {
    static let abstract = "Reads and edits myapp's settings."

    static let settingsTypes: [String: @Sendable () throws -> OpenSettings] = [
        "app": { OpenSettings(RootLens(AppSettings())) },
        "plugins": { OpenSettings(RootLens(PluginSettings())) },
    ]

    var path: String { ProcessInfo.processInfo.environment["MYAPP_SETTINGS"] ?? "myapp.json" }

    var locks: [String] { ProcessInfo.processInfo.environment["MYAPP_LOCKS"].map { [$0] } ?? [] }

    func open(watching: Bool) throws -> RootLens<AppSettings> {
        try RootLens(
            default: AppSettings(),
            store: LayeredStore(layers: [.environment(prefix: "MYAPP_ENV_")], top: FileStore(path: path), locks: locks),
            watch: watching)
    }

    /// `check` and `diff --files`: the type under the locks, over an empty top, so that the program's own
    /// file is checked like any other, even when it does not read.
    func openSettingsToCheck() throws -> OpenSettings {
        OpenSettings(
            try RootLens(
                default: AppSettings(), store: LayeredStore(layers: [], top: MemoryStore(), locks: locks), watch: false)
        )
    }

    func openSettings(watching: Bool) throws -> OpenSettings {
        OpenSettings(try open(watching: watching))
    }

    /// The file itself: `get` and `show` print what it holds when it does not read, and `unset` repairs it.
    func openOwnStore() throws -> (any DocumentStore)? {
        FileStore(path: path)
    }
}
