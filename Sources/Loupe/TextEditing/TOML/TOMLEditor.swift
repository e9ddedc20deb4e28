/// Edits TOML text in place: each ``DocumentEdit`` becomes splices of the text, in the style of the place
/// it lands in.
///
/// - A changed value is replaced where it stands, in its own spelling where the new value allows it (a
///   literal string stays literal, a multi-line string multi-line, an integer keeps its base or its `_`
///   grouping).
/// - An array written one element per line keeps that layout, its comments and its trailing comma when an
///   element is added or removed; any other array stays as it is written, one line staying one line. An
///   inline table keeps its members' order, and a new member goes last.
/// - A new key goes after the last `key = value` line of its table's section (dotted, where dotted keys
///   define the table); a new table or array of tables goes as `[…]` or `[[…]]` sections after its parent's
///   last section. An element of an array of tables is its `[[…]]` section: elements are added and removed
///   as sections, and edits inside one edit its section.
/// - A removed key goes with its line, the comment lines directly above it and its end-of-line comment; a
///   removed table or element with its sections and their comments above. Another entry's comments stay
///   where they are, and a new entry gets none.
///
/// What TOML cannot hold (a null, an element of an array of tables that is not a table) is refused.
struct TOMLEditor: TextEditor {
    /// The document the edits make: an array of tables that gains an element that is not a table is
    /// written anew from it, as a `key = [ … ]` line.
    var document: JSONValue
    /// The syntax of the text the codec wrote last: the text edited now, most often.
    var lastWritten: SyntaxMemo<TOMLSyntax>? = nil

    func splices(for edits: [DocumentEdit], in text: [UInt8], holding old: JSONValue) throws -> [TextSplice] {
        let syntax = try lastWritten?.syntax(of: text) ?? TOMLReader.syntax(of: text).syntax
        var work = TOMLEditWork(text: text, syntax: syntax, old: old)
        let rewritten = work.arraysOfTablesLosingTables(edits)
        for path in rewritten {
            guard let value = document[path: ValuePath(path)] else {
                throw TextEditRefusal(path: path, reason: "an element of an array of tables can only be a table")
            }
            try work.make(.replace(at: path, with: value))
        }
        for edit in edits where !rewritten.contains(where: { edit.path.starts(with: $0) }) {
            try work.make(edit)
        }
        try work.keepEmptiedTables()
        return work.finished()
    }
}

/// One edit of one TOML text: where each path is written, and the splices made so far.
private struct TOMLEditWork {
    typealias Path = [ValuePath.Component]

    let text: [UInt8]
    let lines: TextLines
    let syntax: TOMLSyntax
    /// The document the text holds.
    let old: JSONValue
    /// The `key = value` lines of each section (contiguous in text order), and the line of each path a
    /// line's key names, by section: a section's index is made when an edit first looks into it.
    private var keyValuesOf: [Range<Int>]
    private var keyValueIndex: [Int: [Path: Int]] = [:]
    /// The section of each table a header names (the root's: the empty path).
    private var sectionAt: [Path: Int] = [:]
    /// The sections of the tables under each path (the path's own included), in text order, and the lines
    /// whose dotted keys define the table at each path, in text order: made when an edit first asks (a
    /// value replaced where it is written never does).
    private var tablesUnder: (sections: [Path: [Int]], keyValues: [Path: [Int]])?

    private var splices: [TextSplice] = []
    /// The entries added to and removed from each array and inline table, by where it starts.
    private var listChanges: [Int: ListChange] = [:]
    /// How many elements each array of tables loses, and which gain elements.
    private var removedElements: [Path: Int] = [:]
    private var gainingElements: Set<Path> = []
    /// How many members each table loses, and which gain members.
    private var removedMembers: [Path: Int] = [:]
    private var gainingMembers: Set<Path> = []

    private struct ListChange {
        var list: TOMLSyntax.List
        var removed: Set<Int> = []
        /// The text of each new entry, before the entry it goes before (the count: after the last).
        var inserted: [(before: Int, text: String)] = []
    }

