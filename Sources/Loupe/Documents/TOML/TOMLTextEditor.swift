import Foundation

/// Writes a new document as an edit of the TOML text that held the previous one: a changed value is
/// replaced where it stands (an inline table or an array whole), a removed key goes with its line and
/// the comment on it, a removed table with its section, a new key goes after the last `key = value` line of
/// its table's section (dotted from the nearest section, if its table has none), and a new table goes at
/// the end of the file. Comments, blank lines, the order of keys and sections, and the spelling of what
/// did not change all stay.
///
/// A changed value keeps its spelling where the new value allows it: a literal string stays literal, a
/// multi-line string multi-line, a hexadecimal, octal or binary integer keeps its base, and a decimal one its
/// `_` grouping. An array of tables that gains elements gets `[[…]]` sections after its last one, and one
/// that loses elements loses their sections.
///
/// A new table inside an element of an array of tables is a key with an inline table in that element's
/// section (a header would name the array's last element). What this does not edit in place (an array of
/// tables inside an element of another that gains elements, an array of tables that becomes something
/// else) makes it return nil, and the codec writes the document anew. An edit that adds or removes lines
/// is read again, and must hold the new document, or it is not used either. An edit that only replaces values is checked value by value (each new value's text
/// must read as that value), and the text around them is what it was.
///
/// Given a ``Memo``, an edit leaves the outline of the text it wrote (where each section and each value
/// is: shifted by its own edits, or as the check read it), so that the next edit of that text does not
/// read it again.
struct TOMLTextEditor {
    private let bytes: [UInt8]
    private(set) var outline: TOMLReader.Outline
    /// The index of the `key = value` line of each path in `outline`, for an outline edited again (nil:
    /// the lines are searched).
    private var lineIndex: [[ValuePath.Component]: Int]?
    private let newline: [UInt8]
    private var edits: [(range: Range<Int>, text: [UInt8])] = []
    /// The values replaced where they stand, each beside its edit: which `key = value` line, and the new
    /// value. As many as `edits` when every edit replaces a value.
    private var replaced: [(line: Int, value: JSONValue)] = []

    /// What an edit leaves for the next one: the text it wrote, the document that text holds, and where
    /// each part of it is written.
    struct Kept: Sendable {
        let text: Data
        /// `text`'s bytes, which the next edit starts from.
        let bytes: [UInt8]
        let document: JSONValue
        let outline: TOMLReader.Outline
        /// The index of each `key = value` line in `outline` by its path, once an edit made it.
        var lineIndex: [[ValuePath.Component]: Int]? = nil
    }

    /// The outline of the text a codec wrote last.
    typealias Memo = PartMemo<Kept>

    /// `document` written as an edit of `text`; nil when the edit cannot be made in place.
    static func edit(_ data: Data, into document: JSONValue, memo: Memo? = nil) -> Data? {
        var editor: TOMLTextEditor
        let previous: JSONValue
        let text: [UInt8]
        // The outline goes into the editor alone, so that shifting it after the edit does not copy it.
        if let kept = memo?.take(), kept.text.isSameText(as: data) {
            (previous, text) = (kept.document, kept.bytes)
            editor = TOMLTextEditor(bytes: text, outline: kept.outline)
            // An outline edited again is worth an index of its lines, which its later edits keep.
            editor.lineIndex = kept.lineIndex ?? Dictionary(
                kept.outline.keyValues.enumerated().map { ($1.path, $0) }, uniquingKeysWith: { first, _ in first })
        } else {
            text = Array(data)
            guard let read = try? TOMLReader.outlined(text) else { return nil }
            previous = read.document
            editor = TOMLTextEditor(bytes: text, outline: read.outline)
        }
        guard (try? editor.visit([], old: previous, new: document)) == true else { return nil }
        // From the end of the text back: removals of nested sections may share blank lines, and each takes
        // what the later one left. Where a removal and an insertion start at one place, the insertion
        // comes first, so that the removal does not take the inserted text with it.
        let ordered = editor.edits.sorted {
            ($0.range.lowerBound, $0.range.upperBound) > ($1.range.lowerBound, $1.range.upperBound)
        }
        var limit = text.count
        var spliced: [(range: Range<Int>, text: [UInt8])] = []
        spliced.reserveCapacity(ordered.count)
        for edit in ordered {
            let range = edit.range.lowerBound..<Swift.max(edit.range.lowerBound, Swift.min(edit.range.upperBound, limit))
            spliced.append((range, edit.text))
            limit = range.lowerBound
        }
        spliced.reverse()
        let output = text.splicing(spliced)
        if editor.shiftOutlineAfterReplacing() {
            let edited = Data(output)
            memo?.keep(Kept(text: edited, bytes: output, document: document, outline: editor.outline, lineIndex: editor.lineIndex))
            return edited
        }
        // The edit must say exactly what the document says; else it is written anew.
        guard let (written, writtenOutline) = try? TOMLReader.outlined(output), written.isIdentical(to: document) else { return nil }
        let edited = Data(output)
        memo?.keep(Kept(text: edited, bytes: output, document: written, outline: writtenOutline))
        return edited
    }

