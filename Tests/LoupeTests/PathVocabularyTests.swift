import Foundation
import Logging
import LoupeTestSupport
import Testing

@testable import Loupe

/// Every path Loupe shows or takes is the document's, in coding keys: a lens's path, secret paths,
/// provenance, errors, rules, the schema and string paths all name `up_stream.api_token` where the
/// settings type's `CodingKeys` say so, never the Swift property `upstream.apiToken`. Real files, as a
/// person writes them by hand.
@Suite("One path vocabulary: the document's coding keys, everywhere")
struct PathVocabularyTests {
    struct Settings: Codable, Sendable, Equatable, Validated {
        /// Not `CaseIterable`: no value of it can be made up, so its keys are learnt with the root's value.
        enum Level: String, Codable, Sendable { case info, debug }

        struct Upstream: Codable, Sendable, Equatable {
            var url = "http://127.0.0.1:9000"
            var apiToken: String? = nil
            var timeoutSeconds = 30
            var verifyPeer = true

            enum CodingKeys: String, CodingKey {
                case url = "base_url"
                case apiToken = "api_token"
                case timeoutSeconds = "timeout_seconds"
                case verifyPeer = "verify_peer"
            }
        }

        struct Peer: Codable, Sendable, Equatable {
            var hostName = ""
            var portNumber = 0

            enum CodingKeys: String, CodingKey {
                case hostName = "host_name"
                case portNumber = "port"
            }
        }

        /// Coded by hand under keys that are not its properties' names, read in another order than
        /// they are declared.
        struct Size: Codable, Sendable, Equatable {
            var width = 640
            var height = 480

            private struct Key: CodingKey {
                var stringValue: String
                var intValue: Int? { nil }
                init(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }

            init() {}

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: Key.self)
                height = try container.decodeIfPresent(Int.self, forKey: Key(stringValue: "h")) ?? 480
                width = try container.decodeIfPresent(Int.self, forKey: Key(stringValue: "w")) ?? 640
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(width, forKey: Key(stringValue: "w"))
                try container.encode(height, forKey: Key(stringValue: "h"))
            }
        }

        var logLevel: Level = .info
        var upstream = Upstream()
        var peers: [Peer] = []
        var zones: [String: Peer] = [:]
        var backup: Upstream?
        var retryCount = 3
        var windowSize = Size()
        var verbose = false
        var fallbackLevel: Level = .debug
        /// Not encoded: no document path names it.
        var lookups = 0

        enum CodingKeys: String, CodingKey {
            case logLevel = "log_level"
            case upstream = "up_stream"
            case peers = "peer_list"
            case zones = "zone_map"
            case backup = "backup_upstream"
            case retryCount = "retry_count"
            case windowSize = "window"
            case verbose = "is_verbose"
            case fallbackLevel = "fallback_level"
        }