    /// Where a path is written.
    private enum Place {
        /// A value: a scalar, an array or an inline table.
        case value(TOMLSyntax.Value)
        /// The table dotted keys `prefix` define inside an inline table.
        case inlineTable(TOMLSyntax.List, prefix: [String])
        /// A table made by headers or dotted key lines, or an array of tables: what sections say.
        case sections(Path)
    }

    init(text: [UInt8], syntax: TOMLSyntax, old: JSONValue) {
        self.text = text
        self.old = old
        self.syntax = syntax
        lines = TextLines(text)
        for (index, section) in syntax.sections.enumerated() where sectionAt[section.path] == nil {
            sectionAt[section.path] = index
        }
        keyValuesOf = Array(repeating: 0..<0, count: syntax.sections.count)
        for (index, line) in syntax.keyValues.enumerated() {
            let lines = keyValuesOf[line.section]
            keyValuesOf[line.section] = (lines.isEmpty ? index : lines.lowerBound)..<(index + 1)
        }
    }

    /// The sections of the tables under `path` (its own included), in text order.
    private mutating func sectionsUnder(_ path: Path) -> [Int]? {
        tableIndex().sections[path]
    }

    /// The lines whose dotted keys define the table at `path`, in text order.
    private mutating func keyValuesUnder(_ path: Path) -> [Int]? {
        tableIndex().keyValues[path]
    }

    private mutating func tableIndex() -> (sections: [Path: [Int]], keyValues: [Path: [Int]]) {
        if let tablesUnder { return tablesUnder }
        var sections: [Path: [Int]] = [:]
        var keyValues: [Path: [Int]] = [:]
        for (index, section) in syntax.sections.enumerated() {
            for length in stride(from: 1, through: section.path.count, by: 1) {
                sections[Array(section.path.prefix(length)), default: []].append(index)
            }
        }
        for (index, line) in syntax.keyValues.enumerated() where line.key.count > 1 {
            let sectionDepth = syntax.sections[line.section].path.count
            let path = syntax.path(of: index)
            for length in stride(from: sectionDepth + 1, to: path.count, by: 1) {
                keyValues[Array(path.prefix(length)), default: []].append(index)
            }
        }
        tablesUnder = (sections, keyValues)
        return (sections, keyValues)
    }

    // MARK: Edits

    mutating func make(_ edit: DocumentEdit) throws {
        switch edit {
        case .replace(let path, let value):
            try replace(at: path, with: value)
        case .addMember(let path, let key, let value):
            try addMember(in: path, key: key, value: value)
        case .removeMember(let path, let key):
            try removeMember(in: path, key: key)
        case .addElement(let path, let before, let value):
            try addElement(in: path, before: before, value: value)
        case .removeElement(let path, let index):
            try removeElement(in: path, index: index)
        }
    }

    private mutating func replace(at path: Path, with value: JSONValue) throws {
        switch place(of: path) {
        case .value(let written):
            let range = written.range
            let replacement = try TOMLWriter.inlineText(of: value, spelledLike: text[range], at: path)
            splices.append(TextSplice(range, replacement))
        case .inlineTable, .sections:
            // A table (or an array of tables) that becomes something else: the entry written anew, at its
            // place where it is still sections.
            guard case .key(let key)? = path.last else {
                throw TextEditRefusal(path: path, reason: "an element of an array of tables can only be a table")
            }
            let parent = Array(path.dropLast())
            if let first = sectionsUnder(path)?.first, Self.isTable(value) || Self.tables(value) != nil {
                let written =
                    try Self.isTable(value)
                    ? TOMLWriter.text(of: value, under: Self.keys(of: path))
                    : TOMLWriter.text(ofArrayOfTables: Self.tables(value) ?? [], under: Self.keys(of: path))
                let offset = sectionBlockStart(first)
                removeEverything(at: path)
                splices.append(.insert(Array((written + "\n").utf8), at: offset))
            } else {
                try removeMember(in: parent, key: key)
                try addMember(in: parent, key: key, value: value)
            }
        }
    }

