import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// JSON Schema derived from a settings type and its default value.
@Suite("Schema: JSON Schema of a settings type")
struct SchemaTests {
    struct Settings: Codable, Sendable, Equatable, Validated, DescribedSettings {
        enum Level: String, Codable, Sendable, CaseIterable { case low, high }
        enum Priority: Int, Codable, Sendable, CaseIterable { case one = 1, two = 2 }
        struct Server: Codable, Sendable, Equatable {
            var host = "localhost"
            var port: UInt16 = 8080
        }
        struct Endpoint: Codable, Sendable, Equatable, DescribedSettings {
            var url = URL(string: "https://example.org")!
            var weight = 1.0
            static let descriptions: [ValuePath: String] = ["weight": "How much traffic it takes."]
        }
        /// A type with its own encoding: a single value.
        struct Percent: Codable, Sendable, Equatable {
            var value: Int
            init(_ value: Int) { self.value = value }
            init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Int.self) }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(value)
            }
        }

        var server = Server()
        var level = Level.low
        var priority = Priority.one
        var tags: [String] = []
        var endpoints: [Endpoint] = []
        var features: [String: Bool] = ["beta": false]
        var limits: [String: Server] = [:]
        var nickname: String?
        var backup: Server?
        var ratio = Percent(50)
        var token = Data()
        var anything: JSONValue = .null

        static let rules: [Rule<Settings>] = [
            Rule(\.server.port, .atLeast(1024)),
            Rule(\.server.host, .matching("^[a-z.]+$", "a lowercase host name")),
            Rule(\.level, .oneOf([.low, .high])),
        ]

        static let descriptions: [ValuePath: String] = [
            "": "Everything the program reads.",
            "server": "Where it listens.",
            "server.port": "The TCP port.",
        ]
    }

    func schema() throws -> [String: JSONValue] {
        let schema = try SettingsSchema(for: Settings.self, default: Settings())
        guard case .object(let object) = schema.document else { throw Failure("not an object") }
        return object
    }

    func part(_ path: ValuePath) throws -> [String: JSONValue] {
        let schema = try SettingsSchema(for: Settings.self, default: Settings())
        guard case .object(let object)? = schema.part(at: path) else { throw Failure("no part at \(path)") }
        return object
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test func theRootIsADraft2020ObjectWithItsTitleAndDescriptionAndNoRequiredKeys() throws {
        let root = try schema()
        #expect(root["$schema"] == .string("https://json-schema.org/draft/2020-12/schema"))
        #expect(root["title"] == .string("Settings"))
        #expect(root["type"] == .string("object"))
        #expect(root["description"] == .string("Everything the program reads."))
        #expect(root["required"] == nil)
        #expect(root["additionalProperties"] == nil, "keys the type does not know are carried through, never refused")
        #expect(root["default"] == nil)
    }

    @Test func objectsAndScalarsHaveTheirTypesDefaultsAndBounds() throws {
        let server = try part("server")
        #expect(server["type"] == .string("object"))
        #expect(server["description"] == .string("Where it listens."))
        #expect(server["default"] == JSONValue.object(["host": .string("localhost"), "port": .integer(8080)]))
        let port = try part("server.port")
        #expect(port["type"] == .string("integer"))
        #expect(port["default"] == .integer(8080))
        #expect(port["minimum"] == .integer(1024), "the rule's bound replaces the type's")
        #expect(port["maximum"] == .integer(65535), "UInt16's bound")
        #expect(port["description"] == .string("The TCP port."))
        let host = try part("server.host")
        #expect(host["type"] == .string("string"))
        #expect(host["pattern"] == .string("^[a-z.]+$"))
    }

    @Test func caseIterableTypesAreEnumsOfTheirRawValues() throws {
        #expect(try part("level")["enum"] == .array([.string("low"), .string("high")]))
        #expect(try part("level")["type"] == .string("string"))
        #expect(try part("priority")["enum"] == .array([.integer(1), .integer(2)]))
        #expect(try part("priority")["type"] == .string("integer"))
    }

    @Test func arraysDictionariesAndOptionals() throws {
        let tags = try part("tags")
        #expect(tags["type"] == .string("array"))
        #expect(tags["items"] == .object(["type": .string("string")]), "learned without an element in the default")
        let endpoint = try part("endpoints[0]")
        #expect(endpoint["type"] == .string("object"))
        #expect(try part("endpoints[0].url")["format"] == .string("uri"))
        #expect(try part("endpoints[0].weight")["description"] == .string("How much traffic it takes."))
        let features = try part("features")
        #expect(features["additionalProperties"] == .object(["type": .string("boolean")]))
        #expect(features["default"] == .object(["beta": .bool(false)]))
        #expect(try part("limits.eu.port")["type"] == .string("integer"))
        #expect(try part("nickname")["type"] == .array([.string("string"), .string("null")]))
        #expect(try part("backup")["type"] == .array([.string("object"), .string("null")]))
        #expect(try part("backup.port")["type"] == .string("integer"))
    }

    @Test func typesWithTheirOwnEncodingAreDescribedByWhatTheyRead() throws {
        #expect(try part("ratio")["type"] == .string("integer"))
        #expect(try part("token")["contentEncoding"] == .string("base64"))
        #expect(try part("anything")["type"] == nil, "a JSONValue takes anything")
    }

    @Test func snakeCaseKeysAreTheDocumentsKeys() throws {
        let schema = try SettingsSchema(
            for: Settings.Endpoint.self, default: Settings.Endpoint(), coding: DocumentCoding(keys: .snakeCase))
        guard case .object(let root) = schema.document, case .object(let properties)? = root["properties"] else {
            throw Failure("no properties")
        }
        #expect(Set(properties.keys) == ["url", "weight", "$version"], "the settings' keys, and the version stamp")
        #expect(properties["$version"]?[path: "type"] == .string("integer"))
        struct Snake: Codable { var intervalSeconds = 1; var maxURLLength = 2 }
        let snake = try SettingsSchema(for: Snake.self, default: Snake(), coding: DocumentCoding(keys: .snakeCase))
        #expect(snake.part(at: "interval_seconds") != nil)
        #expect(snake.part(at: "max_url_length") != nil)
    }

    @Test func aRootLensGivesItsTypesSchema() throws {
        let root = RootLens(Settings())
        #expect(try root.schema() == SettingsSchema(for: Settings.self, default: Settings()))
    }

    @Test func rootsOfOneTypeEachGiveTheSchemaOfTheirOwnDefaultAndCoding() throws {
        // Roots of one type share a schema worked out once, where their defaults and strategies are the
        // same; a root with another default, other strategies, or strategies that cannot be compared (a
        // closure) has its own. Opened in turns, so that each replaces the one kept before it.
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        var other = Settings()
        other.server.host = "other.example"
        other.features = ["gamma": true]
        let snakeCase = DocumentCoding(keys: .snakeCase)
        let closures = DocumentCoding(
            dateEncodingStrategy: .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(date.timeIntervalSince1970)
            },
            dateDecodingStrategy: .custom { decoder in
                Date(timeIntervalSince1970: try decoder.singleValueContainer().decode(Double.self))
            })
        func root(_ value: Settings, _ coding: DocumentCoding = DocumentCoding()) throws -> RootLens<Settings> {
            try RootLens(
                default: value,
                store: FileStore(path: directory.file("settings.json"), format: JSONCodec(coding: coding)), watch: false
            )
        }
        for _ in 0..<2 {
            for (value, coding) in [
                (Settings(), DocumentCoding()), (other, DocumentCoding()), (Settings(), snakeCase), (other, closures),
            ] {
                let expected = try SettingsSchema(for: Settings.self, default: value, coding: coding)
                #expect(try root(value, coding).schema() == expected)
                #expect(try root(value, coding).schema() == expected, "the second root of the same default and coding")
            }
        }
        #expect(try root(other).schema().part(at: "server")?[path: "default.host"] == .string("other.example"))
        #expect(try root(Settings(), snakeCase).schema().describes("endpoints"))
    }
}
