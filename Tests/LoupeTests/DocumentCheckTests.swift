import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// `RootLens.problems(in:named:coding:reportingUnknownKeys:)`: every problem a settings document has for a type, and
/// `DocumentCodec.position(of:in:)`: where a path is written in a file's text.
@Suite("Checking a document: every problem, and where each stands in the text")
struct DocumentCheckTests {
    struct Checked: Codable, Sendable, Equatable, Validated, SecretSettings {
        enum Mode: String, Codable, Sendable, CaseIterable { case fast, safe }
        struct Server: Codable, Sendable, Equatable {
            var host = "localhost"
            var port: UInt16 = 8080
        }

        var mode = Mode.safe
        var server = Server()
        var retries = 3
        var names: [String] = []
        var password = "default-password"

        static let rules: [Rule<Checked>] = [
            Rule(\.server.port, .atLeast(1024)),
            Rule(\.retries, .within(0...10)),
            Rule(\.password, .satisfying("must be 8 characters or more") { $0.count >= 8 }),
        ]
        static let secretPaths: [ValuePath] = ["password"]

        func validate() throws {
            if mode == .fast && retries > 0 { throw RuleViolation(path: "retries", rule: "must be 0 in fast mode") }
        }
    }

    @Test("several parts that do not fit are all reported, then every rule the rest breaks")
    func everyDecodingErrorThenEveryRule() throws {
        let root = RootLens(Checked())
        let problems = root.problems(
            in: try document(
                """
                {"mode": "slow", "server": {"host": 5, "port": 80}, "retries": 11, "names": ["a", 2, "c"], "unknown": true}
                """), named: "settings.json")
        #expect(
            problems == [
                SettingsProblem(
                    path: "mode", message: #"expected one of fast, safe, found "slow""#, kind: .invalidValue),
                SettingsProblem(path: "server.host", message: "expected String, found number 5", kind: .invalidValue),
                SettingsProblem(path: "names[1]", message: "expected String, found number 2", kind: .invalidValue),
                SettingsProblem(path: "server.port", message: "must be at least 1024, got 80", kind: .rule),
                SettingsProblem(path: "retries", message: "must be between 0 and 10, got 11", kind: .rule),
            ], "a key the type does not know is kept, not a problem: \(problems)")
        #expect(
            problems.suffix(2).allSatisfy { $0.kind == SettingsProblem.Kind.rule },
            "the rules are checked once the document decodes")
        #expect(
            root.problems(
                in: try document(#"{"mode": "fast", "retries": 0, "server": {"port": 9000}}"#), named: "settings.json"
            ).isEmpty)
        #expect(
            root.problems(in: try document(#"{"mode": "fast"}"#), named: "settings.json")
                == [SettingsProblem(path: "retries", message: "must be 0 in fast mode", kind: .rule)], "validate() too")
    }

