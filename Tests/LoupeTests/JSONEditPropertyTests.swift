import Foundation
@testable import Loupe
import LoupeTestSupport
import Testing

/// Random JSON and JSONC files like the ones people write (nested objects, one-line and multi-line arrays,
/// comments of both kinds above entries and at the ends of lines, trailing commas, CRLF, tabs), each
/// edited at one path. The generator knows where every entry stands in the text it wrote, so each edit is
/// checked for what it may touch: the bytes that changed lie within the edited value, the removed entry
/// (with its own comments and the comma before it), or the end of the container that gains an entry; every
/// comment that is not the removed entry's own stays; a one-line container stays on one line; a byte-order
/// mark stays. Writes of a few independent edits at once are checked for their comments. Every text is read
/// back by Python (`json5` for JSONC, `json` for JSON) and must hold the expected document.
@Suite("JSON and JSONC edits at random: only the edited entry's bytes change")
struct JSONEditPropertyTests {
    @Test(arguments: [UInt64(11), 12, 13])
    func jsoncEditsChangeOnlyTheirEntry(seed: UInt64) throws {
        try check(codec: JSONCCodec(), parser: .json5, comments: true, seed: seed, files: 40, editsPerFile: 10)
    }

    @Test(arguments: [UInt64(21), 22])
    func jsonEditsChangeOnlyTheirEntry(seed: UInt64) throws {
        try check(codec: JSONCodec(), parser: .json, comments: false, seed: seed, files: 30, editsPerFile: 10)
    }

    /// Makes `files` random texts, and of each `editsPerFile` random one-path edits and as many writes of a
    /// few independent edits at once; checks each.
    func check(
        codec: some DocumentCodec, parser: IndependentParser, comments: Bool, seed: UInt64, files: Int,
        editsPerFile: Int
    ) throws {
        var random = SeededGenerator(seed: seed)
        var texts: [String] = []
        var expected: [JSONValue] = []
        var counter = 0
        for _ in 0..<files {
            var generator = GeneratedJSONText.Generator(random: random, comments: comments, counter: counter)
            let file = generator.make()
            random = generator.random
            counter = generator.counter
            let old = try codec.parse(Data(file.text))
            #expect(old == file.document, "the generator's document:\n\(String(decoding: file.text, as: UTF8.self))")
            for _ in 0..<editsPerFile {
                counter += 1
                guard let edit = file.randomEdit(using: &random, fresh: counter) else { continue }
                guard let new = write(edit.document, over: file, holding: old, codec: codec, edits: [edit]) else {
                    continue
                }
                texts.append(String(decoding: new.trimmingPrefix(TextEngine.byteOrderMark), as: UTF8.self))
                expected.append(edit.document)
                // The bytes outside the region the edit may change are the old text's, at the start and the end.
                let (low, high) = (edit.allowed.lowerBound, edit.allowed.upperBound)
                #expect(
                    new.count >= low + file.text.count - high && new.starts(with: file.text[..<low])
                        && new.reversed().starts(with: file.text[high...].reversed()),
                    "bytes outside \(edit.allowed) changed: \(describe([edit], file, new))")
                if edit.staysOnLines {
                    #expect(
                        new.count { $0 == UInt8(ascii: "\n") } == file.text.count { $0 == UInt8(ascii: "\n") },
                        "lines changed: \(describe([edit], file, new))")
                }
            }
            // A few edits at once, each of a part the others leave alone.
            for _ in 0..<editsPerFile {
                var edits: [GeneratedJSONText.Edit] = []
                for _ in 0..<Int.random(in: 2...4, using: &random) {
                    counter += 1
                    if let edit = file.randomEdit(using: &random, fresh: counter),
                        edits.allSatisfy({ $0.isIndependent(of: edit) })
                    {
                        edits.append(edit)
                    }
                }
                var document = file.document
                for edit in edits { edit.change(&document) }
                guard let new = write(document, over: file, holding: old, codec: codec, edits: edits) else { continue }
                texts.append(String(decoding: new.trimmingPrefix(TextEngine.byteOrderMark), as: UTF8.self))
                expected.append(document)
            }
        }
        #expect(texts.count >= files * editsPerFile * 2 * 9 / 10)
        let independent = try parser.parse(texts)
        for index in texts.indices {
            #expect(independent[index] == expected[index], "\(parser) reads another document from:\n\(texts[index])")
        }
    }

    /// `document` written over the generated file by `codec`; records an issue where the write fails, a
    /// byte-order mark comes or goes, or a comment the edits do not take is lost or one they take is kept.
    func write(
        _ document: JSONValue, over file: GeneratedJSONText, holding old: JSONValue, codec: some DocumentCodec,
        edits: [GeneratedJSONText.Edit]
    ) -> [UInt8]? {
        let new: [UInt8]
        do {
            new = Array(try codec.serializeDocument(document, editing: (Data(file.text), old), store: "test"))
        } catch {
            Issue.record("\(error): \(describe(edits, file, nil))")
            return nil
        }
        #expect(
            new.starts(with: TextEngine.byteOrderMark) == file.text.starts(with: TextEngine.byteOrderMark),
            "the byte-order mark: \(describe(edits, file, new))")
        let text = String(decoding: new, as: UTF8.self)
        var wrong: [String] = []
        for comment in file.comments {
            let kept = text.contains(comment.text)
            if let owner = edits.first(where: { $0.owned.contains(comment.offset) }) {
                if owner.ownedGo && kept { wrong.append("\(comment.text) kept") }
            } else if !kept {
                wrong.append("\(comment.text) lost")
            }
        }
        if !wrong.isEmpty { Issue.record("\(wrong.joined(separator: ", ")): \(describe(edits, file, new))") }
        return new
    }

    func describe(_ edits: [GeneratedJSONText.Edit], _ file: GeneratedJSONText, _ new: [UInt8]?) -> String {
        let what = edits.map { "\($0.kind) at \(ValuePath($0.path))" }.joined(separator: ", ")
        return "\(what) in:\n\(String(decoding: file.text, as: UTF8.self))"
            + (new.map { "\nwrote:\n\(String(decoding: $0, as: UTF8.self))" } ?? "")
    }
}

