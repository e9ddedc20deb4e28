import Foundation
@testable import Loupe
import LoupeTestSupport
import Testing

/// What people's JSON and JSONC files look like, edited: each test is one of the problems measured on real
/// files (`tsconfig.json`, `.vscode/launch.json`, `settings.json`), with the bytes the edit must leave.
@Suite("JSON and JSONC files people write: edits splice only what changed")
struct JSONEditorTests {
    let jsonc = JSONCCodec()
    let json = JSONCodec()

    func edited(
        _ text: String, _ codec: some DocumentCodec, sourceLocation: SourceLocation = #_sourceLocation,
        _ change: (inout JSONValue) throws -> Void
    ) throws -> String {
        try editedText(text, with: codec, sourceLocation: sourceLocation, change)
    }

    static let strictLine = """
        {
          "compilerOptions": {
            "target": "es2020",
            "noEmit": true,
            "strict": true /* keep strict on */,
            // the module system
            "module": "esnext"
          }
        }

        """

    @Test func aCommentBetweenAValueAndItsCommaGetsNoSecondComma() throws {
        let set = try edited(Self.strictLine, jsonc) { try $0.set(.string("nodenext"), at: "compilerOptions.module") }
        #expect(set == Self.strictLine.replacingOccurrences(of: "\"esnext\"", with: "\"nodenext\""))
        let added = try edited(Self.strictLine, jsonc) { try $0.set(.bool(true), at: "compilerOptions.sourceMap") }
        #expect(
            added
                == Self.strictLine.replacingOccurrences(
                    of: "\"module\": \"esnext\"\n", with: "\"module\": \"esnext\",\n    \"sourceMap\": true\n"))
        let removed = try edited(Self.strictLine, jsonc) { try $0.remove(at: "compilerOptions.strict") }
        #expect(
            removed
                == Self.strictLine.replacingOccurrences(of: "    \"strict\": true /* keep strict on */,\n", with: ""))
    }

    @Test func removingTheKeyBeforeSuchALineKeepsTheCommentLineAfterIt() throws {
        let text = try edited(Self.strictLine, jsonc) { try $0.remove(at: "compilerOptions.noEmit") }
        #expect(text == Self.strictLine.replacingOccurrences(of: "    \"noEmit\": true,\n", with: ""))
        let last = try edited(Self.strictLine, jsonc) { try $0.remove(at: "compilerOptions.module") }
        #expect(
            last == """
                {
                  "compilerOptions": {
                    "target": "es2020",
                    "noEmit": true,
                    "strict": true /* keep strict on */
                  }
                }

                """)
    }

    static let launch = """
        {
            "version": "0.2.0",
            "configurations": [
                {
                    "name": "Run file",
                    "args": ["run", "${relativeFile}"],
                    "cwd": "${workspaceFolder}"
                }
            ]
        }

        """

    @Test func aOneLineArrayStaysOnOneLine() throws {
        let second = try edited(Self.launch, json) { try $0.remove(at: "configurations[0].args[1]") }
        #expect(second == Self.launch.replacingOccurrences(of: #"["run", "${relativeFile}"]"#, with: #"["run"]"#))
        let first = try edited(Self.launch, json) { try $0.remove(at: "configurations[0].args[0]") }
        #expect(
            first == Self.launch.replacingOccurrences(of: #"["run", "${relativeFile}"]"#, with: #"["${relativeFile}"]"#)
        )
        let added = try edited(Self.launch, json) {
            $0[path: "configurations[0].args"] = .array([
                .string("run"), .string("--watch"), .string("${relativeFile}"),
            ])
        }
        #expect(
            added
                == Self.launch.replacingOccurrences(
                    of: #"["run", "${relativeFile}"]"#, with: #"["run", "--watch", "${relativeFile}"]"#))
        let appended = try edited(Self.launch, json) {
            $0[path: "configurations[0].args"] = .array([.string("run"), .string("${relativeFile}"), .integer(1)])
        }
        #expect(
            appended
                == Self.launch.replacingOccurrences(
                    of: #"["run", "${relativeFile}"]"#, with: #"["run", "${relativeFile}", 1]"#))
    }

    @Test func aMultiLineArrayGetsOneElementPerLine() throws {
        let text = "{\n  \"paths\": [\n    \"a\",\n    \"c\"\n  ]\n}\n"
        let inserted = try edited(text, json) {
            $0[path: "paths"] = .array([.string("a"), .string("b"), .string("c")])
        }
        #expect(inserted == "{\n  \"paths\": [\n    \"a\",\n    \"b\",\n    \"c\"\n  ]\n}\n")
        let appended = try edited(text, json) {
            $0[path: "paths"] = .array([.string("a"), .string("c"), .object(["d": .integer(1)])])
        }
        #expect(appended == "{\n  \"paths\": [\n    \"a\",\n    \"c\",\n    {\n      \"d\": 1\n    }\n  ]\n}\n")
    }

    @Test(
        "an element that starts a line others share goes with its comma, and the next one takes its place on the line")
    func elementsPairedOnLines() throws {
        let text = "{\n  \"args\": [\n    \"--registry\", \"r.example\",\n    \"--path\", \"containers\"\n  ]\n}\n"
        let removed = try edited(text, json) { try $0.remove(at: "args[2]") }
        #expect(removed == "{\n  \"args\": [\n    \"--registry\", \"r.example\",\n    \"containers\"\n  ]\n}\n")
        let last = try edited(text, json) { try $0.remove(at: "args[3]") }
        #expect(last == "{\n  \"args\": [\n    \"--registry\", \"r.example\",\n    \"--path\"\n  ]\n}\n")
    }

    static let commentedKeys = """
        {
            /* where it listens */
            "server": {"port": 80},
            // how much it says
            "logLevel": "info"
        }

        """

    @Test func aNewKeyGetsNoCopyOfItsNeighboursComment() throws {
        let text = try edited(Self.commentedKeys, jsonc) { try $0.set(.integer(3), at: "retries") }
        #expect(
            text
                == Self.commentedKeys.replacingOccurrences(
                    of: "\"logLevel\": \"info\"\n", with: "\"logLevel\": \"info\",\n    \"retries\": 3\n"))
        let single = "{\n    /* where it listens */\n    \"server\": 1\n}\n"
        #expect(
            try edited(single, jsonc) { try $0.set(.integer(3), at: "z") }
                == "{\n    /* where it listens */\n    \"server\": 1,\n    \"z\": 3\n}\n")
        // A comment before the key on the key's own line is that member's, not a pattern for new ones.
        let sameLine = "{\n    /* port */ \"port\": 80,\n    /* host */ \"host\": \"a\"\n}\n"
        #expect(
            try edited(sameLine, jsonc) { try $0.set(.bool(true), at: "tls") }
                == "{\n    /* port */ \"port\": 80,\n    /* host */ \"host\": \"a\",\n    \"tls\": true\n}\n")
        let oneLine = "{\"a\": 1, /* b */ \"b\": 2}\n"
        #expect(
            try edited(oneLine, jsonc) { try $0.set(.integer(3), at: "c") }
                == "{\"a\": 1, /* b */ \"b\": 2, \"c\": 3}\n")
        // Removing such a member takes its comment; the other's stays.
        #expect(try edited(sameLine, jsonc) { try $0.remove(at: "host") } == "{\n    /* port */ \"port\": 80\n}\n")
    }

    @Test func aNewKeyAfterAnEndOfLineCommentTakesItsCommaBeforeTheComment() throws {
        let text = "{\n  \"a\": 1 // one\n}\n"
        #expect(
            try edited(text, jsonc) { try $0.set(.integer(2), at: "b") } == "{\n  \"a\": 1, // one\n  \"b\": 2\n}\n")
    }

    @Test func aByteOrderMarkIsReadAndKept() throws {
        let text = "\u{FEFF}{\n  \"a\": 1\n}\n"
        for codec in [json, JSONCodec(allowsComments: true)] {
            #expect(try codec.parse(Data(text.utf8)) == .object(["a": .integer(1)]))
            let written = try edited(text, codec) { try $0.set(.integer(2), at: "a") }
            #expect(Array(written.utf8).starts(with: [0xEF, 0xBB, 0xBF]))
            #expect(written == "\u{FEFF}{\n  \"a\": 2\n}\n")
        }
    }

    @Test func crlfLineEndingsAreKeptThroughEveryKindOfEdit() throws {
        let text = "{\r\n  // c\r\n  \"a\": 1,\r\n  \"b\": [\r\n    1\r\n  ]\r\n}\r\n"
        let added = try edited(text, jsonc) { try $0.set(.object(["x": .array([.integer(1)])]), at: "c") }
        #expect(
            added
                == "{\r\n  // c\r\n  \"a\": 1,\r\n  \"b\": [\r\n    1\r\n  ],\r\n  \"c\": {\r\n    \"x\": [\r\n      1\r\n    ]\r\n  }\r\n}\r\n"
        )
        let removed = try edited(text, jsonc) { try $0.remove(at: "a") }
        #expect(removed == "{\r\n  \"b\": [\r\n    1\r\n  ]\r\n}\r\n")
        let element = try edited(text, jsonc) { $0[path: "b"] = .array([.integer(1), .integer(2)]) }
        #expect(element == "{\r\n  // c\r\n  \"a\": 1,\r\n  \"b\": [\r\n    1,\r\n    2\r\n  ]\r\n}\r\n")
    }

    static let plugins = """
        {
          "plugins": [
            // formats code
            "prettier",
            "eslint", // lints

            /* types */
            "tsc",
          ]
        }

        """

    @Test func removingAnElementTakesOnlyItsOwnComments() throws {
        let middle = try edited(Self.plugins, jsonc) {
            $0[path: "plugins"] = .array([.string("prettier"), .string("tsc")])
        }
        #expect(middle == Self.plugins.replacingOccurrences(of: "    \"eslint\", // lints\n", with: ""))
        let first = try edited(Self.plugins, jsonc) {
            $0[path: "plugins"] = .array([.string("eslint"), .string("tsc")])
        }
        #expect(first == Self.plugins.replacingOccurrences(of: "    // formats code\n    \"prettier\",\n", with: ""))
        // The last goes with its comment; the one before keeps its comma (the file ends entries with one).
        let last = try edited(Self.plugins, jsonc) {
            $0[path: "plugins"] = .array([.string("prettier"), .string("eslint")])
        }
        #expect(last == Self.plugins.replacingOccurrences(of: "\n    /* types */\n    \"tsc\",\n", with: "\n"))
    }

    @Test func anEmptyObjectGainsMembersInItsParentsStyle() throws {
        let text = "{\n  \"a\": {},\n  \"b\": [1, {}]\n}\n"
        let multi = try edited(text, json) { try $0.set(.integer(1), at: "a.x") }
        #expect(multi == "{\n  \"a\": {\n    \"x\": 1\n  },\n  \"b\": [1, {}]\n}\n")
        let inline = try edited(text, json) { try $0.set(.integer(1), at: "b[1].x") }
        #expect(inline == "{\n  \"a\": {},\n  \"b\": [1, {\"x\": 1}]\n}\n")
        let commentsOnly = "{\n  \"a\": {\n    // nothing yet\n  }\n}\n"
        #expect(
            try edited(commentsOnly, jsonc) { try $0.set(.integer(1), at: "a.x") }
                == "{\n  \"a\": {\n    // nothing yet\n    \"x\": 1\n  }\n}\n")
        #expect(try edited("{}\n", json) { try $0.set(.integer(1), at: "x") } == "{\n  \"x\": 1\n}\n")
    }

    @Test func strictJSONGainsNoTrailingComma() throws {
        let text = "{\n  \"a\": 1,\n  \"b\": 2\n}\n"
        #expect(try edited(text, json) { try $0.remove(at: "b") } == "{\n  \"a\": 1\n}\n")
        #expect(
            try edited(text, json) { try $0.set(.integer(3), at: "c") }
                == "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}\n")
        // Removing every member leaves an empty object.
        #expect(try edited(text, json) { $0 = .object([:]) } == "{}\n")
    }

    @Test func anObjectWhoseMembersAllChangeTakesTheOldOnesPlace() throws {
        let text = "{\n  \"server\": {\n    // the port\n    \"port\": 80\n  },\n  \"z\": 1\n}\n"
        let written = try edited(text, jsonc) { try $0.set(.object(["host": .string("x")]), at: "server") }
        #expect(written == "{\n  \"server\": {\n    \"host\": \"x\"\n  },\n  \"z\": 1\n}\n")
    }

    @Test func aCompactFileStaysCompact() throws {
        let text = #"{"a":1,"b":{"c":2},"d":[1,2]}"#
        #expect(
            try edited(text, JSONCodec(prettyPrinted: false)) { try $0.set(.integer(3), at: "e") }
                == #"{"a":1,"b":{"c":2},"d":[1,2],"e":3}"#)
        #expect(try edited(text, JSONCodec(prettyPrinted: false)) { try $0.remove(at: "b") } == #"{"a":1,"d":[1,2]}"#)
        #expect(
            try edited(text, JSONCodec(prettyPrinted: false)) {
                try $0.set(.object(["x": .array([.integer(1)])]), at: "a")
            } == #"{"a":{"x":[1]},"b":{"c":2},"d":[1,2]}"#)
        #expect(
            try edited(text, JSONCodec(prettyPrinted: false)) { $0[path: "d"] = .array([.integer(1)]) }
                == #"{"a":1,"b":{"c":2},"d":[1]}"#)
    }

    /// The syntax tree accounts for every byte: the text before the root, each bracket, each entry's lead,
    /// key and separator, value and tail, the trivia before each closing bracket and the text after the root
    /// follow each other with no gap and no overlap, and each object's index finds each key's entry.
    @Test(arguments: [UInt64(31), 32])
    func theSyntaxTreeAccountsForEveryByte(seed: UInt64) throws {
        var texts = [Self.tsconfig, Self.plugins, Self.strictLine, Self.launch, "[1, /* two */ 2,]", " 7 ", "{}"].map {
            Array($0.utf8)
        }
        var random = SeededGenerator(seed: seed)
        var counter = 0
        for _ in 0..<50 {
            var generator = GeneratedJSONText.Generator(random: random, comments: true, counter: counter)
            texts.append(Array(generator.make().text.trimmingPrefix(TextEngine.byteOrderMark)))
            (random, counter) = (generator.random, generator.counter)
        }
        for text in texts {
            let syntax = try JSONSyntax(text, comments: true)
            var pieces: [Range<Int>] = [0..<syntax.root.range.lowerBound]
            func walk(_ node: JSONSyntax.Node) {
                guard let container = node.container else { return pieces.append(node.range) }
                pieces.append(container.open..<(container.open + 1))
                for (index, entry) in container.entries.enumerated() {
                    pieces.append(container.leadStart(of: index)..<entry.start)
                    pieces.append(entry.start..<entry.value.range.lowerBound)
                    walk(entry.value)
                    pieces.append(entry.value.range.upperBound..<entry.tailEnd)
                    if let key = entry.key { #expect(container.index(ofKey: key) == index) }
                    if let comma = entry.comma {
                        #expect(
                            (entry.value.range.upperBound..<entry.tailEnd).contains(comma)
                                && text[comma] == UInt8(ascii: ","))
                    }
                }
                pieces.append((container.entries.last?.tailEnd ?? container.open + 1)..<container.close)
                pieces.append(container.close..<(container.close + 1))
            }
            walk(syntax.root)
            pieces.append(syntax.root.range.upperBound..<text.count)
            let gaps = zip(pieces, pieces.dropFirst()).filter { $0.upperBound != $1.lowerBound }
            #expect(
                gaps.isEmpty && pieces.last?.upperBound == text.count,
                "\(gaps) in:\n\(String(decoding: text, as: UTF8.self))")
        }
    }

    /// A 40,000-key object: editing one key finds it through the object's index and splices only its value,
    /// so the edit is one pass over the text however many keys there are.
    @Test func oneKeyOfAFortyThousandKeyObjectIsEditedInOneSplice() throws {
        let keys = (0..<40_000).map { String(format: "key%05d", $0) }
        let text =
            "{\n" + keys.enumerated().map { "  \"\($0.element)\": \($0.offset)" }.joined(separator: ",\n") + "\n}\n"
        let bytes = Array(text.utf8)
        let old = try json.parse(Data(bytes))
        var new = old
        try new.set(.string("changed"), at: ValuePath([.key("key20000")]))
        let edits = DocumentEdit.changes(from: old, to: new)
        #expect(edits.count == 1)
        let splices = try JSONEditor(allowsComments: false).splices(for: edits, in: bytes, holding: old)
        #expect(splices.count == 1)
        #expect(splices.first?.replacement == Array("\"changed\"".utf8))
        let written = try json.serializeDocument(new, editing: (Data(bytes), old), store: "test")
        #expect(
            String(decoding: written, as: UTF8.self)
                == text.replacingOccurrences(of: "\"key20000\": 20000,", with: "\"key20000\": \"changed\","))
        // A new key and a removed one are as cheap.
        var more = new
        try more.set(.integer(1), at: ValuePath([.key("zzz")]))
        try more.remove(at: ValuePath([.key("key00001")]))
        let again = try json.serializeDocument(more, editing: (written, new), store: "test")
        #expect(try json.parse(again) == more)
    }

    /// Half the keys of a 40,000-key object removed and as many added, in one write: each edit is found
    /// through the object's index and made where it stands, so the write is one pass, as one edit is.
    @Test func halfOfAFortyThousandKeyObjectReplacedInOneWrite() throws {
        let text = "{\n" + (0..<40_000).map { "  \"key\($0)\": \($0)" }.joined(separator: ",\n") + "\n}\n"
        let old = try json.parse(Data(text.utf8))
        guard case .object(var members) = old else { return }
        for index in stride(from: 0, to: 40_000, by: 2) {
            members["key\(index)"] = nil
            members["new\(index)"] = .integer(index)
        }
        let written = try json.serializeDocument(.object(members), editing: (Data(text.utf8), old), store: "test")
        let lines = String(decoding: written, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 40_002)
        #expect(lines[1] == "  \"key1\": 1,")
        #expect(lines[20_001] == "  \"new0\": 0,")
    }

    /// `tsc --init`: sections of `/* */` headers, settings commented out with `//`, and a `/* */`
    /// comment after every value.
    static let tsconfig = """
        {
          "compilerOptions": {
            /* Visit https://aka.ms/tsconfig to read more about this file */

            /* Language and Environment */
            "target": "es2016",                                  /* Set the JavaScript language version for emitted JavaScript. */
            // "lib": [],                                        /* Specify a set of bundled library declaration files. */

            /* Modules */
            "module": "commonjs",                                /* Specify what module code is generated. */
            // "rootDir": "./",                                  /* Specify the root folder within your source files. */

            /* Interop Constraints */
            "esModuleInterop": true,                             /* Emit additional JavaScript to ease support for importing CommonJS modules. */
            "forceConsistentCasingInFileNames": true,            /* Ensure that casing is correct in imports. */

            /* Type Checking */
            "strict": true,                                      /* Enable all strict type-checking options. */
            // "noImplicitAny": true,                            /* Enable error reporting for an implied 'any' type. */

            /* Completeness */
            "skipLibCheck": true                                 /* Skip type checking all .d.ts files. */
          }
        }

        """

    @Test func aTsconfigIsEditedInPlace() throws {
        let target = try edited(Self.tsconfig, jsonc) { try $0.set(.string("es2022"), at: "compilerOptions.target") }
        #expect(
            target == Self.tsconfig.replacingOccurrences(of: "\"target\": \"es2016\",", with: "\"target\": \"es2022\",")
        )
        let casing = try edited(Self.tsconfig, jsonc) {
            try $0.remove(at: "compilerOptions.forceConsistentCasingInFileNames")
        }
        #expect(
            casing
                == Self.tsconfig.replacingOccurrences(
                    of:
                        "    \"forceConsistentCasingInFileNames\": true,            /* Ensure that casing is correct in imports. */\n",
                    with: ""))
        let outDir = try edited(Self.tsconfig, jsonc) { try $0.set(.string("dist"), at: "compilerOptions.outDir") }
        #expect(
            outDir
                == Self.tsconfig.replacingOccurrences(
                    of:
                        "\"skipLibCheck\": true                                 /* Skip type checking all .d.ts files. */\n",
                    with:
                        "\"skipLibCheck\": true,                                 /* Skip type checking all .d.ts files. */\n    \"outDir\": \"dist\"\n"
                ))
        // The last setting goes with its section header directly above it; the one before it loses its
        // comma and keeps its comment; the commented-out settings stay.
        let last = try edited(Self.tsconfig, jsonc) { try $0.remove(at: "compilerOptions.skipLibCheck") }
        #expect(
            last
                == Self.tsconfig
                .replacingOccurrences(
                    of:
                        "\n    /* Completeness */\n    \"skipLibCheck\": true                                 /* Skip type checking all .d.ts files. */\n",
                    with: "\n"
                )
                .replacingOccurrences(of: "\"strict\": true,", with: "\"strict\": true"))
        let strict = try edited(Self.tsconfig, jsonc) { try $0.set(.bool(false), at: "compilerOptions.strict") }
        #expect(strict == Self.tsconfig.replacingOccurrences(of: "\"strict\": true,", with: "\"strict\": false,"))
    }
}

