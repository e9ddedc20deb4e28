import Foundation
@testable import Loupe
import LoupeTestSupport
import Testing

/// TOML 1.0.0, read and written by `TOMLCodec`, checked against the specification's examples and against
/// an independent parser: Python's `tomllib` reads the same text, and its answer is compared with Loupe's.
@Suite("TOML: the specification's examples, against Python's tomllib")
struct TOMLCodecTests {
    let codec = TOMLCodec()

    /// What `tomllib` reads from `text`, as a document: date-times in RFC 3339 form with `Z` for a zero
    /// offset, infinities and NaN as the strings `inf`, `-inf` and `nan`; or the error it raised.
    static func tomllib(_ text: String) throws -> Result<JSONValue, TOMLRefused> {
        try tomllib([text])[0]
    }

    /// `tomllib`'s answers for each of `texts`, from one Python process.
    static func tomllib(_ texts: [String]) throws -> [Result<JSONValue, TOMLRefused>] {
        try IndependentParser.tomllib.answers(texts)
    }

    /// `tomllib`'s answers for the specification's examples and the invalid ones, asked once.
    static let tomllibAnswers: [String: Result<JSONValue, TOMLRefused>] = {
        let texts = specificationExamples + invalidExamples.map(\.text)
        let answers = (try? tomllib(texts)) ?? []
        return Dictionary(zip(texts, answers), uniquingKeysWith: { first, _ in first })
    }()

    typealias TOMLRefused = IndependentParser.Refusal

    /// Loupe's document of `text`, in `tomllib`'s terms (non-finite floats as strings, `+00:00` as `Z`).
    func loupe(_ text: String) throws -> JSONValue {
        Self.comparable(try codec.parse(Data(text.utf8)))
    }

    static func comparable(_ value: JSONValue) -> JSONValue {
        switch value {
        case .double(let number) where number.isNaN: .string("nan")
        case .double(let number) where number.isInfinite: .string(number > 0 ? "inf" : "-inf")
        case .string(let text) where text.hasSuffix("+00:00") && text.count > 19:
            .string(String(text.dropLast(6)) + "Z")
        case .array(let elements): .array(elements.map(comparable))
        case .object(let members): .object(members.mapValues(comparable))
        default: value
        }
    }

