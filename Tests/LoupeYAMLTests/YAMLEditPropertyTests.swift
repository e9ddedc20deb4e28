import Foundation
import Loupe
import LoupeTestSupport
import LoupeYAML
import Testing

/// Random configuration-like YAML texts, seeded, each with the bytes every entry owns, for edits checked
/// by another reader.
struct YAMLTextGenerator {
    var generator: SeededGenerator
    /// The text written so far.
    var text = ""
    /// The bytes each entry owns, by its path (an entry of a flow collection: its block entry's, or the
    /// whole text at the root).
    var regions: [[ValuePath.Component]: Range<Int>] = [:]
    /// The paths of the mappings and sequences written.
    var mappings: [[ValuePath.Component]] = []
    var sequences: [[ValuePath.Component]: Int] = [:]
    /// Whether the text holds `shared: &shared` and `copy: *shared`.
    var shared = false

    init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    private mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &generator) < percent }
    private mutating func pick<T>(_ choices: [T]) -> T { choices.randomElement(using: &generator)! }

    static let keys = [
        "name", "port", "enabled", "hosts", "tags", "image", "env", "run", "mode", "retries", "url", "path", "level",
        "become", "when",
    ]
    static let plainScalars = [
        "alpha", "web-1", "/usr/bin/env", "http://a.example/x", "8080", "0.25", "yes", "no", "true", "on", "~", "null",
        "two words", "latest", "-1", "1.2.3", "release/v2",
    ]
    static let quotedScalars = [
        "'it''s'", "'yes'", "\"a: b\"", "\"tab\\there\"", "'#x'", "\"8080\"", "''", "\"multi\\nline\"",
    ]

    private mutating func scalar(flow: Bool) -> String {
        chance(70) ? pick(Self.plainScalars.filter { !flow || !$0.contains(" ") }) : pick(Self.quotedScalars)
    }

    private mutating func comment() -> String {
        chance(20) ? "  # note \(Int.random(in: 0..<100, using: &generator))" : ""
    }

    private mutating func flow(_ path: [ValuePath.Component], indent: Int) -> String {
        if chance(50) {
            let count = Int.random(in: 0...3, using: &generator)
            sequences[path] = count
            let items = (0..<count).map { _ in scalar(flow: true) }
            if count > 1, chance(25) {
                let padding = String(repeating: " ", count: indent + 2)
                return "[\n" + items.map { padding + $0 }.joined(separator: ",\n") + (chance(50) ? "," : "") + "\n"
                    + String(repeating: " ", count: indent) + "]"
            }
            return "[" + items.joined(separator: ", ") + "]"
        }
        mappings.append(path)
        let keys = Array(Self.keys.shuffled(using: &generator).prefix(Int.random(in: 0...3, using: &generator)))
        return "{" + keys.map { $0 + ": " + scalar(flow: true) }.joined(separator: ", ") + "}"
    }

    /// A value after `key:` at column `indent`.
    private mutating func value(_ path: [ValuePath.Component], indent: Int, depth: Int) -> String {
        let padding = String(repeating: " ", count: indent + 2)
        switch Int.random(in: 0..<100, using: &generator) {
        case 0..<40: return " " + scalar(flow: false) + comment()
        case 40..<45:
            // Scalars over several lines: plain, and double-quoted.
            return chance(50)
                ? " plain text\n" + padding + "continued" + comment() : " \"hello,\n" + padding + "world\"" + comment()
        case 45..<50: return chance(50) ? "" : " # none yet"
        case 50..<62: return " " + flow(path, indent: indent) + comment()
        case 62..<72:
            let header = pick(["|", "|-", ">", ">-"])
            let lines = pick([
                ["echo one", "echo two"], ["swift build", "", "swift test --parallel"], ["a long line that", "folds"],
            ])
            return " " + header + comment() + "\n"
                + lines.map { $0.isEmpty ? "" : padding + $0 }.joined(separator: "\n")
        case 72..<86 where depth < 3:
            let note = comment() + "\n"
            let saved = text
            text += note
            defer { text = saved }
            return note + blockMapping(path, indent: indent + 2, depth: depth + 1)
        default:
            guard depth < 3 else { return " " + scalar(flow: false) }
            let note = comment() + "\n"
            let saved = text
            text += note
            defer { text = saved }
            return note + blockSequence(path, indent: chance(30) ? indent : indent + 2, depth: depth + 1)
        }
    }

    /// A block mapping's lines at column `indent` (the first one's indentation included unless `compact`),
    /// without its last line break.
    private mutating func blockMapping(
        _ path: [ValuePath.Component], indent: Int, depth: Int, compact: Bool = false
    ) -> String {
        mappings.append(path)
        let padding = String(repeating: " ", count: indent)
        let keys = Array(Self.keys.shuffled(using: &generator).prefix(Int.random(in: 1...4, using: &generator)))
        var lines: [String] = []
        for (index, key) in keys.enumerated() {
            var entry = ""
            if index > 0 || !compact {
                if chance(15) { entry += "\n" }
                if chance(20) { entry += padding + "# about \(key)\n" }
                entry += padding
            }
            let written = chance(10) ? (chance(50) ? "'\(key)'" : "\"\(key)\"") : key
            let start = text.utf8.count + lines.reduce(0) { $0 + $1.utf8.count + 1 } + (entry.hasPrefix("\n") ? 1 : 0)
            // Comment lines that start the document are the file's, not its first entry's.
            var regionStart = start
            if path.isEmpty, index == 0, entry.contains("# about") { regionStart += "# about \(key)\n".utf8.count }
            // `text` holds what stands before the value while it is generated, so that the regions of the
            // entries in it are offsets in the whole text.
            let saved = text
            text += lines.map { $0 + "\n" }.joined() + entry + written + ":"
            let rest = value(path + [.key(key)], indent: indent, depth: depth)
            text = saved
            entry += written + ":" + rest
            lines.append(entry)
            let end = start + (entry.hasPrefix("\n") ? entry.utf8.count - 1 : entry.utf8.count) + 1
            regions[path + [.key(key)]] = regionStart..<end
        }
        return lines.joined(separator: "\n")
    }

    private mutating func blockSequence(_ path: [ValuePath.Component], indent: Int, depth: Int) -> String {
        let padding = String(repeating: " ", count: indent)
        let count = Int.random(in: 1...4, using: &generator)
        sequences[path] = count
        var lines: [String] = []
        for index in 0..<count {
            var entry = ""
            if chance(20) { entry += padding + "# item \(index)\n" }
            entry += padding + "-"
            let start = text.utf8.count + lines.reduce(0) { $0 + $1.utf8.count + 1 }
            let saved = text
            text += lines.map { $0 + "\n" }.joined() + entry + " "
            let item: String
            var compactMapping = false
            if depth < 3, chance(45) {
                compactMapping = true
                item = " " + blockMapping(path + [.index(index)], indent: indent + 2, depth: depth + 1, compact: true)
            } else if chance(20) {
                item = " " + flow(path + [.index(index)], indent: indent)
            } else {
                item = " " + scalar(flow: false) + comment()
            }
            text = saved
            entry += item
            lines.append(entry)
            let region = start..<(start + entry.utf8.count + 1)
            regions[path + [.index(index)]] = region
            if compactMapping {
                // The first key of `- key: …`: removing it moves the next key up onto the dash's line.
                for (key, _) in regions
                where key.count == path.count + 2 && key.starts(with: path + [.index(index)])
                    && regions[key]!.lowerBound == start + entry.utf8.count - item.utf8.count + 1
                {
                    regions[key] = region
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A whole text: a mapping at the root, or (sometimes, after `---`) a sequence.
    mutating func document() -> String {
        text = chance(30) ? "# generated settings\n" : ""
        if chance(20) {
            text += "---\n"
            text += blockSequence([], indent: 0, depth: 1) + "\n"
        } else {
            if chance(15) { text += "---\n" }
            text += blockMapping([], indent: 0, depth: 0) + "\n"
            if chance(20) {
                // A mapping aliases share, and an alias of it: edits of either are refused.
                let start = text.utf8.count
                text += "shared: &shared\n  level: 1\n  mode: fast\n"
                regions[[.key("shared")]] = start..<text.utf8.count
                regions[[.key("shared"), .key("level")]] = (start + 16)..<(start + 27)
                regions[[.key("shared"), .key("mode")]] = (start + 27)..<text.utf8.count
                mappings.append([.key("shared")])
                let alias = text.utf8.count
                text += "copy: *shared\n"
                regions[[.key("copy")]] = alias..<text.utf8.count
                shared = true
            }
        }
        if chance(10) { text += "# the end\n" }
        return text
    }
}

/// Random one-path edits of random configuration-like YAML texts: each write is read back by PyYAML as the
/// new document, and changes only bytes within the edited entry.
@Suite("YAML edits of generated texts")
struct YAMLEditPropertyTests {
    struct Case {
        var seed: UInt64
        var text: String
        var edited: String
        var expected: JSONValue
        var region: Range<Int>
        var what: String
    }

    static let newValues: [JSONValue] = [
        .string("yes"), .string("1.5"), .string("it's"), .string("a: b"), .string("#x"), .string(""),
        .string("multi\nline\n"),
        .string("null"), .string("~"), .string(" lead"), .string("tab\tx"), .string("[x]"), .string("plain words"),
        .string("on"),
        .integer(42), .integer(-3), .double(2.5), .bool(true), .bool(false), .null, .array([]), .object([:]),
        .array([.integer(1), .string("two")]), .object(["k": .string("v"), "n": .integer(1)]), .string("0x1F"),
        .string("2001-12-14"),
    ]

    /// The bytes of `before` that `after` does not keep, once the common prefix and suffix are stripped.
    static func changedBytes(_ before: [UInt8], _ after: [UInt8], prefixFirst: Bool) -> Range<Int> {
        let limit = min(before.count, after.count)
        func prefix(within bound: Int) -> Int {
            var count = 0
            while count < bound, before[count] == after[count] { count += 1 }
            return count
        }
        func suffix(within bound: Int) -> Int {
            var count = 0
            while count < bound, before[before.count - 1 - count] == after[after.count - 1 - count] { count += 1 }
            return count
        }
        if prefixFirst {
            let head = prefix(within: limit)
            return head..<(before.count - suffix(within: limit - head))
        }
        let tail = suffix(within: limit)
        return prefix(within: limit - tail)..<(before.count - tail)
    }

    @Test func oneThousandRandomEditsReadBackAndStayInTheirEntry() throws {
        let codec = YAMLCodec()
        var cases: [Case] = []
        var originals: [String] = []
        var originalDocuments: [JSONValue] = []
        var refusals = 0
        for seed in UInt64(1)...400 {
            var generator = YAMLTextGenerator(seed: seed)
            var text = generator.document()
            var regions = generator.regions
            if seed % 5 == 0 {
                // CRLF: every offset moves by the line breaks before it.
                let bytes = Array(text.utf8)
                var before = [Int](repeating: 0, count: bytes.count + 1)
                for index in bytes.indices {
                    before[index + 1] = before[index] + (bytes[index] == UInt8(ascii: "\n") ? 1 : 0)
                }
                regions = regions.mapValues {
                    ($0.lowerBound + before[$0.lowerBound])..<($0.upperBound + before[$0.upperBound])
                }
                text = text.replacingOccurrences(of: "\n", with: "\r\n")
            }
            let old: JSONValue
            do {
                old = try codec.parse(Data(text.utf8))
            } catch {
                Issue.record("seed \(seed): the generated text does not read: \(error)\n\(text)")
                continue
            }
            originals.append(text)
            originalDocuments.append(old)
            var random = SeededGenerator(seed: seed &* 7919)
            let everything = 0..<text.utf8.count
            for _ in 0..<4 {
                var document = old
                let region: Range<Int>
                let what: String
                var edited: [ValuePath.Component] = []
                // In a fixed order, so that a seed gives the same edits in every process (a dictionary's
                // order is not).
                let paths = regions.keys.sorted { ValuePath($0).description < ValuePath($1).description }
                switch Int.random(in: 0..<4, using: &random) {
                case 0, 1:
                    let path = paths.randomElement(using: &random)!
                    let value = Self.newValues.randomElement(using: &random)!
                    try document.set(value, at: ValuePath(path))
                    region = regions[path]!
                    what = "set \(ValuePath(path)) to \(value)"
                    edited = path
                case 2:
                    let path = paths.randomElement(using: &random)!
                    try document.remove(at: ValuePath(path))
                    // The last entry of a collection taken out leaves `{}` or `[]` in the entry that holds it.
                    let parent = Array(path.dropLast())
                    let emptied =
                        (try? document.value(at: ValuePath(parent))).map { $0 == .object([:]) || $0 == .array([]) }
                        ?? false
                    // An element removed beside one of the same value may be told apart from it either way.
                    var twin = false
                    if case .index(let index)? = path.last,
                        case .array(let elements)? = try? old.value(at: ValuePath(parent))
                    {
                        twin = elements.indices.contains {
                            $0 != index && elements[$0].isSameValue(as: elements[index])
                        }
                    }
                    region =
                        emptied || twin ? (parent.isEmpty ? everything : regions[parent] ?? everything) : regions[path]!
                    what = "remove \(ValuePath(path))"
                    edited = path == [.key("copy")] ? [] : path
                default:
                    let containers =
                        generator.mappings.map { ($0, true) }
                        + generator.sequences.keys.sorted { ValuePath($0).description < ValuePath($1).description }
                        .map { ($0, false) }
                    let (path, isMapping) = containers.randomElement(using: &random)!
                    edited = path
                    let value = Self.newValues.randomElement(using: &random)!
                    if isMapping {
                        let key = ["fresh", "yes", "1", "new key", "on", "x"].randomElement(using: &random)!
                        try document.set(value, at: ValuePath(path + [.key(key)]))
                        what = "set \(ValuePath(path + [.key(key)])) to \(value)"
                    } else {
                        guard case .array(var elements) = try document.value(at: ValuePath(path)) else { continue }
                        let index = Int.random(in: 0...elements.count, using: &random)
                        elements.insert(value, at: index)
                        try document.set(.array(elements), at: ValuePath(path))
                        what = "insert \(value) at \(ValuePath(path))[\(index)]"
                    }
                    region = path.isEmpty ? everything : regions[path] ?? everything
                }
                // An edit through the alias writes it out in full, as it is now; an edit inside the anchored
                // mapping is made in place, and the alias, which keeps showing what it showed, written out.
                // The anchored mapping replaced or taken out whole is refused (its anchor would go).
                if edited.first == .key("shared") || edited.first == .key("copy") {
                    let copy = regions[[.key("copy")]]!
                    do {
                        let data = try codec.serializeDocument(document, editing: (Data(text.utf8), old), store: "test")
                        cases.append(
                            Case(
                                seed: seed, text: text, edited: String(decoding: data, as: UTF8.self),
                                expected: document,
                                region: edited.first == .key("copy")
                                    ? copy : regions[[.key("shared")]]!.lowerBound..<copy.upperBound, what: what))
                    } catch let error as SettingsError where error.cause is TextEditRefusal {
                        #expect(
                            edited == [.key("shared")] && "\(error)".contains("anchored (&shared)"),
                            "seed \(seed): \(what): only the anchored mapping, replaced or taken out, is refused: \(error)"
                        )
                        refusals += 1
                    }
                    continue
                }
                do {
                    let data = try codec.serializeDocument(document, editing: (Data(text.utf8), old), store: "test")
                    cases.append(
                        Case(
                            seed: seed, text: text, edited: String(decoding: data, as: UTF8.self), expected: document,
                            region: region, what: what))
                } catch {
                    Issue.record("seed \(seed): \(what): \(error)\n\(text)")
                }
            }
        }
        #expect(cases.count >= 1_000 && refusals > 10, "\(cases.count) edits, \(refusals) refused")
        let independent = try IndependentParser.yaml.parse(originals + cases.map(\.edited))
        for (index, text) in originals.enumerated() {
            #expect(
                independent[index].map { $0.isSameValue(as: originalDocuments[index]) } == true,
                "PyYAML reads the generated text as Loupe does:\n\(text)")
        }
        for (index, edit) in cases.enumerated() {
            let theirs = independent[originals.count + index]
            #expect(
                theirs.map { $0.isSameValue(as: edit.expected) } == true,
                "seed \(edit.seed): \(edit.what): PyYAML reads \(String(describing: theirs))\n--- before\n\(edit.text)--- after\n\(edit.edited)"
            )
            let (before, after) = (Array(edit.text.utf8), Array(edit.edited.utf8))
            // The changed bytes lie within the entry: what comes before it is a common prefix of the two
            // texts, and what comes after it a common suffix.
            let (head, tail) = (edit.region.lowerBound, before.count - edit.region.upperBound)
            let changes = Self.changedBytes(before, after, prefixFirst: true)
            #expect(
                after.count >= head + tail && after.prefix(head).elementsEqual(before.prefix(head))
                    && after.suffix(tail).elementsEqual(before.suffix(tail)),
                "seed \(edit.seed): \(edit.what): bytes \(changes) changed, outside the entry's \(edit.region)\n--- before\n\(edit.text)--- after\n\(edit.edited)"
            )
        }
    }
}