    private mutating func addMember(in path: Path, key: String, value: JSONValue) throws {
        let memberPath = path.appending(.key(key))
        gainingMembers.insert(path)
        switch place(of: path) {
        case .value(.list(let list)) where list.isTable:
            try insertMember(into: list, prefix: [], key: key, value: value, at: memberPath)
        case .inlineTable(let list, let prefix):
            try insertMember(into: list, prefix: prefix, key: key, value: value, at: memberPath)
        case .value:
            throw TextEditRefusal(path: path, reason: "a member can only be added to a table")
        case .sections:
            if let section = sectionAt[path] {
                if Self.isTable(value) {
                    insertSections(try TOMLWriter.text(of: value, under: Self.keys(of: memberPath)), after: path)
                } else if let elements = Self.tables(value) {
                    insertSections(
                        try TOMLWriter.text(ofArrayOfTables: elements, under: Self.keys(of: memberPath)), after: path)
                } else {
                    try insertLine(
                        TOMLWriter.key(key) + " = " + TOMLWriter.inlineText(of: value, at: memberPath), in: section)
                }
            } else if let defining = keyValuesUnder(path)?.last {
                // A table dotted keys define: one more dotted key after their last line.
                let line = syntax.keyValues[defining]
                let prefix = Array(line.key.prefix(path.count - syntax.sections[line.section].path.count))
                let written =
                    indentation(of: defining) + TOMLWriter.dotted(prefix + [key]) + " = "
                    + (try TOMLWriter.inlineText(of: value, at: memberPath))
                splices.append(.insert(lineAfter(line.line.upperBound, written), at: line.line.upperBound))
            } else if let first = sectionsUnder(path)?.first {
                // A table only its sub-tables' headers make (`tool.ruff` of `[tool.ruff.lint]`): a new table
                // is a section among theirs, a value goes into a section of its own before theirs.
                if Self.isTable(value) {
                    insertSections(try TOMLWriter.text(of: value, under: Self.keys(of: memberPath)), after: path)
                } else {
                    let header = "[" + TOMLWriter.dotted(Self.keys(of: path)) + "]\n"
                    let member =
                        TOMLWriter.key(key) + " = " + (try TOMLWriter.inlineText(of: value, at: memberPath)) + "\n\n"
                    splices.append(.insert(Array((header + member).utf8), at: sectionBlockStart(first)))
                }
            } else {
                throw TextEditRefusal(path: path, reason: "the table is not written in the text")
            }
        }
    }

    private mutating func removeMember(in path: Path, key: String) throws {
        let memberPath = path.appending(.key(key))
        switch place(of: path) {
        case .value(.list(let list)) where list.isTable:
            removeMembers(of: list, prefix: [key])
        case .inlineTable(let list, let prefix):
            removeMembers(of: list, prefix: prefix + [key])
        case .value:
            throw TextEditRefusal(path: path, reason: "a member can only be removed from a table")
        case .sections:
            removeEverything(at: memberPath)
            removedMembers[path, default: 0] += 1
        }
    }

    private mutating func addElement(in path: Path, before index: Int, value: JSONValue) throws {
        switch place(of: path) {
        case .value(.list(let list)) where !list.isTable:
            let written = try TOMLWriter.inlineText(of: value, at: path.appending(.index(index)))
            listChanges[list.range.lowerBound, default: ListChange(list: list)].inserted.append((index, written))
        case .sections:
            guard case .object = value else {
                throw TextEditRefusal(
                    path: path.appending(.index(index)), reason: "an element of an array of tables can only be a table")
            }
            let written = try TOMLWriter.text(ofArrayOfTables: [value], under: Self.keys(of: path))
            gainingElements.insert(path)
            if let next = sectionAt[path.appending(.index(index))] {
                splices.append(.insert(Array((written + "\n").utf8), at: sectionBlockStart(next)))
            } else {
                insertSections(written, after: path)
            }
        default:
            throw TextEditRefusal(path: path, reason: "an element can only be added to an array")
        }
    }

    private mutating func removeElement(in path: Path, index: Int) throws {
        switch place(of: path) {
        case .value(.list(let list)) where !list.isTable:
            listChanges[list.range.lowerBound, default: ListChange(list: list)].removed.insert(index)
        case .sections:
            removeEverything(at: path.appending(.index(index)))
            removedElements[path, default: 0] += 1
        default:
            throw TextEditRefusal(path: path, reason: "an element can only be removed from an array")
        }
    }