    @Test("a secret the type declares is never quoted, whether it does not fit or breaks a rule")
    func declaredSecretsAreNotQuoted() throws {
        let root = RootLens(Checked())
        let wrongType = root.problems(in: try document(#"{"password": 12345}"#), named: "settings.json")
        #expect(
            wrongType == [SettingsProblem(path: "password", message: "expected String", kind: .invalidValue)],
            "\(wrongType)")
        let short = root.problems(in: try document(#"{"password": "hunter2"}"#), named: "settings.json")
        #expect(
            short == [SettingsProblem(path: "password", message: "must be 8 characters or more", kind: .rule)],
            "\(short)")
    }

    @Test("a locked path the document sets to another value is a problem; the value the layers below give is not")
    func lockedPaths() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let locks = directory.file("locks")
        try "# admin\nserver.port\n".write(toFile: locks, atomically: true, encoding: .utf8)
        let base = directory.file("base.json")
        try #"{"server": {"port": 9000}}"#.write(toFile: base, atomically: true, encoding: .utf8)
        let root = try RootLens(
            default: Checked(), store: LayeredStore(layers: [.file(base)], top: MemoryStore(), locks: [locks]),
            watch: false)
        #expect(
            root.problems(in: try document(#"{"server": {"port": 9100}}"#), named: "user.json")
                == [
                    SettingsProblem(
                        path: "server.port",
                        message: "locked by \(locks) line 2: the value here is ignored, the layers below give it",
                        kind: .locked)
                ])
        #expect(
            root.problems(in: try document(#"{"server": {"port": 9000}}"#), named: "user.json").isEmpty,
            "the layer below gives 9000")
        #expect(root.problems(in: try document(#"{"server": {"host": "example.org"}}"#), named: "user.json").isEmpty)
    }

    @Test(
        "keys the type does not know are problems only when asked: each the document sets, with the keys known beside it"
    )
    func unknownKeys() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let base = directory.file("base.json")
        try #"{"fromBelow": 1, "server": {"alsoBelow": true}}"#.write(toFile: base, atomically: true, encoding: .utf8)
        let root = try RootLens(
            default: Checked(), store: LayeredStore(layers: [.file(base)], top: MemoryStore()), watch: false)
        let text = #"""
            {"$schema": "settings.schema.json", "server": {"hots": "example.org", "port": 9000}, "retries": 2,
             "retires": 3, "names": ["a"]}
            """#
        #expect(root.problems(in: try document(text), named: "settings.json").isEmpty, "Loupe keeps them")
        let problems = root.problems(in: try document(text), named: "settings.json", reportingUnknownKeys: true)
        #expect(
            problems == [
                SettingsProblem(
                    path: "retires",
                    message:
                        "a key the type does not know, kept as it is (the type knows mode, names, password, retries, server here)",
                    kind: .unknownKey),
                SettingsProblem(
                    path: "server.hots",
                    message: "a key the type does not know, kept as it is (the type knows host, port here)",
                    kind: .unknownKey),
            ], "not the keys a layer below sets, nor the editor's $schema: \(problems)")
        // After the other problems, which are found as before.
        let both = root.problems(
            in: try document(#"{"retries": 11, "colour": "red"}"#), named: "settings.json", reportingUnknownKeys: true)
        #expect(both.map(\.kind) == [.rule, .unknownKey] && both.map(\.path) == ["retries", "colour"], "\(both)")
        // A part that does not fit leaves the keys around it checked.
        let bad = root.problems(
            in: try document(#"{"server": {"port": "x", "prot": 1}}"#), named: "settings.json",
            reportingUnknownKeys: true)
        #expect(bad.map(\.kind) == [.invalidValue, .unknownKey] && bad.last?.path == "server.prot", "\(bad)")
    }

    @Test("the version stamp is taken off; a bad stamp is a problem; secret references are left to the program")
    func stampsAndSecretReferences() throws {
        let root = RootLens(Checked())
        #expect(root.problems(in: try document(#"{"$version": 1, "retries": 2}"#), named: "settings.json").isEmpty)
        #expect(
            root.problems(in: try document(#"{"$version": "two"}"#), named: "settings.json").map(\.path) == ["$version"]
        )
        #expect(
            root.problems(
                in: try document(#"{"password": {"$secret": "file:/run/secrets/password"}}"#), named: "settings.json"
            ).isEmpty)
    }

    @Test("JSON and JSONC: the line and column of a value, in characters, or of the nearest part above it")
    func jsonPositions() throws {
        let text = Data(
            """
            {
              // a comment
              "naïve": "é", "server": {"port": 80},
              "names": [
                "a",
                  "b"
              ]
            }
            """.utf8)
        let codec = JSONCCodec()
        #expect(codec.position(of: "server.port", in: text) == TextPosition(line: 3, column: 36))
        #expect(codec.position(of: "server", in: text) == TextPosition(line: 3, column: 27))
        #expect(codec.position(of: "names[1]", in: text) == TextPosition(line: 6, column: 7))
        #expect(
            codec.position(of: "server.host", in: text) == TextPosition(line: 3, column: 27), "not written: its object")
        #expect(codec.position(of: ValuePath([]), in: text) == TextPosition(line: 1, column: 1))
        #expect(JSONCodec().position(of: "server", in: text) == nil, "comments are not JSON")
        #expect(
            JSONCodec().position(of: "a", in: Data(#"{"x": 1, "a": [true]}"#.utf8)) == TextPosition(line: 1, column: 15)
        )
    }

    @Test("TOML: values in sections, dotted keys, inline tables, arrays and arrays of tables")
    func tomlPositions() throws {
        let text = Data(
            """
            title = "x"
            owner.name = "ann"

            [server]
            port = 80
            limits = { depth = 3, width = [1, 2] }

            [[plugins]]
            name = "a"

            [[plugins]]
            name = "b"
            """.utf8)
        let codec = TOMLCodec()
        #expect(codec.position(of: "title", in: text) == TextPosition(line: 1, column: 9))
        #expect(codec.position(of: "owner.name", in: text) == TextPosition(line: 2, column: 14))
        #expect(codec.position(of: "server.port", in: text) == TextPosition(line: 5, column: 8))
        #expect(codec.position(of: "server.limits.depth", in: text) == TextPosition(line: 6, column: 20))
        #expect(codec.position(of: "server.limits.width[1]", in: text) == TextPosition(line: 6, column: 35))
        #expect(codec.position(of: "server", in: text) == TextPosition(line: 4, column: 1), "a table: its header")
        #expect(
            codec.position(of: "server.host", in: text) == TextPosition(line: 4, column: 1), "not written: its table")
        #expect(codec.position(of: "plugins[1].name", in: text) == TextPosition(line: 12, column: 8))
        #expect(codec.position(of: "plugins", in: text) == TextPosition(line: 8, column: 1), "its first header")
        #expect(codec.position(of: "nothing", in: text) == TextPosition(line: 1, column: 1))
    }

    @Test("a syntax error says its line and column apart from what is wrong")
    func syntaxErrorPositions() throws {
        #expect(throws: DocumentSyntaxError("a value was expected, not '='", at: TextPosition(line: 2, column: 5))) {
            try TOMLCodec().parse(Data("a = 1\nb = = 2\n".utf8))
        }
        do {
            _ = try JSONCodec().parse(Data("{\n  \"a\": 1,\n  \"b\" 2\n}".utf8))
            Issue.record("not JSON, yet read")
        } catch let error as DocumentSyntaxError {
            #expect(error.position == TextPosition(line: 3, column: 7), "\(error)")
            #expect(error.reason == "line 3, column 7: \(error.problem)")
        }
    }

    @Test("places order as they stand in the text: by line, then by column")
    func positionsOrderAsInTheText() throws {
        let codec = JSONCodec()
        let text = Data("{\"b\": 1, \"a\": 2,\n \"c\": 3}".utf8)
        let b = try #require(codec.position(of: "b", in: text))
        let a = try #require(codec.position(of: "a", in: text))
        let c = try #require(codec.position(of: "c", in: text))
        #expect([c, a, b].sorted() == [b, a, c])
        #expect(TextPosition(line: 1, column: 40) < TextPosition(line: 2, column: 1))
        #expect(!(b < b))
    }
}

/// The document `text` holds, as JSON.
private func document(_ text: String) throws -> JSONValue {
    try JSONValue(parsing: text)
}
