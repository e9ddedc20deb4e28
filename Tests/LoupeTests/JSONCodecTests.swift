import Foundation
@testable import Loupe
import Testing

/// Loupe writes JSON with its own streaming encoder; these tests hold it to Foundation's `JSONEncoder`,
/// byte for byte, over every shape of value the `Codable` API can produce.
@Suite("JSON: Loupe's encoder writes what JSONEncoder writes")
struct JSONCodecTests {
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
        var doubles: [Double] = [0, -0.0, 1, -1, 0.1, 1e-7, 1e14, 1e15, 1e16, 1e20, 123_456_789_012_345,
                                 Double(Int64(9_007_199_254_740_993)), .pi, -.pi, .greatestFiniteMagnitude,
                                 .leastNonzeroMagnitude, 100, 1_000_000, 4_503_599_627_370_496.5]
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

    // MARK: Comparing

    func expectSameAsFoundation<T: Encodable>(_ value: T, streamed: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for pretty in [true, false] {
            let foundation = JSONEncoder()
            foundation.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys]
            let expected = try foundation.encode(value)
            let ours = try JSONStreamEncoder.encode(value, pretty: pretty)
            if streamed {
                let ours = try #require(ours, "the streaming encoder gave \(T.self) to JSONEncoder", sourceLocation: sourceLocation)
                #expect(String(decoding: ours, as: UTF8.self) == String(decoding: expected, as: UTF8.self), sourceLocation: sourceLocation)
            } else {
                #expect(ours == nil, "expected \(T.self) to be left to JSONEncoder", sourceLocation: sourceLocation)
            }
            // Through the codec, whichever encoder it takes.
            var codecExpected = expected
            if pretty { codecExpected.append(0x0A) }
            #expect(try JSONCodec(prettyPrinted: pretty).encode(value) == codecExpected, sourceLocation: sourceLocation)
        }
    }

    // MARK: Tests

    @Test("structs, nested structs, collections, optionals and empty containers")
    func structures() throws {
        try expectSameAsFoundation(Flat())
        try expectSameAsFoundation(Nested())
        try expectSameAsFoundation(Empty())
        try expectSameAsFoundation([Nested(), Nested()])
        try expectSameAsFoundation(["x": Nested()])
        try expectSameAsFoundation([[String: [Int]]]([["a": []], [:]]))
    }

    @Test("scalars: every integer width, floats, Date, Data, URL, Decimal, UUID, raw-value enums")
    func scalars() throws {
        try expectSameAsFoundation(Scalars())
        for double in Scalars().doubles { try expectSameAsFoundation(["value": double]) }
        for float in Scalars().floats { try expectSameAsFoundation(["value": float]) }
    }

    @Test("integral doubles across the range where description switches to exponent form")
    func integralDoubles() throws {
        var values: [Double] = []
        var power = 1.0
        for _ in 0..<25 {
            values += [power, power - 1, power + 1, -power, power * 3]
            power *= 10
        }
        try expectSameAsFoundation(values)
    }

    @Test("strings: quotes, backslashes, control characters, Unicode, slashes (escaped only in compact output)")
    func strings() throws {
        try expectSameAsFoundation(Strings())
        try expectSameAsFoundation(["a/b": "c/d"])
    }

    @Test("keys sort by their UTF-8 bytes, also where escaping would change the order")
    func keyOrder() throws {
        try expectSameAsFoundation(Self.awkwardKeys)
        try expectSameAsFoundation(Dictionary(uniqueKeysWithValues: (0..<200).map { ("key-\($0 * 7919 % 1000)", $0) }))
    }

    @Test("enums with associated values (nested containers), at the top level and inside others")
    func enumsWithAssociatedValues() throws {
        let modes: [Mode] = [.off, .fixed(rate: 3, label: "x"), .pair(1, 0.5), .nested(Nested()), .nested(nil)]
        try expectSameAsFoundation(modes)
        for mode in modes { try expectSameAsFoundation(mode) }
        try expectSameAsFoundation(["mode": Mode.fixed(rate: 1, label: "y")])
    }

    @Test("top-level scalars and optionals")
    func topLevel() throws {
        try expectSameAsFoundation(3)
        try expectSameAsFoundation("text")
        try expectSameAsFoundation(true)
        try expectSameAsFoundation(2.5)
        try expectSameAsFoundation(Int?.none)
        try expectSameAsFoundation(Data([1, 2, 3]))
        try expectSameAsFoundation(Date(timeIntervalSinceReferenceDate: 0))
    }

    /// Hand-written conformances using the container API in unusual but valid ways.
    struct Handwritten: Encodable {
        enum Keys: String, CodingKey { case b, a, list, inner, extra }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try container.encode(1, forKey: .b)            // the parent written to while a nested container is open
            var inner = container.nestedContainer(keyedBy: Keys.self, forKey: .inner)
            try inner.encode("x", forKey: .b)
            var again = encoder.container(keyedBy: Keys.self)  // the same container, asked for again
            try again.encode(2, forKey: .a)
            try list.encode(3)                             // a nested container written to after it was closed
        }
    }

    struct NestedInArrays: Encodable {
        func encode(to encoder: any Encoder) throws {
            var list = encoder.unkeyedContainer()
            var first = list.nestedUnkeyedContainer()
            try first.encode(1)
            try first.encode(2)
            var second = list.nestedContainer(keyedBy: Handwritten.Keys.self)
            try second.encode(true, forKey: .b)
            try second.encodeNil(forKey: .a)
            try list.encode("last")
            var single = list.nestedUnkeyedContainer()
            try single.encode(Flat())
        }
    }

    struct DuplicateKey: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Handwritten.Keys.self)
            try container.encode(1, forKey: .a)
            try container.encode(2, forKey: .a)
        }
    }

    class Base: Encodable {
        var base = 1
    }

    final class Derived: Base {
        var derived = 2
        enum Keys: CodingKey { case derived }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(derived, forKey: .derived)
            try super.encode(to: container.superEncoder())
        }
    }

    struct WritesNothing: Encodable {
        func encode(to encoder: any Encoder) throws {}
    }

    @Test("nested containers, written in any order, and containers asked for twice")
    func handwrittenConformances() throws {
        try expectSameAsFoundation(NestedInArrays())
        try expectSameAsFoundation(["wrapped": NestedInArrays()])
        // Writing to a nested container after its parent moved on is left to JSONEncoder, with the same result.
        try expectSameAsFoundation(Handwritten(), streamed: false)
    }

    @Test("a key encoded twice and super encoders are left to JSONEncoder, with the same result")
    func leftToFoundation() throws {
        try expectSameAsFoundation(DuplicateKey(), streamed: false)
        try expectSameAsFoundation(Derived(), streamed: false)
        try expectSameAsFoundation(["a": Derived()], streamed: false)
    }

    @Test("a value that writes nothing is {} inside another, and an error at the top level")
    func valuesThatWriteNothing() throws {
        try expectSameAsFoundation(["a": WritesNothing()])
        #expect(throws: EncodingError.self) { try JSONStreamEncoder.encode(WritesNothing(), pretty: true) }
        #expect(throws: EncodingError.self) { try JSONCodec().encode(WritesNothing()) }
    }

    @Test("NaN and infinity are errors that name where they are")
    func nonFiniteNumbers() throws {
        struct Holder: Encodable { var inner: [String: [Double]] }
        let error = try #require(throws: EncodingError.self) {
            try JSONCodec().encode(Holder(inner: ["weights": [1, .nan]]))
        }
        guard case .invalidValue(_, let context) = error else { Issue.record("\(error)"); return }
        #expect(context.codingPath.map(\.stringValue) == ["inner", "weights", "Index 1"])
        #expect(context.debugDescription.contains("Double.nan"))
        #expect(throws: EncodingError.self) { try JSONCodec().encode(["x": Float.infinity]) }
    }

    @Test("a large graph, and one with every shape at once, round-trip through JSONDecoder")
    func largeGraph() throws {
        struct Entry: Codable, Equatable {
            var id: Int, name: String, enabled: Bool, weight: Double, tags: [String], mode: Mode?
        }
        let entries = (0..<2_000).map {
            Entry(id: $0, name: "entry \"\($0)\"", enabled: $0 % 3 == 0, weight: Double($0) / 7, tags: ["t\($0 % 5)"],
                  mode: $0 % 4 == 0 ? .fixed(rate: $0, label: "l") : nil)
        }
        try expectSameAsFoundation(entries)
        let decoded = try JSONDecoder().decode([Entry].self, from: JSONCodec().encode(entries))
        #expect(decoded == entries)
    }

    @Test("the memo reuses unchanged collections and never serves a changed one")
    func memo() throws {
        struct Graph: Codable, Equatable {
            var counter = 0
            var items = (0..<500).map { "item \($0)" }
            var table = Dictionary(uniqueKeysWithValues: (0..<500).map { ("k\($0)", $0) })
            var nested = [[Int]](repeating: Array(0..<40), count: 40)
        }
        let memo = JSONEncodingMemo()
        let codec = JSONCodec()
        var graph = Graph()
        func check(_ note: Comment) throws {
            #expect(try codec.encode(graph, memo: memo) == codec.encode(graph), note)
        }
        try check("first encode")
        graph.counter += 1
        try check("a leaf beside the collections changed")
        graph.items[250] = "changed"
        try check("an element of the array changed")
        graph.table["k3"] = -3
        try check("a dictionary entry changed")
        graph.nested[7][7] = -7
        try check("an element of a nested array changed")
        graph.items.removeLast()
        graph.items.append("item 499")
        try check("the array rebuilt with equal contents")
        let copy = graph
        graph.table = copy.table
        try check("the same storage again")
        #expect(try JSONCodec(prettyPrinted: false).encode(graph, memo: JSONEncodingMemo()) == JSONCodec(prettyPrinted: false).encode(graph))
    }
}