    /// The arrays of tables that the edits give an element that is not a table: written anew. One inside an
    /// element of another array of tables (`[[mirrors.url]]`) is too, when no array on its path gains or
    /// loses elements in these edits (its path in the new document is then the one it has in the old);
    /// otherwise the outermost array on its path that does is written anew, whole.
    func arraysOfTablesLosingTables(_ edits: [DocumentEdit]) -> [Path] {
        let resized = edits.compactMap { edit -> Path? in
            switch edit {
            case .addElement(let path, _, _), .removeElement(let path, _): path
            default: nil
            }
        }
        var paths: [Path] = []
        for edit in edits {
            let (array, value): (Path, JSONValue)
            switch edit {
            case .replace(let path, let new):
                guard case .index? = path.last else { continue }
                (array, value) = (Array(path.dropLast()), new)
            case .addElement(let path, _, let new):
                (array, value) = (path, new)
            default:
                continue
            }
            guard !Self.isTable(value), sectionAt[array.appending(.index(0))] != nil else { continue }
            let outermost = resized.filter { array.count > $0.count && array.starts(with: $0) }
                .min { $0.count < $1.count }
            let rewritten = outermost ?? array
            guard sectionAt[rewritten.appending(.index(0))] != nil, !paths.contains(rewritten) else { continue }
            paths.append(rewritten)
        }
        // An array written anew takes the arrays inside it with it.
        return paths.filter { path in !paths.contains { path.count > $0.count && path.starts(with: $0) } }
    }

    /// An array of tables that loses all its sections, or a table made only by what it loses (dotted keys,
    /// its tables' headers), stays, as an empty array or table.
    mutating func keepEmptiedTables() throws {
        for (path, removed) in removedElements where !gainingElements.contains(path) {
            guard case .key(let key)? = path.last, sectionAt[path.appending(.index(removed))] == nil else { continue }
            try addMember(in: Array(path.dropLast()), key: key, value: .array([]))
        }
        for (path, removed) in removedMembers where !gainingMembers.contains(path) && sectionAt[path] == nil {
            guard case .key(let key)? = path.last, case .object(let members)? = old[path: ValuePath(path)],
                members.count == removed, case .sections = place(of: path)
            else { continue }
            try addMember(in: Array(path.dropLast()), key: key, value: .object([:]))
        }
    }

    // MARK: Where paths are written

    private mutating func place(of path: Path) -> Place {
        // The longest part of the path a `key = value` line names, then the way into its value.
        var length = path.count
        while length > 0 {
            if let line = keyValue(at: Array(path.prefix(length))) {
                return place(in: syntax.keyValues[line].value, rest: path.dropFirst(length))
            }
            length -= 1
        }
        return .sections(path)
    }

    /// The `key = value` line whose key names `path`, if one does: in the section of the longest part of
    /// the path a header names (a line's table is its section's, or one its dotted key makes there).
    private mutating func keyValue(at path: Path) -> Int? {
        var length = path.count - 1
        while length > 0, sectionAt[Array(path.prefix(length))] == nil { length -= 1 }
        guard let section = sectionAt[Array(path.prefix(max(length, 0)))] else { return nil }
        if keyValueIndex[section] == nil {
            keyValueIndex[section] = Dictionary(
                keyValuesOf[section].map { (syntax.path(of: $0), $0) }, uniquingKeysWith: { first, _ in first })
        }
        return keyValueIndex[section]?[path]
    }

    /// The last `key = value` line of a section.
    private func lastKeyValue(of section: Int) -> Int? {
        keyValuesOf[section].last
    }

