#if canImport(Glibc)
import Glibc
#endif
import Foundation
import InMemoryLogging
import Logging
import Loupe
import LoupeTestSupport
import Testing

/// The layers above the files: environment variables, `--set` arguments and a credential directory. Real
/// files, real directories (a Kubernetes Secret volume's `..data` link swapped for real), watched through
/// inotify; this process's own environment (real variables, set for the test), and another process's
/// through `loupe` in `ExamplesTests`.
@Suite("Overrides: the environment, --set and credentials, over the files and never written")
struct OverrideLayerTests {
    struct Settings: Codable, Sendable, Equatable {
        struct Upstream: Codable, Sendable, Equatable {
            var url = "http://127.0.0.1:9000"
            var timeoutSeconds = 5
            var token = ""
        }
        struct Mirror: Codable, Sendable, Equatable {
            var url: String
            var weight: Int?
        }
        struct Ticker: Codable, Sendable, Equatable {
            var intervalSeconds = 1.0
            var greeting = "hello"
        }
        var logLevel = "info"
        var verbose = false
        var upstream = Upstream()
        var ticker = Ticker()
        var features: [String: Bool] = [:]
        var mirrors: [Mirror] = []
        var tags: [String] = []
    }

    /// A user's file and, beside it, a credential directory.
    struct Site {
        let directory: TemporaryDirectory
        var file: String { directory.file("settings.json") }
        var credentials: String { directory.file("credentials") }

        init(file text: String = #"{"logLevel": "notice"}"#) throws {
            directory = try TemporaryDirectory()
            try FileManager.default.createDirectory(
                atPath: directory.file("credentials"), withIntermediateDirectories: true)
            try replaceFile(file, with: text)
        }

        func root(
            _ layers: [LayeredStore.Layer], watch: Bool = false, logs: InMemoryLogHandler = InMemoryLogHandler()
        ) throws -> RootLens<Settings> {
            try RootLens(
                default: Settings(), store: LayeredStore(layers: layers, top: FileStore(path: file)), watch: watch,
                logger: Logger(label: "test") { _ in logs })
        }

        func text() throws -> String { try String(contentsOfFile: file, encoding: .utf8) }
    }

    /// An error's message, or says there was none.
    func message(_ error: (any Error)?) -> String {
        error.map { "\($0)" } ?? "no error"
    }

    static func environment(_ variables: [String: String]) -> LayeredStore.Layer {
        .environment(prefix: "MYAPP_", variables: { variables })
    }