    /// Makes the outline that of the edited text, when every edit replaced a value and each new value's
    /// text reads as that value: every place after an edit moves by what the edits before it added or took
    /// away. False (and the outline stays) for an edit that adds or removes lines, which is read again
    /// instead.
    private mutating func shiftOutlineAfterReplacing() -> Bool {
        guard replaced.count == edits.count else { return false }
        // Each new value's text, read alone, must be the value.
        for (index, edit) in edits.enumerated() where !Self.reads(edit.text, as: replaced[index].value) {
            return false
        }
        // Values replaced by text of their own length (a flag flipped, a number of as many digits) move
        // nothing.
        if edits.allSatisfy({ $0.text.count == $0.range.count }) { return true }
        // Where each edit ends (in the old text), in order, and how much all edits up to it moved the text.
        let ordered = edits.sorted { $0.range.lowerBound < $1.range.lowerBound }
        var ends: [Int] = []
        var moved: [Int] = []
        var total = 0
        for edit in ordered {
            total += edit.text.count - edit.range.count
            ends.append(edit.range.upperBound)
            moved.append(total)
        }
        // An offset moves by what the edits that end at or before it moved the text.
        func shift(_ offset: Int) -> Int {
            var low = 0
            var high = ends.count
            while low < high {
                let middle = (low + high) / 2
                if ends[middle] <= offset { low = middle + 1 } else { high = middle }
            }
            return low == 0 ? offset : offset + moved[low - 1]
        }
        for index in outline.sections.indices {
            outline.sections[index].headerStart = shift(outline.sections[index].headerStart)
            outline.sections[index].bodyStart = shift(outline.sections[index].bodyStart)
        }
        for index in outline.keyValues.indices {
            let line = outline.keyValues[index]
            outline.keyValues[index].lines = shift(line.lines.lowerBound)..<shift(line.lines.upperBound)
            outline.keyValues[index].value = shift(line.value.lowerBound)..<shift(line.value.upperBound)
        }
        return true
    }

    /// Whether `text`, a key's value alone on its line, reads as `value`. A decimal integer and `true` or
    /// `false` always read as themselves; other text is read to see.
    static func reads(_ text: [UInt8], as value: JSONValue) -> Bool {
        switch value {
        case .integer(let integer) where text.elementsEqual(String(integer).utf8): true
        case .bool(let bool) where text.elementsEqual((bool ? "true" : "false").utf8): true
        default: (try? TOMLReader.document(from: Array("v = ".utf8) + text))?.isIdentical(to: .object(["v": value])) == true
        }
    }

    private init(bytes: [UInt8], outline: TOMLReader.Outline) {
        self.bytes = bytes
        self.outline = outline
        newline = bytes.firstIndex(of: UInt8(ascii: "\n")).map { $0 > 0 && bytes[$0 - 1] == UInt8(ascii: "\r") } == true
            ? Array("\r\n".utf8) : [UInt8(ascii: "\n")]
    }

