import Foundation
import InMemoryLogging
import Logging
import Loupe
import LoupeTestSupport
import Testing

/// Secret paths a settings type declares (``SecretSettings``): masked wherever their values come from (a
/// file, the environment, `--set`, a credential), and never quoted in an error. Real files under a
/// `LayeredStore`, as a program reads them.
@Suite("Secret paths a settings type declares, whatever gives their values")
struct SecretPathsTests {
    struct Settings: Codable, Sendable, Equatable, SecretSettings, Validated {
        /// Marks its own secret: wherever it is used.
        struct Upstream: Codable, Sendable, Equatable, SecretSettings {
            var url = "http://127.0.0.1:9000"
            var token = 0
            static let secretPaths: [ValuePath] = ["token"]
        }
        struct Account: Codable, Sendable, Equatable {
            var name = ""
            var key = ""
        }
        var logLevel = "info"
        var retries = 3
        var password = ""
        var upstream = Upstream()
        var backup: Upstream?
        var accounts: [String: Account] = [:]

        /// The root's own: a path through a dictionary names each entry's part.
        static let secretPaths: [ValuePath] = ["password", "accounts.any.key"]

        static let rules: [Rule<Settings>] = [
            Rule(\.upstream.token, .atMost(999_999)),
            Rule(\.password, .satisfying("must not be \"letmein\"") { $0 != "letmein" }),
            Rule(\.retries, .atMost(10)),
        ]
    }

    /// A user's file.
    struct Site {
        let directory: TemporaryDirectory
        var file: String { directory.file("settings.json") }
        var credentials: String { directory.file("credentials") }

        init(file text: String = "{}") throws {
            directory = try TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
            try replaceFile(file, with: text)
        }

        func root(
            _ layers: [LayeredStore.Layer] = [], watch: Bool = false, logs: InMemoryLogHandler = InMemoryLogHandler()
        ) throws -> RootLens<Settings> {
            try RootLens(
                default: Settings(), store: LayeredStore(layers: layers, top: FileStore(path: file)), watch: watch,
                logger: Logger(label: "test") { _ in logs })
        }
    }

    static func environment(_ variables: [String: String]) -> LayeredStore.Layer {
        .environment(prefix: "APP_", variables: { variables })
    }

    func message(_ error: (any Error)?) -> String {
        error.map { "\($0)" } ?? "no error"
    }