    private func place(in value: TOMLSyntax.Value, rest: ArraySlice<ValuePath.Component>) -> Place {
        guard let first = rest.first else { return .value(value) }
        guard case .list(let list) = value else { return .value(value) }
        if case .index(let index) = first, !list.isTable, list.items.indices.contains(index) {
            return place(in: list.items[index].value, rest: rest.dropFirst())
        }
        guard list.isTable else { return .value(value) }
        let keys = rest.prefix { if case .key = $0 { true } else { false } }.map { component -> String in
            if case .key(let key) = component { key } else { "" }
        }
        for item in list.items where item.key.count <= keys.count && Array(keys.prefix(item.key.count)) == item.key {
            return place(in: item.value, rest: rest.dropFirst(item.key.count))
        }
        return .inlineTable(list, prefix: keys)
    }

    // MARK: Sections and lines

    /// Inserts `line` (and its line break) after the last `key = value` line of `section`, or after its
    /// header when it has none (the root: before the first header's comments, or at the end of the text).
    private mutating func insertLine(_ line: String, in section: Int) throws {
        if let last = lastKeyValue(of: section) {
            // Indented as the line it follows (a section whose keys stand indented under its header).
            let offset = syntax.keyValues[last].line.upperBound
            splices.append(.insert(lineAfter(offset, indentation(of: last) + line), at: offset))
        } else if section == 0 {
            if syntax.sections.count > 1 {
                splices.append(.insert(Array((line + "\n").utf8), at: sectionBlockStart(1)))
            } else {
                let offset = contentEnd(text.count, floor: 0)
                splices.append(.insert(lineAfter(offset, line), at: offset))
            }
        } else {
            let offset = syntax.sections[section].bodyStart
            splices.append(.insert(lineAfter(offset, line), at: offset))
        }
    }

    /// The spaces and tabs the `key = value` line `index` starts with.
    private func indentation(of index: Int) -> String {
        let line = syntax.keyValues[index].line
        return String(decoding: text[line].prefix { $0 == 0x20 || $0 == 0x09 }, as: UTF8.self)
    }

    /// `line` with its line break, to insert at `offset`: after a line break of its own when the text there
    /// ends without one.
    private func lineAfter(_ offset: Int, _ line: String) -> [UInt8] {
        let needsBreak = offset > 0 && text[offset - 1] != UInt8(ascii: "\n")
        return Array(((needsBreak ? "\n" : "") + line + "\n").utf8)
    }

    /// Inserts `sections` (a header's text) after the last section of the table at `path` (the root's: at
    /// the end of the text), a blank line before it.
    private mutating func insertSections(_ sections: String, after path: Path) {
        let blockEnd: Int
        let floor: Int
        if !path.isEmpty, let last = sectionsUnder(path)?.last {
            blockEnd = sectionBlockEnd(last)
            floor = syntax.sections[last].bodyStart
        } else if let defining = keyValuesUnder(path)?.last ?? keyValue(at: path) {
            blockEnd = syntax.keyValues[defining].line.upperBound
            floor = blockEnd
        } else {
            blockEnd = text.count
            floor = 0
        }
        let offset = contentEnd(blockEnd, floor: floor)
        var written = sections
        if offset > 0 { written = "\n" + written }
        if offset > 0, text[offset - 1] != UInt8(ascii: "\n") { written = "\n" + written }
        // A blank line before what follows, where a line follows at once.
        if offset < text.count, text[offset] != UInt8(ascii: "\n"), text[offset] != UInt8(ascii: "\r") {
            written += "\n"
        }
        splices.append(.insert(Array(written.utf8), at: offset))
    }

    /// Removes what the path names from the text: `key = value` lines and sections.
    private mutating func removeEverything(at path: Path) {
        let sections = sectionsUnder(path) ?? []
        let removedSections = Set(sections)
        for section in sections {
            // The last section goes with the blank lines that separated it.
            let end = sectionBlockEnd(section)
            let start =
                end == text.count
                ? contentEnd(sectionBlockStart(section), floor: sectionFloor(section)) : sectionBlockStart(section)
            splices.append(.remove(start..<end))
        }
        let lines = keyValue(at: path).map { [$0] } ?? keyValuesUnder(path) ?? []
        for index in lines where !removedSections.contains(syntax.keyValues[index].section) {
            splices.append(.remove(lineBlock(index)))
        }
    }