/// A write's read-back reads the text's syntax tree in the same pass as its document, and the codec keeps
/// it for the next edit of that text: the edit it starts is the edit of a fresh read, and only that text
/// is ever edited with it.
extension JSONEditorTests {
    /// The one-pass read gives the document ``JSONReader`` gives and the tree ``JSONSyntax`` reads alone,
    /// and refuses what the reader refuses, for strict JSON and for JSONC.
    @Test(arguments: [false, true])
    func theReadBackReadsTheReadersDocumentAndTheEditorsTree(comments: Bool) throws {
        var texts = [
            Self.tsconfig, Self.plugins, Self.strictLine, Self.launch, "[1, /* two */ 2,]", " 7 ", "{}", "[]", "[ ]",
            #""\u00e9\ud83d\ude00 \" \\ \/ \b\f\n\r\t""#, #"{"a": 1, "a": 2}"#, "{\"\u{e9}\": 1, \"e\u{301}\": 2}",
            "[1,]",
            #"{"a": 1,}"#, "[1 2]", "truex", "[tru]", "[1.]", "[-]", "[01]", "\"a\u{1}b\"", "{\"a\u{1}\": 1}",
            "[1e400, 12345678901234567890, 0.1, -0.0, 1E+2, 123456789012345678.5]", "", "  ", "[", #"{"a" 1}"#, "[1] 2",
            #"{"a": [1, {"b": null}], "c": false} // end"#, #""\x""#, "[,]", "{,}", "nul", #"["\ud800"]"#, "[1/* c */]",
            "{\"a\":1}/", "[\"open", "[1,,2]", "{\"a\": 1 /* c */, // d\n \"b\": [true]}\n",
        ]
        var random = SeededGenerator(seed: comments ? 41 : 42)
        var counter = 0
        for _ in 0..<30 {
            var generator = GeneratedJSONText.Generator(random: random, comments: comments, counter: counter)
            texts.append(
                String(decoding: Array(generator.make().text.trimmingPrefix(TextEngine.byteOrderMark)), as: UTF8.self))
            (random, counter) = (generator.random, generator.counter)
        }
        for text in texts {
            let bytes = Array(text.utf8)
            let read = Result { try JSONReader.document(from: bytes, comments: comments) }
            let both = Result { try JSONSyntax.document(from: bytes, comments: comments) }
            switch (read, both) {
            case (.success(let document), .success(let (readBack, syntax))):
                #expect(readBack == document, "\(text)")
                let alone = try JSONSyntax(bytes, comments: comments, indexingKeys: false)
                #expect("\(syntax.root)" == "\(alone.root)", "\(text)")
                #expect(
                    syntax.indentUnit == alone.indentUnit && syntax.keySeparator == alone.keySeparator
                        && syntax.isCompact == alone.isCompact)
            case (.failure, .failure):
                break
            default:
                Issue.record(
                    "the reader and the one-pass read disagree on \(String(reflecting: text)): \(read), \(both)")
            }
        }
    }

    /// A codec edits the text it wrote and read back last, again and again, through values that grow, shrink,
    /// span lines, come and go: each write is byte for byte what a codec reading the text afresh writes.
    @Test func anEditOfTheTextACodecWroteLastIsTheEditOfAFreshRead() throws {
        let changes: [(ValuePath, JSONValue)] = [
            ("compilerOptions.target", .string("a much longer target than before")),
            ("compilerOptions.outDir", .string("dist")),
            ("compilerOptions.strict", .bool(false)),
            ("compilerOptions.paths", .object(["@/*": .array([.string("src/*")])])),
            ("compilerOptions.target", .string("t")),
            ("compilerOptions.paths.@/*", .array([.string("lib/*"), .string("src/*")])),
            ("compilerOptions.skipLibCheck", .null), ("compilerOptions.outDir", .string("build/out")),
            ("include", .array([.string("src")])),
            ("compilerOptions.module", .string("nodenext")),
        ]
        let text = try editsOfRememberedText({ JSONCCodec() }, from: Self.tsconfig, changes: changes)
        #expect(text.contains("/* Skip type checking all .d.ts files. */") && text.contains("\"module\": \"nodenext\""))
        let strict = try editsOfRememberedText(
            { JSONCodec() }, from: Self.launch,
            changes: [
                ("version", .string("0.3.0")), ("configurations[0].args", .array([.string("run")])),
                ("configurations[0].cwd", .string("/")),
                ("version", .string("1")), ("configurations[0].env", .object(["A": .string("b")])),
            ])
        #expect(strict.contains(#""args": ["run"]"#))
    }

    /// The tree a read-back kept is used for the text it read, byte for byte, and for no other: a codec
    /// that read back one text and then edits another (a file changed by hand since) edits that one as a
    /// fresh codec does. The editor is handed a tree that belongs to another text to show which it uses.
    @Test func aRememberedTreeIsNeverUsedForAnotherText() throws {
        let written = Array(Self.strictLine.utf8)
        let byHand = Array(
            Self.strictLine.replacingOccurrences(of: "\"es2020\"", with: "\"es2020\", \"lib\": [\"dom\"]").utf8)
        let codec = JSONCCodec()
        _ = try codec.parseWritten(Data(written))
        let before = try codec.parse(Data(byHand))
        var after = before
        try after.set(.string("nodenext"), at: "compilerOptions.module")
        let edited = try codec.serialize(after, editing: Data(byHand), holding: before)
        #expect(edited == (try JSONCCodec().serialize(after, editing: Data(byHand), holding: before)))
        #expect(
            String(decoding: edited, as: UTF8.self)
                == String(decoding: byHand, as: UTF8.self).replacingOccurrences(of: "\"esnext\"", with: "\"nodenext\""))

        // The editor looks a tree up by the text it edits: the one kept for `written` is not used for `byHand`,
        // and one kept (wrongly, here) under `written` is used for `written`.
        let edits = DocumentEdit.changes(from: before, to: after)
        let memo = SyntaxMemo<JSONSyntax>()
        memo.remember(try JSONSyntax.document(from: written, comments: true).syntax, of: written)
        let fresh = try JSONEditor(allowsComments: true).splices(for: edits, in: byHand, holding: before)
        #expect(
            try JSONEditor(allowsComments: true, lastWritten: memo).splices(for: edits, in: byHand, holding: before)
                == fresh)
        memo.remember(try JSONSyntax(byHand, comments: true), of: written)
        let misled = try JSONEditor(allowsComments: true, lastWritten: memo).splices(
            for: edits, in: written, holding: before)
        #expect(misled == fresh, "the editor used the tree kept for the text it edits")
    }
}
