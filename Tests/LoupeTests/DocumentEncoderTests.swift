import Foundation
@testable import Loupe
import PropertyBased
import Testing

/// The pipeline's own encoder builds the same document as `JSONEncoder` (read back by the pipeline) for
/// every shape of value, reuses only what has not changed, and never builds a document from an encode
/// that threw. Serialized: two of its tests count the encodes of ``Counted`` in one counter.
@Suite("DocumentEncoder against JSONEncoder", .serialized)
struct DocumentEncoderTests {
    struct Element: Codable, Equatable, Sendable {
        var id: Int
        var name: String
        var weight: Double
        var tags: [String]
    }

    enum Mode: Codable, Equatable, Sendable {
        case off
        case fixed(rate: Int, label: String)
        case pair(Int, Double)
    }

    /// Every kind of value `Codable` types commonly hold.
    struct Sample: Codable, Equatable, Sendable {
        var int: Int
        var int8: Int8
        var uint: UInt
        var uint64: UInt64
        var int128: Int128
        var uint128: UInt128
        var double: Double
        var float: Float
        var text: String
        var flag: Bool
        var optional: Int?
        var absent: String?
        var date: Date
        var data: Data
        var url: URL
        var decimal: Decimal
        var list: [Element]
        var table: [String: Element]
        var byNumber: [Int: String]
        var matrix: [[Double]]
        var set: Set<String>
        var mode: Mode
        var optionals: [Int?]
    }

    static let codings: [(String, DocumentCoding)] = [
        ("deferredToDate", DocumentCoding()),
        ("secondsSince1970", DocumentCoding(dates: .secondsSince1970)),
        ("millisecondsSince1970", DocumentCoding(dates: .millisecondsSince1970)),
        ("iso8601", DocumentCoding(dates: .iso8601)),
    ]

    /// Doubles of every magnitude: whole, fractional, huge, tiny, negative zero.
    static func double(_ kind: Int, _ seed: Double) -> Double {
        switch kind % 6 {
        case 0: seed.rounded()
        case 1: seed
        case 2: seed * 1e290
        case 3: seed * 1e-300
        case 4: -0.0
        default: seed / 3
        }
    }

    static let sample = zip(
        Gen.int(in: .min ... .max), Gen.uint64(in: .min ... .max), Gen.int128(in: .min ... .max),
        Gen.uint128(in: .min ... .max), Gen.int(in: 0...5), Gen.double(in: -1e6...1e6),
        Gen.float(in: -1e6...1e6), Gen.latin1.string(of: 0...12), Gen.int(in: 0...80), Gen.int(in: 0...3)
    ).map { int, uint64, int128, uint128, kind, seed, float, text, count, mode in
        let elements = (0..<count).map {
            Element(id: $0 &* int, name: "\(text)-\($0)", weight: double(kind &+ $0, seed), tags: [text])
        }
        return Sample(
            int: int, int8: Int8(truncatingIfNeeded: int), uint: UInt(uint64), uint64: uint64, int128: int128,
            uint128: uint128, double: double(kind, seed), float: float, text: text, flag: count % 2 == 0,
            optional: count % 3 == 0 ? nil : int, absent: nil,
            date: Date(timeIntervalSince1970: seed * 1000), data: Data(text.utf8),
            url: URL(string: "https://example.org/\(count)?q=\(kind)")!,
            decimal: Decimal(string: "\(Int64(seed * 100))")! / 100,
            list: elements, table: Dictionary(uniqueKeysWithValues: elements.map { ("key \($0.id) \($0.name)", $0) }),
            byNumber: Dictionary(uniqueKeysWithValues: (0..<count).map { ($0 - 40, "\($0)") }),
            matrix: [[seed, double(kind, seed)], [], (0..<count).map { Double($0) / 7 }],
            set: Set((0..<count).map { "\(text)\($0)" }),
            mode: [Mode.off, .fixed(rate: int, label: text), .pair(count, seed), .off][mode],
            optionals: (0..<count).map { $0 % 2 == 0 ? $0 : nil })
    }

    @Test("the same document as JSONEncoder read back, over generated values, in every date strategy", .tags(.property))
    func sameDocumentAsJSONEncoder() async {
        await propertyCheck(count: 150, input: Self.sample) { sample in
            for (name, coding) in Self.codings {
                let ours = try #require(try DocumentEncoder.encode(sample, coding: coding, memo: nil), "\(name)")
                let theirs = try coding.encodeWithJSONEncoder(sample)
                #expect(ours == theirs, "\(name)")
                #expect(try coding.decode(Sample.self, from: ours) == sample, "\(name)")
            }
        }
    }

