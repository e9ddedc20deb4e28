/// Writes a new document as an edit of the TOML text that held the previous one: a changed value is
/// replaced where it stands (an inline table or an array whole), a removed key goes with its line and
/// the comment on it, a removed table with its section, a new key goes after the last `key = value` line of
/// its table's section (dotted from the nearest section, if its table has none), and a new table goes at
/// the end of the file. Comments, blank lines, the order of keys and sections, and the spelling of what
/// did not change all stay.
///
/// What this does not edit in place (an array of tables that gains or loses an element, a new table inside
/// an element that is not the last) makes it return nil, and the codec writes the document anew. The
/// edited text is read again and must hold the new document, or the edit is not used either.
struct TOMLTextEditor {
    private let bytes: [UInt8]
    private let outline: TOMLReader.Outline
    private let newline: [UInt8]
    private var edits: [(range: Range<Int>, text: [UInt8])] = []

    /// `document` written as an edit of `text`; nil when the edit cannot be made in place.
    static func edit(_ text: [UInt8], into document: JSONValue) -> [UInt8]? {
        guard let (previous, outline) = try? TOMLReader.outlined(text) else { return nil }
        var editor = TOMLTextEditor(bytes: text, outline: outline)
        guard (try? editor.visit([], old: previous, new: document)) == true else { return nil }
        var output = text
        for edit in editor.edits.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            output.replaceSubrange(edit.range, with: edit.text)
        }
        // The edit must say exactly what the document says; else it is written anew.
        guard (try? TOMLReader.document(from: output)) == document else { return nil }
        return output
    }

    private init(bytes: [UInt8], outline: TOMLReader.Outline) {
        self.bytes = bytes
        self.outline = outline
        newline = bytes.firstIndex(of: UInt8(ascii: "\n")).map { $0 > 0 && bytes[$0 - 1] == UInt8(ascii: "\r") } == true
            ? Array("\r\n".utf8) : [UInt8(ascii: "\n")]
    }

    /// Makes the edits that turn `old` at `path` into `new`; false when it cannot be done in place.
    private mutating func visit(_ path: [ValuePath.Component], old: JSONValue?, new: JSONValue?) throws -> Bool {
        if old == new { return true }
        if let line = outline.keyValues.first(where: { $0.path == path }) {
            if let new {
                edits.append((line.value, Array(try TOMLWriter.inlineText(of: new).utf8)))
            } else {
                edits.append((line.lines, []))
            }
            return true
        }
        switch (old, new) {
        case (.object(let before)?, .object(let after)?):
            for key in Set(before.keys).union(after.keys).sorted() {
                guard try visit(path + [.key(key)], old: before[key], new: after[key]) else { return false }
            }
            return true
        case (.array(let before)?, .array(let after)?) where before.count == after.count:
            // An array of tables, element by element.
            for index in before.indices {
                guard try visit(path + [.index(index)], old: before[index], new: after[index]) else { return false }
            }
            return true
        case (nil, let value?):
            return try insert(value, at: path)
        case (_?, nil):
            // A table written with headers (or dotted keys): every section and line under it goes.
            for section in outline.sections.indices where outline.sections[section].path.starts(with: path) && !path.isEmpty {
                edits.append((outline.sections[section].headerStart..<sectionEnd(section), []))
            }
            for line in outline.keyValues where line.path.starts(with: path)
                && !outline.sections[line.section].path.starts(with: path) {
                edits.append((line.lines, []))
            }
            return true
        default:
            return false
        }
    }

    /// Adds `value` at `path`, which the text does not hold.
    private mutating func insert(_ value: JSONValue, at path: [ValuePath.Component]) throws -> Bool {
        guard case .key? = path.last else { return false }
        let parent = Array(path.dropLast())
        if case .object(let members) = value, !members.isEmpty {
            // A new table: a section of its own at the end of the file (its parent must not be an element of
            // an array of tables other than the last, which a header would not reach).
            guard !parent.contains(where: { if case .index = $0 { true } else { false } }) else { return false }
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

    /// Where section `index` ends: at the next section's header, or the end of the text.
    private func sectionEnd(_ index: Int) -> Int {
        index + 1 < outline.sections.count ? outline.sections[index + 1].headerStart : bytes.count
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
