import Foundation
import Loupe
import LoupeYAML
import LoupeTestSupport
import Testing

struct Service: Codable, Sendable, Equatable {
    var name = "api"
    var port = 8080
    var tags: [String] = []
}

@Suite("YAML files")
struct YAMLCodecTests {
    @Test func roundTripsThroughAFileStore() throws {
        let directory = NSTemporaryDirectory() + "loupe-yaml-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/service.yaml"
        let root = try RootLens(default: Service(), store: FileStore(path: path, format: .yaml))
        try root.update {
            $0.port = 9090
            $0.tags = ["blue", "green"]
        }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("port: 9090"))
        #expect(text.contains("- blue"))
        let reopened = try RootLens(default: Service(), store: FileStore(path: path, format: YAMLCodec()))
        #expect(reopened.value == root.value)
    }

    @Test func aWrongTypeNamesThePathAndTheValue() throws {
        let directory = NSTemporaryDirectory() + "loupe-yaml-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/service.yaml"
        try Data("name: api\nport: 80a\ntags: []\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try RootLens(default: Service(), store: FileStore(path: path, format: .yaml))
        } throws: { error in
            "\(error)".contains("YAML file \(path): port: expected Int, found String \"80a\"")
        }
    }
}

@Suite("YAML files with anchors and aliases, written through a root")
struct YAMLRefusedWriteTests {
    /// A typed root over a file whose anchored value an alias shows: a change of the anchored value is made
    /// in place, and the alias, which keeps what it showed, is written out in the anchored value's style; a
    /// change through an alias writes it out. The comment, and everything else, stay.
    @Test func anAnchoredValueChangesInPlaceAndAnAliasThatKeepsItsValueIsWrittenOut() throws {
        let directory = NSTemporaryDirectory() + "loupe-yaml-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/service.yaml"
        let text = "# shared tags\ndefaults: &tags [blue]\nname: api\ntags: *tags\nalso: *tags # same\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        struct WithDefaults: Codable, Sendable, Equatable {
            var defaults: [String] = []
            var name = "api"
            var port = 8080
            var tags: [String] = []
            var also: [String] = []
        }
        let root = try RootLens(default: WithDefaults(), store: FileStore(path: path, format: .yaml), watch: false)
        #expect(root.value.tags == ["blue"] && root.value.also == ["blue"], "aliases are read")
        try root.tags.set(["red"])
        #expect(
            try String(contentsOfFile: path, encoding: .utf8)
                == "# shared tags\ndefaults: &tags [blue]\nname: api\ntags: [red]\nalso: *tags # same\n")
        try root.defaults.set(["green"])
        #expect(
            try String(contentsOfFile: path, encoding: .utf8)
                == "# shared tags\ndefaults: &tags [green]\nname: api\ntags: [red]\nalso: [blue] # same\n")
        #expect(root.value == WithDefaults(defaults: ["green"], tags: ["red"], also: ["blue"]))
        try root.port.set(9090)
        #expect(
            try String(contentsOfFile: path, encoding: .utf8)
                == "# shared tags\ndefaults: &tags [green]\nname: api\ntags: [red]\nalso: [blue] # same\nport: 9090\n")
    }

    /// An alias elsewhere in a list refuses nothing: the new element is written after it.
    @Test func aListWithAnAliasGainsAnElementInPlace() throws {
        let codec = YAMLCodec()
        let text = Data("base: &b {x: 1}\nlist:\n  - *b\n".utf8)
        let previous = try codec.parse(text)
        var document = previous
        try document.set(.array([.object(["x": .integer(1)]), .integer(2)]), at: "list")
        #expect(
            String(decoding: try codec.serialize(document, editing: text, holding: previous), as: UTF8.self)
                == "base: &b {x: 1}\nlist:\n  - *b\n  - 2\n")
    }

    @Test func aFileWithSeveralDocumentsIsRefusedWhenRead() throws {
        #expect(throws: (any Error).self) { try YAMLCodec().parse(Data("a: 1\n---\na: 2\n".utf8)) }
    }
}