    @Test func theSchemaMarksEachDeclaredSecretWriteOnlyNestedTypesTheirOwn() throws {
        let schema = try SettingsSchema(for: Settings.self, default: Settings())
        #expect(schema.part(at: "password")?[path: "writeOnly"] == .bool(true))
        #expect(
            schema.part(at: "upstream.token")?[path: "writeOnly"] == .bool(true), "the nested type's own declaration")
        #expect(schema.part(at: "upstream.url")?[path: "writeOnly"] == nil)
        #expect(
            schema.document[path: "properties.backup"].map { "\($0)" }?.contains("writeOnly") == true,
            "an optional's too")
        #expect(schema.part(at: "accounts.anyone.key")?[path: "writeOnly"] == .bool(true), "each dictionary entry's")
        let document: JSONValue = try JSONValue(
            parsing:
                #"{"password": "p", "upstream": {"token": 1, "url": "u"}, "accounts": {"a": {"key": "k", "name": "n"}, "b": {"name": "m"}}}"#
        )
        #expect(schema.secretPaths(in: document) == ["accounts.a.key", "password", "upstream.token"])
        #expect(schema.secretPaths(in: .integer(1), at: "upstream.token") == ["upstream.token"])
        #expect(schema.secretPaths(in: try JSONValue(parsing: #"{"token": 1}"#), at: "backup") == ["backup.token"])
    }

    @Test func valuesFromEverySourceAreSecretPathsOfTheRootAndOfItsLenses() throws {
        let site = try Site(
            file:
                #"{"password": "hunter2", "accounts": {"alice": {"name": "Alice", "key": "k-alice"}, "bob": {"name": "Bob"}}}"#
        )
        defer { site.directory.cleanUp() }
        try replaceFile(site.credentials + "/backup.url", with: "https://backup.example\n")
        let root = try site.root([
            Self.environment(["APP_UPSTREAM__TOKEN": "4242", "APP_ACCOUNTS__BOB__KEY": "k-bob"]),
            .arguments(["backup.token=77"]),
            .directory(credentials: site.credentials),
        ])
        #expect(
            root.value.upstream.token == 4242 && root.value.accounts["bob"]?.key == "k-bob"
                && root.value.backup?.token == 77)
        let secrets = Set(root.secretPaths.map(\.description))
        for path in [
            "password", "upstream.token", "accounts.alice.key", "accounts.bob.key", "backup.token", "backup.url",
        ] {
            #expect(secrets.contains(path), "\(path) in \(secrets)")
        }
        #expect(
            !secrets.contains("upstream.url") && !secrets.contains("accounts.alice.name")
                && !secrets.contains("logLevel"))
        #expect(root.upstream.secretPaths == ["token"], "relative to a lens")
        #expect(root.upstream.token.secretPaths == [ValuePath([])], "the lens's whole value")
        #expect(root.logLevel.secretPaths.isEmpty)
        // Provenance says the value is secret, whatever layer gives it.
        for path in ["password", "upstream.token", "backup.token", "accounts.alice.key"] {
            let origin = try root.provenance(ofPath: path)
            #expect(
                origin.isSecret && !origin.description.contains("hunter2") && !origin.description.contains("4242"),
                "\(origin)")
        }
        #expect(try !root.provenance(ofPath: "upstream.url").isSecret)
        // A layer that sets a declared secret is marked secret as a whole.
        let layers = try root.layers()
        #expect(layers.contains { $0.source == .override("environment variable APP_UPSTREAM__TOKEN") && $0.isSecret })
        #expect(layers.contains { $0.source == .override("--set backup.token") && $0.isSecret })
    }

    @Test func textTheTypeRefusesAtASecretPathIsNeverQuotedWhateverGivesIt() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let variable = #expect(throws: SettingsError.self) {
            try site.root([Self.environment(["APP_UPSTREAM__TOKEN": "notanumber"])])
        }
        #expect(
            message(variable).contains(
                "environment variable APP_UPSTREAM__TOKEN: upstream.token: expected a whole number"),
            "\(message(variable))")
        #expect(!message(variable).contains("notanumber"), "\(message(variable))")
        let argument = #expect(throws: SettingsError.self) {
            try site.root([.arguments(["upstream.token=notanumber"])])
        }
        #expect(
            message(argument).contains("--set upstream.token: upstream.token: expected a whole number"),
            "\(message(argument))")
        #expect(!message(argument).contains("notanumber"), "\(message(argument))")
        // Text for a part that holds a secret is not quoted either.
        let whole = #expect(throws: SettingsError.self) {
            try site.root([.arguments([#"upstream=[1, "notanumber"]"#])])
        }
        #expect(
            message(whole).contains("--set upstream") && !message(whole).contains("notanumber"), "\(message(whole))")
        // Another part's text still is.
        let other = #expect(throws: SettingsError.self) { try site.root([Self.environment(["APP_RETRIES": "many"])]) }
        #expect(message(other).contains("found \"many\""), "\(message(other))")
    }

    @Test func aFilesValueAtASecretPathIsNeverQuotedInADecodeErrorOrARuleViolation() throws {
        for (text, secret) in [
            (#"{"upstream": {"token": "hunter2"}}"#, "hunter2"),
            (#"{"password": 12345678}"#, "12345678"),
            (#"{"accounts": {"alice": {"key": 31337}}}"#, "31337"),
            (#"{"upstream": {"token": 7654321}}"#, "7654321"),  // breaks a rule
            (#"{"password": "letmein"}"#, "\"letmein\", got"),  // the rule's own text names it; the value is not quoted
        ] {
            let site = try Site(file: text)
            defer { site.directory.cleanUp() }
            let error = #expect(throws: SettingsError.self) { try site.root() }
            #expect(error?.code == .corrupt && !message(error).contains(secret), "\(message(error))")
            #expect(message(error).contains(site.file), "names the file: \(message(error))")
        }
        // A rule broken by another part still quotes the value.
        let site = try Site(file: #"{"retries": 5555}"#)
        defer { site.directory.cleanUp() }
        let error = #expect(throws: SettingsError.self) { try site.root() }
        #expect(message(error).contains("got 5555"), "\(message(error))")
    }

    @Test func aRuleBrokenByAVariableAtASecretPathIsNeverQuoted() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let error = #expect(throws: SettingsError.self) {
            try site.root([Self.environment(["APP_UPSTREAM__TOKEN": "7654321"])])
        }
        #expect(
            message(error).contains("environment variable APP_UPSTREAM__TOKEN: upstream.token"), "\(message(error))")
        #expect(!message(error).contains("7654321"), "\(message(error))")
    }

    @Test func writesRefusedAtASecretPathNeverQuoteTheValue() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let root = try site.root()
        let typed = #expect(throws: SettingsError.self) {
            try root.set(atPath: "upstream.token", to: .string("hunter2"))
        }
        #expect(
            typed?.code == .invalidValue && message(typed).contains("upstream.token")
                && !message(typed).contains("hunter2"), "\(message(typed))")
        let lens = #expect(throws: SettingsError.self) {
            try root.upstream.set(atPath: "token", to: .string("hunter2"))
        }
        #expect(
            message(lens).contains("token") && !message(lens).contains("hunter2"), "through a lens: \(message(lens))")
        let entry = #expect(throws: SettingsError.self) {
            try root.set(atPath: "accounts", to: try JSONValue(parsing: #"{"carol": {"key": 31337}}"#))
        }
        #expect(!message(entry).contains("31337"), "\(message(entry))")
        let rule = #expect(throws: SettingsError.self) { try root.update { $0.upstream.token = 7654321 } }
        #expect(
            rule?.code == .outOfRange && rule?.path == "upstream.token" && !message(rule).contains("7654321"),
            "\(message(rule))")
        let ruleByPath = #expect(throws: SettingsError.self) {
            try root.set(atPath: "password", to: .string("letmein"))
        }
        #expect((ruleByPath?.cause as? RuleViolation)?.found == nil, "\(message(ruleByPath))")
        // Another part's value is still quoted.
        let other = #expect(throws: SettingsError.self) { try root.update { $0.retries = 5555 } }
        #expect(message(other).contains("5555"), "\(message(other))")
        #expect(try String(contentsOfFile: site.file, encoding: .utf8) == "{}", "nothing written")
    }

    /// Log lines never carry a reason; the error a root reports for an outside edit does, without the secret.
    @Test func anOutsideEditThatBreaksASecretIsReportedAndLoggedWithoutIt() async throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let logs = InMemoryLogHandler()
        let root = try site.root(watch: true, logs: logs)
        let errors = Recorder<String>()
        let token = root.observeErrors { errors.append("\($0)") }
        defer { token.cancel() }
        try replaceFile(site.file, with: #"{"upstream": {"token": "hunter2"}}"#)
        #expect(await eventually { errors.count > 0 })
        #expect(await eventually { logs.entries.contains { "\($0.message)".contains("ignored an outside change") } })
        #expect(errors.all.allSatisfy { $0.contains("upstream.token") && !$0.contains("hunter2") }, "\(errors.all)")
        #expect(
            !logs.entries.contains { "\($0.message) \($0.metadata)".contains("hunter2") },
            "\(logs.entries.map(\.metadata))")
        #expect(root.value.upstream.token == 0, "the last good value stays")
    }
}