    /// Makes the edits that turn `old` at `path` into `new`; false when it cannot be done in place.
    private mutating func visit(_ path: [ValuePath.Component], old: JSONValue?, new: JSONValue?) throws -> Bool {
        // Two objects: the keys whose values differ, in name order (new keys at one place go in that order);
        // none, and nothing changed. (Two tables count as changed, and are walked into.)
        var changed: [String] = []
        if case .object(let before)? = old, case .object(let after)? = new {
            changed = after.keysChanged(from: before) { $0.isIdentical(to: $1) }
            if changed.isEmpty { return true }
            changed.sort()
        } else if let old, let new, old.isIdentical(to: new) {
            return true
        }
        if let index = lineIndex.map({ $0[path] }) ?? outline.keyValues.firstIndex(where: { $0.path == path }) {
            let line = outline.keyValues[index]
            // An inline table whose tables the walk above took for changed, unchanged: its text stays.
            if let old, let new, old.isIdentical(to: new) { return true }
            if let new {
                edits.append((line.value, Array(try TOMLWriter.inlineText(of: new, spelledLike: bytes[line.value]).utf8)))
                replaced.append((index, new))
            } else {
                edits.append((line.lines, []))
            }
            return true
        }
        switch (old, new) {
        case (.object(let before)?, .object(let after)?):
            for key in changed {
                guard try visit(path.appending(.key(key)), old: before[key], new: after[key]) else { return false }
            }
            // A table that loses every key, and has no section of its own (its keys were dotted, or in
            // sections of tables inside it): a key makes it, empty.
            if after.isEmpty, !path.isEmpty, !outline.sections.contains(where: { $0.path == path }) {
                return try insert(.object([:]), at: path)
            }
            return true
        case (.array(let before)?, .array(let after)?) where after.allSatisfy({ if case .object = $0 { true } else { false } }):
            // An array of tables (an inline array is a value, edited above), element by element; elements
            // past the end of the shorter one are sections removed, or sections added after the last.
            for index in before.indices.prefix(after.count) {
                guard try visit(path.appending(.index(index)), old: before[index], new: after[index]) else { return false }
            }
            if before.count > after.count {
                for index in after.count..<before.count {
                    removeSections(under: path.appending(.index(index)))
                }
                // Every element gone: the key stays, as an empty array.
                if after.isEmpty { return try insert(.array([]), at: path) }
            } else if after.count > before.count {
                return try appendTables(Array(after[before.count...]), to: path, after: before.count)
            }
            return true
        case (nil, let value?):
            return try insert(value, at: path)
        case (_?, nil):
            // A table written with headers (or dotted keys): every section and line under it goes.
            removeSections(under: path)
            for line in outline.keyValues where line.path.starts(with: path)
                && !outline.sections[line.section].path.starts(with: path) {
                edits.append((line.lines, []))
            }
            return true
        case (let was?, let now?):
            // What sections or dotted keys hold becomes a value of another kind (or an array of tables an
            // array of values): it goes, and the new value comes as a new key or table.
            guard try visit(path, old: was, new: nil) else { return false }
            return try visit(path, old: nil, new: now)
        case (nil, nil):
            return true
        }
    }

    /// Adds `value` at `path`, which the text does not hold.
    private mutating func insert(_ value: JSONValue, at path: [ValuePath.Component]) throws -> Bool {
        guard case .key? = path.last else { return false }
        let parent = Array(path.dropLast())
        // A new table: a section of its own at the end of the file; unless it is inside an element of an
        // array of tables, which a header there would not reach, where it is a key with an inline table.
        if case .object(let members) = value, !members.isEmpty, !parent.contains(where: { if case .index = $0 { true } else { false } }) {
            let keys = path.map { component -> String in
                if case .key(let name) = component { return name }
                return ""
            }
            var text = try TOMLWriter.text(of: value, under: keys)
            if !bytes.isEmpty, bytes.last != UInt8(ascii: "\n") { text = String(decoding: newline, as: UTF8.self) + text }
            edits.append((bytes.count..<bytes.count, Array(text.utf8).replacingNewlines(with: newline, separating: !bytes.isEmpty)))
            return true
        }
        // A key: after the last line of the section of the nearest table that has one.
        // The nearest: the longest path, and of those the last section.
        let candidates = outline.sections.indices.filter { parent.starts(with: outline.sections[$0].path) }
        guard let longest = candidates.map({ outline.sections[$0].path.count }).max(),
              let section = candidates.last(where: { outline.sections[$0].path.count == longest })
        else { return false }
        let sectionPath = outline.sections[section].path
        let relative = path.dropFirst(sectionPath.count).map { component -> String in
            if case .key(let name) = component { return TOMLWriter.key(name) }
            return ""
        }
        guard !relative.contains("") else { return false }
        let lines = outline.keyValues.filter { $0.section == section }
        let offset = lines.last?.lines.upperBound ?? outline.sections[section].bodyStart
        var text: [UInt8] = []
        if offset > 0, bytes[offset - 1] != UInt8(ascii: "\n") { text += newline }
        text += Array((relative.joined(separator: ".") + " = " + (try TOMLWriter.inlineText(of: value))).utf8) + newline
        edits.append((offset..<offset, text))
        return true
    }