/// A random JSON or JSONC text, its document, and where its entries, containers and comments stand.
struct GeneratedJSONText {
    /// A member or element: its own comment lines (from `ownStart`), its value, and its tail (to `tailEnd`:
    /// its comma and the comments on its line).
    struct Entry {
        var ownStart: Int
        var start: Int
        var value: Range<Int>
        var tailEnd: Int
    }

    struct Container {
        var open: Int
        var close: Int
        var isObject: Bool
        var oneLine: Bool
        var entries: [[ValuePath.Component]]
    }

    var text: [UInt8] = []
    var document: JSONValue = .null
    var entries: [[ValuePath.Component]: Entry] = [:]
    var containers: [[ValuePath.Component]: Container] = [:]
    var containerPaths: [[ValuePath.Component]] = []
    /// The paths of the entries, in the order they were written.
    var entryPaths: [[ValuePath.Component]] = []
    var comments: [(offset: Int, text: String)] = []

    /// One edit of the text's document at one path, with the bytes it may change and the comments it takes.
    struct Edit {
        var kind: String
        var path: [ValuePath.Component]
        /// What the edit does to a document.
        var change: (inout JSONValue) -> Void
        /// The document the edit makes of the text's.
        var document: JSONValue
        /// Where it changes the document: the entry set or removed, the new member, or the array that gains
        /// or loses an element (whose elements' paths the edit shifts).
        var scope: [ValuePath.Component]
        /// The bytes of the old text the edit may change (an insertion may be at either end).
        var allowed: ClosedRange<Int>
        /// The offsets of the comments that may go with the edit (a replaced value's), and whether they
        /// must (a removed entry's own).
        var owned: Range<Int>
        var ownedGo = false
        /// Whether the text keeps its number of lines (an entry gained or lost in a one-line container).
        var staysOnLines = false

        init(
            _ kind: String, at path: [ValuePath.Component], scope: [ValuePath.Component], in document: JSONValue,
            change: @escaping (inout JSONValue) -> Void, allowed: ClosedRange<Int>, owned: Range<Int> = 0..<0
        ) {
            self.kind = kind
            self.path = path
            self.change = change
            self.scope = scope
            self.allowed = allowed
            self.owned = owned
            var changed = document
            change(&changed)
            self.document = changed
        }

        /// Whether this edit and `other` can be made together: neither changes what the other names.
        func isIndependent(of other: Edit) -> Bool {
            !scope.starts(with: other.scope) && !other.scope.starts(with: scope)
        }
    }

