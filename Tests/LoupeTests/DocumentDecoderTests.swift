import Foundation
@testable import Loupe
import PropertyBased
import Testing

/// The pipeline's own decoder reads what `JSONDecoder` reads from the same document, fails where it fails,
/// knows which keys the type read, and fills elements from their type's defaults.
@Suite("DocumentDecoder against JSONDecoder")
struct DocumentDecoderTests {
    typealias Sample = DocumentEncoderTests.Sample

    /// Generated values whose integers fit in `Int`: a document keeps a larger one as a `Double` today, so it
    /// is not exact (keeping every number's text is the hardening issue's).
    static let sample = DocumentEncoderTests.sample.map { sample in
        var sample = sample
        sample.uint = sample.uint % UInt(Int.max)
        sample.uint64 = sample.uint64 % UInt64(Int.max)
        sample.int128 = Int128(Int(truncatingIfNeeded: sample.int128))
        sample.uint128 = sample.uint128 % UInt128(Int.max)
        return sample
    }

    @Test("the same value as JSONDecoder, over generated values, in every date strategy", .tags(.property))
    func sameValueAsJSONDecoder() async {
        await propertyCheck(count: 150, input: Self.sample) { sample in
            for (name, coding) in DocumentEncoderTests.codings {
                let encoder = JSONEncoder()
                encoder.dateEncodingStrategy = coding.dateEncodingStrategy
                let bytes = try encoder.encode(sample)
                let decoder = JSONDecoder()
                decoder.dateDecodingStrategy = coding.dateDecodingStrategy
                let theirs = try decoder.decode(Sample.self, from: bytes)
                let ours = try coding.decode(Sample.self, from: JSONReader.document(from: Array(bytes)))
                #expect(ours == theirs, "\(name)")
            }
        }
    }

    struct Snake: Codable, Equatable {
        var firstName: String
        var retryCount: Int
        var byName: [String: Int]
        var nested: Inner
        struct Inner: Codable, Equatable { var innerValue: Bool }
    }