    @Test("the same document as JSONEncoder for superEncoder, nested containers and top-level scalars")
    func sameDocumentForUnusualConformances() throws {
        struct Unusual: Encodable {
            enum Keys: String, CodingKey { case a, b, c }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(1, forKey: .a)
                var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .b)
                try nested.encode("x", forKey: .c)
                var list = container.nestedUnkeyedContainer(forKey: .c)
                try list.encode(true)
                var inner = list.nestedContainer(keyedBy: Keys.self)
                try inner.encodeNil(forKey: .a)
                var deeper = list.nestedUnkeyedContainer()
                try deeper.encode(2.5)
                var inArray = list.superEncoder().singleValueContainer()
                try inArray.encode("in an array")
                var parent = container.superEncoder().container(keyedBy: Keys.self)
                try parent.encode(3, forKey: .a)
                var named = container.superEncoder(forKey: .a).unkeyedContainer()
                try named.encode(4)
            }
        }
        let coding = DocumentCoding()
        #expect(
            try DocumentEncoder.encode(Unusual(), coding: coding, memo: nil) == coding.encodeWithJSONEncoder(Unusual()))
        for value in [JSONValue.integer(3), .string("text"), .double(2.5), .bool(true), .null] {
            #expect(try DocumentEncoder.encode(value, coding: coding, memo: nil) == coding.encodeWithJSONEncoder(value))
        }
        #expect(
            try DocumentEncoder.encode(Date(timeIntervalSince1970: 0), coding: coding, memo: nil)
                == coding.encodeWithJSONEncoder(Date(timeIntervalSince1970: 0)))
    }

    /// Counts how often elements are encoded.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func increment() { lock.withLock { value += 1 } }
        func take() -> Int {
            lock.withLock {
                defer { value = 0 }; return value
            }
        }
    }

    static let encodes = Counter()

    struct Counted: Codable, Equatable, Sendable {
        var value: Int
        init(value: Int) { self.value = value }
        init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Int.self) }
        func encode(to encoder: any Encoder) throws {
            DocumentEncoderTests.encodes.increment()
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    struct Graph: Codable, Equatable, Sendable {
        var counter = 0
        var items = (0..<100).map(Counted.init(value:))
        var small = (0..<3).map(Counted.init(value:))
    }

    @Test(
        "a part that has not changed is not encoded again; in a collection that changed, only the elements that did are"
    )
    func unchangedPartsAreReused() throws {
        let memo = DocumentEncoder.Memo()
        let coding = DocumentCoding()
        var graph = Graph()
        _ = Self.encodes.take()
        _ = try #require(try DocumentEncoder.encode(graph, coding: coding, memo: memo))
        #expect(Self.encodes.take() == 103)

        graph.counter += 1
        let second = try #require(try DocumentEncoder.encode(graph, coding: coding, memo: memo))
        #expect(Self.encodes.take() == 0, "neither array changed: both are reused, large or small")
        #expect(second == (try coding.encodeWithJSONEncoder(graph)))
        _ = Self.encodes.take()  // JSONEncoder's

        graph.items[57].value = -1
        let third = try #require(try DocumentEncoder.encode(graph, coding: coding, memo: memo))
        #expect(Self.encodes.take() == 1, "only the element that changed")
        #expect(third == (try coding.encodeWithJSONEncoder(graph)))
        _ = Self.encodes.take()  // JSONEncoder's

        // In new storage: a large collection with equal contents is compared with `==` and reused; a small
        // one is walked, and only its element that changed is encoded again.
        graph.items = (0..<100).map(Counted.init(value:))
        graph.items[57].value = -1
        graph.small = [0, 1, 7].map(Counted.init(value:))
        let fourth = try #require(try DocumentEncoder.encode(graph, coding: coding, memo: memo))
        #expect(Self.encodes.take() == 1)
        #expect(fourth == (try coding.encodeWithJSONEncoder(graph)))
    }

    /// A ``Counted`` that is not `Equatable`: only its bytes tell that it is unchanged.
    struct Uncompared: Codable, Sendable {
        var counted: Counted
        init(value: Int) { counted = Counted(value: value) }
        init(from decoder: any Decoder) throws { counted = try Counted(from: decoder) }
        func encode(to encoder: any Encoder) throws { try counted.encode(to: encoder) }
    }

    struct Groups: Codable, Sendable {
        var compared = Dictionary(uniqueKeysWithValues: (0..<100).map { ("group \($0)", Counted(value: $0)) })
        var uncompared = Dictionary(uniqueKeysWithValues: (0..<100).map { ("group \($0)", Uncompared(value: $0)) })
        var few = ["a": Counted(value: 1)]
    }

    @Test("in a dictionary that changed, only the members that changed, came or went are encoded again")
    func changedDictionariesEncodeOnlyTheirChangedMembers() throws {
        let memo = DocumentEncoder.Memo()
        let coding = DocumentCoding()
        var groups = Groups()
        _ = Self.encodes.take()
        _ = try #require(try DocumentEncoder.encode(groups, coding: coding, memo: memo))
        #expect(Self.encodes.take() == 201)

        groups.compared["group 7"]?.value = -7
        groups.uncompared["group 8"]?.counted.value = -8
        groups.few["b"] = Counted(value: 2)
        let second = try #require(try DocumentEncoder.encode(groups, coding: coding, memo: memo))
        #expect(Self.encodes.take() == 3, "each dictionary's one changed or added member")
        #expect(second == (try coding.encodeWithJSONEncoder(groups)))
        _ = Self.encodes.take()  // JSONEncoder's

        // In new storage: a member equal to the one before is found unchanged, by `==` or by its bytes.
        groups.compared = Dictionary(uniqueKeysWithValues: (0..<100).map { ("group \($0)", Counted(value: $0)) })
        groups.compared["group 50"] = nil
        groups.compared["new"] = Counted(value: 1000)
        groups.uncompared["group 9"] = nil
        let third = try #require(try DocumentEncoder.encode(groups, coding: coding, memo: memo))
        #expect(Self.encodes.take() == 2, "group 7, changed back, and the new member")
        #expect(third == (try coding.encodeWithJSONEncoder(groups)))
    }

    @Test(
        "a dictionary changed in place is walked beside the last one's members: only those that changed are encoded, through growing and shrinking"
    )
    func dictionariesChangedInPlace() throws {
        let memo = DocumentEncoder.Memo()
        let coding = DocumentCoding()
        var groups = Groups()
        func encode(_ expected: Int, _ comment: Comment) throws {
            _ = Self.encodes.take()
            let document = try #require(try DocumentEncoder.encode(groups, coding: coding, memo: memo))
            #expect(Self.encodes.take() == expected, comment)
            #expect(document == (try coding.encodeWithJSONEncoder(groups)), comment)
        }
        try encode(201, "the first encode: every member")
        groups.compared["group 1"]?.value = -1
        try encode(1, "compared key by key")
        for round in 0..<5 {
            groups.compared["group \(round * 7)"]?.value = -100 - round
            groups.uncompared["group \(round * 9)"]?.counted.value = -100 - round
            groups.compared["group 1"] = Counted(value: -1)  // the same bytes, set again
            try encode(2, "round \(round): the member of each dictionary that changed")
        }
        // Grown (new storage, in a new order), then changed in place, then shrunk.
        for index in 100..<300 { groups.compared["group \(index)"] = Counted(value: index) }
        try encode(200, "the members that came")
        groups.compared["group 150"]?.value = 0
        groups.compared["group 2"]?.value = 0
        try encode(2, "grown: the two that changed")
        groups.compared["group 3"] = nil
        groups.uncompared["group 3"] = nil
        try encode(0, "one gone from each")
        groups.compared["group 4"]?.value = 44
        groups.uncompared["group 4"]?.counted.value = 44
        try encode(2, "shrunk: the two that changed")
        groups.compared["group 5"]?.value = 55
        try encode(1, "in step again: the one that changed")
    }

    /// A graph of nested structs, enums, arrays and dictionaries, for edits.
    struct Nested: Codable, Equatable, Sendable {
        struct Server: Codable, Equatable, Sendable {
            var host = "localhost"
            var port = 8080
            var mode = Mode.off
        }
        var counter = 0
        var server = Server()
        var servers = (0..<40).map { Server(host: "host-\($0)", port: $0, mode: .off) }
        var table = Dictionary(
            uniqueKeysWithValues: (0..<20).map { ("key \($0)", Server(host: "\($0)", port: $0, mode: .pair($0, 0.5))) })
        var few = Dictionary(uniqueKeysWithValues: (0..<3).map { ("key \($0)", Server(host: "\($0)", port: $0)) })
        var tags: [String] = ["a", "b"]
        var maybe: Server? = nil
        var names = Dictionary(uniqueKeysWithValues: (0..<30).map { ("name \($0)", "\($0)") })
    }

    @Test("the encoder's memo encodes exactly what a fresh encode does, through a series of edits", .tags(.property))
    func encoderMemoMatchesAFreshEncode() async {
        let edit = zip(Gen.int(in: 0...8), Gen.int(in: 0...39), Gen.int(in: -1000...1000))
        await propertyCheck(count: 50, input: edit.array(of: 1...12)) { edits in
            let memo = DocumentEncoder.Memo()
            let coding = DocumentCoding()
            var graph = Nested()
            for (kind, index, number) in edits {
                switch kind {
                case 0: graph.counter = number
                case 1: graph.server.port = number
                case 2: graph.servers[index].mode = .fixed(rate: number, label: "rate \(number)")
                case 3:
                    graph.table["key \(index % 25)"] = Nested.Server(host: "\(number)", port: index, mode: .off)
                    graph.few["key \(index % 5)"] = number % 3 == 0 ? nil : Nested.Server(port: number)
                case 4: graph.tags.append("\(number)")
                case 5: graph.maybe = number % 2 == 0 ? nil : Nested.Server(host: "maybe", port: number)
                case 6:
                    graph.servers.remove(at: index % graph.servers.count);
                    graph.servers.append(Nested.Server(port: number))
                case 7: graph.names["name \(index % 35)"] = number % 3 == 0 ? nil : "\(number)"
                default: break  // the same value again
                }
                let (remembered, last) = try #require(
                    try DocumentEncoder.encodeNotingLast(graph, coding: coding, memo: memo))
                #expect(try remembered == coding.encodeWithJSONEncoder(graph))
                // The document shares the last one's storage exactly when it is the same (what the core's
                // commit takes for no change of the document).
                if let last {
                    #expect(
                        remembered.isShared(with: last) == (remembered.jsonText() == last.jsonText()), "edit \(kind)")
                }
            }
        }
    }

    @Test("a file store writes every change to a large collection, through the memo")
    func fileStoreWritesChangedCollections() throws {
        let directory = NSTemporaryDirectory() + "loupe-encoder-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/graph.json"
        struct Large: Codable, Equatable, Sendable {
            var counter = 0
            var items = (0..<100).map { Element(id: $0, name: "\($0)", weight: 0.5, tags: []) }
        }
        let root = try RootLens(default: Large(), store: FileStore(path: path), watch: false)
        for round in 1...5 {
            try root.counter.set(round)
            try root.items.update { $0[round].weight = Double(round) }
        }
        let reread = try RootLens(default: Large(), store: FileStore(path: path), watch: false)
        #expect(reread.value == root.value)
        #expect(reread.items.value[5].weight == 5)
    }

    @Test("an encode that threw, even where the conformance caught it, is left to JSONEncoder")
    func caughtErrorsFallBack() throws {
        struct Forgiving: Encodable {
            var ratio = Double.nan
            var items = Array(0..<50)
            enum CodingKeys: CodingKey { case ratio, items }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                do { try container.encode(ratio, forKey: .ratio) } catch {}
                try container.encode(items, forKey: .items)
            }
        }
        let memo = DocumentEncoder.Memo()
        #expect(try DocumentEncoder.encode(Forgiving(), coding: DocumentCoding(), memo: memo) == nil)
        let document = try DocumentCoding().encode(Forgiving())
        #expect(document == .object(["items": .array((0..<50).map(JSONValue.integer))]))
    }

    @Test("key strategies other than the default are left to JSONEncoder")
    func unsupportedStrategiesFallBack() throws {
        struct Named: Codable, Equatable { var serverPort = 80 }
        let coding = DocumentCoding(keys: .snakeCase)
        #expect(try DocumentEncoder.encode(Named(), coding: coding, memo: nil) == nil)
        #expect(try coding.encode(Named()) == .object(["server_port": .integer(80)]))
    }

    @Test(
        "a Double encodes as the pipeline reads its text back: fractions, whole numbers, subnormals, the largest and smallest",
        .tags(.property))
    func doublesEncodeAsTheirTextReads() async throws {
        func expectReadBack(_ value: Double) throws {
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            let read = try JSONReader.document(from: Array(text.utf8))
            #expect(try DocumentCoding().encode(value) == read, "\(value)")
            #expect(try DocumentCoding().encode(["v": value]) == .object(["v": read]), "\(value)")
        }
        let edges: [Double] = [
            0.5, -0.5, 0.1, 1 / 3, 12.375, 1e-5, 2.5e-308, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
            .leastNormalMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 0, -0.0, 1, -1, 1e15, 1e16,
            9_007_199_254_740_992, 9_007_199_254_740_993.5, 4_503_599_627_370_495.5, .pi, -.ulpOfOne, 1 + .ulpOfOne,
        ]
        for value in edges { try expectReadBack(value) }
        // Any bit pattern that is a finite Double.
        await propertyCheck(count: 2_000, input: Gen.uint64(in: .min ... .max)) { bits in
            let value = Double(bitPattern: bits)
            guard value.isFinite else { return }
            try expectReadBack(value)
        }
    }

    @Test("a conformance that misuses its encoder is an error naming the path, not a crash")
    func misuseIsAnError() throws {
        struct Misuse: Encodable {
            func encode(to encoder: any Encoder) throws {
                var single = encoder.singleValueContainer()
                try single.encode(1)
                var keyed = encoder.container(keyedBy: DocumentCodingKey.self)
                try keyed.encode(2, forKey: DocumentCodingKey("b"))
            }
        }
        struct Holder: Encodable { var inner = Misuse() }
        #expect {
            _ = try DocumentCoding().encode(Holder())
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["inner"]
        }
    }
}