    /// A random edit: a value set to another of its type or of another, a member or element removed, a
    /// member added, an element added at a random place. Every new value is unique in the document.
    func randomEdit(using random: inout SeededGenerator, fresh: Int) -> Edit? {
        func freshValue(scalarOnly: Bool = false) -> JSONValue {
            switch Int.random(in: 0..<(scalarOnly ? 2 : 4), using: &random) {
            case 0: .integer(1_000_000 + fresh)
            case 1: .string("new\(fresh)")
            case 2: .object(["n\(fresh)": .integer(fresh), "m\(fresh)": .array([.bool(true)])])
            default: .array([.integer(fresh), .string("e\(fresh)")])
            }
        }
        switch Int.random(in: 0..<6, using: &random) {
        case 0, 1, 2:  // set: to a value of the same type (scalars), or of another
            guard let path = entryPaths.randomElement(using: &random), let entry = entries[path] else { return nil }
            let old = document[path: ValuePath(path)]!
            let value: JSONValue
            switch (old, Int.random(in: 0..<3, using: &random)) {
            case (.integer(let number), 0...1): value = .integer(number + 7_000_000)
            case (.string(let string), 0...1): value = .string(string + "x")
            case (.double(let number), 0...1): value = .double(number + 0.25)
            case (.bool(let flag), 0...1): value = .bool(!flag)
            default: value = freshValue()
            }
            return Edit(
                "set", at: path, scope: path, in: document, change: { $0[path: ValuePath(path)] = value },
                allowed: entry.value.lowerBound...entry.value.upperBound, owned: entry.value)
        case 3:  // remove a member or an element
            guard let path = entryPaths.randomElement(using: &random), let entry = entries[path] else { return nil }
            let parentPath = Array(path.dropLast())
            let container = containers[parentPath]!
            let position = container.entries.firstIndex(of: path)!
            let low = position > 0 ? entries[container.entries[position - 1]]!.value.upperBound : container.open + 1
            let high =
                position < container.entries.count - 1
                ? entries[container.entries[position + 1]]!.start : container.close
            var edit = Edit(
                "remove", at: path, scope: container.isObject ? path : parentPath, in: document,
                change: { try? $0.remove(at: ValuePath(path)) }, allowed: low...high,
                owned: entry.ownStart..<entry.tailEnd)
            edit.ownedGo = true
            edit.staysOnLines = container.oneLine
            return edit
        default:  // add a member or an element
            guard let path = containerPaths.randomElement(using: &random), let container = containers[path] else {
                return nil
            }
            let value = freshValue(scalarOnly: container.oneLine)
            let end = container.entries.last.map { entries[$0]!.value.upperBound } ?? container.open + 1
            var edit: Edit
            if container.isObject {
                let member = path + [.key("new\(fresh)")]
                edit = Edit(
                    "add a member", at: path, scope: member, in: document,
                    change: { $0[path: ValuePath(member)] = value },
                    allowed: end...container.close)
            } else {
                let before = Int.random(in: 0...container.entries.count, using: &random)
                let allowed =
                    before == container.entries.count
                    ? end...container.close
                    : (before > 0 ? entries[container.entries[before - 1]]!.value.upperBound : container.open + 1)...entries[
                        container.entries[before]]!.start
                edit = Edit(
                    "add an element before \(before)", at: path, scope: path, in: document,
                    change: { document in
                        guard case .array(var elements)? = document[path: ValuePath(path)] else { return }
                        elements.insert(value, at: before)
                        document[path: ValuePath(path)] = .array(elements)
                    }, allowed: allowed)
            }
            edit.staysOnLines = container.oneLine && !container.entries.isEmpty
            return edit
        }
    }

    /// Writes a random text, recording where everything stands.
    struct Generator {
        var random: SeededGenerator
        let comments: Bool
        var counter: Int
        private var file = GeneratedJSONText()
        private let newline: String
        private let unit: String
        private let trailingCommas: Bool
        private let separator: String
        private let byteOrderMark: Bool

        init(random: SeededGenerator, comments: Bool, counter: Int) {
            self.random = random
            self.comments = comments
            self.counter = counter
            newline = Int.random(in: 0..<4, using: &self.random) == 0 ? "\r\n" : "\n"
            unit = ["  ", "    ", "\t"].randomElement(using: &self.random)!
            trailingCommas = comments && Bool.random(using: &self.random)
            separator = [": ", ": ", " : ", ":"].randomElement(using: &self.random)!
            byteOrderMark = Int.random(in: 0..<10, using: &self.random) == 0
        }

