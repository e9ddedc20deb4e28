#if YAML
import Loupe

/// A node of a YAML text as it is written: its kind, where its text stands, its properties, and its
/// entries (a mapping's members, a sequence's elements), each with the bytes that belong to it. Values are
/// read by Yams (``YAMLCodec/parse(_:)``); this tree says where each value is written, so that an edit can
/// replace exactly the bytes of what changed.
struct YAMLSyntaxNode: Sendable {
    enum Kind: Sendable, Equatable {
        case plain, singleQuoted, doubleQuoted
        /// A block scalar: `|` (literal) or `>` (folded).
        case literal, folded
        case blockMapping, flowMapping, blockSequence, flowSequence
        case alias
        /// Nothing written (`a:`, `-`): null.
        case empty
    }

    var kind: Kind
    /// The node's own text, after its properties. A block collection's ends with its last entry's line,
    /// that line's comment included; a block scalar's with its last line of content (with the empty lines
    /// after it when it keeps them, `|+`).
    var range: Range<Int>
    /// Where the node's properties (`&anchor`, `!tag`) start; the start of `range` when it has none.
    var propertiesStart: Int
    var anchor: String?
    var tag: String?
    /// A mapping's members or a sequence's elements, in the order written.
    private(set) var entries: [YAMLSyntaxEntry]
    /// Where each of a mapping's keys stands in `entries` (merge keys aside).
    private(set) var keys: [String: Int]
    /// A block collection's column (its keys' or dashes'); a block scalar's content indentation.
    var column: Int = 0
    /// A block scalar's header (`|-`, `>+2`).
    var header: Range<Int>?
    /// A block scalar's body: from the line after the header to `range`'s end (empty: no body).
    var body: Range<Int>?

    init(kind: Kind, range: Range<Int>, propertiesStart: Int, entries: [YAMLSyntaxEntry] = [], column: Int = 0) {
        self.kind = kind
        self.range = range
        self.propertiesStart = propertiesStart
        self.column = column
        self.entries = entries
        keys = Dictionary(
            entries.indices.compactMap { index in entries[index].isMerge ? nil : entries[index].key.map { ($0, index) }
            }, uniquingKeysWith: { $1 })
    }

    /// A block mapping or sequence whose entries start at `column`: from `offset` (its first entry) through
    /// the line its last entry ends on.
    init(block kind: Kind, at offset: Int, entries: [YAMLSyntaxEntry], column: Int) {
        self.init(
            kind: kind, range: offset..<entries.last!.lineEnd, propertiesStart: offset, entries: entries, column: column
        )
    }

    /// The member `key` (not one a merge key brings in).
    func member(_ key: String) -> YAMLSyntaxEntry? { keys[key].map { entries[$0] } }

    var isScalar: Bool { [.plain, .singleQuoted, .doubleQuoted, .literal, .folded].contains(kind) }
    var isFlow: Bool { kind == .flowMapping || kind == .flowSequence }
    var isMapping: Bool { kind == .blockMapping || kind == .flowMapping }
    var isSequence: Bool { kind == .blockSequence || kind == .flowSequence }

    /// The anchors this node and the nodes in it hold.
    var anchorsWithin: [String] {
        (anchor.map { [$0] } ?? []) + entries.flatMap(\.value.anchorsWithin)
    }
}

/// A mapping's member or a sequence's element as written.
struct YAMLSyntaxEntry: Sendable {
    /// A mapping member's key (nil for a sequence's element).
    var key: String?
    /// Whether the key is a merge key (`<<`).
    var isMerge = false
    /// Where the entry's own text starts: its key, or (a block sequence's element) its dash, or (a flow
    /// sequence's element) its value.
    var start: Int
    /// A block entry's indicator's end (after `key:` or `-`): where a value written anew goes.
    var slot: Int
    var value: YAMLSyntaxNode
    /// Everything that belongs to the entry: a block entry's own comment lines above it, its lines, the
    /// comment lines right under it indented deeper than it, and the line break after them; a flow entry's
    /// key and value.
    var span: Range<Int>
    /// Where the entry's last line ends (before its line break): its end-of-line comment is before it.
    var lineEnd: Int
    /// A flow mapping's key written without `:` (`{a}`).
    var bareKey = false
}

