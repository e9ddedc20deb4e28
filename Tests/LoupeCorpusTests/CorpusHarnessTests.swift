import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// The corpus suite's own judges, on edits whose outcome is known: what passes must be an edit that changes
/// only what changed, and what fails must be one that changes more.
@Suite("The corpus suite's judges")
struct CorpusHarnessTests {
    /// What ``LineChange/judge(_:of:markers:)`` says of `new` as the text of `kind` at `path`, which makes
    /// `before` (JSON) into `after`, written over `old`: nil where it passes.
    func verdict(
        _ old: String, _ new: String, _ kind: CorpusEdit.Kind, at path: String, _ before: String, _ after: String,
        markers: [String] = ["#"]
    ) throws -> String? {
        let edit = CorpusEdit(
            kind: kind, path: try ValuePath(parsing: path).components, document: try JSONValue(parsing: after))
        return LineChange(old: old, new: new).judge(edit, of: try JSONValue(parsing: before), markers: markers)
    }

    @Test(
        "removing the first entry of a compact sequence element moves the next entry up onto its dash, and nothing more"
    )
    func compactElementsFirstEntry() throws {
        let old = "steps:\n  - name: Build\n    run: make\n    shell: bash\n  - run: test\n"
        let (before, after) = (
            #"{"steps": [{"name": "Build", "run": "make", "shell": "bash"}, {"run": "test"}]}"#,
            #"{"steps": [{"run": "make", "shell": "bash"}, {"run": "test"}]}"#
        )
        let moved = "steps:\n  - run: make\n    shell: bash\n  - run: test\n"
        #expect(try verdict(old, moved, .removeMember, at: "steps[0].name", before, after) == nil)
        let notMovedUp = "steps:\n  -\n    run: make\n    shell: sh\n  - run: test\n"
        #expect(
            try verdict(old, notMovedUp, .removeMember, at: "steps[0].name", before, after) != nil, "a sibling changed")
        let otherLine = "steps:\n  - run: make\n    shell: bash\n  - run: tests\n"
        #expect(
            try verdict(old, otherLine, .removeMember, at: "steps[0].name", before, after) != nil,
            "another element changed")
    }

    @Test("a TOML multi-line string with line-ending backslashes is one value over several lines")
    func multiLineStrings() throws {
        let q = String(repeating: "\"", count: 3)
        let old = "format = \(q)\na\\\nb\(q)\n# next\nx = 1\n"
        let (before, after) = (#"{"format": "ab", "x": 1}"#, #"{"format": 12.5, "x": 1}"#)
        #expect(try verdict(old, "format = 12.5\n# next\nx = 1\n", .replaceOther, at: "format", before, after) == nil)
        #expect(
            try verdict(old, "format = 12.5\nx = 1\n", .replaceOther, at: "format", before, after) != nil,
            "the next key's comment went")
    }

    @Test("an element removed from beside its array's bracket keeps the bracket's line, and nothing more")
    func elementsBesideTheirBracket() throws {
        let old = "{\n  \"c\": [{\n      \"a\": 1\n    },\n    {\n      \"a\": 2\n    }\n  ]\n}\n"
        let (before, after) = (#"{"c": [{"a": 1}, {"a": 2}]}"#, #"{"c": [{"a": 2}]}"#)
        let removed = "{\n  \"c\": [\n    {\n      \"a\": 2\n    }\n  ]\n}\n"
        #expect(try verdict(old, removed, .removeElement, at: "c[0]", before, after, markers: ["//"]) == nil)
        let renamed = "{\n  \"d\": [\n    {\n      \"a\": 2\n    }\n  ]\n}\n"
        #expect(
            try verdict(old, renamed, .removeElement, at: "c[0]", before, after, markers: ["//"]) != nil,
            "the bracket's line changed more than the element")
    }

    @Test("a YAML key a merge key brings in, changed, is an entry added to its mapping, and nothing more")
    func mergedKeysMadeOwn() throws {
        let old = "base: &b\n  x: 1\nservice:\n  <<: *b\n  y: 2\n"
        let (before, after) = (
            #"{"base": {"x": 1}, "service": {"x": 1, "y": 2}}"#, #"{"base": {"x": 1}, "service": {"x": 5, "y": 2}}"#
        )
        #expect(try verdict(old, old + "  x: 5\n", .replaceSame, at: "service.x", before, after) == nil)
        #expect(
            try verdict(old, old + "  z: 5\n", .replaceSame, at: "service.x", before, after) != nil,
            "a line of another key")
        #expect(
            try verdict(
                old, old.replacingOccurrences(of: "y: 2", with: "y: 2\n  x: 5"), .replaceSame, at: "service.x",
                before, after) == nil)
        // A value inside one a merge brings in: the mapping's own entry, its value's lines further in.
        let nested = "base: &b\n  env:\n    a: 1\nservice:\n  <<: *b\n  y: 2\n"
        let (nestedBefore, nestedAfter) = (
            #"{"base": {"env": {"a": 1}}, "service": {"env": {"a": 1}, "y": 2}}"#,
            #"{"base": {"env": {"a": 1}}, "service": {"env": {"a": 3}, "y": 2}}"#
        )
        #expect(
            try verdict(
                nested, nested + "  env:\n    a: 3\n", .replaceSame, at: "service.env.a", nestedBefore, nestedAfter)
                == nil)
        #expect(
            try verdict(
                nested, nested + "  env:\n  a: 3\n", .replaceSame, at: "service.env.a", nestedBefore, nestedAfter)
                != nil, "a line that is not inside the entry")
    }

    @Test("a YAML block scalar's lines that start with # are its text, not comments")
    func blockScalarLinesAreNotComments() throws {
        let old = "steps:\n  - name: a\n    run: |\n      make\n      # not a comment\n  # b's comment\n  - name: b\n"
        let (before, after) = (
            #"{"steps": [{"name": "a", "run": "make\n# not a comment\n"}, {"name": "b"}]}"#,
            #"{"steps": [{"name": "a"}, {"name": "b"}]}"#
        )
        let removed = "steps:\n  - name: a\n  # b's comment\n  - name: b\n"
        #expect(try verdict(old, removed, .removeMember, at: "steps[0].run", before, after) == nil)
        let tookComment = "steps:\n  - name: a\n  - name: b\n"
        #expect(
            try verdict(old, tookComment, .removeMember, at: "steps[0].run", before, after) != nil,
            "the comment of what follows went too")
    }

    @Test("a set passes where it changes its one line and keeps the line's comment")
    func sets() throws {
        let old = "# top\n[a]\nx = 1 # one\ny = 2\n"
        let (before, after) = (#"{"a": {"x": 1, "y": 2}}"#, #"{"a": {"x": 5, "y": 2}}"#)
        #expect(
            try verdict(
                old, old.replacingOccurrences(of: "x = 1", with: "x = 5"), .replaceSame, at: "a.x", before, after)
                == nil)
        #expect(
            try verdict(
                old, old.replacingOccurrences(of: "x = 1 # one", with: "x = 5"), .replaceSame, at: "a.x", before, after)
                != nil,
            "its end-of-line comment lost")
        let twoLines = old.replacingOccurrences(of: "# top\n", with: "").replacingOccurrences(
            of: "x = 1", with: "x = 5")
        #expect(try verdict(old, twoLines, .replaceSame, at: "a.x", before, after) != nil, "another line changed")

        let yaml = "a:\n  b: x # c\n  d: 1\n"
        let (yamlBefore, yamlAfter) = (#"{"a": {"b": "x", "d": 1}}"#, #"{"a": {"b": [1], "d": 1}}"#)
        #expect(
            try verdict(yaml, "a:\n  b: # c\n  - 1\n  d: 1\n", .replaceOther, at: "a.b", yamlBefore, yamlAfter) == nil)
        #expect(
            try verdict(yaml, "a:\n  b:\n  - 1\n  d: 1\n", .replaceOther, at: "a.b", yamlBefore, yamlAfter) != nil,
            "its comment lost")
        #expect(
            try verdict(yaml, "a:\n  b:\n  - 1 # c\n  d: 2\n", .replaceOther, at: "a.b", yamlBefore, yamlAfter) != nil,
            "a sibling changed")

        let folded = "a: >-\n  one\n  two\nd: 1\n"
        let (foldedBefore, foldedAfter) = (#"{"a": "one two", "d": 1}"#, #"{"a": "three", "d": 1}"#)
        #expect(
            try verdict(folded, "a: >-\n  three\nd: 1\n", .replaceSame, at: "a", foldedBefore, foldedAfter) == nil,
            "a folded string kept folded")
        #expect(
            try verdict(folded, "a: three\nd: 1\n", .replaceSame, at: "a", foldedBefore, foldedAfter) == nil,
            "a folded string made plain")
        #expect(
            try verdict(folded, "a: three\nd: 2\n", .replaceSame, at: "a", foldedBefore, foldedAfter) != nil,
            "a sibling changed")
    }

    @Test("a removal passes where it takes its lines (and a separator comma) or changes a one-line container")
    func removals() throws {
        let old = "y = [1, 2]\nz = [\n  1,\n  2,\n]\n"
        let before = #"{"y": [1, 2], "z": [1, 2]}"#
        let removeZ1 = #"{"y": [1, 2], "z": [1]}"#
        #expect(
            try verdict(
                old, old.replacingOccurrences(of: "  2,\n", with: ""), .removeElement, at: "z[1]", before, removeZ1)
                == nil)
        let collapsed = old.replacingOccurrences(of: "z = [\n  1,\n  2,\n]", with: "z = [1]")
        #expect(
            try verdict(old, collapsed, .removeElement, at: "z[1]", before, removeZ1) != nil,
            "a multi-line array collapsed")
        let removeY1 = #"{"y": [1], "z": [1, 2]}"#
        #expect(
            try verdict(
                old, old.replacingOccurrences(of: "[1, 2]", with: "[1]"), .removeElement, at: "y[1]", before, removeY1)
                == nil)

        let json = "{\n  \"a\": 1,\n  \"b\": 2\n}\n"
        #expect(
            try verdict(
                json, "{\n  \"a\": 1\n}\n", .removeMember, at: "b", #"{"a": 1, "b": 2}"#, #"{"a": 1}"#, markers: [])
                == nil,
            "the comma before goes with it")
    }

    @Test("an addition passes where it inserts its lines (and a separator comma) or changes a one-line container")
    func additions() throws {
        let old = "[a]\nx = 1 # one\ny = [1, 2]\n"
        let (before, after) = (#"{"a": {"x": 1, "y": [1, 2]}}"#, #"{"a": {"x": 1, "y": [1, 2], "w": "new"}}"#)
        #expect(try verdict(old, old + "w = \"new\"\n", .addMember, at: "a.w", before, after) == nil)
        let moved = old.replacingOccurrences(of: "x = 1 # one\n", with: "w = \"new\"\nx = 1\n")
        #expect(
            try verdict(old, moved, .addMember, at: "a.w", before, after) != nil,
            "an end-of-line comment dropped on the way")

        let json = "{\n  \"a\": 1,\n  \"b\": 2\n}\n"
        let (jsonBefore, jsonAfter) = (#"{"a": 1, "b": 2}"#, #"{"a": 1, "b": 2, "c": 3}"#)
        let appended = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}\n"
        #expect(
            try verdict(json, appended, .addMember, at: "c", jsonBefore, jsonAfter, markers: []) == nil,
            "a comma after the last")
        let oneLine = "{\"a\": 1, \"b\": 2, \"c\": 3}\n"
        #expect(
            try verdict(json, oneLine, .addMember, at: "c", jsonBefore, jsonAfter, markers: []) != nil,
            "the object rewritten on one line")
    }

    @Test("lines split at LF in CRLF text; comments taken from or copied onto other entries are seen")
    func comments() throws {
        let old = "# a's\r\na = 1\r\n# b's\r\nb = 2\r\n"
        let before = #"{"a": 1, "b": 2}"#
        #expect(
            try verdict(
                old, old.replacingOccurrences(of: "a = 1", with: "a = 5"), .replaceSame, at: "a", before,
                #"{"a": 5, "b": 2}"#) == nil)
        #expect(try verdict(old, "# b's\r\nb = 2\r\n", .removeMember, at: "a", before, #"{"b": 2}"#) == nil)
        #expect(
            try verdict(old, "# a's\r\nb = 2\r\n", .removeMember, at: "a", before, #"{"b": 2}"#) != nil,
            "the comment of b taken, a's left on b")
        #expect(
            try verdict(old, "# a's\r\n# b's\r\nb = 2\r\n", .removeMember, at: "a", before, #"{"b": 2}"#) != nil,
            "a's own comment left behind")
        #expect(
            try verdict(
                "# c\nx = 1\n# c\ny = 2\n", "# c\ny = 2\n", .removeMember, at: "x", #"{"x": 1, "y": 2}"#, #"{"y": 2}"#)
                == nil,
            "a run that can shift to end on its entry")
        let added = #"{"a": 1, "b": 2, "c": 3}"#
        #expect(try verdict(old, old + "c = 3\r\n", .addMember, at: "c", before, added) == nil)
        #expect(
            try verdict(old, old + "# b's\r\nc = 3\r\n", .addMember, at: "c", before, added) != nil,
            "a neighbour's comment copied")
    }

    #if YAML
    @Test(
        "a YAML edit through an alias or of an anchored value may write aliases out and give merging mappings keys, and lose no other line"
    )
    func sharedEdits() throws {
        let old = "base: &b\n  x: 1 # one\n  y: 2\nalias: *b\nsvc:\n  <<: *b\n  z: 3\n"
        let before = #"{"base": {"x": 1, "y": 2}, "alias": {"x": 1, "y": 2}, "svc": {"x": 1, "y": 2, "z": 3}}"#
        let after = #"{"base": {"x": 5, "y": 2}, "alias": {"x": 1, "y": 2}, "svc": {"x": 1, "y": 2, "z": 3}}"#
        let written = "base: &b\n  x: 5 # one\n  y: 2\nalias:\n  x: 1\n  y: 2\nsvc:\n  <<: *b\n  z: 3\n  x: 1\n"
        #expect(try verdict(old, written, .replaceSame, at: "base.x", before, after) == nil)
        #expect(
            try verdict(
                old, written.replacingOccurrences(of: "  z: 3\n", with: ""), .replaceSame, at: "base.x", before, after)
                != nil, "another entry lost")
        #expect(
            try verdict(
                old, written.replacingOccurrences(of: " # one", with: ""), .replaceSame, at: "base.x", before, after)
                != nil, "the comment lost")
        // Through the alias: the alias line goes, its value comes in its place.
        let throughAlias = #"{"base": {"x": 1, "y": 2}, "alias": {"x": 7, "y": 2}, "svc": {"x": 1, "y": 2, "z": 3}}"#
        let aliasWritten = old.replacingOccurrences(of: "alias: *b\n", with: "alias:\n  x: 7\n  y: 2\n")
        #expect(try verdict(old, aliasWritten, .replaceSame, at: "alias.x", before, throughAlias) == nil)
        #expect(
            try verdict(
                old,
                aliasWritten.replacingOccurrences(of: "  <<: *b\n", with: "  <<: *b\n  x: 1\n  y: 2\n")
                    .replacingOccurrences(of: "base: &b\n", with: "base:\n"), .replaceSame, at: "alias.x", before,
                throughAlias)
                != nil, "the anchor's line changed")
    }
    #endif

    @Test("the other readers see a document as Loupe means it, and a wrong value is told")
    func readsBack() throws {
        let toml = try IndependentParser.tomllib.parse(["a = 1\nb = 2.5\nc = \"x\"\nd = 1979-05-27T07:32:00Z\n"])
        let expected = try JSONValue(parsing: #"{"a": 1, "b": 2.5, "c": "x", "d": "1979-05-27T07:32:00Z"}"#)
        #expect(toml.first??.isSameValue(as: expected) == true)
        let jsonc = try IndependentParser.json5.parse(["{a: 1, /* c */ b: [1,],}"])
        #expect(jsonc.first??.isSameValue(as: try JSONValue(parsing: #"{"a": 1, "b": [1.0]}"#)) == true)

        let file = CorpusFile(name: "json/a.json", format: .json, data: Data(#"{"a": 1, "on": true}"#.utf8))
        let old = try JSONValue(parsing: #"{"a": 1, "on": true}"#)
        let edit = CorpusEdit(
            kind: .replaceSame, path: [.key("a")], document: try JSONValue(parsing: #"{"a": 2, "on": true}"#))
        func problem(_ text: String, otherOld: JSONValue) throws -> String? {
            CorpusEdits.readBackProblem(
                try JSONValue(parsing: text), of: WrittenEdit(file: file, old: old, edit: edit, text: text),
                loupeOld: old, otherOld: otherOld)
        }
        #expect(try problem(#"{"a": 2.0, "on": true}"#, otherOld: old) == nil)
        #expect(try problem(#"{"a": 3, "on": true}"#, otherOld: old) != nil)
        #expect(try problem(#"{"a": "2", "on": true}"#, otherOld: old) != nil)
        // A reader that sees the original otherwise (YAML 1.1's `on` as true) must see only the edit changed.
        let yaml11 = try JSONValue(parsing: #"{"a": 1, "true": true}"#)
        #expect(try problem(#"{"a": 2, "true": true}"#, otherOld: yaml11) == nil)
        #expect(try problem(#"{"a": 2, "on": true}"#, otherOld: yaml11) != nil)
    }
}