@Suite("YAML numbers")
struct YAMLNumberTests {
    @Test func numbersNoSwiftTypeHoldsAreKeptAsWrittenAndDoublesInFull() throws {
        let codec = YAMLCodec()
        let document = try codec.parse(
            Data("id: 18446744073709551615\nprice: 12345678901234567.89\nthird: 0.30000000000000004\n".utf8))
        #expect(
            document
                == JSONValue.object([
                    "id": .exactNumber("18446744073709551615"), "price": .exactNumber("12345678901234567.89"),
                    "third": .double(0.30000000000000004),
                ]))
        let written = String(decoding: try codec.serialize(document), as: UTF8.self)
        #expect(
            written.contains("id: 18446744073709551615") && written.contains("price: 12345678901234567.89")
                && written.contains("third: 0.30000000000000004"), "\(written)")
    }
}

/// A write to a YAML file edits its text in place.
@Suite("YAML files people write: every write edits the text in place")
struct YAMLInPlaceEditTests {
    let codec = YAMLCodec()

    static let handWritten = """
        # The daemon's settings.
        # Edited by the administrator.
        logLevel: info   # pinned on purpose

        # upstream service
        upstream:
          url: "https://a.example"
          timeoutSeconds: 5
        ticker:
          greeting: 'hello'
          intervalSeconds: 1
        tags: [a, b]

        """

    func edited(
        _ text: String, sourceLocation: SourceLocation = #_sourceLocation, _ change: (inout JSONValue) throws -> Void
    ) throws -> String {
        try editedText(text, with: codec, sourceLocation: sourceLocation, change)
    }