/// The lossless syntax of one YAML document, as configuration files write it.
struct YAMLSyntaxTree: Sendable {
    /// The document's node; nil for a text with nothing but comments, directives and markers.
    var root: YAMLSyntaxNode?
    /// Every anchor name an alias in the text refers to.
    var aliased: Set<String>
    /// The nodes each anchor names (the last one written, as aliases after it see).
    var anchored: [String: YAMLSyntaxNode]
}

/// Why the syntax reader could not follow a text, and where.
struct YAMLSyntaxFailure: Error, Sendable {
    var offset: Int
    var reason: String
}

/// Reads a YAML text into its ``YAMLSyntaxTree``: block mappings and sequences (compact and indentless
/// ones included), flow collections over any number of lines, plain, quoted and block scalars, comments,
/// anchors, aliases, tags, merge keys, directives and document markers. Linear in the text's length.
struct YAMLSyntaxReader {
    let text: [UInt8]
    let lines: TextLines
    private var aliased: Set<String> = []
    private var anchored: [String: YAMLSyntaxNode] = [:]
    /// The line the document's node starts on: comment lines above it are the file's.
    private var firstNodeLine: Int?

    init(_ text: [UInt8]) {
        self.text = text
        self.lines = TextLines(text)
    }

    /// The tree of `text`, which holds one YAML document.
    static func read(_ text: [UInt8]) throws -> YAMLSyntaxTree {
        var reader = YAMLSyntaxReader(text)
        let root = try reader.readDocument()
        return YAMLSyntaxTree(root: root, aliased: reader.aliased, anchored: reader.anchored)
    }

    // MARK: Bytes and lines

    private func byte(_ offset: Int) -> UInt8 { offset < text.count ? text[offset] : 0 }
    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
    private func isBlank(_ offset: Int) -> Bool {
        offset >= text.count || [0x20, 0x09, 0x0A, 0x0D].contains(text[offset])
    }
    private func isLineBreak(_ offset: Int) -> Bool {
        offset >= text.count || text[offset] == 0x0A || text[offset] == 0x0D
    }
    private func skipSpaces(_ offset: Int) -> Int {
        var offset = offset
        while offset < text.count, Self.isSpace(text[offset]) { offset += 1 }
        return offset
    }
    /// Whether nothing but spaces and a comment follow `offset` on its line.
    private func restIsEmpty(_ offset: Int) -> Bool {
        let next = skipSpaces(offset)
        return isLineBreak(next)
            || (text[next] == UInt8(ascii: "#") && (next == 0 || Self.isSpace(text[next - 1]) || next == offset))
    }
    private func contentStart(ofLine start: Int) -> Int { skipSpaces(start) }
    private func column(_ offset: Int) -> Int { offset - lines.lineStart(of: offset) }
    /// Whether the line starting at `start` holds only spaces or a comment.
    private func isIgnorable(line start: Int) -> Bool {
        let content = contentStart(ofLine: start)
        return isLineBreak(content) || text[content] == UInt8(ascii: "#")
    }
    private func isDocumentMarker(line start: Int) -> Bool {
        let three = text[start..<min(text.count, start + 3)]
        return (three.elementsEqual("---".utf8) || three.elementsEqual("...".utf8)) && isBlank(start + 3)
    }
    /// The start of the first line at or after the line `start` begins that is not ignorable.
    private func contentLine(from start: Int) -> Int? {
        var index = lines.line(of: start)
        if lines.starts[index] != start { index += 1 }
        while index < lines.starts.count {
            let lineStart = lines.starts[index]
            if lineStart >= text.count { return nil }
            if !isIgnorable(line: lineStart) { return lineStart }
            index += 1
        }
        return nil
    }
    /// The start of the first line after the one `offset` is on that is not ignorable.
    private func contentLine(after offset: Int) -> Int? {
        let next = lines.line(of: offset) + 1
        guard next < lines.starts.count else { return nil }
        return contentLine(from: lines.starts[next])
    }
    /// The line a block collection's entry ending at `offset` is followed by, with the offset and column of
    /// its content: the next line that is not ignorable; nil at the end of the text or a document marker.
    private func nextLine(after offset: Int) -> (content: Int, indent: Int)? {
        guard let line = contentLine(after: offset), !isDocumentMarker(line: line) else { return nil }
        let content = contentStart(ofLine: line)
        return (content, content - line)
    }
    private func isDashItem(_ offset: Int) -> Bool { byte(offset) == UInt8(ascii: "-") && isBlank(offset + 1) }

