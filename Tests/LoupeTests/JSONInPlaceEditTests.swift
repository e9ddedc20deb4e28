import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// A write edits a JSON file's text in place: what did not change stays byte for byte (key order, inline
/// objects, spacing, indentation, line endings), a changed value is replaced where it stands, a removed key
/// goes with its separator, a new key goes after its last sibling in the siblings' style.
@Suite("JSON files people write: every write edits the text in place")
struct JSONInPlaceEditTests {
    let codec = JSONCodec()

    /// `text` edited by the codec into `change(document)`.
    func edited(
        _ text: String, sourceLocation: SourceLocation = #_sourceLocation, _ change: (inout JSONValue) throws -> Void
    ) throws -> String {
        try editedText(text, with: codec, sourceLocation: sourceLocation, change)
    }

    static let handWritten = """
        {
            "zeta": 1,
            "server": {"host": "a.example", "port": 80},
            "alpha" : [1, 2,   3],
            "nested": {
                "deep": {
                    "x": 1.50
                }
            }
        }

        """

    @Test func aChangedValueIsReplacedWhereItStandsAndNothingElseMoves() throws {
        let text = try edited(Self.handWritten) { try $0.set(.integer(8080), at: "server.port") }
        #expect(text == Self.handWritten.replacingOccurrences(of: #""port": 80"#, with: #""port": 8080"#))
        let deep = try edited(Self.handWritten) { try $0.set(.string("y"), at: "nested.deep.x") }
        #expect(deep == Self.handWritten.replacingOccurrences(of: "\"x\": 1.50", with: "\"x\": \"y\""))
        let element = try edited(Self.handWritten) { try $0.set(.integer(9), at: "alpha[1]") }
        #expect(element == Self.handWritten.replacingOccurrences(of: "[1, 2,   3]", with: "[1, 9,   3]"))
    }