    @Test("snake-case keys convert a type's keys, never a dictionary's, as JSONDecoder does")
    func snakeCase() throws {
        let text =
            #"{"first_name": "a", "retry_count": 2, "by_name": {"some_key": 1, "other": 2}, "nested": {"inner_value": true}, "_private_": 1}"#
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let theirs = try decoder.decode(Snake.self, from: Data(text.utf8))
        let ours = try DocumentCoding(keys: .snakeCase).decode(Snake.self, from: JSONValue(parsing: text))
        #expect(ours == theirs)
        #expect(ours.byName == ["some_key": 1, "other": 2])
        for key in ["first_name", "_leading", "trailing__", "a__b", "already", "HTTP_status_code", "__"] {
            let converted = DocumentDecoder.camelCase(fromSnakeCase: key)
            struct Probe: Decodable {
                let key: String
                init(from decoder: any Decoder) throws {
                    key = try decoder.container(keyedBy: DocumentCodingKey.self).allKeys.first?.stringValue ?? ""
                }
            }
            let expected = try decoder.decode(Probe.self, from: Data(#"{"\#(key)": 1}"#.utf8)).key
            #expect(converted == expected, "\(key)")
        }
    }

    @Test("failures are the DecodingErrors JSONDecoder throws, with the same coding paths")
    func failures() throws {
        struct Shape: Codable { var list: [Inner]; struct Inner: Codable { var port: Int; var name: String } }
        let cases = [
            #"{"list": [{"port": 1, "name": "a"}, {"port": "x", "name": "b"}]}"#,
            #"{"list": [{"port": 1}]}"#,
            #"{"list": [{"port": null, "name": "a"}]}"#,
            #"{"list": [{"port": 1.5, "name": "a"}]}"#,
            #"{"list": {"port": 1}}"#,
            #"{"list": null}"#,
        ]
        func summary(_ error: any Error) -> String {
            switch error as? DecodingError {
            case .typeMismatch(_, let context): "typeMismatch \(ValuePath(codingPath: context.codingPath))"
            case .valueNotFound(_, let context): "valueNotFound \(ValuePath(codingPath: context.codingPath))"
            case .keyNotFound(let key, let context): "keyNotFound \(ValuePath(codingPath: context.codingPath + [key]))"
            case .dataCorrupted(let context): "dataCorrupted \(ValuePath(codingPath: context.codingPath))"
            default: "\(error)"
            }
        }
        for text in cases {
            var theirs = "", ours = ""
            do { _ = try JSONDecoder().decode(Shape.self, from: Data(text.utf8)) } catch { theirs = summary(error) }
            do { _ = try DocumentCoding().decode(Shape.self, from: JSONValue(parsing: text)) } catch {
                ours = summary(error)
            }
            // JSONDecoder names no path for a fraction where an integer belongs; this decoder names it.
            let same = ours == theirs || (theirs == "dataCorrupted <root>" && ours == "dataCorrupted list[0].port")
            #expect(!ours.isEmpty && same, "\(text): \(ours) vs \(theirs)")
        }
    }

    struct Known: Codable, Equatable {
        var name = "n"
        var inner = Inner()
        var list = [Inner()]
        var table: [String: Inner] = [:]
        struct Inner: Codable, Equatable { var value = 1 }
    }

    @Test("what the type did not read is found at its place, and nothing else")
    func unknownKeysAreFound() throws {
        let document = try JSONValue(
            parsing: """
                {"name": "n", "extra": [1], "inner": {"value": 2, "colour": "red"},
                 "list": [{"value": 1}, {"value": 2, "note": "x"}], "table": {"a": {"value": 3, "deep": {"k": 1}}}}
                """)
        let reads = ReadKeys()
        _ = try DocumentCoding().decode(Known.self, from: document, reads: reads)
        let unknown = try #require(UnknownKeys(in: document, reads: reads))
        // Put back into an empty patch for the same value, they rebuild exactly the unknown parts.
        var patch: JSONValue? = nil
        var kept = unknown
        let full = try DocumentCoding().encode(try DocumentCoding().decode(Known.self, from: document))
        #expect(kept.restore(into: &patch, full: full).isEmpty)
        #expect(
            patch
                == (try JSONValue(
                    parsing: """
                        {"extra": [1], "inner": {"colour": "red"}, "list": [{"value": 1}, {"value": 2, "note": "x"}],
                         "table": {"a": {"deep": {"k": 1}}}}
                        """)))
        // Everything read: nothing unknown.
        let plain = try DocumentCoding().encode(Known())
        let plainReads = ReadKeys()
        _ = try DocumentCoding().decode(Known.self, from: plain, reads: plainReads)
        #expect(UnknownKeys(in: plain, reads: plainReads) == nil)
        // An array that changed length drops its elements' unknown keys, and says where.
        var shorter = try DocumentCoding().decode(Known.self, from: document)
        shorter.list.removeLast()
        var again = unknown
        var shorterPatch: JSONValue? = nil
        #expect(again.restore(into: &shorterPatch, full: try DocumentCoding().encode(shorter)) == ["list[1]"])
        #expect(shorterPatch?[path: "list"] == nil && shorterPatch?[path: "inner.colour"] == .string("red"))
    }

    struct Upstream: Codable, Equatable, DefaultProviding {
        var url = "http://localhost"
        var timeoutSeconds = 30
        static var defaultValue: Upstream { Upstream() }
    }

    struct Routes: Codable, Equatable {
        var upstreams: [String: Upstream] = [:]
        var fallbacks: [Upstream] = []
    }

    @Test("elements take what they lack from their type's default; without one, the error names the element")
    func elementDefaults() throws {
        let routes = try DocumentCoding().decode(
            Routes.self,
            from: JSONValue(
                parsing: """
                    {"upstreams": {"eu": {"url": "https://eu.example"}}, "fallbacks": [{"timeoutSeconds": 5}]}
                    """))
        #expect(routes.upstreams["eu"] == Upstream(url: "https://eu.example", timeoutSeconds: 30))
        #expect(routes.fallbacks == [Upstream(url: "http://localhost", timeoutSeconds: 5)])
        #expect {
            _ = try DocumentCoding().decode(
                Known.self, from: JSONValue(parsing: #"{"name": "n", "inner": {}, "list": [], "table": {}}"#))
        } throws: { error in
            guard case .keyNotFound(let key, let context)? = error as? DecodingError else { return false }
            return ValuePath(codingPath: context.codingPath + [key]).description == "inner.value"
        }
    }

    @Test("RFC 7386's examples (appendix A), and patches that rebuild what they were made from")
    func mergePatch() throws {
        let vectors: [(String, String, String)] = [
            (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
            (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
            (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
            (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
            (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
            (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
            (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
            (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
            (#"["a","b"]"#, #"["c","d"]"#, #"["c","d"]"#),
            (#"{"a":"b"}"#, #"["c"]"#, #"["c"]"#),
            (#"{"a":"foo"}"#, "null", "null"),
            (#"{"a":"foo"}"#, #""bar""#, #""bar""#),
            (#"{"e":null}"#, #"{"a":1}"#, #"{"e":null,"a":1}"#),
            (#"[1,2]"#, #"{"a":"b","c":null}"#, #"{"a":"b"}"#),
            (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
        ]
        for (target, patch, result) in vectors {
            let merged = try JSONValue(parsing: target).merging(patch: JSONValue(parsing: patch))
            #expect(merged == (try JSONValue(parsing: result)), "\(target) + \(patch)")
        }
        let documents = try [
            #"{"a": 1, "b": {"c": [1, 2], "d": "x"}, "e": true}"#,
            #"{"a": 2, "b": {"c": [1], "f": {"g": 1}}}"#,
            #"{"b": 5}"#,
            #"{}"#,
        ].map(JSONValue.init(parsing:))
        for from in documents {
            for to in documents {
                #expect(from.merging(patch: from.mergePatch(to: to)) == to, "\(from) → \(to)")
            }
            #expect(from.mergePatch(to: from) == .object([:]))
        }
        // Numbers spelled differently (a person's `2.0`, the encoder's `2`) are the same value: no patch.
        let spelled = try JSONValue(parsing: #"{"a": 2.0, "b": {"c": 1.0, "d": 1}, "e": [1.0, 2]}"#)
        let encoded = try JSONValue(parsing: #"{"a": 2, "b": {"c": 1, "d": 1}, "e": [1, 2.0]}"#)
        #expect(spelled.mergePatch(to: encoded) == .object([:]))
        #expect(
            spelled.mergePatch(to: try JSONValue(parsing: #"{"a": 2.5, "b": {"c": 1, "d": 1}, "e": [1, 2]}"#))
                == (try JSONValue(parsing: #"{"a": 2.5}"#)))
    }

    @Test("migration helpers take a sparse document as it comes")
    func migrationHelpers() throws {
        var document = try JSONValue(parsing: #"{"ticker": {"interval": 5}, "legacy": true}"#)
        try document.move(from: "ticker.interval", to: "ticker.intervalSeconds")
        try document.move(from: "absent", to: "elsewhere")
        document.removeValue(at: "legacy")
        #expect(document.removeValue(at: "legacy") == nil)
        try document.transform("ticker.intervalSeconds") { .integer(($0.integerValue ?? 0) * 1000) }
        try document.transform("absent") { _ in .null }
        try document.setValue(.string("eu"), at: "region.name", ifAbsent: true)
        try document.setValue(.string("us"), at: "region.name", ifAbsent: true)
        document[path: "greeting"] = .string("hi")
        #expect(
            document
                == (try JSONValue(
                    parsing: #"{"ticker": {"intervalSeconds": 5000}, "region": {"name": "eu"}, "greeting": "hi"}"#)))
    }

    @Test("a property list writes RFC 7386's null as $null, and strings that look like it escaped")
    func propertyListNull() throws {
        let document: JSONValue = .object([
            "gone": .null, "text": .string("$null"), "more": .string("$$null"), "plain": .string("null"),
        ])
        let codec = PropertyListCodec()
        let bytes = try codec.serialize(document)
        #expect(String(decoding: bytes, as: UTF8.self).contains("<string>$null</string>"))
        #expect(try codec.parse(bytes) == document)
    }
}