    private func fail(_ offset: Int, _ reason: String) -> YAMLSyntaxFailure {
        YAMLSyntaxFailure(offset: offset, reason: reason)
    }

    // MARK: Document

    private mutating func readDocument() throws -> YAMLSyntaxNode? {
        var line = contentLine(from: 0)
        var root: YAMLSyntaxNode?
        while let start = line, root == nil {
            if byte(start) == UInt8(ascii: "%") {
                line = contentLine(after: start)
            } else if text[start...].starts(with: "---".utf8), isBlank(start + 3) {
                let after = skipSpaces(start + 3)
                if restIsEmpty(after) {
                    line = contentLine(after: start)
                } else {
                    firstNodeLine = lines.line(of: start)
                    root = try blockNode(at: after, parentIndent: -1, compact: false)
                }
            } else if isDocumentMarker(line: start) {
                break
            } else {
                firstNodeLine = lines.line(of: start)
                root = try blockNode(at: contentStart(ofLine: start), parentIndent: -1, compact: true)
            }
        }
        // After the node: nothing, or `...` and then nothing but comments.
        var next = root.map { contentLine(after: $0.range.upperBound) } ?? line
        if let start = next, text[start...].starts(with: "...".utf8), isBlank(start + 3) {
            guard restIsEmpty(start + 3) else { throw fail(start, "text after `...`") }
            next = contentLine(after: start)
        }
        if let start = next { throw fail(start, "text after the document's end (a second document?)") }
        return root
    }

    // MARK: Block nodes

    /// The node at `offset`: `compact` where a block mapping or sequence may start there (at a line's start,
    /// or after a sequence's `- `).
    private mutating func blockNode(at offset: Int, parentIndent: Int, compact: Bool) throws -> YAMLSyntaxNode {
        let (position, anchor, tag) = properties(at: offset, skippingAfter: skipSpaces)
        var node: YAMLSyntaxNode
        if position != offset, restIsEmpty(position) {
            node = try value(after: position, parentIndent: parentIndent, indentless: false, compact: false)
        } else if compact, isDashItem(position) {
            node = try blockSequence(at: position)
        } else if compact, try looksLikeKey(position) {
            node = try blockMapping(at: position)
        } else {
            node = try scalarOrFlow(at: position, parentIndent: parentIndent, flow: false)
        }
        return noting(node, properties: offset, anchor: anchor, tag: tag)
    }

    /// The value after an indicator (`key:`, `-`) ending at `slot`: on its line, on the lines below
    /// indented more than `parentIndent`, an indentless sequence (`indentless`: a mapping's value), or
    /// nothing.
    private mutating func value(
        after slot: Int, parentIndent: Int, indentless: Bool, compact: Bool
    ) throws -> YAMLSyntaxNode {
        let start = skipSpaces(slot)
        if !restIsEmpty(start) {
            return try blockNode(at: start, parentIndent: parentIndent, compact: compact)
        }
        if let line = contentLine(after: slot), !isDocumentMarker(line: line) {
            let content = contentStart(ofLine: line)
            let indent = content - line
            if indent > parentIndent { return try blockNode(at: content, parentIndent: parentIndent, compact: true) }
            if indentless, indent == parentIndent, isDashItem(content) { return try blockSequence(at: content) }
        }
        return YAMLSyntaxNode(kind: .empty, range: slot..<slot, propertiesStart: slot)
    }

