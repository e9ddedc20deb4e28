@testable import Loupe
import Foundation
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
        #expect(String(decoding: try text.applying(cases[4]), as: UTF8.self) == "alpha = 1\nnew = 0\nbeta = 23\ngamma = 333\n")
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
        #expect(Set(edits.map { "\($0)" }) == Set([
            DocumentEdit.replace(at: [.key("b"), .key("c")], with: .bool(false)),
            .addMember(in: [.key("b")], key: "e", value: .array([.integer(1)])),
            .removeMember(in: [], key: "gone"),
            .addMember(in: [], key: "y", value: .integer(3)),
            .addMember(in: [], key: "z", value: .integer(2)),
        ].map { "\($0)" }))
        // New members of one object come in the order of their keys.
        let added = edits.compactMap { edit -> String? in if case .addMember([], let key, _) = edit { key } else { nil } }
        #expect(added == ["y", "z"])
        #expect(DocumentEdit.changes(from: old, to: old).isEmpty)
    }

    @Test("the edits between two arrays: the element that goes, and no other")
    func elementsByPosition() {
        let old = JSONValue.array((0..<11).map { .string("rule-\($0)") })
        guard case .array(var elements) = old else { return }
        elements.remove(at: 3)
        #expect(DocumentEdit.changes(from: old, to: .array(elements)) == [.removeElement(in: [], index: 3)])
        elements.insert(.string("new"), at: 5)
        elements.insert(.string("newer"), at: 6)
        #expect(DocumentEdit.changes(from: old, to: .array(elements)) == [
            .removeElement(in: [], index: 3),
            .addElement(in: [], before: 6, value: .string("new")),
            .addElement(in: [], before: 6, value: .string("newer")),
        ])
        // Same length: element by element, walked into where both are objects.
        let tasks = JSONValue.array([.object(["name": .string("a"), "become": .bool(true)]), .object(["name": .string("b")])])
        let changed = JSONValue.array([.object(["name": .string("a"), "become": .bool(false)]), .object(["name": .string("b")])])
        #expect(DocumentEdit.changes(from: tasks, to: changed) == [.replace(at: [.index(0), .key("become")], with: .bool(false))])
        // An element removed where another is inserted is that element changed.
        let grown = JSONValue.array([.object(["name": .string("a"), "become": .bool(false)]), .object(["name": .string("b")]), .null])
        #expect(DocumentEdit.changes(from: tasks, to: grown) == [
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
        #expect(a.firstDifference(from: .object(["x": .array([.integer(1), .object(["y": .bool(false)])])])) == ValuePath([.key("x"), .index(1), .key("y")]))
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
        let edited = try TextEngine.edit(text, from: .object(["a": .integer(1)]), to: .object(["a": .integer(2)]), with: ReplacingOne())
        #expect(edited == Data(TextEngine.byteOrderMark + Array("a = 2\r\n# two\r\nb = 3\r\n".utf8)))
        // Nothing to change: the text as it is.
        #expect(try TextEngine.edit(text, from: .integer(1), to: .double(1), with: ReplacingOne()) == text)
    }

    @Test("non-finite numbers are shown as TOML spells them, not the whole document as null")
    func nonFiniteNumbersShown() {
        let document = JSONValue.object(["a": .double(.infinity), "b": .array([.double(-.infinity), .double(.nan)]), "c": .integer(1)])
        #expect(document.jsonText() == #"{"a":inf,"b":[-inf,nan],"c":1}"#)
    }
}
