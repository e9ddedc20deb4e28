import Foundation
@testable import Loupe
import LoupeTestSupport
import Testing

/// What a write does to a TOML file people wrote: each edit changes the bytes of what changed, in the style
/// of the place it lands in, and leaves every other byte as it was.
@Suite("TOML: edits in place, in the style of their place")
struct TOMLEditorTests {
    let codec = TOMLCodec()

    func edited(
        _ text: String, sourceLocation: SourceLocation = #_sourceLocation, _ change: (inout JSONValue) throws -> Void
    ) throws -> String {
        try editedText(
            text, with: codec, same: { TOMLCodecTests.comparable($0) == TOMLCodecTests.comparable($1) },
            sourceLocation: sourceLocation, change)
    }

    /// ruff's rule list, as people write it: one rule a line, commented-out rules between them, a trailing
    /// comma.
    static let ruff = """
        [tool.ruff.lint]
        select = [
            "E",    # pycodestyle errors
            "W",    # pycodestyle warnings
            # "C90",  # mccabe
            "F",    # pyflakes
            "I",    # isort
            # "N",  # pep8-naming
            "UP",   # pyupgrade
            # "YTT", # flake8-2020
            # "ANN", # flake8-annotations
            "B",    # flake8-bugbear
            # "A",  # flake8-builtins
            # "COM", # flake8-commas
            # "C4", # flake8-comprehensions
            # "DTZ", # flake8-datetimz
            "SIM",  # flake8-simplify
            # "T20", # flake8-print
        ]
        ignore = ["E501"]

        """

    // MARK: Arrays

    @Test func anArrayWrittenOneElementPerLineKeepsItsLayoutAndCommentsWhenAnElementIsSet() throws {
        let set = try edited(Self.ruff) { try $0.set(.string("PL"), at: "tool.ruff.lint.select[4]") }
        #expect(set == Self.ruff.replacingOccurrences(of: "\"UP\",   # pyupgrade", with: "\"PL\",   # pyupgrade"))
    }