    /// Whether a mapping's key starts at `offset` (`key:` followed by a space or the line's end).
    private func looksLikeKey(_ offset: Int) throws -> Bool {
        let first = byte(offset)
        if first == UInt8(ascii: "?"), isBlank(offset + 1) {
            throw fail(offset, "complex keys (`? `) are not supported")
        }
        if first == UInt8(ascii: "\"") || first == UInt8(ascii: "'") {
            guard let end = try? quotedEnd(offset) else { return false }
            let colon = skipSpaces(end)
            return byte(colon) == UInt8(ascii: ":") && isBlank(colon + 1)
        }
        if [
            UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: "*"), UInt8(ascii: "|"), UInt8(ascii: ">"),
            UInt8(ascii: "#"),
        ].contains(first) {
            return false
        }
        return plainKeyColon(offset) != nil
    }

    /// The colon ending a plain key that starts at `offset`, on its line.
    private func plainKeyColon(_ offset: Int) -> Int? {
        var position = offset
        while !isLineBreak(position) {
            let current = text[position]
            if current == UInt8(ascii: ":"), isBlank(position + 1) { return position }
            if current == UInt8(ascii: "#"), position > offset, Self.isSpace(text[position - 1]) { return nil }
            position += 1
        }
        return nil
    }

    /// The first of the comment lines directly above the line `lineStart` that are the entry's; that line
    /// itself when there are none. Comment lines at the entry's `column` are its own. Comment lines indented
    /// deeper are its own too when a blank line separates them from what is above (a note on the entry that
    /// follows, written at its content's indentation); right under the entry before, they are that entry's
    /// (a setting of it commented out). Comment lines that start the document (nothing but comments,
    /// directives and `---` above them) are the file's, not its first entry's.
    private func ownCommentStart(_ lineStart: Int, column: Int) -> Int {
        var atColumn = lineStart
        var start = lineStart
        var index = lines.line(of: lineStart)
        var deeper = false
        while index > 0 {
            let previous = lines.starts[index - 1]
            let content = contentStart(ofLine: previous)
            guard byte(content) == UInt8(ascii: "#"), content - previous >= column else { break }
            if content - previous > column { deeper = true }
            if !deeper { atColumn = previous }
            start = previous
            index -= 1
        }
        if deeper {
            let separated = index == 0 || isLineBreak(contentStart(ofLine: lines.starts[index - 1]))
            if !separated { start = atColumn }
        }
        if start != lineStart, lines.line(of: lineStart) == firstNodeLine { return lineStart }
        return start
    }

    /// The entry whose text runs from `start` to its value: its line end (after checking that only a
    /// comment follows the value on it) and its span.
    private func finish(
        start: Int, slot: Int, key: String?, value: YAMLSyntaxNode, column: Int
    ) throws -> YAMLSyntaxEntry {
        let contentEnd = value.kind == .empty ? slot : value.range.upperBound
        guard value.isScalar && value.kind != .literal && value.kind != .folded ? restIsEmpty(contentEnd) : true else {
            throw fail(contentEnd, "unexpected text after a value")
        }
        let lineEnd = lines.lineEnd(of: contentEnd)
        let lineStart = lines.lineStart(of: start)
        let startsLine = lineStart + column == start
        let spanStart = startsLine ? ownCommentStart(lineStart, column: column) : start
        // Comment lines right under a block entry, indented deeper than it, are inside its block (a setting
        // of it commented out): they go with it.
        var spanEnd = lines.nextLineStart(after: lineEnd)
        while startsLine, spanEnd < text.count {
            let content = contentStart(ofLine: spanEnd)
            guard byte(content) == UInt8(ascii: "#"), content - spanEnd > column else { break }
            spanEnd = lines.nextLineStart(after: content)
        }
        return YAMLSyntaxEntry(
            key: key, isMerge: key == "<<", start: start, slot: slot, value: value, span: spanStart..<spanEnd,
            lineEnd: lineEnd)
    }

    private mutating func blockMapping(at offset: Int) throws -> YAMLSyntaxNode {
        let column = column(offset)
        var entries: [YAMLSyntaxEntry] = []
        var position = offset
        while true {
            let key: String
            let colon: Int
            var plainMerge = false
            if byte(position) == UInt8(ascii: "\"") || byte(position) == UInt8(ascii: "'") {
                let end = try quotedEnd(position)
                key = try quotedValue(position..<end)
                colon = skipSpaces(end)
                guard byte(colon) == UInt8(ascii: ":") else { throw fail(end, "a key without `:`") }
            } else {
                guard let found = plainKeyColon(position) else {
                    throw fail(position, "a mapping's entry without `key:`")
                }
                colon = found
                var keyEnd = colon
                while keyEnd > position, Self.isSpace(text[keyEnd - 1]) { keyEnd -= 1 }
                key = String(decoding: text[position..<keyEnd], as: UTF8.self)
                plainMerge = key == "<<"
            }
            let value = try value(after: colon + 1, parentIndent: column, indentless: true, compact: false)
            var entry = try finish(start: position, slot: colon + 1, key: key, value: value, column: column)
            entry.isMerge = plainMerge
            entries.append(entry)
            guard let next = nextLine(after: entry.lineEnd), next.indent >= column else { break }
            if next.indent > column { throw fail(next.content, "a line indented more than its mapping's keys") }
            if isDashItem(next.content) { break }
            position = next.content
        }
        return YAMLSyntaxNode(block: .blockMapping, at: offset, entries: entries, column: column)
    }

    private mutating func blockSequence(at offset: Int) throws -> YAMLSyntaxNode {
        let column = column(offset)
        var entries: [YAMLSyntaxEntry] = []
        var position = offset
        while true {
            let value = try value(after: position + 1, parentIndent: column, indentless: false, compact: true)
            let entry = try finish(start: position, slot: position + 1, key: nil, value: value, column: column)
            entries.append(entry)
            guard let next = nextLine(after: entry.lineEnd), next.indent >= column, isDashItem(next.content) else {
                break
            }
            if next.indent > column { throw fail(next.content, "a line indented more than its sequence's dashes") }
            position = next.content
        }
        return YAMLSyntaxNode(block: .blockSequence, at: offset, entries: entries, column: column)
    }

    // MARK: Scalars and flow collections

    private func tokenEnd(_ offset: Int, flow: Bool = true) -> Int {
        var end = offset + 1
        while !isBlank(end),
            !(flow
                && [UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: "["), UInt8(ascii: "{")]
                    .contains(text[end]))
        {
            end += 1
        }
        return end
    }

    private mutating func scalarOrFlow(at offset: Int, parentIndent: Int, flow: Bool) throws -> YAMLSyntaxNode {
        switch byte(offset) {
        case UInt8(ascii: "*"):
            let end = tokenEnd(offset)
            aliased.insert(String(decoding: text[(offset + 1)..<end], as: UTF8.self))
            return YAMLSyntaxNode(kind: .alias, range: offset..<end, propertiesStart: offset)
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            return try flowCollection(at: offset)
        case UInt8(ascii: "|"), UInt8(ascii: ">"):
            guard !flow else { throw fail(offset, "a block scalar in a flow collection") }
            return try blockScalar(at: offset, parentIndent: parentIndent)
        case UInt8(ascii: "\""):
            return YAMLSyntaxNode(kind: .doubleQuoted, range: offset..<(try quotedEnd(offset)), propertiesStart: offset)
        case UInt8(ascii: "'"):
            return YAMLSyntaxNode(kind: .singleQuoted, range: offset..<(try quotedEnd(offset)), propertiesStart: offset)
        default:
            return YAMLSyntaxNode(
                kind: .plain, range: offset..<plainEnd(offset, parentIndent: parentIndent, flow: flow),
                propertiesStart: offset)
        }
    }

    /// Where a quoted scalar starting at `offset` ends (after its closing quote), over any number of lines.
    private func quotedEnd(_ offset: Int) throws -> Int {
        let quote = text[offset]
        var position = offset + 1
        while position < text.count {
            let current = text[position]
            if quote == UInt8(ascii: "\""), current == UInt8(ascii: "\\") {
                position += 2
                continue
            }
            if current == quote {
                if quote == UInt8(ascii: "'"), byte(position + 1) == quote {
                    position += 2
                    continue
                }
                return position + 1
            }
            position += 1
        }
        throw fail(offset, "a quoted scalar without its closing quote")
    }

    /// The string a one-line quoted key spells.
    private func quotedValue(_ range: Range<Int>) throws -> String {
        let inner = String(decoding: text[(range.lowerBound + 1)..<(range.upperBound - 1)], as: UTF8.self)
        if text[range.lowerBound] == UInt8(ascii: "'") { return inner.replacingOccurrences(of: "''", with: "'") }
        guard inner.contains("\\") else { return inner }
        // A double-quoted key with escapes: JSON's escapes are YAML's too.
        if case .string(let value)? = try? JSONValue(parsing: "\"" + inner + "\"") { return value }
        throw fail(range.lowerBound, "a key with escapes this reader does not know")
    }

    /// Where a plain scalar starting at `offset` ends: before ` #`, `: `, (in flow) a flow indicator, or a
    /// line that does not continue it.
    private func plainEnd(_ offset: Int, parentIndent: Int, flow: Bool) -> Int {
        var end = offset
        var position = offset
        while true {
            while !isLineBreak(position) {
                let current = text[position]
                if current == UInt8(ascii: ":"),
                    isBlank(position + 1)
                        || (flow
                            && [UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}")].contains(byte(position + 1)))
                {
                    return end
                }
                if current == UInt8(ascii: "#"), position > offset, Self.isSpace(text[position - 1]) { return end }
                if flow,
                    [UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: "["), UInt8(ascii: "{")]
                        .contains(current)
                {
                    return end
                }
                if !Self.isSpace(current) { end = position + 1 }
                position += 1
            }
            // A following line continues it when it is indented more than the parent and is not a comment.
            var next = lines.line(of: position) + 1
            var continued = false
            while next < lines.starts.count, lines.starts[next] < text.count {
                let lineStart = lines.starts[next]
                let content = contentStart(ofLine: lineStart)
                if isLineBreak(content) {
                    next += 1
                    continue
                }
                if text[content] == UInt8(ascii: "#") || isDocumentMarker(line: lineStart) { break }
                if !flow, content - lineStart <= parentIndent { break }
                if !flow, isDashItem(content) || plainKeyColon(content) != nil { break }
                position = content
                continued = true
                break
            }
            if !continued { return end }
        }
    }

    private func blockScalar(at offset: Int, parentIndent: Int) throws -> YAMLSyntaxNode {
        var position = offset + 1
        var indicator: Int?
        var keeps = false
        while !isBlank(position) {
            let current = text[position]
            if current == UInt8(ascii: "+") {
                keeps = true
            } else if current >= UInt8(ascii: "1"), current <= UInt8(ascii: "9") {
                indicator = Int(current - UInt8(ascii: "0"))
            } else if current != UInt8(ascii: "-") {
                throw fail(position, "a block scalar's header")
            }
            position += 1
        }
        let headerEnd = position
        guard restIsEmpty(headerEnd) else { throw fail(headerEnd, "text after a block scalar's header") }
        let bodyStart = lines.nextLineStart(after: headerEnd)
        var indent = indicator.map { max(parentIndent, 0) + $0 }
        var lastContentEnd: Int?
        var lastEmptyEnd: Int?
        var index = lines.line(of: headerEnd) + 1
        while index < lines.starts.count, lines.starts[index] < text.count {
            let lineStart = lines.starts[index]
            let content = contentStart(ofLine: lineStart)
            let spaces = text[lineStart..<content].prefix { $0 == 0x20 }.count
            if isLineBreak(content) && spaces <= (indent ?? Int.max) {
                lastEmptyEnd = lines.lineEnd(of: lineStart)
                index += 1
                continue
            }
            if indent == nil {
                guard spaces > parentIndent else { break }
                indent = spaces
            }
            if spaces < indent! || (lineStart + spaces < text.count && spaces == 0 && isDocumentMarker(line: lineStart))
            {
                break
            }
            lastContentEnd = lines.lineEnd(of: lineStart)
            lastEmptyEnd = nil
            index += 1
        }
        var end = lastContentEnd ?? headerEnd
        if keeps, let lastEmptyEnd, lastContentEnd != nil { end = lastEmptyEnd }
        var node = YAMLSyntaxNode(
            kind: text[offset] == UInt8(ascii: "|") ? .literal : .folded, range: offset..<end, propertiesStart: offset)
        node.column = indent ?? (max(parentIndent, 0) + 2)
        node.header = offset..<headerEnd
        node.body = lastContentEnd == nil ? nil : bodyStart..<end
        return node
    }

    /// After spaces, line breaks and comments in a flow collection.
    private func skipFlowSpace(_ offset: Int) -> Int {
        var position = offset
        while position < text.count {
            let current = text[position]
            if Self.isSpace(current) || current == 0x0A || current == 0x0D {
                position += 1
            } else if current == UInt8(ascii: "#"), position == 0 || isBlank(position - 1) {
                position = lines.lineEnd(of: position)
            } else {
                break
            }
        }
        return position
    }

    /// A node's properties (`&anchor`, `!tag`) from `offset`, and where what follows them starts, after
    /// what `skip` passes over.
    private func properties(
        at offset: Int, skippingAfter skip: (Int) -> Int
    ) -> (position: Int, anchor: String?, tag: String?) {
        var position = offset
        var anchor: String?
        var tag: String?
        while byte(position) == UInt8(ascii: "&") || byte(position) == UInt8(ascii: "!") {
            let end = tokenEnd(position)
            let token = String(decoding: text[position..<end], as: UTF8.self)
            if token.hasPrefix("&") { anchor = String(token.dropFirst()) } else { tag = token }
            position = skip(end)
        }
        return (position, anchor, tag)
    }

    /// `node` with the properties written before it from `offset`; an anchored node is noted by its anchor.
    private mutating func noting(
        _ node: YAMLSyntaxNode, properties offset: Int, anchor: String?, tag: String?
    ) -> YAMLSyntaxNode {
        var node = node
        node.propertiesStart = offset
        if let anchor {
            node.anchor = anchor
            anchored[anchor] = node
        }
        if let tag { node.tag = tag }
        return node
    }

    private mutating func flowNode(at offset: Int) throws -> YAMLSyntaxNode {
        let (position, anchor, tag) = properties(at: offset, skippingAfter: skipFlowSpace)
        let node = try scalarOrFlow(at: position, parentIndent: -1, flow: true)
        return noting(node, properties: offset, anchor: anchor, tag: tag)
    }

    private mutating func flowCollection(at offset: Int) throws -> YAMLSyntaxNode {
        let isMapping = text[offset] == UInt8(ascii: "{")
        let closing = isMapping ? UInt8(ascii: "}") : UInt8(ascii: "]")
        var entries: [YAMLSyntaxEntry] = []
        var position = skipFlowSpace(offset + 1)
        while true {
            guard position < text.count else { throw fail(offset, "a flow collection without its end") }
            if text[position] == closing {
                position += 1
                break
            }
            let start = position
            var entry: YAMLSyntaxEntry
            if isMapping {
                let key: String
                let keyEnd: Int
                if byte(position) == UInt8(ascii: "\"") || byte(position) == UInt8(ascii: "'") {
                    keyEnd = try quotedEnd(position)
                    key = try quotedValue(position..<keyEnd)
                } else {
                    if byte(position) == UInt8(ascii: "?") || byte(position) == UInt8(ascii: "[")
                        || byte(position) == UInt8(ascii: "{")
                    {
                        throw fail(position, "a flow mapping's complex key")
                    }
                    keyEnd = plainEnd(position, parentIndent: -1, flow: true)
                    key = String(decoding: text[position..<keyEnd], as: UTF8.self)
                }
                let afterKey = skipFlowSpace(keyEnd)
                if byte(afterKey) == UInt8(ascii: ":") {
                    let valueStart = skipFlowSpace(afterKey + 1)
                    let value: YAMLSyntaxNode =
                        byte(valueStart) == UInt8(ascii: ",") || byte(valueStart) == closing
                        ? YAMLSyntaxNode(
                            kind: .empty, range: (afterKey + 1)..<(afterKey + 1), propertiesStart: afterKey + 1)
                        : try flowNode(at: valueStart)
                    entry = YAMLSyntaxEntry(
                        key: key, start: start, slot: afterKey + 1, value: value,
                        span: start..<max(value.range.upperBound, afterKey + 1), lineEnd: 0)
                } else {
                    let value = YAMLSyntaxNode(kind: .empty, range: keyEnd..<keyEnd, propertiesStart: keyEnd)
                    entry = YAMLSyntaxEntry(
                        key: key, start: start, slot: keyEnd, value: value, span: start..<keyEnd, lineEnd: 0,
                        bareKey: true)
                }
                entry.isMerge = key == "<<" && byte(start) != UInt8(ascii: "\"") && byte(start) != UInt8(ascii: "'")
            } else {
                let value = try flowNode(at: position)
                if byte(skipFlowSpace(value.range.upperBound)) == UInt8(ascii: ":") {
                    throw fail(position, "a mapping of one pair in a flow sequence")
                }
                entry = YAMLSyntaxEntry(
                    key: nil, start: start, slot: start, value: value, span: start..<value.range.upperBound, lineEnd: 0)
            }
            entry.lineEnd = entry.span.upperBound
            entries.append(entry)
            position = skipFlowSpace(entry.span.upperBound)
            if byte(position) == UInt8(ascii: ",") {
                position = skipFlowSpace(position + 1)
            } else if byte(position) != closing {
                throw fail(position, "a flow collection's entries without a comma between them")
            }
        }
        var node = YAMLSyntaxNode(
            kind: isMapping ? .flowMapping : .flowSequence, range: offset..<position, propertiesStart: offset,
            entries: entries)
        node.column = column(offset)
        return node
    }
}
#endif
