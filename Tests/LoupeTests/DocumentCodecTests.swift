import Foundation
@testable import Loupe
import LoupeTestSupport
import PropertyBased
import Testing

/// Every format Loupe ships keeps every document it is given, and every shape of typed value survives
/// the pipeline (value → document → bytes → document → value) in each.
@Suite("Documents: codecs and the typed pipeline")
struct DocumentCodecTests {
    // MARK: Fixtures

    struct Flat: Codable, Equatable {
        var zeta = 1
        var alpha = "a"
        var middle = true
        var beta: Double = 2.5
        var optionalPresent: Int? = 4
        var optionalAbsent: String? = nil
    }

    struct Nested: Codable, Equatable {
        var inner = Flat()
        var list = [Flat(), Flat()]
        var empty: [Int] = []
        var emptyTable: [String: Int] = [:]
        var table = ["b": 2, "a": 1, "c": 3]
        var byNumber = [10: "ten", 2: "two", 1: "one"]
        var matrix = [[1, 2], [], [3]]
        var optionals: [Int?] = [1, nil, 3]
        var emptyStruct = Empty()
    }

    struct Empty: Codable, Equatable {}

    enum Mode: Codable, Equatable {
        case off
        case fixed(rate: Int, label: String)
        case pair(Int, Double)
        case nested(Nested?)
    }

    enum Level: String, Codable { case info, debug }

    struct Scalars: Codable {
        var int8: Int8 = -128
        var int16: Int16 = .min
        var int32: Int32 = .max
        var int64: Int64 = .min
        var int: Int = .max
        var uint8: UInt8 = 255
        var uint16: UInt16 = .max
        var uint32: UInt32 = .max
        var uint64: UInt64 = .max
        var uint: UInt = 0
        var float: Float = 0.1
        var floats: [Float] = [1, -0.0, 1e7, 16_777_216, 3.4028235e38, 1.1754944e-38, 0.5, 123.456]
        // 2^53 + 1 is not representable: converted at run time it rounds to 2^53, as a literal would (with a
        // compiler warning).
        var doubles: [Double] = [
            0, -0.0, 1, -1, 0.1, 1e-7, 1e14, 1e15, 1e16, 1e20, 123_456_789_012_345,
            Double(Int64(9_007_199_254_740_993)), .pi, -.pi, .greatestFiniteMagnitude,
            .leastNonzeroMagnitude, 100, 1_000_000, 4_503_599_627_370_496.5,
        ]
        var level = Level.debug
        var date = Date(timeIntervalSinceReferenceDate: 123_456.789)
        var data = Data([0, 1, 2, 250, 251, 252, 253, 254, 255])
        var url = URL(string: "https://example.org/a/b?c=d#e")!
        var decimal = Decimal(string: "12.345")!
        var uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    }

    struct Strings: Codable {
        var plain = "hello"
        var quotes = "she said \"hi\" \\o/"
        var controls = "tab\tnew\nline\rreturn\u{8}back\u{c}feed\u{0}nul\u{1f}unit\u{7f}del"
        var unicode = "héllo wörld — 日本語 🎉"
        var slashes = "a/b//c"
        var empty = ""
    }

    /// Keys that sort differently as escaped bytes than as the keys themselves.
    static let awkwardKeys: [String: Int] = [
        "a": 1, "a\"": 2, "a#": 3, "ab": 4, "ab!": 5, "a/b": 6, "a.b": 7, "a\\": 8, "a\u{1}": 9, "B": 10, "é": 11,
        "": 12, "a\n": 13,
    ]

    // MARK: Tests

    static let codecs: [any DocumentCodec] = [
        JSONCodec(), JSONCodec(prettyPrinted: false), PropertyListCodec(), PropertyListCodec(format: .binary),
    ]

    /// `value` through the pipeline and `codec`'s bytes, back to a value.
    func roundTrip<T: Codable>(_ value: T, _ codec: any DocumentCodec) throws -> T {
        let document = try codec.coding.encode(value)
        let bytes = try codec.serialize(document)
        return try codec.coding.decode(T.self, from: try codec.parse(bytes))
    }

    @Test("structs, nested structs, collections, optionals, enums with associated values, in every codec")
    func shapesRoundTrip() throws {
        for codec in Self.codecs {
            #expect(try roundTrip(Flat(), codec) == Flat(), "\(codec.formatName)")
            // [Int?] holds a null, which a property list writes as the string $null.
            #expect(try roundTrip(Nested(), codec) == Nested(), "\(codec.formatName)")
            let modes: [Mode] =
                codec is PropertyListCodec
                ? [.off, .fixed(rate: 3, label: "x"), .pair(1, 2.5), .nested(nil)]
                : [.off, .fixed(rate: 3, label: "x"), .pair(1, 2.5), .nested(Nested()), .nested(nil)]
            for mode in modes {
                #expect(try roundTrip(mode, codec) == mode, "\(codec.formatName)")
            }
        }
    }