    @Test func anArrayWrittenOneElementPerLineLosesOnlyTheRemovedElementsLine() throws {
        let removed = try edited(Self.ruff) { document in
            guard case .array(var rules)? = document[path: "tool.ruff.lint.select"] else { return }
            rules.remove(at: 1)
            try document.set(.array(rules), at: "tool.ruff.lint.select")
        }
        #expect(removed == Self.ruff.replacingOccurrences(of: "    \"W\",    # pycodestyle warnings\n", with: ""))
        // The last element: the commented-out rules after it stay.
        let last = try edited(Self.ruff) { document in
            guard case .array(var rules)? = document[path: "tool.ruff.lint.select"] else { return }
            rules.removeLast()
            try document.set(.array(rules), at: "tool.ruff.lint.select")
        }
        #expect(last == Self.ruff.replacingOccurrences(of: "    \"SIM\",  # flake8-simplify\n", with: ""))
        // A comment in words directly above an element is that element's, and goes with it.
        let described = "mirrors = [\n  # the main one\n  \"a\",\n  # a spare\n  \"b\",\n]\n"
        #expect(
            try edited(described) { try $0.set(.array([.string("a")]), at: "mirrors") }
                == "mirrors = [\n  # the main one\n  \"a\",\n]\n")
    }

    @Test func anArrayWrittenOneElementPerLineGainsALineInItsStyle() throws {
        let appended = try edited(Self.ruff) { document in
            guard case .array(let rules)? = document[path: "tool.ruff.lint.select"] else { return }
            try document.set(.array(rules + [.string("RUF")]), at: "tool.ruff.lint.select")
        }
        #expect(
            appended
                == Self.ruff.replacingOccurrences(
                    of: "    \"SIM\",  # flake8-simplify\n", with: "    \"SIM\",  # flake8-simplify\n    \"RUF\",\n"))
        let first = try edited(Self.ruff) { document in
            guard case .array(let rules)? = document[path: "tool.ruff.lint.select"] else { return }
            try document.set(.array([.string("ALL")] + rules), at: "tool.ruff.lint.select")
        }
        #expect(first == Self.ruff.replacingOccurrences(of: "select = [\n", with: "select = [\n    \"ALL\",\n"))
        // No trailing comma: the last element gets one, and the new last has none.
        let bare = "a = [\n  1,\n  2\n]\n"
        #expect(
            try edited(bare) { try $0.set(.array([1, 2, 3].map(JSONValue.integer)), at: "a") }
                == "a = [\n  1,\n  2,\n  3\n]\n")
    }

    @Test func anArrayOnOneLineStaysOnOneLine() throws {
        let text = "ports = [80, 443, 8080] # open\n"
        #expect(
            try edited(text) { try $0.set(.array([.integer(80), .integer(8080)]), at: "ports") }
                == "ports = [80, 8080] # open\n")
        #expect(
            try edited(text) { try $0.set(.array([.integer(80), .integer(443)]), at: "ports") }
                == "ports = [80, 443] # open\n")
        #expect(
            try edited(text) { try $0.set(.array([.integer(443), .integer(8080)]), at: "ports") }
                == "ports = [443, 8080] # open\n")
        #expect(
            try edited(text) { try $0.set(.array([80, 443, 8080, 9000].map(JSONValue.integer)), at: "ports") }
                == "ports = [80, 443, 8080, 9000] # open\n")
        #expect(try edited(text) { try $0.set(.array([]), at: "ports") } == "ports = [] # open\n")
        #expect(try edited("ports = []\n") { try $0.set(.array([.integer(1)]), at: "ports") } == "ports = [1]\n")
        #expect(
            try edited("ports = [ 1, 2, ]\n") { try $0.set(.array([.integer(1)]), at: "ports") } == "ports = [ 1, ]\n")
    }

    // MARK: Values

    /// A string in a date's form stays a string where a string stood (every other reader of the file would
    /// read a bare date as another type), and stays a date where a date stood: in a key's value and in an
    /// array's element, basic or literal.
    @Test func aStringInADatesFormKeepsWhatItWas() throws {
        let text =
            "release = \"2024-01-01\"\nliteral = '2024-01-01'\nwhen = 2024-01-01\nlist = [\"2024-01-01\", 2024-01-01]\n"
        let new = JSONValue.string("2024-02-01")
        #expect(
            try edited(text) {
                for path: ValuePath in ["release", "literal", "when", "list[0]", "list[1]"] {
                    try $0.set(new, at: path)
                }
            }
                == "release = \"2024-02-01\"\nliteral = '2024-02-01'\nwhen = 2024-02-01\nlist = [\"2024-02-01\", 2024-02-01]\n"
        )
        let document = try codec.parse(Data(text.replacingOccurrences(of: "01-01", with: "02-01").utf8))
        #expect(document[path: "release"] == new && document[path: "when"] == new)
    }

    // MARK: Inline tables

    @Test func anInlineTableKeepsItsKeyOrderAndANewKeyGoesLast() throws {
        let text = "[dependencies]\nclap = { version = \"5.0.0\", default-features = false }\n"
        #expect(
            try edited(text) { try $0.set(.string("5.1.0"), at: "dependencies.clap.version") }
                == "[dependencies]\nclap = { version = \"5.1.0\", default-features = false }\n")
        #expect(
            try edited(text) { try $0.set(.array([.string("derive")]), at: "dependencies.clap.features") }
                == "[dependencies]\nclap = { version = \"5.0.0\", default-features = false, features = [\"derive\"] }\n"
        )
        #expect(
            try edited(text) { try $0.remove(at: "dependencies.clap.version") }
                == "[dependencies]\nclap = { default-features = false }\n")
        #expect(
            try edited(text) { try $0.remove(at: "dependencies.clap.default-features") }
                == "[dependencies]\nclap = { version = \"5.0.0\" }\n")
        #expect(try edited("a = {}\n") { try $0.set(.integer(1), at: "a.b") } == "a = { b = 1 }\n")
        #expect(try edited("a = { x = 1 }\n") { try $0.remove(at: "a.x") } == "a = {}\n")
    }

    // MARK: Keys and tables

    @Test func aNewKeyGoesAfterTheLastKeyOfItsSectionWithNoCopyOfAComment() throws {
        let text = "[server]\n# the host\nhost = \"a\" # primary\n\n# logging\n[log]\nlevel = \"info\"\n"
        #expect(
            try edited(text) { try $0.set(.integer(80), at: "server.port") }
                == "[server]\n# the host\nhost = \"a\" # primary\nport = 80\n\n# logging\n[log]\nlevel = \"info\"\n")
        // A table dotted keys define gains a dotted key.
        #expect(try edited("a.b = 1\nc = 2\n") { try $0.set(.integer(3), at: "a.d") } == "a.b = 1\na.d = 3\nc = 2\n")
        // A new table: a section at the end of its parent's sections.
        #expect(
            try edited(text) { try $0.set(.object(["on": .bool(true)]), at: "server.tls") }
                == "[server]\n# the host\nhost = \"a\" # primary\n\n[server.tls]\non = true\n\n# logging\n[log]\nlevel = \"info\"\n"
        )
    }

    @Test func aRemovedKeyGoesWithItsOwnCommentsAndLeavesItsNeighbours() throws {
        let text = "[server]\n# the host\nhost = \"a\" # primary\n# the port\nport = 80 # usual\ntimeout = 5\n"
        #expect(
            try edited(text) { try $0.remove(at: "server.port") }
                == "[server]\n# the host\nhost = \"a\" # primary\ntimeout = 5\n")
        #expect(
            try edited(text) { try $0.remove(at: "server.host") }
                == "[server]\n# the port\nport = 80 # usual\ntimeout = 5\n")
    }

    /// The first user's comment goes with the first user; the second's stays with the second.
    @Test func removingTheFirstElementOfAnArrayOfTablesTakesItsOwnCommentAndLeavesTheNexts() throws {
        let text = """
            title = "accounts"

            # admin, never remove
            [[users]]
            name = "root"

            # the operator
            [[users]]
            name = "op"

            """
        let removed = try edited(text) { document in
            try document.set(.array([.object(["name": .string("op")])]), at: "users")
        }
        #expect(removed == "title = \"accounts\"\n\n# the operator\n[[users]]\nname = \"op\"\n")
        let added = try edited(text) { document in
            guard case .array(let users)? = document[path: "users"] else { return }
            try document.set(.array(users + [.object(["name": .string("guest")])]), at: "users")
        }
        #expect(added == text + "\n[[users]]\nname = \"guest\"\n")
        let inside = try edited(text) { try $0.set(.string("admin"), at: "users[0].role") }
        #expect(
            inside == text.replacingOccurrences(of: "name = \"root\"\n", with: "name = \"root\"\nrole = \"admin\"\n"))
    }

    // MARK: Empty files, byte-order marks, non-finite numbers, what TOML cannot hold

    @Test func anEmptyFileIsAnEmptyDocumentAndTakesAWrite() throws {
        #expect(try codec.parse(Data()) == .object([:]))
        #expect(try edited("") { try $0.set(.integer(1), at: "a") } == "a = 1\n")
        #expect(try edited("") { try $0.set(.object(["b": .integer(1)]), at: "a") } == "[a]\nb = 1\n")
    }

    struct Limits: Codable, Sendable, Equatable {
        var name = "default"
        var ceiling = 1.0
        var floor = 0.0
    }

    /// A settings file someone created empty (`touch settings.toml`) is an empty document: the defaults
    /// hold, and the first write fills it.
    @Test func anEmptyFileIsReadByAStoreAndTakesItsFirstWrite() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.toml")
        try replaceFile(path, with: "")
        let root = try RootLens(default: Limits(), store: FileStore(path: path, format: TOMLCodec()), watch: false)
        #expect(root.value == Limits())
        try root.name.set("edge")
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(try codec.parse(Data(written.utf8))[path: "name"] == .string("edge"), "\(written)")
    }

    /// `inf`, `-inf` and `nan` are TOML floats: a store reads them into a `Double`, and writes them.
    @Test func infinitiesAndNaNGoThroughAStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.toml")
        try replaceFile(path, with: "name = \"x\"\nceiling = inf # none\nfloor = -inf\n")
        let root = try RootLens(default: Limits(), store: FileStore(path: path, format: TOMLCodec()), watch: false)
        #expect(root.value.ceiling == .infinity && root.value.floor == -.infinity)
        try root.floor.set(.nan)
        #expect(
            try String(contentsOfFile: path, encoding: .utf8) == "name = \"x\"\nceiling = inf # none\nfloor = nan\n")
        try root.ceiling.set(2.5)
        #expect(
            try String(contentsOfFile: path, encoding: .utf8) == "name = \"x\"\nceiling = 2.5 # none\nfloor = nan\n")
    }

    @Test func aFileWithAByteOrderMarkIsReadAndKeepsItsMark() throws {
        let text = "\u{FEFF}a = 1\n"
        #expect(try codec.parse(Data(text.utf8)) == .object(["a": .integer(1)]))
        let written = try edited(text) { try $0.set(.integer(2), at: "a") }
        #expect(Array(written.utf8) == TextEngine.byteOrderMark + Array("a = 2\n".utf8))
    }

    @Test func infinitiesAndNaNAreReadAndWritten() throws {
        let text = "top = inf\nbottom = -inf\nunknown = nan\nplus = +inf\n"
        let document = try codec.parse(Data(text.utf8))
        #expect(document[path: "top"] == .double(.infinity))
        #expect(document[path: "bottom"] == .double(-.infinity))
        guard case .double(let unknown)? = document[path: "unknown"] else {
            Issue.record("nan is not a double"); return
        }
        #expect(unknown.isNaN)
        #expect(
            try edited(text) {
                try $0.set(.double(.nan), at: "top"); try $0.set(.double(-.infinity), at: "plus")
            }
                == "top = nan\nbottom = -inf\nunknown = nan\nplus = -inf\n")
        #expect(
            try edited(text) { try $0.set(.double(.infinity), at: "unknown") }
                == "top = inf\nbottom = -inf\nunknown = inf\nplus = +inf\n")
    }

    @Test func aDocumentNeedingANullIsRefusedNamingWhere() throws {
        let text = "a = 1\n[b]\nc = 2\n"
        let previous = try codec.parse(Data(text.utf8))
        var document = previous
        try document.set(.null, at: "b.c")
        #expect {
            try codec.serialize(document, editing: Data(text.utf8), holding: previous)
        } throws: { error in
            "\(error)".contains("TOML cannot hold a null (at b.c)")
        }
    }

    @Test func aFileWithCRLFLineEndingsGetsCRLFLines() throws {
        let text = "[a]\r\nb = 1\r\n"
        #expect(try edited(text) { try $0.set(.integer(2), at: "a.c") } == "[a]\r\nb = 1\r\nc = 2\r\n")
    }
}