    /// A `key = value` line with the comment lines directly above it.
    private func lineBlock(_ index: Int) -> Range<Int> {
        let line = syntax.keyValues[index]
        let floor =
            index > 0 && syntax.keyValues[index - 1].section == line.section
            ? syntax.keyValues[index - 1].line.upperBound : syntax.sections[line.section].bodyStart
        return commentBlockStart(line.line.lowerBound, floor: floor)..<line.line.upperBound
    }

    /// Where a section starts with the comment lines directly above its header.
    private func sectionBlockStart(_ section: Int) -> Int {
        guard section > 0 else { return 0 }
        return commentBlockStart(syntax.sections[section].headerStart, floor: sectionFloor(section))
    }

    /// Where the text before a section's header ends: the previous section's last line or header.
    private func sectionFloor(_ section: Int) -> Int {
        let previous = section - 1
        return lastKeyValue(of: previous).map { syntax.keyValues[$0].line.upperBound }
            ?? syntax.sections[previous].bodyStart
    }

    /// Where a section ends: where the next one starts with its comments, or the end of the text.
    private func sectionBlockEnd(_ section: Int) -> Int {
        section + 1 < syntax.sections.count ? sectionBlockStart(section + 1) : text.count
    }

    /// The start of the comment lines directly above the line starting at `lineStart`, no higher than
    /// `floor` (where the text before it ends: a line of a multi-line value is not a comment). Inside an
    /// array (`inArray`), a commented-out element (`# "C90",`) is not the next element's comment: the lines
    /// from it up stay.
    private func commentBlockStart(_ lineStart: Int, floor: Int, inArray: Bool = false) -> Int {
        var start = lineStart
        while start > floor {
            let previous = lines.lineStart(of: start - 1)
            guard previous >= floor else { break }
            let content = text[previous..<start].drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            guard content.first == UInt8(ascii: "#") else { break }
            if inArray, Self.isCommentedOutValue(content.dropFirst()) { break }
            start = previous
        }
        return start
    }