    @Test("strings with quotes, backslashes, control characters and Unicode survive every codec")
    func stringsRoundTrip() throws {
        #expect(try roundTrip(Self.awkwardKeys, JSONCodec()) == Self.awkwardKeys)
        let strings = [
            "", "plain", "quote \" and backslash \\", "tab\tnew\nline\r", "grüße 世界 🔍", "\u{1}\u{1f}", "/slashes/",
        ]
        for codec in Self.codecs {
            #expect(try roundTrip(strings, codec) == strings, "\(codec.formatName)")
        }
    }

    @Test("random documents survive every codec", .tags(.property))
    func randomDocumentsRoundTrip() async {
        let entry = zip(
            Gen.letterOrNumber.string(of: 1...3).array(of: 1...3), Gen.int(in: 0...4),
            Gen.int(in: -10_000_000...10_000_000), Gen.double(in: -1e6...1e6), Gen.letterOrNumber.string(of: 0...12))
        await propertyCheck(count: 200, input: entry.array(of: 0...24)) { entries in
            var document = JSONValue.object([:])
            for (path, kind, integer, number, text) in entries {
                let leaf: JSONValue =
                    switch kind {
                    case 0: .integer(integer)
                    case 1: number.rounded() == number ? .integer(Int(number)) : .double(number)
                    case 2: .string(text)
                    case 3: .bool(integer % 2 == 0)
                    default: .array([.integer(integer), .string(text)])
                    }
                try? document.set(leaf, at: ValuePath(path.map { .key($0) }))
            }
            for codec in Self.codecs {
                #expect((try? codec.parse(codec.serialize(document))) == document, "\(codec.formatName)")
            }
        }
    }

    @Test("a value whose encode(to:) catches an encoding error and goes on still writes a readable file")
    func caughtEncodingErrorsLeaveAReadableFile() throws {
        struct Forgiving: Codable, Sendable, Equatable {
            var name = "ok"
            var ratio = Double.nan
            enum CodingKeys: String, CodingKey { case name, ratio }
            init() {}
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                name = try container.decode(String.self, forKey: .name)
                ratio = (try? container.decode(Double.self, forKey: .ratio)) ?? .nan
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(name, forKey: .name)
                do { try container.encode(ratio, forKey: .ratio) } catch {}  // NaN is not JSON: skipped
            }
            static func == (a: Self, b: Self) -> Bool { a.name == b.name }
        }
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("forgiving.json")
        let root = try RootLens(default: Forgiving(), store: FileStore(path: path), watch: false)
        try root.name.set("written")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(
            try JSONSerialization.jsonObject(with: Data(text.utf8)) is [String: Any], "the file is valid JSON: \(text)")
        let reopened = try RootLens(default: Forgiving(), store: FileStore(path: path), watch: false)
        #expect(reopened.value.name == "written")
    }

    @Test("a value that cannot be encoded (NaN) is an error naming the store; nothing is written")
    func unencodableValuesChangeNothing() throws {
        struct Ratio: Codable, Sendable, Equatable { var ratio = 0.5 }
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("ratio.json")
        let root = try RootLens(default: Ratio(), store: FileStore(path: path), watch: false)
        try root.ratio.set(0.25)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect {
            try root.ratio.set(.nan)
        } throws: { error in
            guard let error = error as? SettingsError else { return false }
            return error.code == .unwritable && "\(error)".contains(path)
        }
        #expect(root.ratio.value == 0.25)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("date and key strategies apply to the file, both ways")
    func dateAndKeyStrategies() throws {
        struct Stamped: Codable, Sendable, Equatable {
            var lastRunAt = Date(timeIntervalSince1970: 1_800_000_000)
            var retryCount = 3
        }
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("stamped.json")
        let codec = JSONCodec(coding: DocumentCoding(dates: .iso8601, keys: .snakeCase))
        let root = try RootLens(default: Stamped(), store: FileStore(path: path, format: codec), watch: false)
        try root.retryCount.set(4)
        try root.lastRunAt.set(Date(timeIntervalSince1970: 1_900_000_000))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("\"last_run_at\" : \"2030-03-17T17:46:40Z\""), "\(text)")
        #expect(text.contains("\"retry_count\" : 4"), "\(text)")
        let reopened = try RootLens(default: Stamped(), store: FileStore(path: path, format: codec), watch: false)
        #expect(reopened.value == Stamped(lastRunAt: Date(timeIntervalSince1970: 1_900_000_000), retryCount: 4))
    }

    @Test("a syntax error names the file and what the parser said")
    func syntaxErrorsNameTheFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("broken.json")
        try Data("{\"a\": ".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try RootLens(default: Flat(), store: FileStore(path: path))
        } throws: { error in
            guard let error = error as? SettingsError else { return false }
            return error.code == .corrupt
                && "\(error)".hasPrefix("invalid data in JSON file \(path): it is not a valid JSON document")
        }
    }
}

extension Tag {
    @Tag static var property: Self
}
