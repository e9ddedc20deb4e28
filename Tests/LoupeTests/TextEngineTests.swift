@testable import Loupe
import Foundation
import LoupeTestSupport
import Testing

/// The shared text-editing engine: the edit model worked out from two documents, splices made in one pass,
/// and what the engine does for every format (the byte-order mark, line endings).
@Suite("The text-editing engine")
struct TextEngineTests {
    /// `splices` made one by one, from the last in the text to the first.
    static func replacedOneByOne(_ text: [UInt8], _ splices: [TextSplice]) -> [UInt8] {
        var output = text
        for splice in splices.reversed() { output.replaceSubrange(splice.range, with: splice.replacement) }
        return output
    }

    @Test("splices: replacements, removals and insertions, an insertion where a replacement starts, at both ends")
    func splicesAsReplacedOneByOne() throws {
        let text = Array("alpha = 1\nbeta = 22\ngamma = 333\n".utf8)
        let cases: [[TextSplice]] = [
            [],
            [TextSplice(8..<9, "7")],
            [TextSplice(8..<9, "1_000"), .remove(17..<19)],
            [.insert(Array("# head\n".utf8), at: 0), .remove(10..<20), .insert(Array("delta = 4\n".utf8), at: 31)],
            [.insert(Array("new = 0\n".utf8), at: 10), TextSplice(10..<20, "beta = 23\n")],
            [TextSplice(0..<31, "all = 0\n")],
        ]
        for splices in cases {
            #expect(try text.applying(splices) == Self.replacedOneByOne(text, splices), "\(splices.map(\.range))")
            // The order they come in does not matter.
            #expect(try text.applying(splices.reversed()) == Self.replacedOneByOne(text, splices))
        }
        #expect(
            String(decoding: try text.applying(cases[4]), as: UTF8.self)
                == "alpha = 1\nnew = 0\nbeta = 23\ngamma = 333\n")
    }

    @Test("two splices that overlap are refused, never made")
    func overlappingSplicesAreRefused() {
        let text = Array("alpha = 1\n".utf8)
        #expect(throws: TextEditRefusal.self) { try text.applying([TextSplice(0..<5, "a"), TextSplice(3..<7, "b")]) }
        #expect(throws: TextEditRefusal.self) { try text.applying([TextSplice(8..<20, "a")]) }
    }

    @Test("the edits between two documents: members by key, in the old document's paths")
    func membersByKey() throws {
        let old = try JSONValue(parsing: #"{"a": 1, "b": {"c": true, "d": "x"}, "gone": null}"#)
        let new = try JSONValue(parsing: #"{"a": 1, "b": {"c": false, "d": "x", "e": [1]}, "z": 2, "y": 3}"#)
        let edits = DocumentEdit.changes(from: old, to: new)
        #expect(
            Set(edits.map { "\($0)" })
                == Set(
                    [
                        DocumentEdit.replace(at: [.key("b"), .key("c")], with: .bool(false)),
                        .addMember(in: [.key("b")], key: "e", value: .array([.integer(1)])),
                        .removeMember(in: [], key: "gone"),
                        .addMember(in: [], key: "y", value: .integer(3)),
                        .addMember(in: [], key: "z", value: .integer(2)),
                    ].map { "\($0)" }))
        // New members of one object come in the order of their keys.
        let added = edits.compactMap { edit -> String? in if case .addMember([], let key, _) = edit { key } else { nil }
        }
        #expect(added == ["y", "z"])
        #expect(DocumentEdit.changes(from: old, to: old).isEmpty)
    }

    @Test("the edits between two objects are the same whether their members line up in one order or not")
    func membersInEitherOrder() {
        var members: [String: JSONValue] = [:]
        for index in 0..<1_000 { members["key-\(index)"] = .integer(index) }
        var changed = members  // a copy changed in place: its keys stay in the old order
        changed["key-500"] = .integer(-1)
        let rebuilt = Dictionary(uniqueKeysWithValues: changed.sorted { $0.key < $1.key })
        let replaced: [DocumentEdit] = [.replace(at: [.key("key-500")], with: .integer(-1))]
        #expect(DocumentEdit.changes(from: .object(members), to: .object(changed)) == replaced)
        #expect(DocumentEdit.changes(from: .object(members), to: .object(rebuilt)) == replaced)
        // As many members, not the same keys: one goes and one comes, wherever the walk side by side stops.
        for gone in ["key-0", "key-500", "key-999"] {
            var swapped = members
            swapped[gone] = nil
            swapped["key-new"] = .integer(7)
            #expect(
                DocumentEdit.changes(from: .object(members), to: .object(swapped)) == [
                    .removeMember(in: [], key: gone), .addMember(in: [], key: "key-new", value: .integer(7)),
                ])
        }
    }

    @Test("the edits between two arrays: the element that goes, and no other")
    func elementsByPosition() {
        let old = JSONValue.array((0..<11).map { .string("rule-\($0)") })
        guard case .array(var elements) = old else { return }
        elements.remove(at: 3)
        #expect(DocumentEdit.changes(from: old, to: .array(elements)) == [.removeElement(in: [], index: 3)])
        elements.insert(.string("new"), at: 5)
        elements.insert(.string("newer"), at: 6)
        #expect(
            DocumentEdit.changes(from: old, to: .array(elements)) == [
                .removeElement(in: [], index: 3),
                .addElement(in: [], before: 6, value: .string("new")),
                .addElement(in: [], before: 6, value: .string("newer")),
            ])
        // Same length: element by element, walked into where both are objects.
        let tasks = JSONValue.array([
            .object(["name": .string("a"), "become": .bool(true)]), .object(["name": .string("b")]),
        ])
        let changed = JSONValue.array([
            .object(["name": .string("a"), "become": .bool(false)]), .object(["name": .string("b")]),
        ])
        #expect(
            DocumentEdit.changes(from: tasks, to: changed) == [
                .replace(at: [.index(0), .key("become")], with: .bool(false))
            ])
        // An element removed where another is inserted is that element changed.
        let grown = JSONValue.array([
            .object(["name": .string("a"), "become": .bool(false)]), .object(["name": .string("b")]), .null,
        ])
        #expect(
            DocumentEdit.changes(from: tasks, to: grown) == [
                .replace(at: [.index(0), .key("become")], with: .bool(false)),
                .addElement(in: [], before: 2, value: .null),
            ])
    }

    @Test("values compare as readers see them: 1 and 1.0, spellings of one exact number, NaN and NaN")
    func sameValues() {
        #expect(JSONValue.integer(1).isSameValue(as: .double(1)))
        #expect(JSONValue.exactNumber("1e2").isSameValue(as: .integer(100)))
        #expect(JSONValue.exactNumber("18446744073709551615").isSameValue(as: .exactNumber("1_8446744073709551615")))
        #expect(!JSONValue.exactNumber("18446744073709551615").isSameValue(as: .exactNumber("18446744073709551614")))
        #expect(JSONValue.double(.nan).isSameValue(as: .double(.nan)))
        #expect(!JSONValue.integer(1).isSameValue(as: .string("1")))
        #expect(!JSONValue.bool(true).isSameValue(as: .integer(1)))
        let a = JSONValue.object(["x": .array([.integer(1), .object(["y": .null])])])
        #expect(a.firstDifference(from: a) == nil)
        #expect(
            a.firstDifference(from: .object(["x": .array([.integer(1), .object(["y": .bool(false)])])]))
                == ValuePath([.key("x"), .index(1), .key("y")]))
    }

    /// An editor that replaces the first `1` with a two-line text, to see what the engine does around it.
    struct ReplacingOne: TextEditor {
        func splices(for edits: [DocumentEdit], in text: [UInt8], holding old: JSONValue) throws -> [TextSplice] {
            #expect(!text.starts(with: TextEngine.byteOrderMark), "an editor never sees the byte-order mark")
            let one = try #require(text.firstIndex(of: UInt8(ascii: "1")))
            return [TextSplice(one..<(one + 1), "2\n# two")]
        }
    }

    @Test("the engine keeps a byte-order mark and ends written lines as the file ends its own")
    func byteOrderMarkAndLineEndings() throws {
        let text = Data(TextEngine.byteOrderMark + Array("a = 1\r\nb = 3\r\n".utf8))
        let edited = try TextEngine.edit(
            text, from: .object(["a": .integer(1)]), to: .object(["a": .integer(2)]), with: ReplacingOne())
        #expect(edited == Data(TextEngine.byteOrderMark + Array("a = 2\r\n# two\r\nb = 3\r\n".utf8)))
        // Nothing to change: the text as it is.
        #expect(try TextEngine.edit(text, from: .integer(1), to: .double(1), with: ReplacingOne()) == text)
    }

    @Test("non-finite numbers are shown as TOML spells them, not the whole document as null")
    func nonFiniteNumbersShown() {
        let document = JSONValue.object([
            "a": .double(.infinity), "b": .array([.double(-.infinity), .double(.nan)]), "c": .integer(1),
        ])
        #expect(document.jsonText() == #"{"a":inf,"b":[-inf,nan],"c":1}"#)
    }

    /// `edits` made on `document`, as an editor makes them on a text: every path names the old document.
    static func applying(_ edits: [DocumentEdit], to document: JSONValue) -> JSONValue {
        let byPath = Dictionary(grouping: edits, by: \.path)
        func apply(_ value: JSONValue, at path: [ValuePath.Component]) -> JSONValue {
            let here = byPath[path] ?? []
            if let replaced = here.first(where: { if case .replace = $0 { true } else { false } }),
                case .replace(_, let new) = replaced
            {
                return new
            }
            switch value {
            case .object(var members):
                for key in Array(members.keys) { members[key] = apply(members[key]!, at: path + [.key(key)]) }
                for edit in here {
                    if case .removeMember(_, let key) = edit { members[key] = nil }
                    if case .addMember(_, let key, let new) = edit { members[key] = new }
                }
                return .object(members)
            case .array(let elements):
                var result: [JSONValue] = []
                let removed = Set(here.compactMap { if case .removeElement(_, let index) = $0 { index } else { nil } })
                var added: [Int: [JSONValue]] = [:]
                for edit in here {
                    if case .addElement(_, let before, let new) = edit { added[before, default: []].append(new) }
                }
                for index in 0...elements.count {
                    result += added[index] ?? []
                    if index < elements.count, !removed.contains(index) {
                        result.append(apply(elements[index], at: path + [.index(index)]))
                    }
                }
                return .array(result)
            default:
                return value
            }
        }
        return apply(document, at: [])
    }

    @Test("random documents: the edits worked out between two, made on the first, give the second", arguments: 1...4)
    func editsReproduceTheNewDocument(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        func value(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 2 ? 3 : 6), using: &random) {
            case 0: return .integer(Int.random(in: 0..<4, using: &random))
            case 1: return .string(["a", "b", "c"].randomElement(using: &random)!)
            case 2: return .bool(Bool.random(using: &random))
            case 3: return .array((0..<Int.random(in: 0..<7, using: &random)).map { _ in value(depth + 1) })
            default:
                return .object(
                    Dictionary((0..<Int.random(in: 0..<5, using: &random)).map { ("k\($0)", value(depth + 1)) }) {
                        a, _ in a
                    })
            }
        }
        func mutated(_ document: JSONValue) -> JSONValue {
            switch document {
            case .array(var elements):
                for _ in 0..<Int.random(in: 0..<3, using: &random) {
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0 where !elements.isEmpty:
                        elements.remove(at: Int.random(in: 0..<elements.count, using: &random))
                    case 1: elements.insert(value(2), at: Int.random(in: 0...elements.count, using: &random))
                    default:
                        if !elements.isEmpty {
                            let index = Int.random(in: 0..<elements.count, using: &random);
                            elements[index] = mutated(elements[index])
                        }
                    }
                }
                return .array(elements)
            case .object(var members):
                for key in Array(members.keys) where Bool.random(using: &random) {
                    members[key] = mutated(members[key]!)
                }
                if Bool.random(using: &random), let key = members.keys.randomElement(using: &random) {
                    members[key] = nil
                }
                if Bool.random(using: &random) { members["new\(Int.random(in: 0..<3, using: &random))"] = value(2) }
                return .object(members)
            default:
                return Bool.random(using: &random) ? document : value(3)
            }
        }
        for _ in 0..<500 {
            let old = value(0)
            let new = mutated(old)
            let edits = DocumentEdit.changes(from: old, to: new)
            #expect(Self.applying(edits, to: old).isSameValue(as: new), "\(old) → \(new): \(edits)")
        }
    }

    @Test("a long array with many changes is lined up in linear time, and its edits still give the new array")
    func longArraysStayLinear() {
        let old = JSONValue.array((0..<40_000).map { .integer($0) })
        let new = JSONValue.array((0..<40_000).filter { $0 % 3 != 0 }.map { .integer($0) } + [.string("end")])
        let edits = DocumentEdit.changes(from: old, to: new)
        #expect(Self.applying(edits, to: old).isSameValue(as: new))
        // Lined up by position past the limit: no more edits than elements.
        #expect(edits.count <= 40_001)
    }
}