        mutating func make() -> GeneratedJSONText {
            if byteOrderMark { file.text += TextEngine.byteOrderMark }
            if comments, chance(0.3) {
                comment(line: true)
                emit(newline)
            }
            file.document = value(at: [], indentation: "", depth: 0, root: true, oneLine: false, inArray: false)
            emit(newline)
            return file
        }

        private mutating func next() -> Int {
            counter += 1
            return counter
        }

        private mutating func chance(_ probability: Double) -> Bool {
            Double.random(in: 0..<1, using: &random) < probability
        }

        private mutating func emit(_ text: String) {
            file.text += Array(text.utf8)
        }

        private mutating func comment(line: Bool) {
            let text = line ? "// c\(next())." : "/* c\(next()) */"
            file.comments.append((file.text.count, text))
            emit(text)
        }

        /// A scalar, unique in the document (booleans and null only as members: an array of equal
        /// elements makes which one an edit removes a matter of choice).
        private mutating func scalar(inArray: Bool) -> (JSONValue, String) {
            let number = next()
            switch Int.random(in: 0..<(inArray ? 3 : 5), using: &random) {
            case 0: return (.integer(number), "\(number)")
            case 1: return (.string("s\(number)"), "\"s\(number)\"")
            case 2: return (.double(Double(number) + 0.5), "\(Double(number) + 0.5)")
            case 3: return chance(0.5) ? (.bool(true), "true") : (.bool(false), "false")
            default: return (.null, "null")
            }
        }

        private mutating func value(
            at path: [ValuePath.Component], indentation: String, depth: Int, root: Bool, oneLine: Bool, inArray: Bool
        ) -> JSONValue {
            let kind = root ? 0 : depth >= 4 ? 2 : Int.random(in: 0..<5, using: &random)
            guard kind < 2 else {
                let (value, text) = scalar(inArray: inArray)
                emit(text)
                return value
            }
            let isObject = kind == 0
            let isOneLine = oneLine || (!root && chance(0.35))
            let count = Int.random(in: (inArray || root ? 1 : 0)...(isOneLine ? 3 : 5), using: &random)
            let open = file.text.count
            emit(isObject ? "{" : "[")
            let inner = indentation + unit
            var members: [String: JSONValue] = [:]
            var elements: [JSONValue] = []
            var paths: [[ValuePath.Component]] = []
            for index in 0..<count {
                let key = "k\(next())"
                let entryPath = path + [isObject ? .key(key) : .index(index)]
                let ownStart: Int
                if isOneLine {
                    if index > 0 { emit(separator == ":" ? "" : " ") }
                    ownStart = file.text.count
                } else {
                    emit(newline)
                    if comments, index > 0, chance(0.15) { emit(newline) }
                    ownStart = file.text.count
                    if comments {
                        for _ in 0..<2 where chance(0.3) {
                            emit(inner)
                            comment(line: chance(0.5))
                            emit(newline)
                        }
                    }
                    emit(inner)
                    if comments, chance(0.1) {  // a comment before the key, on the key's line
                        comment(line: false)
                        emit(" ")
                    }
                }
                let start = file.text.count
                if isObject { emit("\"\(key)\"" + separator) }
                let valueStart = file.text.count
                let value = value(
                    at: entryPath, indentation: inner, depth: depth + 1, root: false, oneLine: isOneLine,
                    inArray: !isObject)
                let valueEnd = file.text.count
                let comma = index < count - 1 || (trailingCommas && !isOneLine)
                if !isOneLine, comments, chance(0.3) {
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0:
                        if comma { emit(",") }
                        emit(" ")
                        comment(line: true)
                    case 1:
                        emit(" ")
                        comment(line: false)
                        if comma { emit(",") }
                    default:
                        if comma { emit(",") }
                        emit("   ")
                        comment(line: false)
                    }
                } else if comma {
                    emit(",")
                }
                file.entries[entryPath] = Entry(
                    ownStart: ownStart, start: start, value: valueStart..<valueEnd, tailEnd: file.text.count)
                paths.append(entryPath)
                file.entryPaths.append(entryPath)
                if isObject { members[key] = value } else { elements.append(value) }
            }
            if !isOneLine && (count > 0 || chance(0.5)) {
                if comments, chance(0.15) {
                    emit(newline + inner)
                    comment(line: true)
                }
                emit(newline + indentation)
            }
            emit(isObject ? "}" : "]")
            file.containers[path] = Container(
                open: open, close: file.text.count - 1, isObject: isObject, oneLine: isOneLine, entries: paths)
            file.containerPaths.append(path)
            return isObject ? .object(members) : .array(elements)
        }
    }
}