    @Test func aChangedScalarIsReplacedWhereItStandsInItsQuoting() throws {
        #expect(
            try edited(Self.handWritten) { try $0.set(.string("bonjour"), at: "ticker.greeting") }
                == Self.handWritten.replacingOccurrences(of: "greeting: 'hello'", with: "greeting: 'bonjour'"))
        #expect(
            try edited(Self.handWritten) { try $0.set(.string("https://b.example"), at: "upstream.url") }
                == Self.handWritten.replacingOccurrences(of: "\"https://a.example\"", with: "\"https://b.example\""))
        #expect(
            try edited(Self.handWritten) { try $0.set(.string("debug"), at: "logLevel") }
                == Self.handWritten.replacingOccurrences(of: "logLevel: info   #", with: "logLevel: debug   #"))
        #expect(
            try edited(Self.handWritten) { try $0.set(.integer(30), at: "upstream.timeoutSeconds") }
                == Self.handWritten.replacingOccurrences(of: "timeoutSeconds: 5", with: "timeoutSeconds: 30"))
        #expect(try edited(Self.handWritten) { _ in } == Self.handWritten)
    }

    @Test func aRemovedKeyGoesWithItsLinesAndANewKeyFollowsItsLastSibling() throws {
        #expect(
            try edited(Self.handWritten) { try $0.remove(at: "ticker.intervalSeconds") }
                == Self.handWritten.replacingOccurrences(of: "  intervalSeconds: 1\n", with: ""))
        // The comment line directly above a removed key is its own, and goes with it.
        #expect(
            try edited(Self.handWritten) { try $0.remove(at: "upstream") }
                == Self.handWritten.replacingOccurrences(
                    of: "# upstream service\nupstream:\n  url: \"https://a.example\"\n  timeoutSeconds: 5\n", with: ""))
        #expect(
            try edited(Self.handWritten) { try $0.set(.bool(true), at: "ticker.loud") }
                == Self.handWritten.replacingOccurrences(
                    of: "  intervalSeconds: 1\n", with: "  intervalSeconds: 1\n  loud: true\n"))
    }

    /// Random sets and removals of scalars, sequences, mappings and keys, seeded, 2,800 steps in all: after
    /// each, the text holds the step's document for this reader and for PyYAML, and every comment that was
    /// not on a removed key's line is still there.
    @Test(arguments: Array(UInt64(1)...8))
    func randomEditsKeepTheTextValidTheModelAndTheComments(seed: UInt64) throws {
        let keys = [
            "upstream.url", "upstream.timeoutSeconds", "upstream.extra", "ticker.greeting", "ticker.intervalSeconds",
            "ticker.loud", "fresh", "other.nested",
        ]
        // The third walk is over the file with CRLF line endings.
        let start = seed == 3 ? Self.handWritten.replacingOccurrences(of: "\n", with: "\r\n") : Self.handWritten
        let walk = try randomEditWalk(codec: codec, from: start, keys: keys, steps: 350, seed: seed) {
            step, generator in
            [
                .integer(Int.random(in: 0...999, using: &generator)), .string("s \(step)"), .bool(true), .string("yes"),
                .string("1.5"), .string("it's"),
                .array([.integer(1), .string("two")]), .object(["k": .integer(step)]),
            ]
        }
        let independent = try IndependentParser.yaml.parse(walk.texts)
        // Never removed: the comments on their own lines, and the one on `logLevel`'s line.
        let comments = commentLines(of: Self.handWritten, marker: "#") + ["# pinned on purpose"]
        for step in walk.texts.indices {
            #expect(independent[step] == walk.models[step], "step \(step):\n\(walk.texts[step])")
            for comment in comments {
                #expect(walk.texts[step].contains(comment), "step \(step) lost \(comment):\n\(walk.texts[step])")
            }
        }
    }

    /// A codec that writes one text many times writes byte for byte what a codec made afresh for each
    /// step writes, through scalars that change quoting, grow, shrink and come back, and an edit that adds
    /// a line: a write depends on the text and the documents alone.
    @Test func anEditOfTheTextACodecWroteLastIsTheEditOfAFreshRead() throws {
        let changes: [(ValuePath, JSONValue)] = [
            ("upstream.url", .string("https://b.example/a much longer address")), ("logLevel", .string("debug")),
            ("ticker.greeting", .string("it's")), ("upstream.timeoutSeconds", .integer(120)),
            ("logLevel", .string("a: b # c")),
            ("ticker.greeting", .string("yes")), ("upstream.url", .string("u")), ("logLevel", .string("info")),
            ("ticker.extra", .bool(true)), ("upstream.timeoutSeconds", .integer(5)),
            ("ticker.greeting", .string("hello")),
        ]
        let text = try editsOfRememberedText({ YAMLCodec() }, from: Self.handWritten, changes: changes)
        #expect(text.contains("# pinned on purpose") && text.contains("# upstream service"))
    }

    @Test func parseThenWriteIsByteIdenticalForEveryTestFile() throws {
        for text in [
            Self.handWritten, "# shared tags\ndefaults: &tags [blue]\nname: api\ntags: *tags\n",
            "a: 1\r\nb: [1, 2]\r\n",
        ] {
            #expect(try edited(text) { _ in } == text)
        }
    }

    @Test func crlfLineEndingsStayForWhatIsChangedAndWhatIsWrittenAnew() throws {
        let text = "# settings\r\nname: api\r\nserver:\r\n  port: 80\r\n"
        #expect(
            try edited(text) {
                try $0.set(.integer(8080), at: "server.port"); try $0.set(.string("debug"), at: "server.log")
            }
                == "# settings\r\nname: api\r\nserver:\r\n  port: 8080\r\n  log: debug\r\n")
        #expect(try edited(text) { try $0.remove(at: "server") } == "# settings\r\nname: api\r\n")
    }

    /// The issue's measured case: `loupe set ticker.greeting bonjour` on a commented file kept nothing.
    @Test func aSetThroughAFileStoreKeepsCommentsQuotingAndPinnedValues() throws {
        let directory = NSTemporaryDirectory() + "loupe-yaml-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/settings.yaml"
        try Data(Self.handWritten.utf8).write(to: URL(fileURLWithPath: path))
        struct Settings: Codable, Sendable, Equatable {
            struct Upstream: Codable, Sendable, Equatable { var url = "http://127.0.0.1"; var timeoutSeconds = 5 }
            struct Ticker: Codable, Sendable, Equatable { var greeting = "hello"; var intervalSeconds = 1 }
            var logLevel = "info"
            var upstream = Upstream()
            var ticker = Ticker()
            var tags: [String] = []
        }
        let root = try RootLens(default: Settings(), store: FileStore(path: path, format: codec), watch: false)
        try root.ticker.greeting.set("bonjour")
        #expect(
            try String(contentsOfFile: path, encoding: .utf8)
                == Self.handWritten.replacingOccurrences(of: "'hello'", with: "'bonjour'"))
    }

    /// The first write after a load compares documents that share no storage: a mapping that did not
    /// change stays as written whatever its style, a flow mapping and an anchored one included (which a
    /// write would otherwise rewrite in block style, or refuse), while the value that changed is edited in
    /// place.
    @Test func unchangedFlowAndAnchoredMappingsStayAsWrittenWhenAnotherValueChanges() throws {
        struct Limits: Codable, Sendable, Equatable {
            var name = "api"
            var limits: [String: [String: Int]] = [:]
            var base: [String: Int] = [:]
            var tuned: [String: Int] = [:]
        }
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("service.yaml")
        let text =
            "name: api\nlimits: {cpu: {max: 2}, memory: {max: 512}}  # flow\nbase: &base\n  retries: 3\ntuned:\n  retries: 5\n"
        try replaceFile(path, with: text)
        let root = try RootLens(default: Limits(), store: FileStore(path: path, format: YAMLCodec()), watch: false)
        #expect(root.value.limits == ["cpu": ["max": 2], "memory": ["max": 512]] && root.value.base == ["retries": 3])
        try root.name.set("web")
        #expect(
            try String(contentsOfFile: path, encoding: .utf8)
                == text.replacingOccurrences(of: "name: api", with: "name: web"))
        try root.tuned.set(["retries": 6])
        #expect(
            try String(contentsOfFile: path, encoding: .utf8)
                == text.replacingOccurrences(of: "name: api", with: "name: web").replacingOccurrences(
                    of: "retries: 5", with: "retries: 6"))
    }

    /// A key written twice in one mapping is refused when the file is read (Yams does), so each key an
    /// edit changes stands in one place, and the edit stops once it has edited them all.
    /// The error names the key, where it is written again and where first, and quotes no value; in a flow
    /// mapping, where it is first written.
    @Test func aKeyWrittenTwiceInAMappingIsRefusedWhenRead() throws {
        #expect {
            try YAMLCodec().parse(
                Data("top: 0\nserver:\n  a: s3cret-1\n  b:\n    a: 1\n  a : s3cret-2\n".utf8))
        } throws: { error in
            "\(error)"
                == "line 6, column 3: the key 'a' is written a second time in one mapping (first at line 3, column 3)"
        }
        #expect {
            try YAMLCodec().parse(Data("server: {a: s3cret-1, a: s3cret-2}\n".utf8))
        } throws: { error in
            "\(error)"
                == "line 1, column 10: the key 'a' is written more than once in one mapping (the first time here)"
        }
    }

    /// A scalar after a key that is not ASCII (the parser's column counts characters, not bytes) is
    /// replaced where it stands, as one after an ASCII key is.
    @Test func aScalarAfterAKeyThatIsNotASCIIIsReplacedWhereItStands() throws {
        let text = "grüße: 'hallo'  # greeting\nstraße: 1\nplain: x\n"
        #expect(
            try edited(text) { try $0.set(.string("servus"), at: "grüße") }
                == text.replacingOccurrences(of: "'hallo'", with: "'servus'"))
        #expect(
            try edited(text) { try $0.set(.integer(22), at: "straße") }
                == text.replacingOccurrences(of: "straße: 1", with: "straße: 22"))
        #expect(
            try edited(text) { try $0.set(.string("y"), at: "plain") }
                == text.replacingOccurrences(of: "plain: x", with: "plain: y"))
    }
}