    @Test func variablesNameEveryKindOfPartAndAreTypedByTheSettingsType() throws {
        let site = try Site(
            file: #"{"features": {"Beta": false, "old-look": true}, "mirrors": [{"url": "https://m0.example"}]}"#)
        defer { site.directory.cleanUp() }
        let root = try site.root([
            Self.environment([
                "MYAPP_UPSTREAM__TIMEOUT_SECONDS": "30",  // words to camelCase, text to Int
                "MYAPP_TICKER__INTERVAL_SECONDS": "2.5",
                "MYAPP_TICKER__GREETING": "true",  // a String stays a string
                "MYAPP_VERBOSE": "TRUE",
                "MYAPP_FEATURES__BETA": "true",  // an existing key regardless of case
                "MYAPP_FEATURES__NEW_UI": "true",  // a new key, in lower case
                "MYAPP_FEATURES__OLD_LOOK": "false",  // an existing key, regardless of case, _ and -
                "MYAPP_MIRRORS__0__WEIGHT": "9",  // into an array element
                "MYAPP_MIRRORS__1": #"{"url": "https://m1.example"}"#,  // one past the end adds an element
                "MYAPP_TAGS": #"["a", "b"]"#,  // JSON for a structured part
                "OTHER_LOG_LEVEL": "debug",  // not under the prefix
            ])
        ])
        let value = root.value
        #expect(value.upstream.timeoutSeconds == 30)
        #expect(value.ticker.intervalSeconds == 2.5)
        #expect(value.ticker.greeting == "true")
        #expect(value.verbose)
        #expect(value.features == ["Beta": true, "new_ui": true, "old-look": false])
        #expect(value.mirrors.map(\.url) == ["https://m0.example", "https://m1.example"])
        #expect(value.mirrors.map(\.weight) == [9, nil])
        #expect(value.tags == ["a", "b"])
        // Each override as a layer, a merge patch: one inside an array replaces the array.
        let layers = try root.layers().filter { if case .override = $0.source { true } else { false } }
        #expect(
            layers.first { $0.source == .override("environment variable MYAPP_MIRRORS__1") }?.document
                == .object([
                    "mirrors": .array([
                        .object(["url": .string("https://m0.example"), "weight": .integer(9)]),
                        .object(["url": .string("https://m1.example")]),
                    ])
                ]))
        #expect(
            layers.first { $0.source == .override("environment variable MYAPP_VERBOSE") }?.document
                == .object(["verbose": .bool(true)]))
        #expect(value.logLevel == "info")
    }

    /// Properties whose words are the same (`logLevel`, `log_level`, `loglevel`): a variable names the first
    /// in name order, each time, and one in snake_case is found as one in camelCase is.
    struct SameWords: Codable, Sendable, Equatable {
        struct Inner: Codable, Sendable, Equatable {
            var retry_count = 1
        }
        var logLevel = "info"
        var log_level = "info"
        var loglevel = "info"
        var inner = Inner()
    }

    @Test func aVariableWhoseWordsSeveralPropertiesShareNamesTheFirstInNameOrder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        for _ in 0..<2 {
            let root = try RootLens(
                default: SameWords(),
                store: LayeredStore(
                    layers: [
                        .environment(
                            prefix: "MYAPP_",
                            variables: { ["MYAPP_LOG_LEVEL": "debug", "MYAPP_INNER__RETRY_COUNT": "3"] })
                    ],
                    top: FileStore(path: directory.file("settings.json"))),
                watch: false)
            #expect(
                root.value
                    == SameWords(logLevel: "debug", log_level: "info", loglevel: "info", inner: .init(retry_count: 3)))
        }
    }

    @Test func overridesAreNeverWrittenAndTheFileKeepsItsOwnValues() throws {
        let text =
            #"{"logLevel": "notice", "upstream": {"timeoutSeconds": 7}, "mirrors": [{"url": "https://m0.example"}]}"#
        let site = try Site(file: text)
        defer { site.directory.cleanUp() }
        let root = try site.root([
            Self.environment(["MYAPP_UPSTREAM__TIMEOUT_SECONDS": "30", "MYAPP_MIRRORS__1__URL": "https://m1.example"]),
            .arguments(["tags=[\"x\"]"]),
        ])
        #expect(root.value.upstream.timeoutSeconds == 30 && root.value.mirrors.count == 2 && root.value.tags == ["x"])
        try root.logLevel.set("debug")
        let stored = try JSONValue(parsing: site.text())
        #expect(
            stored
                == (try JSONValue(
                    parsing:
                        #"{"logLevel": "debug", "upstream": {"timeoutSeconds": 7}, "mirrors": [{"url": "https://m0.example"}]}"#
                )))
        #expect(root.value.upstream.timeoutSeconds == 30, "the override still applies")
        // Another process's later root without the overrides sees the file's values.
        let plain = try RootLens(default: Settings(), store: FileStore(path: site.file), watch: false)
        #expect(plain.value.upstream.timeoutSeconds == 7 && plain.value.mirrors.count == 1 && plain.value.tags.isEmpty)
    }

    @Test func aWriteWhereAnOverrideWinsIsStoredWithAWarningAndTheOverrideStillWins() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let logs = InMemoryLogHandler()
        let root = try site.root([Self.environment(["MYAPP_LOG_LEVEL": "debug"])], logs: logs)
        #expect(root.value.logLevel == "debug")
        try root.logLevel.set("error")
        #expect(try JSONValue(parsing: site.text())[path: "logLevel"] == .string("error"), "stored in the top layer")
        #expect(root.value.logLevel == "debug", "the override still wins")
        let warning = logs.entries.first { "\($0.message)".contains("an override still wins over") }
        #expect(
            warning.map { "\($0.metadata)".contains("environment variable MYAPP_LOG_LEVEL") } == true,
            "\(logs.entries.map(\.message))")
        let origin = try root.provenance(ofPath: "logLevel")
        #expect(origin.source == .override("environment variable MYAPP_LOG_LEVEL"))
        #expect(origin.overrides == [.layer(site.file), .defaultValue])
        #expect(
            "\(origin)"
                == "logLevel = \"debug\" from environment variable MYAPP_LOG_LEVEL (overrides \(site.file), default)")
    }

    @Test func aVariableThatNamesNoSettingIsAWarningNamingItAndTheClosestSetting() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let logs = InMemoryLogHandler()
        let root = try site.root(
            [
                Self.environment([
                    "MYAPP_UPSTREAM__TIMEOUT": "3", "MYAPP_UPSTREAM__TIMEOUT_SECONDS": "4",
                    "MYAPP_": "the prefix alone names nothing",
                ])
            ], logs: logs)
        #expect(root.value.upstream.timeoutSeconds == 4)
        try root.logLevel.set("debug")  // what a load reads is what a write checks: no endless conflict
        let warnings = logs.entries.filter { "\($0.message)".contains("an override names no setting") }
        #expect(warnings.count == 1)
        #expect(
            warnings.first.map {
                "\($0.metadata)".contains("MYAPP_UPSTREAM__TIMEOUT") && "\($0.metadata)".contains("upstream")
            } == true,
            "\(warnings.map(\.metadata))")
    }

    @Test func variablesOfThisProcessUnderThePrefixAreReadAndNoOthers() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        // This process's real environment, under a prefix no other test uses.
        let prefix = "LOUPE_TESTS_\(UUID().uuidString.prefix(8))_"
        let variables = [
            prefix + "UPSTREAM__TIMEOUT_SECONDS": "7", prefix + "LOG_LEVEL": "debug",
            prefix: "the prefix alone names nothing", String(prefix.dropLast()) + "VERBOSE": "true",
        ]
        for (name, value) in variables { setenv(name, value, 1) }
        defer { for name in variables.keys { unsetenv(name) } }
        let logs = InMemoryLogHandler()
        let root = try site.root([.environment(prefix: prefix)], logs: logs)
        #expect(root.value.upstream.timeoutSeconds == 7 && root.value.logLevel == "debug" && !root.value.verbose)
        #expect(try root.provenance(ofPath: "logLevel").source == .override("environment variable \(prefix)LOG_LEVEL"))
        #expect(
            !logs.entries.contains { "\($0.message)".contains("an override names no setting") },
            "\(logs.entries.map(\.message))")
    }

    @Test func textTheTypeRefusesFailsTheLoadNamingTheVariableAndThePathAndWritesNothing() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let before = try site.text()
        for (variables, named, reason) in [
            (
                ["MYAPP_UPSTREAM__TIMEOUT_SECONDS": "90a"],
                "environment variable MYAPP_UPSTREAM__TIMEOUT_SECONDS: upstream.timeoutSeconds",
                "expected a whole number, found \"90a\""
            ),
            (["MYAPP_VERBOSE": "maybe"], "environment variable MYAPP_VERBOSE: verbose", "expected true or false"),
            (["MYAPP_TAGS": "a,b"], "environment variable MYAPP_TAGS: tags", "expected a JSON array"),
            (
                ["MYAPP_MIRRORS__3__URL": "https://x.example"],
                "environment variable MYAPP_MIRRORS__3__URL: mirrors[3].url",
                "index 3 is past the end of mirrors (0 elements"
            ),
            (
                ["MYAPP_MIRRORS__0__WEIGHT": "2"], "environment variable MYAPP_MIRRORS__0__WEIGHT: mirrors[0].url",
                "missing"
            ),
        ] {
            let error = #expect(throws: SettingsError.self) { try site.root([Self.environment(variables)]) }
            #expect(error?.code == .invalidValue, "\(message(error))")
            #expect(message(error).contains(named) && message(error).contains(reason), "\(message(error))")
        }
        let argument = #expect(throws: SettingsError.self) {
            try site.root([.arguments(["upstream.timeoutSeconds=soon"])])
        }
        #expect(
            message(argument).contains(
                "--set upstream.timeoutSeconds: upstream.timeoutSeconds: expected a whole number"),
            "\(message(argument))")
        let typo = #expect(throws: SettingsError.self) { try site.root([.arguments(["upstream.timeout=3"])]) }
        #expect(
            typo?.code == .invalidPath
                && message(typo).contains(
                    "--set upstream.timeout: upstream.timeout names no setting (the closest is upstream)"),
            "\(message(typo))")
        let malformed = #expect(throws: SettingsError.self) { try site.root([.arguments(["logLevel"])]) }
        #expect(message(malformed).contains("--set logLevel: expected path=value"), "\(message(malformed))")
        #expect(try site.text() == before, "nothing written")
    }

    @Test func argumentsComeAfterTheEnvironmentAndNameTheirOrigin() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let root = try site.root([
            Self.environment(["MYAPP_LOG_LEVEL": "debug", "MYAPP_VERBOSE": "true"]),
            .arguments(["logLevel=trace", "features[\"a.b\"]=true"]),
        ])
        #expect(root.value.logLevel == "trace" && root.value.verbose && root.value.features == ["a.b": true])
        let origin = try root.provenance(ofPath: "logLevel")
        #expect(origin.source == .override("--set logLevel"))
        #expect(origin.overrides.first == .override("environment variable MYAPP_LOG_LEVEL"))
    }

    @Test func credentialsAreSecretValuesFromFilesWithOneTrailingNewlineDropped() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        try replaceFile(site.credentials + "/upstream.token", with: "s3cr3t-token\n")
        try replaceFile(site.credentials + "/upstream.timeoutSeconds", with: "12\n\n")
        try replaceFile(site.credentials + "/.hidden", with: "x")
        // A directory in it is no credential: skipped, as hidden names are.
        try FileManager.default.createDirectory(
            atPath: site.credentials + "/logLevel", withIntermediateDirectories: true)
        let logs = InMemoryLogHandler()
        var root: RootLens<Settings>? = nil
        let error = #expect(throws: SettingsError.self) {
            root = try site.root([.directory(credentials: site.credentials)], logs: logs)
        }
        #expect(
            root == nil
                && message(error).contains(
                    "credential upstream.timeoutSeconds: upstream.timeoutSeconds: expected a whole number"),
            "\(message(error))")
        #expect(!message(error).contains("12"), "a secret's text is never quoted: \(error)")
        try replaceFile(site.credentials + "/upstream.timeoutSeconds", with: "12\n")
        let loaded = try site.root([.directory(credentials: site.credentials)], logs: logs)
        #expect(loaded.value.upstream.token == "s3cr3t-token" && loaded.value.upstream.timeoutSeconds == 12)
        #expect(loaded.value.logLevel == "notice" && loaded.secretPaths.count == 2)
        let origin = try loaded.provenance(ofPath: "upstream.token")
        #expect(origin.source == .override("credential upstream.token") && origin.isSecret)
        #expect(!"\(origin)".contains("s3cr3t"), "\(origin)")
        try loaded.logLevel.set("debug")
        #expect(try !site.text().contains("s3cr3t") && !site.text().contains("timeoutSeconds"))
        #expect(!logs.entries.contains { "\($0.message) \($0.metadata)".contains("s3cr3t") })
    }

    @Test func aMissingOrUnreadableCredentialDirectoryIsAnErrorNamingIt() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let missing = site.directory.file("nowhere")
        let error = #expect(throws: SettingsError.self) { try site.root([.directory(credentials: missing)]) }
        #expect(message(error).contains("credential directory \(missing)"), "\(message(error))")
    }

    /// A Kubernetes Secret volume: each name a link into `..data`, itself a link to a timestamped directory,
    /// swapped with a rename when the Secret changes.
    @Test func aSecretVolumesDataSwapReachesTheRoot() async throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let volume = site.credentials
        func publish(_ token: String, generation: Int) throws {
            let timestamped = volume + "/..2026_11_25_\(generation)"
            try FileManager.default.createDirectory(atPath: timestamped, withIntermediateDirectories: true)
            try replaceFile(timestamped + "/upstream.token", with: token)
            let temporary = volume + "/..data_tmp"
            #expect(symlink("..2026_11_25_\(generation)", temporary) == 0)
            #expect(rename(temporary, volume + "/..data") == 0)
        }
        try publish("first", generation: 1)
        #expect(symlink("..data/upstream.token", volume + "/upstream.token") == 0)
        let root = try site.root([.directory(credentials: volume)], watch: true)
        #expect(root.value.upstream.token == "first")
        try publish("second", generation: 2)
        #expect(await eventually { root.value.upstream.token == "second" })
        #expect(try !site.text().contains("first") && !site.text().contains("second"))
    }

    // MARK: Secret references

    @Test func aFileReferenceIsResolvedTypedWrittenBackAsTheReferenceAndMasked() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let tokenFile = site.credentials + "/token"
        try replaceFile(tokenFile, with: "s3cr3t-from-file\n")
        try replaceFile(site.credentials + "/timeout", with: "12")
        let reference = #"{"$secret": "file:\#(tokenFile)"}"#
        try replaceFile(
            site.file,
            with:
                #"{"logLevel": "notice", "upstream": {"token": \#(reference), "timeoutSeconds": {"$secret": "file:\#(site.credentials)/timeout"}}}"#
        )
        let logs = InMemoryLogHandler()
        let root = try site.root([], logs: logs)
        #expect(root.value.upstream.token == "s3cr3t-from-file" && root.value.upstream.timeoutSeconds == 12)
        #expect(Set(root.secretPaths) == ["upstream.token", "upstream.timeoutSeconds"])
        let origin = try root.provenance(ofPath: "upstream.token")
        #expect(
            origin.source == .override("file:\(tokenFile)") && origin.isSecret && !"\(origin)".contains("s3cr3t"),
            "\(origin)")
        // A write elsewhere keeps the references as they are, and never the secrets.
        try root.logLevel.set("debug")
        try root.upstream.url.set("https://b.example")
        let stored = try JSONValue(parsing: site.text())
        #expect(stored[path: "upstream.token"] == (try JSONValue(parsing: reference)))
        #expect(stored[path: "upstream.timeoutSeconds.$secret"] == .string("file:\(site.credentials)/timeout"))
        #expect(try !site.text().contains("s3cr3t"))
        // A write of the value itself is refused, naming the reference; nothing is written.
        let before = try site.text()
        let refused = #expect(throws: SettingsError.self) { try root.upstream.token.set("typed-over") }
        #expect(
            refused?.code == .invalidValue
                && message(refused).contains("upstream.token is the secret reference file:\(tokenFile)"),
            "\(message(refused))")
        #expect(try site.text() == before && root.value.upstream.token == "s3cr3t-from-file")
        // A reset takes the reference out of the file.
        try root.reset(atPath: "upstream.token")
        #expect(try JSONValue(parsing: site.text())[path: "upstream.token"] == nil)
        #expect(root.value.upstream.token == "")
        #expect(!logs.entries.contains { "\($0.message) \($0.metadata)".contains("s3cr3t") })
    }

    @Test func aReferencedFileThatChangesReachesTheRoot() async throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let tokenFile = site.credentials + "/token"
        try replaceFile(tokenFile, with: "first\n")
        try replaceFile(site.file, with: #"{"upstream": {"token": {"$secret": "file:\#(tokenFile)"}}}"#)
        let root = try site.root([], watch: true)
        #expect(root.value.upstream.token == "first")
        try replaceFile(tokenFile, with: "rotated\n")
        #expect(await eventually { root.value.upstream.token == "rotated" })
    }

    /// The store a root holds alone, without a layered store around it.
    enum PlainStore: String, CaseIterable, Sendable {
        case file, memory
    }

    @Test(
        "a referenced file that changes reaches a root over any store alone (a settings file, a store in memory)",
        arguments: PlainStore.allCases)
    func aReferencedFileThatChangesReachesARootOverAPlainStore(_ kind: PlainStore) async throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let tokenFile = site.credentials + "/token"
        try replaceFile(tokenFile, with: "first\n")
        let text = #"{"upstream": {"token": {"$secret": "file:\#(tokenFile)"}}}"#
        if kind == .file { try replaceFile(site.file, with: text) }
        let store: any DocumentStore =
            kind == .file ? FileStore(path: site.file) : MemoryStore(try JSONValue(parsing: text))
        let root = try RootLens(default: Settings(), store: store, watch: true)
        #expect(root.value.upstream.token == "first")
        try replaceFile(tokenFile, with: "rotated\n")
        #expect(await eventually { root.value.upstream.token == "rotated" })
        // An update goes on over the rotated secret, and writes the reference, never the secret.
        try await root.logLevel.async.set("debug")
        #expect(root.value.upstream.token == "rotated")
        #expect(
            try store.load().document?[path: "upstream.token"]
                == JSONValue(parsing: #"{"$secret": "file:\#(tokenFile)"}"#))
    }

    @Test func aReferenceThatCannotBeResolvedIsAnErrorNamingItAndNeverAValue() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        for (reference, reason) in [
            ("file:\(site.credentials)/missing", "no such file"),
            ("env:LOUPE_TESTS_NO_SUCH_VARIABLE_\(UUID().uuidString.prefix(8))", "no such environment variable"),
            ("vault:x", "expected one of"),
            ("nothing", "expected one of"),
        ] {
            try replaceFile(site.file, with: #"{"upstream": {"token": {"$secret": "\#(reference)"}}}"#)
            let error = #expect(throws: SettingsError.self) { try site.root([]) }
            #expect(
                message(error).contains("secret reference \(reference)") && message(error).contains("upstream.token")
                    && message(error).contains(reason), "\(message(error))")
        }
        // Text the type refuses: named, never quoted.
        try replaceFile(site.credentials + "/timeout", with: "hunter2")
        try replaceFile(
            site.file, with: #"{"upstream": {"timeoutSeconds": {"$secret": "file:\#(site.credentials)/timeout"}}}"#)
        let refused = #expect(throws: SettingsError.self) { try site.root([]) }
        #expect(
            message(refused).contains(
                "secret reference file:\(site.credentials)/timeout: upstream.timeoutSeconds: expected a whole number"),
            "\(message(refused))")
        #expect(!message(refused).contains("hunter2"))
    }

    @Test func aReferenceInALowerLayerIsResolvedAndNeverCopiedIntoTheTop() throws {
        let site = try Site(file: "{}")
        defer { site.directory.cleanUp() }
        let admin = site.directory.file("admin.json")
        try replaceFile(site.credentials + "/token", with: "from-admin-reference")
        try replaceFile(admin, with: #"{"upstream": {"token": {"$secret": "file:\#(site.credentials)/token"}}}"#)
        let root = try site.root([.file(admin)])
        #expect(root.value.upstream.token == "from-admin-reference")
        try root.logLevel.set("debug")
        #expect(try JSONValue(parsing: site.text()) == .object(["logLevel": .string("debug")]))
    }
}