        static let rules: [Rule<Settings>] = [
            Rule(\.upstream.timeoutSeconds, .within(1...300)),
            Rule(\.retryCount, .atMost(10)),
        ]
    }

    /// A hand-written file, and a directory of credentials beside it.
    struct Site {
        let directory: TemporaryDirectory
        var file: String { directory.file("settings.json") }
        var credentials: String { directory.file("credentials") }

        init(file text: String = "{}") throws {
            directory = try TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
            try replaceFile(file, with: text)
        }

        func root() throws -> RootLens<Settings> {
            try RootLens(default: Settings(), store: FileStore(path: file), watch: false)
        }
    }

    @Test func aLensNamesItsPathByTheCodingKeysAtEveryLevel() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let root = try site.root()
        #expect(root.logLevel.path == "log_level")
        #expect(root.upstream.apiToken.path == "up_stream.api_token")
        #expect(root.upstream.apiToken.valuePath == "up_stream.api_token")
        #expect(root[\.upstream.timeoutSeconds].valuePath == "up_stream.timeout_seconds", "an explicit key path")
        #expect(root.upstream.verifyPeer.valuePath == "up_stream.verify_peer", "a Bool, which carries no mark")
        #expect(root.verbose.valuePath == "is_verbose")
        #expect(root.fallbackLevel.valuePath == "fallback_level", "a second enum no value can be made up for")
        #expect(root.lookups.valuePath == nil && root.lookups.path == "[…]", "a property no coding key names")
        #expect(root.windowSize.height.valuePath == "window.h", "a type coded by hand")
        #expect(root.windowSize.width.valuePath == "window.w")
        #expect(root.peers[index: 2].hostName.valuePath == "peer_list[2].host_name", "an element's member")
        #expect(root.zones["eu"].portNumber.valuePath == "zone_map.eu.port", "a dictionary entry's member")
        #expect(root.backup.apiToken.valuePath == "backup_upstream.api_token", "an optional's optional member")
        #expect(root.backup.timeoutSeconds.valuePath == "backup_upstream.timeout_seconds", "an optional's member")
        #expect(root.readOnly.upstream.url.valuePath == "up_stream.base_url", "a read-only lens")
    }

    @Test func provenanceOfALensPathFindsTheFilesValue() throws {
        let site = try Site(file: #"{"log_level": "debug", "up_stream": {"timeout_seconds": 60}}"#)
        defer { site.directory.cleanUp() }
        let root = try site.root()
        #expect(root.logLevel.value == .debug)
        let level = try root.provenance(of: try #require(root.logLevel.valuePath))
        #expect(level.source == .layer(site.file), "\(level)")
        let timeout = try root.provenance(of: try #require(root.upstream.timeoutSeconds.valuePath))
        #expect(timeout.source == .layer(site.file), "\(timeout)")
        let url = try root.provenance(of: try #require(root.upstream.url.valuePath))
        #expect(url.source == .defaultValue, "\(url)")
    }

    @Test func aCredentialIsASecretPathOfTheRootAndOfEachLensOnTheWay() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        try replaceFile(site.credentials + "/up_stream.api_token", with: "s3cret\n")
        let root = try RootLens(
            default: Settings(),
            store: LayeredStore(layers: [.directory(credentials: site.credentials)], top: FileStore(path: site.file)),
            watch: false)
        #expect(root.value.upstream.apiToken == "s3cret")
        #expect(root.secretPaths == ["up_stream.api_token"])
        #expect(root.upstream.secretPaths == ["api_token"], "relative to the part's lens")
        #expect(root.upstream.apiToken.secretPaths == [ValuePath([])], "the lens's whole value")
        #expect(root.upstream.url.secretPaths.isEmpty)
    }

    @Test func errorsOfLensWritesAndOfDecodingNameTheSamePaths() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let root = try site.root()
        let rule = #expect(throws: SettingsError.self) { try root.upstream.timeoutSeconds.set(0) }
        #expect(rule?.path == "up_stream.timeout_seconds", "\(String(describing: rule))")
        let missing = #expect(throws: SettingsError.self) { try root.backup.apiToken.set("t") }
        #expect(missing?.path == "backup_upstream.api_token", "\(String(describing: missing))")
        let range = #expect(throws: SettingsError.self) { try root.peers[index: 3].set(Settings.Peer()) }
        #expect(range?.path == "peer_list[3]", "\(String(describing: range))")
        let typed = #expect(throws: SettingsError.self) {
            try root.set(atPath: "up_stream.timeout_seconds", to: .string("soon"))
        }
        #expect(typed?.path == "up_stream.timeout_seconds", "\(String(describing: typed))")

        try replaceFile(site.file, with: #"{"up_stream": {"timeout_seconds": "soon"}}"#)
        let decode = #expect(throws: SettingsError.self) { try site.root() }
        #expect(decode?.path == "up_stream.timeout_seconds", "\(String(describing: decode))")
        try replaceFile(site.file, with: #"{"up_stream": {"timeout_seconds": 0}}"#)
        let stored = #expect(throws: SettingsError.self) { try site.root() }
        #expect("\(String(describing: stored))".contains("up_stream.timeout_seconds"), "\(String(describing: stored))")
    }

    @Test func aRuleGivesItsPathOnceAndNamesItAsTheDocumentDoes() {
        #expect(Plain.rules.map(\.path) == ["retryCount"], "its coding key, before any key strategy")
        var settings = Settings()
        settings.retryCount = 11
        let violation = settings.violation(quotingValues: true)
        #expect(violation?.path == "retry_count" && violation?.description.contains("retry_count") == true)
        // `Level` has no value a probe can make up: the paths are learnt from the value checked.
        #expect(Settings.rules.map(\.path) == ["up_stream.timeout_seconds", "retry_count"])
    }

    @Test func theSchemaAndStringPathsTakeCodingKeys() throws {
        let site = try Site(file: #"{"up_stream": {"api_token": "t0"}}"#)
        defer { site.directory.cleanUp() }
        let root = try site.root()
        let schema = try root.schema()
        #expect(schema.part(at: "up_stream.timeout_seconds")?[path: "maximum"] == .integer(300), "the rule's keywords")
        #expect(schema.part(at: "retry_count")?[path: "maximum"] == .integer(10))
        #expect(try root.value(atPath: "up_stream.api_token") == .string("t0"))
        #expect(try root.upstream.value(atPath: "api_token") == .string("t0"))
        try root.set(atPath: "up_stream.timeout_seconds", to: .integer(45))
        #expect(root.value.upstream.timeoutSeconds == 45)
        #expect(
            try JSONValue(parsing: try String(contentsOfFile: site.file, encoding: .utf8))[
                path: "up_stream.timeout_seconds"] == .integer(45))
    }

    /// Without `CodingKeys`, under a coding that writes keys in snake_case.
    struct Plain: Codable, Sendable, Equatable, Validated {
        struct Upstream: Codable, Sendable, Equatable {
            var apiToken = ""
            var timeoutSeconds = 30
        }
        var upstream = Upstream()
        var retryCount = 3
        static let rules: [Rule<Plain>] = [Rule(\.retryCount, .atMost(10))]
    }

    @Test func aKeyStrategyNamesPathsAsTheFileWritesThem() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("settings.json")
        try replaceFile(file, with: #"{"upstream": {"timeout_seconds": 60}}"#)
        let root = try RootLens(
            default: Plain(),
            store: FileStore(path: file, format: JSONCodec(coding: DocumentCoding(keys: .snakeCase))), watch: false)
        #expect(root.upstream.apiToken.valuePath == "upstream.api_token")
        #expect(try root.provenance(of: try #require(root.upstream.timeoutSeconds.valuePath)).source == .layer(file))
        let error = #expect(throws: SettingsError.self) { try root.retryCount.set(11) }
        #expect(error?.path == "retry_count", "\(String(describing: error))")
        #expect(try root.value(atPath: "upstream.timeout_seconds") == .integer(60))
        let typed = #expect(throws: SettingsError.self) {
            try root.set(atPath: "upstream.timeout_seconds", to: .string("soon"))
        }
        #expect(typed?.path == "upstream.timeout_seconds", "\(String(describing: typed))")
        try replaceFile(file, with: #"{"upstream": {"timeout_seconds": "soon"}}"#)
        let decode = #expect(throws: SettingsError.self) {
            try RootLens(
                default: Plain(),
                store: FileStore(path: file, format: JSONCodec(coding: DocumentCoding(keys: .snakeCase))), watch: false)
        }
        #expect(decode?.path == "upstream.timeout_seconds", "\(String(describing: decode))")
        #expect("\(String(describing: decode))".contains("\"soon\""), "the value found, at the document's path")
    }

    struct Fresh: Codable, Sendable, Equatable {
        var count = 0
        var label = "a"
        enum CodingKeys: String, CodingKey { case count = "n", label = "text" }
    }

    @Test func aLensFirstDerivedInsideAnUpdateIsNamedWithoutWaitingForIt() throws {
        let root = RootLens(Fresh())
        var named = ""
        try root.update { value in
            named = root.label.path
            value.count = 1
        }
        #expect(named == "text" && root.value.count == 1)
    }

    /// Properties whose values carry no mark (Bools, cases, absent optionals) are told apart all the same.
    struct Flags: Codable, Sendable, Equatable {
        enum Mode: String, Codable, Sendable, CaseIterable { case fast, safe }
        var first = false
        var second = true
        var mode = Mode.fast
        var note: String? = nil
        enum CodingKeys: String, CodingKey {
            case first = "b_one"
            case second = "a_two"
            case mode = "the_mode"
            case note = "the_note"
        }
    }

    /// Foundation's types and containers of every kind, each under a key that is not its name.
    struct Mixed: Codable, Sendable, Equatable {
        struct Inner: Codable, Sendable, Equatable { var depth = 1 }
        var link = URL(string: "https://example.com")!
        var since = Date(timeIntervalSince1970: 0)
        var blob = Data()
        var amount = Decimal(1)
        var id = UUID()
        var tags: Set<String> = []
        var table: [String: Int] = [:]
        var nested: Inner? = nil
        var matrix: [[Int]] = []
        enum CodingKeys: String, CodingKey {
            case link = "k_link", since = "k_since", blob = "k_blob", amount = "k_amount", id = "k_id", tags = "k_tags"
            case table = "k_table", nested = "k_nested", matrix = "k_matrix"
        }
    }

    @Test func foundationTypesAndContainersAreNamedWithoutASample() {
        let keys = FieldKeys.keys(of: Mixed.self, sample: nil)
        #expect(
            keys == [
                "k_link", "k_since", "k_blob", "k_amount", "k_id", "k_tags", "k_table", "k_nested", "k_matrix",
            ])
    }

    @Test func propertiesWithoutMarksAreToldByChangingOneKeyAtATime() {
        let keys = FieldKeys.keys(of: Flags.self, sample: nil)
        #expect(keys == ["b_one", "a_two", "the_mode", "the_note"])
    }
}
