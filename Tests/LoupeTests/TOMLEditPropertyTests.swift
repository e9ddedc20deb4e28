import Foundation
@testable import Loupe
import LoupeTestSupport
import Testing

/// Random TOML files like the ones people write (comments above keys and at the ends of lines, dotted keys,
/// `[table]` sections and their sub-tables, arrays of tables, one-line and one-element-per-line arrays with
/// comments between elements and trailing commas, inline tables, every kind of string, integers in other
/// bases or grouped, dates, CRLF sometimes), each edited at one path. The generator knows where every entry
/// stands in the text it wrote, so each edit is checked for what it may touch: the old text's bytes before
/// and after the edited entry's span are still there, at the start and at the end of the new text; every
/// comment that is not the removed entry's own stays, and the removed entry's own go. Every text is read
/// back by Python's `tomllib`, in one process, and must hold the expected document.
@Suite("TOML edits at random: only the edited entry's bytes change")
struct TOMLEditPropertyTests {
    /// 125 files, 10 edits of each (1,250 in all, every one checked), read back by one Python process.
    @Test func editsChangeOnlyTheirEntry() throws {
        let codec = TOMLCodec()
        var random = SeededGenerator(seed: 31)
        var texts: [String] = []
        var expected: [JSONValue] = []
        var counter = 0
        var edits = 0
        for _ in 0..<125 {
            var generator = GeneratedTOMLText.Generator(random: random, counter: counter)
            let file = generator.make()
            random = generator.random
            counter = generator.counter
            let label = String(decoding: file.text, as: UTF8.self)
            let old: JSONValue
            do {
                old = try codec.parse(Data(file.text))
            } catch {
                Issue.record("the generator wrote what the reader refuses (\(error)):\n\(label)")
                continue
            }
            texts.append(label)
            expected.append(old)
            for _ in 0..<10 {
                counter += 1
                guard let edit = file.randomEdit(of: old, using: &random, fresh: counter) else { continue }
                let what = "\(edit.kind) at \(ValuePath(edit.path)) in:\n\(label)"
                let written: Data
                do {
                    written = try codec.serializeDocument(edit.document, editing: (Data(file.text), old), store: "test")
                } catch {
                    Issue.record("\(error): \(what)")
                    continue
                }
                let new = Array(written)
                let text = String(decoding: new, as: UTF8.self)
                texts.append(text)
                expected.append(edit.document)
                edits += 1
                let (low, high) = (edit.allowed.lowerBound, edit.allowed.upperBound)
                #expect(
                    new.count >= low + file.text.count - high && new.starts(with: file.text[..<low])
                        && new.reversed().starts(with: file.text[high...].reversed()),
                    "bytes outside \(edit.allowed) changed: \(what)\nwrote:\n\(text)")
                for comment in file.comments {
                    let kept = text.contains(comment.text)
                    if edit.owned.contains(comment.offset) {
                        #expect(!kept || !edit.ownedGo, "\(comment.text) kept: \(what)\nwrote:\n\(text)")
                    } else {
                        #expect(kept, "\(comment.text) lost: \(what)\nwrote:\n\(text)")
                    }
                }
            }
        }
        #expect(edits >= 1_000)
        let independent = try IndependentParser.tomllib.parse(texts)
        for index in texts.indices {
            // (A multi-line string's CRLF line breaks are one `\n` to tomllib, as TOML allows.)
            let read = independent[index].map(Self.withLF)
            let want = Self.withLF(TOMLCodecTests.comparable(expected[index]))
            let same = read.map { $0.isSameValue(as: want) } ?? false
            let difference = read.flatMap { want.firstDifference(from: $0) }
            #expect(
                same,
                "tomllib reads another document (at \(difference.map { "\($0)" } ?? "all")) from:\n\(texts[index])")
        }
    }
}

extension TOMLEditPropertyTests {
    /// The document with each string's CRLF line breaks written `\n`.
    static func withLF(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text): .string(text.replacingOccurrences(of: "\r\n", with: "\n"))
        case .array(let elements): .array(elements.map(withLF))
        case .object(let members): .object(members.mapValues(withLF))
        default: value
        }
    }
}