/// Merge keys (`<<`), as YAML 1.1 and the tools people use with it read them: a mapping's own keys win over
/// merged ones, and an earlier merged mapping over a later.
@Suite("YAML merge keys")
struct YAMLMergeKeyTests {
    static let texts = [
        "base: &base {x: 1, y: 2}\nservice:\n  <<: *base\n  y: 3\n",
        "a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\nboth:\n  <<: [*a, *b]\n  w: 0\n",
        "inline:\n  <<: {p: 1, q: 2}\n  q: 3\n",
        "defaults: &defaults\n  retries: 3\n  timeout: 5\nupstream:\n  <<: *defaults\n  timeout: 30\n  url: https://a.example\n",
        "quoted:\n  \"<<\": 1\n",
    ]

    /// What Loupe reads from each text is what PyYAML reads.
    @Test func mergeKeysReadAsPyYAMLReadsThem() throws {
        let codec = YAMLCodec()
        let independent = try IndependentParser.yaml.parse(Self.texts)
        for (text, theirs) in zip(Self.texts, independent) {
            #expect(try codec.parse(Data(text.utf8)) == theirs, "\(text)")
        }
        #expect(
            try codec.parse(Data(Self.texts[0].utf8))
                == .object([
                    "base": .object(["x": .integer(1), "y": .integer(2)]),
                    "service": .object(["x": .integer(1), "y": .integer(3)]),
                ]))
        #expect {
            try codec.parse(Data("a:\n  <<: 1\n".utf8))
        } throws: { error in
            "\(error)".hasPrefix("line 2, column 7: a merge key (<<) holds something other than a mapping")
        }
        #expect {
            try codec.parse(Data("a: 1\n[x, y]: 2\n".utf8))
        } throws: { error in
            "\(error)" == "line 2, column 1: a mapping key is not a string"
        }
    }

    /// A key the mapping writes is edited where it stands; a key a merge key brings in, set, becomes the
    /// mapping's own (YAML takes it over the merged one), and the anchor's mapping keeps its value; taken out,
    /// it is refused (the merge would show it again), naming it, and nothing is written.
    @Test func aMergedKeySetBecomesTheMappingsOwnAndTakenOutIsRefused() throws {
        let text = Self.texts[3]
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.yaml")
        try replaceFile(path, with: text)
        struct Upstream: Codable, Sendable, Equatable {
            var retries = 0
            var timeout = 0
            var url = ""
        }
        struct Settings: Codable, Sendable, Equatable {
            var defaults = Upstream()
            var upstream = Upstream()
        }
        let root = try RootLens(default: Settings(), store: FileStore(path: path, format: YAMLCodec()), watch: false)
        #expect(root.value.upstream == Upstream(retries: 3, timeout: 30, url: "https://a.example"))
        try root.upstream.timeout.set(60)
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written == text.replacingOccurrences(of: "timeout: 30", with: "timeout: 60"))
        try root.upstream.retries.set(7)
        let overridden = try String(contentsOfFile: path, encoding: .utf8)
        #expect(overridden == written + "  retries: 7\n")
        #expect(root.value.defaults.retries == 3 && root.value.upstream.retries == 7)
        #expect(
            try IndependentParser.yaml.parse([overridden]) == [
                .object([
                    "defaults": .object(["retries": .integer(3), "timeout": .integer(5)]),
                    "upstream": .object([
                        "retries": .integer(7), "timeout": .integer(60), "url": .string("https://a.example"),
                    ]),
                ])
            ])

        // Taken out of a document that holds it only through the merge: refused.
        let codec = YAMLCodec()
        let previous = try codec.parse(Data(text.utf8))
        var document = previous
        try document.remove(at: "upstream.retries")
        #expect {
            try codec.serializeDocument(document, editing: (Data(text.utf8), previous), store: "settings.yaml")
        } throws: { error in
            "\(error)".contains("upstream.retries: it comes from a YAML merge key (<<)")
        }
    }
}