    @Test func aNewKeyGoesAfterItsLastSiblingInTheirStyle() throws {
        let inline = try edited(Self.handWritten) { try $0.set(.bool(true), at: "server.tls") }
        #expect(
            inline == Self.handWritten.replacingOccurrences(of: #""port": 80}"#, with: #""port": 80, "tls": true}"#))
        let block = try edited(Self.handWritten) {
            try $0.set(.object(["a": .integer(1), "b": .array([.integer(2)])]), at: "nested.added")
        }
        #expect(
            block == """
                {
                    "zeta": 1,
                    "server": {"host": "a.example", "port": 80},
                    "alpha" : [1, 2,   3],
                    "nested": {
                        "deep": {
                            "x": 1.50
                        },
                        "added": {
                            "a": 1,
                            "b": [
                                2
                            ]
                        }
                    }
                }

                """)
        let top = try edited(Self.handWritten) { try $0.set(.string("new"), at: "omega") }
        #expect(
            top.hasSuffix(
                """
                        }
                    },
                    "omega": "new"
                }

                """))
    }

    @Test func aRemovedKeyGoesWithItsSeparatorAndTheRestStays() throws {
        let first = try edited(Self.handWritten) { try $0.remove(at: "zeta") }
        #expect(first == Self.handWritten.replacingOccurrences(of: "\n    \"zeta\": 1,", with: ""))
        let last = try edited(Self.handWritten) { try $0.remove(at: "nested") }
        #expect(
            last == """
                {
                    "zeta": 1,
                    "server": {"host": "a.example", "port": 80},
                    "alpha" : [1, 2,   3]
                }

                """)
        let inner = try edited(Self.handWritten) { try $0.remove(at: "server.host") }
        #expect(
            inner
                == Self.handWritten.replacingOccurrences(
                    of: #"{"host": "a.example", "port": 80}"#, with: #"{"port": 80}"#))
        let all = try edited(Self.handWritten) {
            try $0.remove(at: "server.host"); try $0.remove(at: "server.port")
        }
        #expect(all == Self.handWritten.replacingOccurrences(of: #"{"host": "a.example", "port": 80}"#, with: "{}"))
    }

    @Test func crlfLineEndingsAndTabsAreKeptForWhatIsWrittenAnew() throws {
        let windows = "{\r\n\t\"a\": 1\r\n}\r\n"
        let text = try edited(windows) { try $0.set(.object(["x": .integer(1)]), at: "b") }
        #expect(text == "{\r\n\t\"a\": 1,\r\n\t\"b\": {\r\n\t\t\"x\": 1\r\n\t}\r\n}\r\n")
    }

    @Test func nothingChangedIsTheSameBytes() throws {
        #expect(try edited(Self.handWritten) { _ in } == Self.handWritten)
    }

    /// Random sets and removals on a hand-written file, seeded, 1,050 steps in all: after each, the text
    /// parses with Python's `json` (an independent parser) to the step's document.
    @Test(arguments: [UInt64(1), 2, 3])
    func randomEditsKeepTheTextValidAndEqualToTheModel(seed: UInt64) throws {
        let keys = [
            "zeta", "server.host", "server.port", "alpha", "nested.deep.x", "nested.deep.y", "fresh", "server.extra",
            "nested.more",
        ]
        let walk = try randomEditWalk(codec: codec, from: Self.handWritten, keys: keys, steps: 350, seed: seed) {
            step, generator in
            [
                .integer(Int.random(in: 0...999, using: &generator)), .string("s\(step)"), .bool(true),
                .array([.integer(1), .string("two")]), .object(["k": .integer(step)]),
            ]
        }
        let independent = try IndependentParser.json.parse(walk.texts)
        for step in walk.texts.indices {
            #expect(independent[step] == walk.models[step], "step \(step):\n\(walk.texts[step])")
        }
    }

    @Test func aFileStoreEditsTheFileInPlace() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        struct Settings: Codable, Sendable, Equatable {
            struct Server: Codable, Sendable, Equatable { var host = "localhost"; var port = 8080 }
            var server = Server()
            var logLevel = "info"
        }
        let path = directory.file("settings.json")
        let handWritten = """
            {
              "logLevel": "info",
              "server": { "port": 8080,   "host": "a.example" }
            }

            """
        try replaceFile(path, with: handWritten)
        let root = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        try root.server.port.set(9090)
        #expect(
            try String(contentsOfFile: path, encoding: .utf8)
                == handWritten.replacingOccurrences(of: "8080", with: "9090"))
        // An update that changes nothing in the file writes nothing: the file is not even replaced.
        let before = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        try root.update { $0.server.port = 9090 }
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int == before)
    }
}

/// JSONC: comments and trailing commas, read, and kept through every write.
@Suite("JSONC: comments and trailing commas, kept through writes")
struct JSONCTests {
    let codec = JSONCCodec()

    static let commented = """
        // Settings for the daemon. Edit with care.
        {
            /* where it listens */
            "server": {
                "port": 80, // the well-known port
                "host": "a.example",
            },
            "logLevel": "info", // pinned by the administrator
            "retries": 3,
        }

        """

    func edited(
        _ text: String, sourceLocation: SourceLocation = #_sourceLocation, _ change: (inout JSONValue) throws -> Void
    ) throws -> String {
        try editedText(text, with: codec, sourceLocation: sourceLocation, change)
    }