/// A random TOML text and where its entries, tables and comments stand.
struct GeneratedTOMLText {
    typealias Path = [ValuePath.Component]

    /// A value that can be set: a key's, an array element's, an inline-table member's.
    struct Value {
        var path: Path
        var range: Range<Int>
        /// Whether it is written on one line (a one-line array's element or an inline table's member).
        var inline: Bool
    }

    /// An entry that can be removed, with the span its removal may change and its own comments.
    struct Removable {
        var path: Path
        var span: ClosedRange<Int>
        var owned: Range<Int>
    }

    /// A table or array that can gain an entry, with the span each addition may change.
    enum Container {
        /// A table written as sections or dotted keys: a new key goes at `end`.
        case table(Path, end: Int)
        /// An inline table: a new member goes before its closing brace.
        case inlineTable(Path, span: ClosedRange<Int>)
        /// An array: a new element goes at the span of its place (index `count`: after the last).
        case array(Path, spans: [ClosedRange<Int>], scalarsOnly: Bool)
        /// An array of tables: a new element after the last element's section.
        case arrayOfTables(Path, span: ClosedRange<Int>)
    }

    var text: [UInt8] = []
    var values: [Value] = []
    var removables: [Removable] = []
    var containers: [Container] = []
    var comments: [(offset: Int, text: String)] = []

    /// One edit of the text's document at one path, the bytes it may change and the comments it takes.
    struct Edit {
        var kind: String
        var path: Path
        var document: JSONValue
        var allowed: ClosedRange<Int>
        /// The offsets of the comments that may go with the edit (inside a replaced value), and whether they
        /// must (a removed entry's own).
        var owned: Range<Int> = 0..<0
        var ownedGo = false
    }