/// Writes through a dictionary's entry edit a commented YAML file in place, the entry alone, among other writes.
@Suite("YAML files written through dictionary entries")
struct YAMLEntryWriteTests {
    struct Group: Codable, Sendable, Equatable {
        var limit = 0
        var label = "label"
    }

    struct Settings: Codable, Sendable, Equatable {
        var groups: [String: Group] = [:]
        var port = 8080
    }

    @Test func entriesWrittenAddedAndRemovedKeepTheFileTheValue() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.yaml")
        var text = "# settings, by hand\nport: 8080\ngroups:\n"
        for index in 0..<40 {
            text += "  # group \(index)\n  g\(index):\n    limit: \(index)\n    label: 'l\(index)'\n"
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let root = try RootLens(default: Settings(), store: FileStore(path: path, format: .yaml), watch: false)
        var state: UInt64 = 42
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33)
        }
        var removed: Set<String> = []
        for step in 0..<200 {
            let key = "g\(next() % 45)"
            let number = next() % 1000
            switch next() % 5 {
            case 0:
                try root[\.groups[key]].set(nil)
                removed.insert(key)
            case 1: try root.groups[key].set(Group(limit: number, label: "set \(step)"))
            case 2:
                try root.update {
                    $0.groups["g\(number % 45)"]?.limit = -number; $0.port = number
                }
            default: try root[\.groups[key]].update { $0?.limit = number }
            }
            let reread = try RootLens(default: Settings(), store: FileStore(path: path, format: .yaml), watch: false)
            #expect(reread.value == root.value, "step \(step)")
            if reread.value != root.value { break }
        }
        let after = try String(contentsOfFile: path, encoding: .utf8)
        #expect(after.hasPrefix("# settings, by hand\n"))
        // The comment above each entry that was never removed stays above it.
        let kept = (0..<40).filter { !removed.contains("g\($0)") }
        #expect(!kept.isEmpty)
        for index in kept {
            #expect(after.contains("  # group \(index)\n  g\(index):\n"), "the comment above g\(index)")
        }
    }

    /// A root that writes one file many times, and roots made anew for each write of a copy, leave the
    /// same bytes after every step. The values
    /// change quoting (`yes`, `a: b` and `#x` must be quoted; `plain` need not be).
    @Test func keptNodesEditAsNodesReadAfresh() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let (kept, fresh) = (directory.file("kept.yaml"), directory.file("fresh.yaml"))
        var text = "port: 8080  # the port\ngroups:\n"
        for index in 0..<30 {
            let label = index % 3 == 0 ? "'l\(index)'" : index % 3 == 1 ? "\"l\(index)\"" : "l\(index)"
            text += "  # group \(index)\n  g\(index):\n    limit: \(index)\n    label: \(label)  # its label\n"
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: kept))
        try Data(text.utf8).write(to: URL(fileURLWithPath: fresh))
        let root = try RootLens(default: Settings(), store: FileStore(path: kept, format: .yaml), watch: false)
        let labels = ["yes", "a: b", "#x", "plain", "it's", "123", "two words", "\"quoted\"", "tab\there"]
        var state: UInt64 = 7
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33)
        }
        for step in 0..<150 {
            let key = "g\(next() % 30)"
            let label = labels[next() % labels.count]
            let limit = next() % 2000
            let write: (RootLens<Settings>) throws -> Void = { root in
                switch step % 3 {
                case 0: try root[\.groups[key]].update { $0?.label = label }
                case 1: try root[\.groups[key]].update { $0?.limit = limit }
                default: try root.port.set(limit)
                }
            }
            try write(root)
            try write(try RootLens(default: Settings(), store: FileStore(path: fresh, format: .yaml), watch: false))
            let (a, b) = (
                try String(contentsOfFile: kept, encoding: .utf8), try String(contentsOfFile: fresh, encoding: .utf8)
            )
            #expect(a == b, "step \(step)")
            if a != b { break }
        }
        let after = try String(contentsOfFile: kept, encoding: .utf8)
        #expect(after.components(separatedBy: "  # its label\n").count == 31, "every label's comment stays")
        #expect(
            try RootLens(default: Settings(), store: FileStore(path: kept, format: .yaml), watch: false).value
                == root.value)
    }
}