    @Test func commentsAndTrailingCommasAreRead() throws {
        #expect(
            try codec.parse(Data(Self.commented.utf8))
                == JSONValue(
                    parsing: #"{"server": {"port": 80, "host": "a.example"}, "logLevel": "info", "retries": 3}"#))
        #expect(try codec.parse(Data("[1, 2, /* three */ 3,]".utf8)) == JSONValue(parsing: "[1, 2, 3]"))
        // Plain JSON stays strict; JSONC still refuses what is not JSONC.
        #expect(throws: DocumentSyntaxError.self) { try JSONCodec().parse(Data(Self.commented.utf8)) }
        #expect(throws: DocumentSyntaxError.self) { try codec.parse(Data("{\"a\": 1 /* never closed".utf8)) }
        #expect(throws: DocumentSyntaxError.self) { try codec.parse(Data("{,}".utf8)) }
        #expect(throws: DocumentSyntaxError.self) { try codec.parse(Data("[1,,]".utf8)) }
    }

    @Test func aChangedValueKeepsEveryComment() throws {
        let text = try edited(Self.commented) { try $0.set(.integer(8080), at: "server.port") }
        #expect(text == Self.commented.replacingOccurrences(of: "\"port\": 80,", with: "\"port\": 8080,"))
    }

    @Test func aRemovedKeyGoesWithTheCommentOnItsLineAndTheOthersStay() throws {
        let text = try edited(Self.commented) { try $0.remove(at: "logLevel") }
        #expect(
            text
                == Self.commented.replacingOccurrences(
                    of: "\n    \"logLevel\": \"info\", // pinned by the administrator", with: ""))
        let port = try edited(Self.commented) { try $0.remove(at: "server.port") }
        #expect(
            port == Self.commented.replacingOccurrences(of: "\n        \"port\": 80, // the well-known port", with: ""))
    }

    @Test func aNewKeyFollowsTheTrailingCommaStyle() throws {
        let text = try edited(Self.commented) { try $0.set(.bool(true), at: "server.tls") }
        #expect(
            text
                == Self.commented.replacingOccurrences(
                    of: "\"host\": \"a.example\",\n", with: "\"host\": \"a.example\",\n        \"tls\": true,\n"))
    }

    /// Random sets and removals on a commented file, seeded, 1,050 steps in all: after each, the text
    /// parses with Python's `json5` (an independent parser that reads comments and trailing commas) to the
    /// step's document, and every comment that was not on a removed key's line is still there.
    @Test(arguments: [UInt64(1), 2, 3])
    func randomEditsKeepTheTextValidTheModelAndTheComments(seed: UInt64) throws {
        let keys = ["server.port", "server.extra", "retries", "fresh", "nested.deep.x", "nested.more"]
        // The third walk is over the file with CRLF line endings.
        let start = seed == 3 ? Self.commented.replacingOccurrences(of: "\n", with: "\r\n") : Self.commented
        let walk = try randomEditWalk(codec: codec, from: start, keys: keys, steps: 350, seed: seed) {
            step, generator in
            [
                .integer(Int.random(in: 0...999, using: &generator)), .string("s\(step)"), .bool(false),
                .array([.integer(1), .string("two")]), .object(["k": .integer(step)]),
            ]
        }
        let independent = try IndependentParser.json5.parse(walk.texts)
        // Never removed: the comments on their own lines, and the one on `logLevel`'s line.
        let comments =
            commentLines(of: Self.commented, marker: "//") + commentLines(of: Self.commented, marker: "/*")
            + ["// pinned by the administrator"]
        for step in walk.texts.indices {
            #expect(independent[step] == walk.models[step], "step \(step):\n\(walk.texts[step])")
            for comment in comments {
                #expect(walk.texts[step].contains(comment), "step \(step) lost \(comment):\n\(walk.texts[step])")
            }
        }
    }

    /// Parse-then-write with no change is byte-identical, for every JSON and JSONC text the tests hold.
    @Test func parseThenWriteIsByteIdenticalForEveryTestFile() throws {
        for text in [
            Self.commented, JSONInPlaceEditTests.handWritten, "{\r\n\t\"a\": 1,\r\n}\r\n", "[1, /* two */ 2,]",
        ] {
            #expect(try edited(text) { _ in } == text)
        }
    }

    @Test func aFileStoreOverAJSONCFileKeepsItsComments() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        struct Settings: Codable, Sendable, Equatable {
            struct Server: Codable, Sendable, Equatable { var port = 8080; var host = "localhost" }
            var server = Server()
            var logLevel = "info"
            var retries = 1
        }
        let path = directory.file("settings.jsonc")
        try replaceFile(path, with: Self.commented)
        let root = try RootLens(default: Settings(), store: FileStore(path: path, format: JSONCCodec()), watch: false)
        try root.retries.set(5)
        #expect(
            try String(contentsOfFile: path, encoding: .utf8)
                == Self.commented.replacingOccurrences(of: "\"retries\": 3,", with: "\"retries\": 5,"))
        try root.reset(atPath: "logLevel")
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("// pinned by the administrator") == false)
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("/* where it listens */"))
    }
}