    /// Removes every section at or under `path`, header and body.
    private mutating func removeSections(under path: [ValuePath.Component]) {
        guard !path.isEmpty else { return }
        for section in outline.sections.indices where outline.sections[section].path.starts(with: path) {
            edits.append((removalRange(ofSection: section), []))
        }
    }

    /// Adds `elements` to the array of tables at `path`, which has `count` elements written as sections: a
    /// `[[…]]` section for each, after the last section of the array's last element.
    private mutating func appendTables(_ elements: [JSONValue], to path: [ValuePath.Component], after count: Int) throws -> Bool {
        guard count > 0, elements.allSatisfy({ if case .object = $0 { true } else { false } }),
              !path.contains(where: { if case .index = $0 { true } else { false } })
        else { return false }
        let last = path + [.index(count - 1)]
        guard let lastSection = outline.sections.indices.last(where: { outline.sections[$0].path.starts(with: last) }) else {
            return false
        }
        let keys = path.compactMap { component -> String? in
            if case .key(let name) = component { return name }
            return nil
        }
        // After its last line of content: blank lines and comments that come before the next section stay
        // with that section.
        let offset = contentEnd(ofSection: lastSection)
        var text = "\n" + (try TOMLWriter.text(ofArrayOfTables: elements, under: keys))
        if offset > 0, bytes[offset - 1] != UInt8(ascii: "\n") { text = "\n" + text }
        edits.append((offset..<offset, Array(text.utf8).replacingNewlines(with: newline, separating: false)))
        return true
    }

    /// Where section `index`'s content ends: after its header, or its last `key = value` line.
    private func contentEnd(ofSection index: Int) -> Int {
        outline.keyValues.lazy.filter { $0.section == index }.map(\.lines.upperBound).max() ?? outline.sections[index].bodyStart
    }

    /// What goes when section `index` is removed: its header and its content, with the blank lines after
    /// them (or, for the file's last section, before them). Comments before the next section stay.
    private func removalRange(ofSection index: Int) -> Range<Int> {
        var start = outline.sections[index].headerStart
        var end = contentEnd(ofSection: index)
        while let line = blankLine(from: end) { end = line }
        if end == bytes.count {
            while start > 0 {
                let previous = (bytes[..<(start - 1)].lastIndex(of: UInt8(ascii: "\n")) ?? -1) + 1
                guard blankLine(from: previous) == start else { break }
                start = previous
            }
        }
        return start..<end
    }

    /// The end of the blank line (spaces and tabs only) that starts at `offset`, if it is one.
    private func blankLine(from offset: Int) -> Int? {
        var index = offset
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0D { index += 1 }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\n") else { return nil }
        return index + 1
    }
}

extension JSONValue {
    /// Whether every member of `a` is identical to the member under its key in `b`.
    private static func membersAreIdentical(_ a: [String: JSONValue], _ b: [String: JSONValue]) -> Bool {
        var identical = true
        let found = a.forEachMember(notSharedWith: b) { _, value, other in
            if identical, other.map(value.isIdentical) != true { identical = false }
        }
        return identical && found == b.count
    }

    /// Whether the two documents are the same, a NaN the same as a NaN (which `==` says it is not): a
    /// TOML file may hold `nan`. Parts that share their storage (a document made from the one before)
    /// are the same at once.
    fileprivate func isIdentical(to other: JSONValue) -> Bool {
        if isShared(with: other) { return true }
        return switch (self, other) {
        case (.double(let a), .double(let b)): a == b || (a.isNaN && b.isNaN)
        case (.array(let a), .array(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1) }
        case (.object(let a), .object(let b)):
            a.count == b.count && Self.membersAreIdentical(a, b)
        default: self == other
        }
    }
}

extension [UInt8] {
    /// The text with its line feeds as `newline`, after a blank line when `separating`.
    fileprivate func replacingNewlines(with newline: [UInt8], separating: Bool) -> [UInt8] {
        var output: [UInt8] = separating ? newline : []
        for byte in self {
            if byte == UInt8(ascii: "\n") { output += newline } else { output.append(byte) }
        }
        return output
    }
}