    /// Every example of the TOML 1.0.0 specification that is valid TOML, as one document per section.
    static let specificationExamples: [String] = [
        // Comment, key/value pair
        """
        # This is a full-line comment
        key = "value"  # This is a comment at the end of a line
        another = "# This is not a comment"
        """,
        // Keys
        """
        key = "value"
        bare_key = "value"
        bare-key = "value"
        1234 = "value"
        "127.0.0.1" = "value"
        "character encoding" = "value"
        "ʎǝʞ" = "value"
        'key2' = "value"
        'quoted "value"' = "value"
        "" = "blank"
        """,
        """
        name = "Orange"
        physical.color = "orange"
        physical.shape = "round"
        site."google.com" = true
        fruit.name = "banana"     # this is best practice
        fruit. color = "yellow"    # same as fruit.color
        fruit . flavor = "banana"   # same as fruit.flavor
        """,
        """
        apple.type = "fruit"
        orange.type = "fruit"
        apple.skin = "thin"
        orange.skin = "thick"
        apple.color = "red"
        orange.color = "orange"
        3.14159 = "pi"
        """,
        """
        # This makes the key "fruit" into a table.
        fruit.apple.smooth = true
        # So then you can add to the table "fruit" like so:
        fruit.orange = 2
        """,
        // Strings
        #"""
        str = "I'm a string. \"You can quote me\". Name\tJos\u00E9\nLocation\tSF."
        str1 = """
        Roses are red
        Violets are blue"""
        str2 = """

        The quick brown \


          fox jumps over \
            the lazy dog."""
        str3 = """\
               The quick brown \
               fox jumps over \
               the lazy dog.\
               """
        str4 = """Here are two quotation marks: "". Simple enough."""
        str5 = """Here are three quotation marks: ""\"."""
        str6 = """Here are fifteen quotation marks: ""\"""\"""\"""\"""\"."""
        str7 = """"This," she said, "is just a pointless statement.""""
        winpath  = 'C:\Users\nodejs\templates'
        winpath2 = '\\ServerX\admin$\system32\'
        quoted   = 'Tom "Dubs" Preston-Werner'
        regex    = '<\i\c*\s*>'
        regex2 = '''I [dw]on't need \d{2} apples'''
        lines  = '''
        The first newline is
        trimmed in raw strings.
           All other whitespace
           is preserved.
        '''
        quot15 = '''Here are fifteen quotation marks: """""""""""""""'''
        apos15 = "Here are fifteen apostrophes: '''''''''''''''"
        str8 = ''''That,' she said, 'is still pointless.''''
        escapes = "\b\t\n\f\r\"\\\u00e9\U0001F600"
        """#,
        // Integers
        """
        int1 = +99
        int2 = 42
        int3 = 0
        int4 = -17
        int5 = 1_000
        int6 = 5_349_221
        int7 = 53_49_221  # Indian number system grouping
        int8 = 1_2_3_4_5  # VALID but discouraged
        hex1 = 0xDEADBEEF
        hex2 = 0xdeadbeef
        hex3 = 0xdead_beef
        oct1 = 0o01234567
        oct2 = 0o755 # useful for Unix file permissions
        bin1 = 0b11010110
        max = 9_223_372_036_854_775_807
        min = -9_223_372_036_854_775_808
        """,
        // Floats
        """
        flt1 = +1.0
        flt2 = 3.1415
        flt3 = -0.01
        flt4 = 5e+22
        flt5 = 1e06
        flt6 = -2E-2
        flt7 = 6.626e-34
        flt8 = 224_617.445_991_228
        sf1 = inf  # positive infinity
        sf2 = +inf # positive infinity
        sf3 = -inf # negative infinity
        sf4 = nan  # actual sNaN/qNaN encoding is implementation-specific
        sf5 = +nan # same as `nan`
        sf6 = -nan # valid, actual encoding is implementation-specific
        """,
        // Booleans, date-times
        """
        bool1 = true
        bool2 = false
        odt1 = 1979-05-27T07:32:00Z
        odt2 = 1979-05-27T00:32:00-07:00
        odt3 = 1979-05-27T00:32:00.999999-07:00
        odt4 = 1979-05-27 07:32:00Z
        ldt1 = 1979-05-27T07:32:00
        ldt2 = 1979-05-27T00:32:00.999999
        ld1 = 1979-05-27
        lt1 = 07:32:00
        lt2 = 00:32:00.999999
        leap = 2000-02-29
        """,
        // Arrays
        """
        integers = [ 1, 2, 3 ]
        colors = [ "red", "yellow", "green" ]
        nested_arrays_of_ints = [ [ 1, 2 ], [3, 4, 5] ]
        nested_mixed_array = [ [ 1, 2 ], ["a", "b", "c"] ]
        string_array = [ "all", 'strings', \"\"\"are the same\"\"\", '''type''' ]
        numbers = [ 0.1, 0.2, 0.5, 1, 2, 5 ]
        contributors = [
          "Foo Bar <foo@example.com>",
          { name = "Baz Qux", email = "bazqux@example.com", url = "https://example.com/bazqux" }
        ]
        integers2 = [
          1, 2, 3
        ]
        integers3 = [
          1,
          2, # this is ok
        ]
        """,
        // Tables
        """
        [table-1]
        key1 = "some string"
        key2 = 123

        [table-2]
        key1 = "another string"
        key2 = 456

        [dog."tater.man"]
        type.name = "pug"

        [a.b.c]            # this is best practice
        [ d.e.f ]          # same as [d.e.f]
        [ g .  h  . i ]    # same as [g.h.i]
        [ j . "ʞ" . 'l' ]  # same as [j."ʞ".'l']

        # [x] you
        # [x.y] don't
        # [x.y.z] need these
        [x.y.z.w] # for this to work

        [x] # defining a super-table afterward is ok
        """,
        """
        # Top-level table begins.
        name = "Fido"
        breed = "pug"

        # Top-level table ends.
        [owner]
        name = "Regina Dogman"
        member_since = 1999-08-04
        """,
        """
        [fruit]
        apple.color = "red"
        apple.taste.sweet = true

        [fruit.apple.texture]  # you can add sub-tables
        smooth = true
        """,
        // Inline tables
        """
        name = { first = "Tom", last = "Preston-Werner" }
        point = { x = 1, y = 2 }
        animal = { type.name = "pug" }
        empty = {}
        """,
        // Arrays of tables
        """
        [[products]]
        name = "Hammer"
        sku = 738594937

        [[products]]  # empty table within the array

        [[products]]
        name = "Nail"
        sku = 284758393

        color = "gray"
        """,
        """
        [[fruits]]
        name = "apple"

        [fruits.physical]  # subtable
        color = "red"
        shape = "round"

        [[fruits.varieties]]  # nested array of tables
        name = "red delicious"

        [[fruits.varieties]]
        name = "granny smith"


        [[fruits]]
        name = "banana"

        [[fruits.varieties]]
        name = "plantain"
        """,
        """
        points = [ { x = 1, y = 2, z = 3 },
                   { x = 7, y = 8, z = 9 },
                   { x = 2, y = 4, z = 8 } ]
        """,
        "key = \"value\"\r\nother = 'crlf'\r\n[t]\r\nk = [\r\n 1,\r\n]\r\n",
        "",
        "# only a comment",
    ]

    @Test(arguments: specificationExamples)
    func everyValidExampleReadsAsTomllibReadsIt(_ text: String) throws {
        let expected = try #require(Self.tomllibAnswers[text]).get()
        #expect(try loupe(text) == expected)
    }

    /// The specification's invalid examples and more, each with where Loupe says the error is.
    static let invalidExamples: [(text: String, error: String)] = [
        ("key = # INVALID", "line 1, column 7: a value was expected, not '#'"),
        ("first = \"Tom\" last = \"Preston-Werner\" # INVALID", "line 1, column 15: a line break was expected"),
        ("= \"no key name\"  # INVALID", "line 1, column 1: a key was expected, not '='"),
        ("\"\"\"key\"\"\" = \"not allowed\"", "line 1, column 1: a key cannot be a multi-line string"),
        ("name = \"Tom\"\nname = \"Pradyun\"", "line 2, column 1: the key name is defined twice"),
        (
            "spelling = \"favorite\"\n\"spelling\" = \"favourite\"",
            "line 2, column 1: the key spelling is defined twice"
        ),
        ("fruit.apple = 1\nfruit.apple.smooth = true", "line 2, column 1: fruit.apple is already a value, not a table"),
        (
            "[fruit]\napple = \"red\"\n\n[fruit]\norange = \"orange\"",
            "line 4, column 1: the table fruit is defined twice"
        ),
        (
            "[fruit]\napple = \"red\"\n\n[fruit.apple]\ntexture = \"smooth\"",
            "line 4, column 1: fruit.apple is already a value, not a table"
        ),
        (
            "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n[fruit.apple]",
            "line 4, column 1: the table fruit.apple is defined twice"
        ),
        (
            "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n[fruit.apple.taste]",
            "line 4, column 1: the table fruit.apple.taste is defined twice"
        ),
        (
            "[a.b.c]\nz = 9\n[a]\nb.c.t = 1",
            "line 4, column 1: the table a.b.c is defined by a header; dotted keys cannot add to it"
        ),
        (
            "[product]\ntype = { name = \"Nail\" }\ntype.edible = false",
            "line 3, column 1: the table product.type is an inline table, complete where it is written"
        ),
        (
            "[product]\ntype.name = \"Nail\"\ntype = { edible = false }",
            "line 3, column 1: the key product.type is defined twice"
        ),
        ("a = {b = 1,}", "line 1, column 12: an inline table cannot end with a ','"),
        ("a = {b = 1,\n c = 2}", "line 1, column 12: a key was expected, not a line break"),
        (
            "[[fruits]]\nname = \"apple\"\n[[fruits.varieties]]\nname = \"red delicious\"\n[fruits.varieties]\nname = \"granny smith\"",
            "line 5, column 1: fruits.varieties is already an array of tables"
        ),
        (
            "[[fruits]]\n[fruits.physical]\ncolor = \"red\"\n[[fruits.physical]]\ncolor = \"green\"",
            "line 4, column 1: fruits.physical is already a table, not an array of tables"
        ),
        (
            "fruits = []\n[[fruits]]",
            "line 2, column 1: fruits is already an array, complete where it is written, not a table"
        ),
        ("int = 01", "line 1, column 7: 01 is not a TOML value"),
        ("int = 1__2", "line 1, column 7: 1__2 is not a TOML value"),
        ("int = _1", "line 1, column 7: _1 is not a TOML value"),
        ("int = 1_", "line 1, column 7: 1_ is not a TOML value"),
        ("int = +0x1", "line 1, column 7: +0x1 is not a TOML value"),
        ("flt = .7", "line 1, column 7: .7 is not a TOML value"),
        ("flt = 7.", "line 1, column 7: 7. is not a TOML value"),
        ("flt = 3.e+20", "line 1, column 7: 3.e+20 is not a TOML value"),
        ("bool = True", "line 1, column 8: True is not a TOML value"),
        ("date = 1979-02-30", "line 1, column 8: 1979-02-30 is not a TOML value"),
        ("time = 24:00:00", "line 1, column 8: 24:00:00 is not a TOML value"),
        ("s = \"no end", "line 1, column 5: the string is not closed"),
        ("s = \"a\\qb\"", "line 1, column 7: \\'q' is not an escape TOML knows"),
        ("s = \"\\uD800\"", "line 1, column 6: \\u must be followed by 4 hex digits of a Unicode scalar value"),
        ("s = \"tab\u{01}\"", "line 1, column 9: a string cannot hold the control character the byte 0x1; escape it"),
        ("s = 'one\nline'", "line 1, column 9: a string on one line cannot hold a line break"),
        (
            "a = 1\rb = 2",
            "line 1, column 6: a line break was expected after the value (a lone carriage return is not one)"
        ),
        ("a = [1 2]", "line 1, column 8: ',' or ']' was expected in the array, not '2'"),
        ("[a]b = 1", "line 1, column 4: a line break was expected after the value, not 'b'"),
        ("[a", "line 1, column 3: a ']' to end the table header was expected before the end of the text"),
        (
            "a = 1 # \u{7F} delete",
            "line 1, column 9: a comment cannot hold the control character the byte 0x7F; escape it"
        ),
    ]

    @Test(arguments: 0..<invalidExamples.count)
    func everyInvalidExampleIsAnErrorNamingLineAndColumnAsTomllibRefusesIt(_ index: Int) throws {
        let (text, expected) = Self.invalidExamples[index]
        #expect(throws: (any Error).self) { try #require(Self.tomllibAnswers[text]).get() }
        #expect {
            try codec.parse(Data(text.utf8))
        } throws: { error in
            "\(error)".hasPrefix(expected)
        }
    }

    /// TOML's integers are 64-bit signed, and the specification requires an error for any other
    /// (`tomllib`, with Python's integers, reads them all).
    /// A UTF-8 byte-order mark before the text is not part of it.
    @Test func aByteOrderMarkIsNotPartOfTheText() throws {
        #expect(try codec.parse(Data("\u{FEFF}a = 1\n".utf8)) == .object(["a": .integer(1)]))
        #expect(try codec.parse(Data("\u{FEFF}".utf8)) == .object([:]))
        #expect(throws: DocumentSyntaxError.self) { try codec.parse(Data("a = 1\n\u{FEFF}b = 2\n".utf8)) }
    }

    /// Every valid file of the toml-test suite (github.com/toml-lang/toml-test, TOML 1.0.0's list) reads as
    /// its tagged JSON says, and every invalid one is refused. It runs where `TOML_TEST_DIR` names a copy of
    /// the suite's `tests` folder (the suite is not part of this repository).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["TOML_TEST_DIR"] != nil))
    func theTomlTestSuiteReadsAsItSays() throws {
        let root = URL(fileURLWithPath: ProcessInfo.processInfo.environment["TOML_TEST_DIR"] ?? "")
        let files = try String(contentsOf: root.appendingPathComponent("files-toml-1.0.0"), encoding: .utf8)
            .split(separator: "\n").map(String.init).filter { $0.hasSuffix(".toml") }
        var failures: [String] = []
        for file in files {
            let data = try Data(contentsOf: root.appendingPathComponent(file))
            if file.hasPrefix("invalid/") {
                if (try? codec.parse(data)) != nil { failures.append("\(file) is read") }
                continue
            }
            let json = try String(
                contentsOf: root.appendingPathComponent(String(file.dropLast(5)) + ".json"), encoding: .utf8)
            let expected = Self.untagged(try JSONValue(parsing: json))
            do {
                let read = Self.taggable(try codec.parse(data))
                if read != expected { failures.append("\(file) reads as \(read), not \(expected)") }
            } catch {
                failures.append("\(file): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(files.count):\n\(failures.joined(separator: "\n"))")
    }

    /// toml-test's tagged JSON (`{"type": "integer", "value": "1"}`) as a document in the terms of
    /// ``taggable(_:)``.
    static func untagged(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            if members.count == 2, case .string(let type)? = members["type"], case .string(let text)? = members["value"]
            {
                switch type {
                case "integer": return Int(text).map(JSONValue.integer) ?? value
                case "float":
                    if text.hasSuffix("nan") { return .string("nan") }
                    if text.hasSuffix("inf") { return .string(text.hasPrefix("-") ? "-inf" : "inf") }
                    return Double(text).map(JSONValue.double) ?? value
                case "bool": return .bool(text == "true")
                case "string": return .string(text)
                default: return .string("date " + dateTime(text))
                }
            }
            return .object(members.mapValues(untagged))
        case .array(let elements): return .array(elements.map(untagged))
        default: return value
        }
    }

    /// A document with non-finite floats as strings and date-times as `date` and their normal text (what
    /// ``TOMLReader`` reads as a date-time, with `T`, upper case and no trailing zeros in fractions).
    static func taggable(_ value: JSONValue) -> JSONValue {
        switch value {
        case .double(let number) where number.isNaN: .string("nan")
        case .double(let number) where number.isInfinite: .string(number > 0 ? "inf" : "-inf")
        case .string(let text) where TOMLReader.dateTime(text) == text: .string("date " + dateTime(text))
        case .array(let elements): .array(elements.map(taggable))
        case .object(let members): .object(members.mapValues(taggable))
        default: value
        }
    }

    /// A date-time's text with `T` between date and time, upper case, and no trailing zeros in its fraction.
    static func dateTime(_ text: String) -> String {
        var text = text.uppercased()
        if text.count > 10, text[text.index(text.startIndex, offsetBy: 10)] == " " {
            text.replaceSubrange(
                text.index(text.startIndex, offsetBy: 10)...text.index(text.startIndex, offsetBy: 10), with: "T")
        }
        guard let dot = text.firstIndex(of: ".") else { return text }
        let digits = text[text.index(after: dot)...].prefix { $0.isNumber }
        let kept = digits.reversed().drop { $0 == "0" }.reversed()
        return String(text[..<dot]) + (kept.isEmpty ? "" : "." + String(kept)) + text[digits.endIndex...]
    }

    @Test func anIntegerBeyond64BitsIsAnErrorNeverARoundedNumber() throws {
        for text in ["int = 9223372036854775808", "int = -9223372036854775809", "int = 0x8000000000000000"] {
            #expect {
                try codec.parse(Data(text.utf8))
            } throws: { error in
                "\(error)".hasPrefix("line 1, column 7: ") && "\(error)".hasSuffix("is not a TOML value")
            }
        }
    }

    @Test func nestingDeeperThanTheLimitIsAnErrorNotACrash() throws {
        let deep = "a = " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect {
            try codec.parse(Data(deep.utf8))
        } throws: { error in
            "\(error)".contains("nested more than 128 levels deep")
        }
        let deepTables = "a = " + String(repeating: "{b = ", count: 100_000)
        #expect(throws: DocumentSyntaxError.self) { try codec.parse(Data(deepTables.utf8)) }
        // Up to the limit, inline tables and arrays nest.
        let deepest =
            "a = " + String(repeating: "{b = ", count: 60) + String(repeating: "[", count: 60) + "1"
            + String(repeating: "]", count: 60) + String(repeating: "}", count: 60)
        #expect(try codec.parse(Data(deepest.utf8))[path: "a"] != nil)
        #expect(throws: DocumentSyntaxError.self) { try codec.parse(Data([0x61, 0x20, 0x3D, 0x20, 0x22, 0xFF, 0x22])) }
    }

    @Test func whatLoupeWritesReadsBackTheSameHereAndInTomllib() throws {
        let documents = try Self.specificationExamples.map { try codec.parse(Data($0.utf8)) }
        let written = try documents.map { String(decoding: try codec.serialize($0), as: UTF8.self) }
        let answers = try Self.tomllib(written)
        for (index, document) in documents.enumerated() {
            #expect(
                Self.comparable(try codec.parse(Data(written[index].utf8))) == Self.comparable(document),
                "\(written[index])")
            #expect(try answers[index].get() == Self.comparable(document), "\(written[index])")
        }
    }

    @Test func whatTOMLCannotHoldIsRefusedNamingWhere() throws {
        #expect {
            try codec.serialize(JSONValue(parsing: #"{"a": {"b": [1, null]}}"#))
        } throws: { error in
            "\(error)" == "TOML cannot hold a null (at a.b[1])"
        }
        #expect {
            try codec.serialize(JSONValue(parsing: #"{"big": 18446744073709551615}"#))
        } throws: { error in
            "\(error)".contains("TOML cannot hold the integer 18446744073709551615, beyond 64 bits (at big)")
        }
        #expect(throws: DocumentSyntaxError.self) { try codec.serialize(.array([])) }
    }

    struct Settings: Codable, Sendable, Equatable {
        struct Upstream: Codable, Sendable, Equatable {
            var url = "https://a.example"
            var timeoutSeconds = 5.0
        }
        var greeting = "hello"
        var started = Date(timeIntervalSince1970: 0)
        var upstream = Upstream()
        var mirrors: [Upstream] = []
        var ports: [Int] = [80]
    }

    @Test func aFileStoreReadsAndWritesTOMLWithDatesAsTOMLDateTimes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.toml")
        try replaceFile(
            path,
            with: """
                # written by hand
                greeting = "bonjour"
                started = 1979-05-27T00:32:00-07:00

                [upstream]
                timeoutSeconds = 2.5

                [[mirrors]]
                url = "https://m1.example"
                timeoutSeconds = 5
                """)
        let root = try RootLens(default: Settings(), store: FileStore(path: path, format: TOMLCodec()), watch: false)
        #expect(root.value.greeting == "bonjour")
        #expect(root.value.started == Date(timeIntervalSince1970: 296_638_320))
        #expect(root.value.upstream == .init(url: "https://a.example", timeoutSeconds: 2.5))
        #expect(root.value.mirrors == [.init(url: "https://m1.example", timeoutSeconds: 5)])

        try root.started.set(Date(timeIntervalSince1970: 1_000_000_000))
        try root.ports.set([80, 443])
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.contains("started = 2001-09-09T01:46:40Z"), "a date stays a TOML date-time: \(written)")
        #expect(
            written.hasPrefix("# written by hand\ngreeting = \"bonjour\"\n"),
            "edited in place, comments kept: \(written)")
        let reread = try Self.tomllib(written).get()
        #expect(reread[path: "started"] == .string("2001-09-09T01:46:40Z"))
        #expect(reread[path: "ports"] == .array([.integer(80), .integer(443)]))
        #expect(
            try RootLens(default: Settings(), store: FileStore(path: path, format: TOMLCodec()), watch: false).value
                == root.value)
    }

    @Test func aFileThatIsNotTOMLIsAnErrorNamingTheFileLineAndColumnAndNothingIsWritten() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.toml")
        try replaceFile(path, with: "greeting = \"bonjour\"\nport = 80 80\n")
        #expect {
            try RootLens(default: Settings(), store: FileStore(path: path, format: TOMLCodec()), watch: false)
        } throws: { error in
            let text = "\(error)"
            return (error as? SettingsError)?.code == .corrupt && text.contains(path)
                && text.contains("line 2, column 11")
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "greeting = \"bonjour\"\nport = 80 80\n")
    }
}

/// A write to a TOML file edits its text in place.
@Suite("TOML files people write: every write edits the text in place")
struct TOMLInPlaceEditTests {
    let codec = TOMLCodec()

    static let handWritten = """
        # The daemon's settings, by hand.
        title = 'Loupe'   # a literal string stays literal when it is not changed
        count = 1_000

        [server]
        # where it listens
        host = "a.example"
        port = 8080 # the usual

        [server.tls]
        enabled = false

        [[mirrors]]
        url = "https://m1.example"

        [[mirrors]]
        url = "https://m2.example"

        """

    func edited(
        _ text: String, sourceLocation: SourceLocation = #_sourceLocation, _ change: (inout JSONValue) throws -> Void
    ) throws -> String {
        try editedText(
            text, with: codec, same: { TOMLCodecTests.comparable($0) == TOMLCodecTests.comparable($1) },
            sourceLocation: sourceLocation, change)
    }

    @Test func aChangedValueIsReplacedWhereItStands() throws {
        #expect(
            try edited(Self.handWritten) { try $0.set(.integer(9090), at: "server.port") }
                == Self.handWritten.replacingOccurrences(of: "port = 8080 # the usual", with: "port = 9090 # the usual")
        )
        #expect(
            try edited(Self.handWritten) { try $0.set(.string("https://m3.example"), at: "mirrors[1].url") }
                == Self.handWritten.replacingOccurrences(of: "https://m2.example", with: "https://m3.example"))
        #expect(try edited(Self.handWritten) { _ in } == Self.handWritten)
    }

    @Test func aRemovedKeyGoesWithItsLineAndARemovedTableWithItsSection() throws {
        #expect(
            try edited(Self.handWritten) { try $0.remove(at: "server.port") }
                == Self.handWritten.replacingOccurrences(of: "port = 8080 # the usual\n", with: ""))
        #expect(
            try edited(Self.handWritten) { try $0.remove(at: "server.tls") }
                == Self.handWritten.replacingOccurrences(of: "[server.tls]\nenabled = false\n\n", with: ""))
    }

    @Test func aNewKeyJoinsItsTablesSectionAndANewTableGoesAtTheEnd() throws {
        #expect(
            try edited(Self.handWritten) { try $0.set(.string("debug"), at: "server.logLevel") }
                == Self.handWritten.replacingOccurrences(
                    of: "port = 8080 # the usual\n", with: "port = 8080 # the usual\nlogLevel = \"debug\"\n"))
        #expect(
            try edited(Self.handWritten) { try $0.set(.bool(true), at: "verbose") }
                == Self.handWritten.replacingOccurrences(of: "count = 1_000\n", with: "count = 1_000\nverbose = true\n")
        )
        let table = try edited(Self.handWritten) { try $0.set(.object(["level": .string("info")]), at: "log") }
        #expect(table == Self.handWritten + "\n[log]\nlevel = \"info\"\n")
        // A table with no section of its own (made by a header of a table inside it, as `tool` and
        // `tool.ruff` of `[tool.ruff.lint]`) gets one, before its tables' sections.
        let implicit = try edited("[a.b]\nx = 1\n") { try $0.set(.integer(2), at: "a.y") }
        #expect(implicit == "[a]\ny = 2\n\n[a.b]\nx = 1\n", "\(implicit)")
    }

    @Test func aChangedValueKeepsItsSpellingWhereItCan() throws {
        // A literal string stays literal; one that a literal string cannot hold becomes a basic string.
        #expect(
            try edited(Self.handWritten) { try $0.set(.string("Lens"), at: "title") }
                == Self.handWritten.replacingOccurrences(of: "title = 'Loupe'", with: "title = 'Lens'"))
        #expect(
            try edited(Self.handWritten) { try $0.set(.string("it's"), at: "title") }
                == Self.handWritten.replacingOccurrences(of: "title = 'Loupe'", with: "title = \"it's\""))
        // An integer keeps its grouping, or its base.
        #expect(
            try edited(Self.handWritten) { try $0.set(.integer(1_250_000), at: "count") }
                == Self.handWritten.replacingOccurrences(of: "count = 1_000", with: "count = 1_250_000"))
        let bases = "mask = 0xFF\nmode = 0o755\nflags = 0b1010\n"
        #expect(
            try edited(bases) {
                try $0.set(.integer(4096), at: "mask"); try $0.set(.integer(0o700), at: "mode");
                try $0.set(.integer(3), at: "flags")
            }
                == "mask = 0x1000\nmode = 0o700\nflags = 0b11\n")
        #expect(
            try edited(bases) { try $0.set(.integer(-1), at: "mask") } == "mask = -1\nmode = 0o755\nflags = 0b1010\n")
        // Multi-line strings stay multi-line, with the line break after the opening quotes that TOML drops.
        let multiLine = "motd = '''\nWelcome.\n'''\nbanner = \"\"\"\nHi \"you\"\"\"\"\n"
        #expect(
            try edited(multiLine) {
                try $0.set(.string("Bye.\nSee you.\n"), at: "motd"); try $0.set(.string("Hello\tthere"), at: "banner")
            }
                == "motd = '''\nBye.\nSee you.\n'''\nbanner = \"\"\"\nHello\tthere\"\"\"\n")
    }

    /// A new table inside an element of an array of tables is a `[…]` section right after that element's
    /// own: there, its header names that element (the latest `[[…]]` above it).
    @Test func aNewTableInsideAnElementOfAnArrayOfTablesIsASectionAfterThatElement() throws {
        let first = try edited(Self.handWritten) { try $0.set(.object(["k": .integer(27)]), at: "mirrors[0].tls") }
        #expect(
            first
                == Self.handWritten.replacingOccurrences(
                    of: "url = \"https://m1.example\"\n",
                    with: "url = \"https://m1.example\"\n\n[mirrors.tls]\nk = 27\n"), "\(first)")
        let last = try edited(Self.handWritten) { try $0.set(.object(["k": .integer(27)]), at: "mirrors[1].tls") }
        #expect(last == Self.handWritten + "\n[mirrors.tls]\nk = 27\n", "\(last)")
    }

    /// A new key in a section whose keys stand indented under its header (as taplo's `indent_entries`
    /// writes them) is indented as the key it follows, with spaces or a tab; a dotted key too.
    @Test func aNewKeyIsIndentedAsTheKeyItFollows() throws {
        let indented = "a = 1\n\n[t]\n  b = 2\n  x.y = 1\n\n\t[u]\n\tk = 1\n"
        #expect(
            try edited(indented) {
                try $0.set(.integer(3), at: "t.c")
                try $0.set(.integer(2), at: "t.x.z")
                try $0.set(.integer(1), at: "u.m")
            } == "a = 1\n\n[t]\n  b = 2\n  x.y = 1\n  x.z = 2\n  c = 3\n\n\t[u]\n\tk = 1\n\tm = 1\n")
    }

    /// An array of tables inside an element of another (`[[mirrors.url]]`) that becomes an array of values is
    /// a `key = [ … ]` line in that element's section; when the outer array changes length in the same
    /// write, the outer array is written anew, whole. Either way the write lands, and reads back.
    @Test func anArrayOfTablesInsideAnElementThatBecomesValuesIsALineOfThatElement() throws {
        let nested = """
            count = 1

            [[mirrors]]
            name = "x"

            [[mirrors.url]]
            url = "m3.0"

            [[mirrors]]
            name = "y"

            """
        let values = try edited(nested) {
            try $0.set(.array([.integer(1), .string("two")]), at: "mirrors[0].url")
        }
        #expect(values == "count = 1\n\n[[mirrors]]\nname = \"x\"\nurl = [1, \"two\"]\n\n[[mirrors]]\nname = \"y\"\n")
        let shorter = try edited(nested) { document in
            try document.set(.array([.object(["name": .string("x"), "url": .array([.integer(1)])])]), at: "mirrors")
        }
        #expect(shorter.hasPrefix("count = 1\n") && !shorter.contains("\"y\""), "\(shorter)")
    }

    @Test func anArrayOfTablesThatChangesLengthGainsOrLosesSections() throws {
        // A new element: a section after the last, in the elements' style; comments before the next section stay.
        let withLog = Self.handWritten + "\n# logging\n[log]\nlevel = \"info\"\n"
        let three = try edited(withLog) { document in
            guard case .array(let mirrors)? = document[path: "mirrors"] else { return }
            try document.set(.array(mirrors + [.object(["url": .string("https://m3.example")])]), at: "mirrors")
        }
        #expect(
            three
                == withLog.replacingOccurrences(
                    of: "url = \"https://m2.example\"\n",
                    with: "url = \"https://m2.example\"\n\n[[mirrors]]\nurl = \"https://m3.example\"\n"))
        // An element removed: its section goes, with the blank line that separated it.
        let one = try edited(Self.handWritten) {
            try $0.set(.array([.object(["url": .string("https://m1.example")])]), at: "mirrors")
        }
        #expect(
            one == Self.handWritten.replacingOccurrences(of: "\n[[mirrors]]\nurl = \"https://m2.example\"\n", with: ""))
        let middle = try edited(withLog) {
            try $0.set(.array([.object(["url": .string("https://m2.example")])]), at: "mirrors")
        }
        #expect(
            middle
                == withLog.replacingOccurrences(of: "[[mirrors]]\nurl = \"https://m1.example\"\n\n", with: "")
                .replacingOccurrences(of: "m1.example", with: "m2.example"))
        // Every element removed: the key stays, as an empty array.
        let none = try edited(withLog) { try $0.set(.array([]), at: "mirrors") }
        #expect(try codec.parse(Data(none.utf8))[path: "mirrors"] == .array([]))
        #expect(none.contains("# logging") && none.contains("# where it listens"))
    }

    /// One codec remembers where each value of the text it wrote stands, moved by its own edits, and edits
    /// that text again without reading it: what it writes is byte for byte what a codec reading the text
    /// afresh writes, through values that grow, shrink, span lines and come back, and through an edit that
    /// adds lines, after which it reads the text again.
    @Test func anEditOfTheTextACodecWroteLastIsTheEditOfAFreshRead() throws {
        let changes: [(ValuePath, JSONValue)] = [
            ("server.port", .integer(1)), ("title", .string("a much longer title than before")),
            ("mirrors[1].url", .string("m")),
            ("server.port", .integer(123_456_789)), ("title", .string("two\nlines")), ("count", .integer(2_000_000)),
            ("server.logLevel", .string("debug")), ("mirrors[0].url", .string("https://first.example")),
            ("server.port", .integer(80)),
            ("title", .string("t")),
        ]
        let text = try editsOfRememberedText({ TOMLCodec() }, from: Self.handWritten, changes: changes) {
            TOMLCodecTests.comparable($0) == TOMLCodecTests.comparable($1)
        }
        #expect(text.contains("# the usual") && text.contains("logLevel = \"debug\""))
    }

    /// Parse-then-write with no change is byte-identical, for every TOML text the tests hold.
    @Test func parseThenWriteIsByteIdenticalForEveryTestFile() throws {
        for text in TOMLCodecTests.specificationExamples + [
            Self.handWritten, Self.handWritten.replacingOccurrences(of: "\n", with: "\r\n"),
        ] {
            #expect(try edited(text) { _ in } == text)
        }
    }

    /// Random sets and removals, seeded, 2,800 steps in all: after each, the text holds the step's document
    /// for this reader and for Python's `tomllib`, and every comment above a key that was never removed is
    /// still there.
    @Test(arguments: Array(UInt64(1)...8))
    func randomEditsKeepTheTextValidTheModelAndTheComments(seed: UInt64) throws {
        let keys = [
            "title", "count", "server.host", "server.port", "server.tls.enabled", "server.extra", "fresh", "log.level",
            "mirrors", "mirrors[0].url", "mirrors[1].weight",
        ]
        // The third walk is over the file with CRLF line endings.
        let start = seed == 3 ? Self.handWritten.replacingOccurrences(of: "\n", with: "\r\n") : Self.handWritten
        let walk = try randomEditWalk(codec: codec, from: start, keys: keys, steps: 350, seed: seed) {
            step, generator in
            // An array of tables of 0 to 3 elements, as well as values.
            let tables = (0..<Int.random(in: 0...3, using: &generator)).map {
                JSONValue.object(["url": .string("m\(step).\($0)")])
            }
            return [
                .integer(Int.random(in: 0...999, using: &generator)), .string("s\(step)"), .string("it's"), .bool(true),
                .array([.integer(1), .string("two")]), .object(["k": .integer(step)]), .array(tables),
            ]
        }
        let independent = try IndependentParser.tomllib.parse(walk.texts)
        // Each comment line stands above a key, and goes with it when it is removed: it stays as long as its
        // key has never been removed.
        let comments: [(comment: String, key: ValuePath)] = [
            ("# The daemon's settings, by hand.", "title"), ("# where it listens", "server.host"),
        ]
        #expect(commentLines(of: Self.handWritten, marker: "#") == comments.map(\.comment))
        var removed: Set<String> = []
        for step in walk.texts.indices {
            #expect(
                independent[step] == TOMLCodecTests.comparable(walk.models[step]), "step \(step):\n\(walk.texts[step])")
            for (comment, key) in comments {
                if walk.models[step][path: key] == nil { removed.insert(comment) }
                guard !removed.contains(comment) else { continue }
                #expect(walk.texts[step].contains(comment), "step \(step) lost \(comment):\n\(walk.texts[step])")
            }
        }
    }
}
