import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// Rules on settings, enforced on every path into the graph: updates, outside edits, loads, layers.
@Suite("Validation: rules checked on every commit")
struct ValidationTests {
    struct Settings: Codable, Sendable, Equatable, Validated {
        enum Mode: String, Codable, Sendable { case fast, safe, off }
        struct Ticker: Codable, Sendable, Equatable { var intervalSeconds = 1.0 }
        struct Upstream: Codable, Sendable, Equatable {
            var url = "http://127.0.0.1:9000"
            var timeoutSeconds = 5
        }
        var ticker = Ticker()
        var upstream = Upstream()
        var mode = Mode.fast
        var minimum = 1
        var maximum = 10

        static let rules: [Rule<Settings>] = [
            Rule(\.ticker.intervalSeconds, .greaterThan(0)),
            Rule(\.upstream.timeoutSeconds, .within(1...300)),
            Rule(\.upstream.url, .matching("^https?://", "an http or https URL")),
            Rule(\.mode, .oneOf([.fast, .safe])),
        ]

        func validate() throws {
            if minimum > maximum {
                throw RuleViolation(
                    path: "minimum", rule: "must not be more than maximum (\(maximum))", found: "\(minimum)")
            }
        }
    }

    @Test func anUpdateThatBreaksARuleThrowsNamingThePathAndTheRuleAndChangesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path))
        try root.ticker.intervalSeconds.set(2)
        let before = try String(contentsOfFile: path, encoding: .utf8)
        let cases: [(String, () throws -> Void)] = [
            ("ticker.intervalSeconds: must be greater than 0, got -5", { try root.ticker.intervalSeconds.set(-5) }),
            (
                "upstream.timeoutSeconds: must be between 1 and 300, got 700000",
                { try root.upstream.timeoutSeconds.set(700_000) }
            ),
            (
                #"upstream.url: must be an http or https URL, got "ftp://example.org""#,
                { try root.upstream.url.set("ftp://example.org") }
            ),
            (#"mode: must be one of "fast", "safe", got "off""#, { try root.set(atPath: "mode", to: .string("off")) }),
            ("minimum: must not be more than maximum (10), got 11", { try root.minimum.set(11) }),
        ]
        for (message, update) in cases {
            #expect {
                try update()
            } throws: { error in
                // A SettingsError (.outOfRange) with the rule's message; the violation is its cause.
                guard let error = error as? SettingsError, error.code == .outOfRange else { return false }
                return error.description == message && (error.cause as? RuleViolation)?.description == message
            }
        }
        #expect(root.value.ticker.intervalSeconds == 2)
        #expect(root.value.upstream == Settings.Upstream())
        #expect(try String(contentsOfFile: path, encoding: .utf8) == before)
        // A root with no store keeps its rules too.
        let memory = RootLens(Settings())
        #expect(throws: SettingsError.self) { try memory.upstream.timeoutSeconds.set(0) }
        #expect(memory.value.upstream.timeoutSeconds == 5)
        #expect(throws: RuleViolation.self) { try Settings(minimum: 20).check() }
    }

    @Test func aStoredDocumentThatBreaksARuleIsAnErrorAtLoadAndIsNeverOverwritten() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let text = #"{"upstream": {"timeoutSeconds": 0}}"#
        try replaceFile(path, with: text)
        #expect {
            try RootLens(default: Settings(), store: FileStore(path: path))
        } throws: { error in
            "\(error)" == "invalid data in JSON file \(path): upstream.timeoutSeconds: must be between 1 and 300, got 0"
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
    }

    @Test func anOutsideEditThatBreaksARuleIsRefusedLikeABadEditAndTheGoodValueStays() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path))
        let errors = Locked<[String]>([])
        let token = root.observeErrors { error in errors.withLock { $0.append("\(error)") } }
        defer { token.cancel() }
        try replaceFile(path, with: #"{"ticker": {"intervalSeconds": -1}}"#)
        #expect(
            eventually {
                errors.withLock {
                    $0.contains { $0.contains("ticker.intervalSeconds: must be greater than 0, got -1") }
                }
            })
        #expect(root.value.ticker.intervalSeconds == 1)
        // Updates wait for a good document rather than overwrite the person's edit.
        #expect(throws: SettingsError.self) { try root.minimum.set(2) }
        try replaceFile(path, with: #"{"ticker": {"intervalSeconds": 3}}"#)
        #expect(eventually { root.value.ticker.intervalSeconds == 3 })
        try root.minimum.set(2)
    }

    @Test func aLayerThatBreaksARuleIsNamedAndKeepsItsLastGoodDocument() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let admin = directory.file("admin.json")
        try replaceFile(admin, with: #"{"upstream": {"url": "https://admin.example"}}"#)
        let store = LayeredStore(layers: [.file(admin)], top: FileStore(path: directory.file("user.json")))
        let root = try RootLens(default: Settings(), store: store)
        let errors = Locked<[String]>([])
        let token = root.observeErrors { error in errors.withLock { $0.append("\(error)") } }
        defer { token.cancel() }
        try replaceFile(admin, with: #"{"upstream": {"url": "gopher://admin.example"}}"#)
        #expect(
            eventually {
                errors.withLock {
                    $0.contains { $0.contains(admin) && $0.contains("upstream.url: must be an http or https URL") }
                }
            })
        #expect(root.value.upstream.url == "https://admin.example")
        try root.minimum.set(3)
        #expect(root.value.minimum == 3)
    }

    @Test func aValueThatIsNoneOfAnEnumsCasesListsTheCases() throws {
        struct Logging: Codable, Sendable, Equatable {
            enum Level: String, Codable, Sendable, CaseIterable { case trace, debug, info }
            var logLevel = Level.info
        }
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        try replaceFile(path, with: #"{"logLevel": "shouting"}"#)
        #expect {
            _ = try RootLens(default: Logging(), store: FileStore(path: path))
        } throws: { error in
            "\(error)".contains(#"logLevel: expected one of trace, debug, info, found "shouting""#)
        }
        let root = RootLens(Logging())
        #expect {
            try root.set(atPath: "logLevel", to: .string("shouting"))
        } throws: { error in
            "\(error)".contains(#"logLevel: expected one of trace, debug, info, found "shouting""#)
        }
        #expect(root.value.logLevel == .info)
    }
}