    func randomEdit(of old: JSONValue, using random: inout SeededGenerator, fresh: Int) -> Edit? {
        var document = old
        func freshScalar() -> JSONValue {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: .integer(1_000_000 + fresh)
            case 1: .string("new \(fresh)")
            case 2: .bool(fresh % 2 == 0)
            default: .double(Double(fresh) + 0.5)
            }
        }
        switch Int.random(in: 0..<7, using: &random) {
        case 0, 1, 2:
            guard let value = values.randomElement(using: &random), let was = document[path: ValuePath(value.path)]
            else { return nil }
            let new: JSONValue
            switch was {
            case .integer(let number): new = .integer(number + 4096)
            case .string(let string) where TOMLReader.dateTime(string) == string: new = .string("2001-02-03")
            case .string(let string): new = .string(string + " and \(fresh)")
            case .double(let number): new = .double(number.isFinite ? number * 2 + 1 : 1.5)
            case .bool(let flag): new = .bool(!flag)
            default: new = freshScalar()
            }
            document[path: ValuePath(value.path)] = new
            return Edit(
                kind: "set", path: value.path, document: document,
                allowed: value.range.lowerBound...value.range.upperBound, owned: value.range)
        case 3:
            guard let value = values.randomElement(using: &random) else { return nil }
            let new: JSONValue =
                value.inline || Bool.random(using: &random)
                ? .array([.integer(fresh), .string("e\(fresh)")]) : .object(["n\(fresh)": .integer(fresh)])
            document[path: ValuePath(value.path)] = new
            return Edit(
                kind: "set another type", path: value.path, document: document,
                allowed: value.range.lowerBound...value.range.upperBound,
                owned: value.range)
        case 4:
            guard let removable = removables.randomElement(using: &random) else { return nil }
            try? document.remove(at: ValuePath(removable.path))
            return Edit(
                kind: "remove", path: removable.path, document: document, allowed: removable.span,
                owned: removable.owned, ownedGo: true)
        default:
            guard let container = containers.randomElement(using: &random) else { return nil }
            switch container {
            case .table(let path, let end):
                let value: JSONValue =
                    Int.random(in: 0..<4, using: &random) == 0 ? .object(["n\(fresh)": .integer(fresh)]) : freshScalar()
                if case .object = value, path.isEmpty {
                    // A new table of the root: a section at the end of the text.
                    document[path: ValuePath([.key("new\(fresh)")])] = value
                    return Edit(kind: "add a table", path: path, document: document, allowed: end...text.count)
                }
                guard case .object = document[path: ValuePath(path)] else { return nil }
                document[path: ValuePath(path + [.key("new\(fresh)")])] = value
                if case .object = value {
                    return Edit(kind: "add a table", path: path, document: document, allowed: end...text.count)
                }
                return Edit(kind: "add a key", path: path, document: document, allowed: end...end)
            case .inlineTable(let path, let span):
                document[path: ValuePath(path + [.key("new\(fresh)")])] = freshScalar()
                return Edit(kind: "add a member", path: path, document: document, allowed: span)
            case .array(let path, let spans, let scalarsOnly):
                guard case .array(var elements)? = document[path: ValuePath(path)] else { return nil }
                let before = Int.random(in: 0..<spans.count, using: &random)
                elements.insert(scalarsOnly ? freshScalar() : .array([.integer(fresh)]), at: before)
                document[path: ValuePath(path)] = .array(elements)
                return Edit(
                    kind: "add an element before \(before)", path: path, document: document, allowed: spans[before])
            case .arrayOfTables(let path, let span):
                guard case .array(let elements)? = document[path: ValuePath(path)] else { return nil }
                document[path: ValuePath(path)] = .array(elements + [.object(["name": .string("n\(fresh)")])])
                return Edit(kind: "add a table to an array of tables", path: path, document: document, allowed: span)
            }
        }
    }

    /// Writes a random text, recording where everything stands.
    struct Generator {
        var random: SeededGenerator
        var counter: Int
        private var file = GeneratedTOMLText()
        private let newline: String

        init(random: SeededGenerator, counter: Int) {
            var random = random
            newline = Int.random(in: 0..<4, using: &random) == 0 ? "\r\n" : "\n"
            self.random = random
            self.counter = counter
        }

        private var offset: Int { file.text.count }

        private mutating func write(_ text: String) {
            file.text += Array(text.replacingOccurrences(of: "\n", with: newline).utf8)
        }

        private mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

        private mutating func unique() -> Int {
            counter += 1
            return counter
        }

        /// A comment line (`# …`) with its own words, recorded.
        private mutating func commentLine(indent: String = "") {
            file.comments.append((offset + indent.utf8.count, "# note \(unique()) about what follows"))
            write(indent + file.comments.last!.text + "\n")
        }

        /// An end-of-line comment, recorded, or nothing.
        private mutating func endComment() {
            guard chance(40) else { return }
            write("  ")
            file.comments.append((offset, "# tail \(unique())"))
            write(file.comments.last!.text)
        }

        /// A scalar's text.
        private mutating func scalar() -> String {
            let n = unique()
            switch Int.random(in: 0..<13, using: &random) {
            case 0: return "\(n)"
            case 1: return "0x\(String(n + 255, radix: 16, uppercase: true))"
            case 2: return "1_\(String(format: "%03d", n % 1000))_000"
            case 3: return "\(n).25"
            case 4: return "\(n)e2"
            case 5: return n % 2 == 0 ? "true" : "false"
            case 6: return "\"basic \(n) \\\"quoted\\\"\""
            case 7: return "'literal \(n) C:\\path'"
            case 8: return "\"\"\"\nmulti \(n)\nline\"\"\""
            case 9: return "'''\nraw \(n)\n'''"
            case 10: return "1979-05-\(10 + n % 18)"
            case 11: return "1979-05-27T07:32:\(10 + n % 40)Z"
            default: return n % 3 == 0 ? "inf" : (n % 3 == 1 ? "-inf" : "\(n).5")
            }
        }

        private mutating func key() -> String {
            let n = unique()
            return chance(10) ? "\"quoted key \(n)\"" : "key\(n)"
        }

        private mutating func keyText(_ key: String) -> String {
            key.hasPrefix("\"") ? String(key.dropFirst().dropLast()) : key
        }

        /// `key = value` lines of the table at `path` (`prefix`: the dotted keys before each key, from the
        /// section), with the containers of their values; returns where the last line ends.
        private mutating func keyValues(at path: Path, prefix: [String], count: Int, removable: Bool) -> Int {
            var end = offset
            for _ in 0..<count {
                let ownStart = offset
                if chance(30) { commentLine() }
                let key = key()
                let memberPath = path + [.key(keyText(key))]
                write((prefix + [key]).joined(separator: ".") + " = ")
                let valueStart = offset
                value(at: memberPath)
                file.values.append(Value(path: memberPath, range: valueStart..<offset, inline: false))
                endComment()
                write("\n")
                end = offset
                if removable {
                    file.removables.append(
                        Removable(path: memberPath, span: ownStart...offset, owned: ownStart..<offset))
                }
            }
            return end
        }

        /// A value: a scalar, a one-line array, an array one element per line, or an inline table.
        private mutating func value(at path: Path) {
            switch Int.random(in: 0..<10, using: &random) {
            case 0, 1: oneLineArray(at: path)
            case 2: linesArray(at: path)
            case 3: inlineTable(at: path)
            default: write(scalar())
            }
        }

        private mutating func oneLineArray(at path: Path) {
            let open = offset
            write("[")
            let count = Int.random(in: 0...4, using: &random)
            var ranges: [Range<Int>] = []
            for index in 0..<count {
                if index > 0 { write(", ") }
                let start = offset
                write(scalar())
                ranges.append(start..<offset)
                file.values.append(Value(path: path + [.index(index)], range: ranges[index], inline: true))
            }
            if count > 0, chance(25) { write(",") }
            let close = offset
            write("]")
            for index in 0..<count {
                let low = index > 0 ? ranges[index - 1].upperBound : open + 1
                let high = index < count - 1 ? ranges[index + 1].lowerBound : close
                file.removables.append(Removable(path: path + [.index(index)], span: low...high, owned: 0..<0))
            }
            var spans = (0..<count).map { index in
                (index > 0 ? ranges[index - 1].upperBound : open + 1)...ranges[index].lowerBound
            }
            spans.append((ranges.last?.upperBound ?? open + 1)...close)
            file.containers.append(.array(path, spans: spans, scalarsOnly: true))
        }

        private mutating func linesArray(at path: Path) {
            write("[")
            endComment()
            write("\n")
            let count = Int.random(in: 1...5, using: &random)
            let trailing = chance(70)
            var lineStarts: [Int] = []
            var lineEnds: [Int] = []
            var valueEnds: [Int] = []
            var owned: [Range<Int>] = []
            for index in 0..<count {
                // Between elements: a commented-out element, which stays, and the element's own comment.
                if chance(25) {
                    file.comments.append((offset + 4, "# \"old\(unique())\","))
                    write("    " + file.comments.last!.text + "\n")
                }
                let ownStart = offset
                if chance(30) { commentLine(indent: "    ") }
                lineStarts.append(offset)
                write("    ")
                let start = offset
                write(scalar())
                valueEnds.append(offset)
                file.values.append(Value(path: path + [.index(index)], range: start..<offset, inline: false))
                if index < count - 1 || trailing { write(",") }
                endComment()
                write("\n")
                lineEnds.append(offset)
                owned.append(ownStart..<offset)
            }
            if chance(25) {
                file.comments.append((offset + 4, "# \"later\(unique())\","))
                write("    " + file.comments.last!.text + "\n")
            }
            write("]")
            for index in 0..<count {
                file.removables.append(
                    Removable(
                        path: path + [.index(index)], span: owned[index].lowerBound...lineEnds[index],
                        owned: owned[index]))
            }
            var spans = (0..<count).map { index in
                (index > 0 ? lineEnds[index - 1] : owned[0].lowerBound)...lineStarts[index]
            }
            spans.append(valueEnds[count - 1]...lineEnds[count - 1])
            file.containers.append(.array(path, spans: spans, scalarsOnly: false))
        }

        private mutating func inlineTable(at path: Path) {
            let open = offset
            write("{")
            let count = Int.random(in: 0...3, using: &random)
            write(count > 0 ? " " : "")
            var starts: [Int] = []
            var ends: [Int] = []
            for index in 0..<count {
                if index > 0 { write(", ") }
                let key = "m\(unique())"
                starts.append(offset)
                write(key + " = ")
                let start = offset
                write(scalar())
                ends.append(offset)
                file.values.append(Value(path: path + [.key(key)], range: start..<offset, inline: true))
            }
            if count > 0 { write(" ") }
            let close = offset
            write("}")
            for index in 0..<count {
                guard case .key(let key) = file.values[file.values.count - count + index].path.last else { continue }
                let low = index > 0 ? ends[index - 1] : open + 1
                let high = index < count - 1 ? starts[index + 1] : close
                file.removables.append(Removable(path: path + [.key(key)], span: low...high, owned: 0..<0))
            }
            file.containers.append(.inlineTable(path, span: (ends.last ?? open + 1)...close))
        }

        mutating func make() -> GeneratedTOMLText {
            if chance(30) {
                commentLine()
                write("\n")
            }
            // The root's keys, and a table dotted keys define.
            var rootEnd = keyValues(at: [], prefix: [], count: Int.random(in: 1...4, using: &random), removable: true)
            if chance(50) {
                let owner = "owner\(unique())"
                rootEnd = keyValues(
                    at: [.key(owner)], prefix: [owner], count: Int.random(in: 2...3, using: &random), removable: true)
                file.containers.append(.table([.key(owner)], end: rootEnd))
            }
            file.containers.append(.table([], end: rootEnd))
            // Sections: tables, a sub-table, an array of tables.
            // Removals whose span ends where the next section starts.
            var pending: [Removable] = []
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                write("\n")
                for var removable in pending {
                    removable.span = removable.span.lowerBound...offset
                    file.removables.append(removable)
                }
                pending = []
                let blockStart = offset
                if chance(30) { commentLine() }
                let name = "table\(unique())"
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    var elementEnds: [Int] = []
                    var blocks: [Range<Int>] = [blockStart..<blockStart]
                    let count = Int.random(in: 1...3, using: &random)
                    for index in 0..<count {
                        if index > 0 {
                            write("\n")
                            blocks.append(offset..<offset)
                            if chance(40) { commentLine() }
                        }
                        blocks[index] = blocks[index].lowerBound..<offset
                        write("[[\(name)]]\n")
                        elementEnds.append(
                            keyValues(
                                at: [.key(name), .index(index)], prefix: [],
                                count: Int.random(in: 1...3, using: &random), removable: true))
                        file.containers.append(.table([.key(name), .index(index)], end: elementEnds[index]))
                    }
                    file.containers.append(.arrayOfTables([.key(name)], span: elementEnds.last!...elementEnds.last!))
                    // An element (of two or more) removed: its section, and the comments above its header and in it.
                    for index in 0..<count where count > 1 {
                        let low = index > 0 ? elementEnds[index - 1] : blocks[0].lowerBound
                        let owned = blocks[index].lowerBound..<elementEnds[index]
                        let removable = Removable(path: [.key(name), .index(index)], span: low...low, owned: owned)
                        if index < count - 1 {
                            file.removables.append(
                                Removable(path: removable.path, span: low...blocks[index + 1].lowerBound, owned: owned))
                        } else {
                            pending.append(removable)
                        }
                    }
                case 1:
                    write("[\(name)]\n")
                    var end = keyValues(
                        at: [.key(name)], prefix: [], count: Int.random(in: 1...4, using: &random), removable: true)
                    if chance(50) {
                        let dotted = "part\(unique())"
                        end = keyValues(at: [.key(name), .key(dotted)], prefix: [dotted], count: 2, removable: true)
                        file.containers.append(.table([.key(name), .key(dotted)], end: end))
                    }
                    file.containers.append(.table([.key(name)], end: end))
                default:
                    write("[\(name)]\n")
                    let end = keyValues(
                        at: [.key(name)], prefix: [], count: Int.random(in: 1...3, using: &random), removable: true)
                    file.containers.append(.table([.key(name)], end: end))
                    write("\n[\(name).sub]\n")
                    let subEnd = keyValues(
                        at: [.key(name), .key("sub")], prefix: [], count: Int.random(in: 1...2, using: &random),
                        removable: true)
                    file.containers.append(.table([.key(name), .key("sub")], end: subEnd))
                }
            }
            for var removable in pending {
                removable.span = removable.span.lowerBound...offset
                file.removables.append(removable)
            }
            return file
        }
    }
}