    /// Whether a comment's text starts like a value (a quote, a digit, a sign, a bracket or brace).
    private static func isCommentedOutValue(_ comment: ArraySlice<UInt8>) -> Bool {
        guard let first = comment.first(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) else {
            return false
        }
        return [
            UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: "-"),
            UInt8(ascii: "+"),
        ].contains(first)
            || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9"))
    }

    /// `offset` moved back over the blank lines before it, no further than `floor`.
    private func contentEnd(_ offset: Int, floor: Int) -> Int {
        var end = offset
        while end > floor, Self.isBlank(text[end - 1]) { end -= 1 }
        // (A floor is where a line starts.)
        if end == floor { return floor }
        // Back to the start of the line after the last that is not blank.
        while end < offset, text[end] != UInt8(ascii: "\n") { end += 1 }
        return end < offset ? end + 1 : offset
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
            || byte == UInt8(ascii: "\r")
    }

    // MARK: Arrays and inline tables

    private mutating func insertMember(
        into list: TOMLSyntax.List, prefix: [String], key: String, value: JSONValue, at path: Path
    ) throws {
        let written = TOMLWriter.dotted(prefix + [key]) + " = " + (try TOMLWriter.inlineText(of: value, at: path))
        listChanges[list.range.lowerBound, default: ListChange(list: list)].inserted.append((list.items.count, written))
    }

    private mutating func removeMembers(of list: TOMLSyntax.List, prefix: [String]) {
        for (index, item) in list.items.enumerated() where item.key.starts(with: prefix) {
            listChanges[list.range.lowerBound, default: ListChange(list: list)].removed.insert(index)
        }
    }

    /// Every splice: those made, and those of the arrays and inline tables that gain or lose entries.
    ///
    /// Removals that overlap (a table and a table inside it, removed by two edits) are made one, and an
    /// insertion inside a removed range goes where the range starts: what it was placed after is gone.
    func finished() -> [TextSplice] {
        var all = splices
        for change in listChanges.values {
            all += isOneElementPerLine(change.list) ? linesSplices(change) : inlineSplices(change)
        }
        var removals: [Range<Int>] = []
        // (What is removed at the end of the text goes with the blank lines before it.)
        let removed = all.filter { $0.replacement.isEmpty && !$0.range.isEmpty }.map { splice in
            splice.range.upperBound == text.count
                ? contentEnd(splice.range.lowerBound, floor: 0)..<text.count : splice.range
        }
        for range in removed.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = removals.last, range.lowerBound < last.upperBound {
                removals[removals.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                removals.append(range)
            }
        }
        var result: [TextSplice] = removals.map(TextSplice.remove)
        for splice in all where !(splice.replacement.isEmpty && !splice.range.isEmpty) {
            var splice = splice
            if splice.range.isEmpty, let removal = Self.removal(containing: splice.range.lowerBound, in: removals) {
                splice.range = removal.lowerBound..<removal.lowerBound
            }
            result.append(splice)
        }
        return result
    }

    /// The removed range (sorted, apart) `offset` lies strictly inside, if any.
    private static func removal(containing offset: Int, in removals: [Range<Int>]) -> Range<Int>? {
        var (low, high) = (0, removals.count)
        while low < high {
            let middle = (low + high) / 2
            if removals[middle].upperBound <= offset { low = middle + 1 } else { high = middle }
        }
        guard low < removals.count, removals[low].lowerBound < offset, offset < removals[low].upperBound else {
            return nil
        }
        return removals[low]
    }

    /// Whether each element of an array stands on lines of its own (its comma and comment after it), as
    /// the closing bracket does.
    private func isOneElementPerLine(_ list: TOMLSyntax.List) -> Bool {
        guard !list.isTable, !list.items.isEmpty else { return false }
        let open = list.range.lowerBound + 1
        guard restOfLineIsTrivia(from: open, allowComma: false) else { return false }
        for item in list.items {
            guard lines.startsLine(item.range.lowerBound),
                restOfLineIsTrivia(from: item.range.upperBound, allowComma: true)
            else { return false }
        }
        return lines.startsLine(list.range.upperBound - 1)
    }

    /// Whether only blanks, a comma (where allowed) and a comment follow `offset` on its line.
    private func restOfLineIsTrivia(from offset: Int, allowComma: Bool) -> Bool {
        var index = offset
        var comma = !allowComma
        while index < text.count {
            switch text[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): index += 1
            case UInt8(ascii: ",") where !comma: comma = true; index += 1
            case UInt8(ascii: "\n"), UInt8(ascii: "#"): return true
            default: return false
            }
        }
        return true
    }

    /// An array written one element per line: elements go and come as lines, with the comments above them.
    private func linesSplices(_ change: ListChange) -> [TextSplice] {
        let items = change.list.items
        var result: [TextSplice] = []
        let indentation = String(decoding: lines.indentation(of: items[0].range.lowerBound), as: UTF8.self)
        let firstLine = lines.nextLineStart(after: change.list.range.lowerBound)
        func lineEnd(_ index: Int) -> Int { lines.nextLineStart(after: items[index].range.upperBound) }
        func blockStart(_ index: Int) -> Int {
            commentBlockStart(
                lines.lineStart(of: items[index].range.lowerBound), floor: index > 0 ? lineEnd(index - 1) : firstLine,
                inArray: true)
        }
        for index in change.removed.sorted() {
            result.append(.remove(blockStart(index)..<lineEnd(index)))
        }
        let trailingComma = items[items.count - 1].comma != nil
        let kept = items.indices.filter { !change.removed.contains($0) }
        var appended: [String] = []
        for (before, written) in change.inserted {
            if before < items.count {
                result.append(.insert(Array((indentation + written + ",\n").utf8), at: blockStart(before)))
            } else {
                appended.append(written)
            }
        }
        if !appended.isEmpty {
            var lineTexts = appended.enumerated().map { offset, written in
                indentation + written + (offset == appended.count - 1 && !trailingComma ? "" : ",") + "\n"
            }
            if let anchor = kept.last {
                if items[anchor].comma == nil {
                    result.append(.insert(Array(",".utf8), at: items[anchor].range.upperBound))
                }
                let offset = lineEnd(anchor)
                if offset == text.count, text.last != UInt8(ascii: "\n") { lineTexts[0] = "\n" + lineTexts[0] }
                result.append(.insert(Array(lineTexts.joined().utf8), at: offset))
            } else {
                result.append(.insert(Array(lineTexts.joined().utf8), at: blockStart(0)))
            }
        }
        return result
    }

    /// An array or inline table written any other way: entries go and come where they stand on their line,
    /// with the commas between them.
    private func inlineSplices(_ change: ListChange) -> [TextSplice] {
        let list = change.list
        let items = list.items
        let count = items.count
        let padding = list.isTable ? " " : ""
        var result: [TextSplice] = []
        func end(_ index: Int) -> Int { items[index].range.upperBound }
        func start(_ index: Int) -> Int { items[index].range.lowerBound }
        // Runs of removed entries, each removed with the commas that separate it.
        var runs: [ClosedRange<Int>] = []
        for index in change.removed.sorted() {
            if let last = runs.last, last.upperBound == index - 1 {
                runs[runs.count - 1] = last.lowerBound...index
            } else {
                runs.append(index...index)
            }
        }
        var runOf: [Int: ClosedRange<Int>] = [:]
        for run in runs {
            for index in run { runOf[index] = run }
            if run.upperBound < count - 1 {
                result.append(.remove(start(run.lowerBound)..<start(run.upperBound + 1)))
            } else if run.lowerBound > 0 {
                result.append(.remove(end(run.lowerBound - 1)..<end(run.upperBound)))
            } else if change.inserted.isEmpty {
                // Every entry removed: an empty `[]` or `{}`.
                result.append(.remove(list.range.lowerBound + 1..<list.range.upperBound - 1))
            } else {
                let last = items[count - 1].comma.map { $0 + 1 } ?? end(count - 1)
                result.append(.remove(start(0)..<last))
            }
        }
        let kept = items.indices.filter { !change.removed.contains($0) }
        var appended: [String] = []
        var before: [Int: [String]] = [:]
        for (index, written) in change.inserted {
            // An entry before a removed one goes before the run it is in, or after the last kept entry.
            let run = runOf[index]
            if index >= count || (run?.upperBound == count - 1 && run!.lowerBound > 0) {
                appended.append(written)
            } else {
                before[run?.lowerBound ?? index, default: []].append(written)
            }
        }
        for (index, texts) in before {
            let isAll = runs.contains { $0.lowerBound == 0 && $0.upperBound == count - 1 }
            let joined = isAll && appended.isEmpty ? texts.joined(separator: ", ") : texts.map { $0 + ", " }.joined()
            result.append(.insert(Array(joined.utf8), at: start(index)))
        }
        if !appended.isEmpty {
            if let anchor = kept.last {
                result.append(.insert(Array(appended.map { ", " + $0 }.joined().utf8), at: end(anchor)))
            } else if count > 0 {
                // After the entries inserted before the first (each followed by its comma), if any.
                result.append(.insert(Array(appended.joined(separator: ", ").utf8), at: start(0)))
            } else {
                let inner = list.range.lowerBound + 1..<list.range.upperBound - 1
                let joined = appended.joined(separator: ", ")
                if text[inner].allSatisfy(Self.isBlank) {
                    result.append(TextSplice(inner, Array((padding + joined + padding).utf8)))
                } else {
                    result.append(.insert(Array((joined + ", ").utf8), at: inner.lowerBound))
                }
            }
        }
        return result
    }

    // MARK: Values

    private static func isTable(_ value: JSONValue) -> Bool {
        if case .object = value { true } else { false }
    }

    /// The elements of an array of tables (a non-empty array of objects), or nil.
    private static func tables(_ value: JSONValue) -> [JSONValue]? {
        guard case .array(let elements) = value, !elements.isEmpty, elements.allSatisfy(isTable) else { return nil }
        return elements
    }

    /// A path's keys, as a header names them (an element of an array of tables is its last `[[…]]`).
    private static func keys(of path: Path) -> [String] {
        path.compactMap { if case .key(let key) = $0 { key } else { nil } }
    }
}
