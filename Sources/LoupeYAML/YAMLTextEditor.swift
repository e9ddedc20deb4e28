#if YAML
import Foundation
import Loupe
import Yams

/// Writes a new document as an edit of the YAML text that held the previous one, for block mappings (the
/// way people write settings): a changed scalar is replaced where it stands, in its quoting where it can
/// be (a quoted string stays quoted the same way), a removed key goes with its lines and the comment on
/// them, and a new key goes after its last sibling at their indentation. Comments, blank lines, order,
/// quoting and flow or block style of everything else stay.
///
/// What it does not edit in place (a sequence or a flow collection that changes, a multi-line scalar that
/// changes) makes it return nil, and the codec writes the document anew. An edit that adds or removes
/// lines is read again and must hold the new document, or it is not used either; an edit that only
/// replaces one-line scalars is checked scalar by scalar (each new scalar's text must read as its value),
/// and the text around them is what it was.
///
/// Given a ``Memo``, such an edit of a file without anchors leaves the nodes of the text it wrote (the
/// replaced scalars' styles brought up to date; no line moves), so that the next edit of that text does
/// not read it again.
struct YAMLTextEditor {
    /// The text's bytes, and where each line starts in them.
    private let bytes: [UInt8]
    private let lineStarts: [Int]
    private var edits: [(range: Range<Int>, text: String)] = []
    /// Each edit that replaces a scalar, beside it: the indices of the entries that lead to the scalar in
    /// their mappings, its new value, and its new style where its text's differs from the one read. As many
    /// as `edits` when every edit does.
    private var replaced: [(indices: [Int], value: JSONValue, restyled: Node.Scalar.Style?)] = []
    /// Where each key stands in a large mapping, by the indices of the entries that lead to it: made when an
    /// edit first looks a key up there, and kept with the nodes.
    private(set) var keyIndices: [[Int]: [String: Int]] = [:]
    private let codec: YAMLCodec
    /// Whether the nodes hold no anchor and no alias (as kept nodes never do): then nothing an edit changes
    /// can be one, and the walk does not look.
    private var holdsNoAliases = false

    /// What an edit leaves for the next one: the text it wrote and that text's nodes, with their marks.
    ///
    /// `@unchecked Sendable`: Yams' nodes are not `Sendable`. A `Kept` passes from one edit to the next
    /// through the ``Memo`` (taken, then kept again), so one edit at a time holds it; its nodes are values,
    /// and it is kept only for a file with no anchors, whose nodes refer to nothing the parser owns.
    struct Kept: @unchecked Sendable {
        let text: Data
        /// `text`'s bytes, and where each of its lines starts.
        let bytes: [UInt8]
        let lineStarts: [Int]
        /// The text's nodes, for the editor alone: a value scalar an edit replaced keeps its mark and has the
        /// new text's style, but its string is the one read (see `restyleScalar(at:as:)`).
        let root: Node
        /// Where each key stands in the large mappings edits looked into (``YAMLTextEditor/keyIndices``).
        var keyIndices: [[Int]: [String: Int]] = [:]
    }

    /// The nodes of the text a codec wrote last.
    typealias Memo = PartMemo<Kept>

    /// `document` written as an edit of `data`, which holds `previous`; nil when the edit cannot be made in
    /// place.
    ///
    /// - Throws: ``DocumentSyntaxError`` when a value that changes is an alias (`*name`), or holds an anchor
    ///   (`&name`): an edit there would change every alias of it, or leave an alias with nothing to name.
    static func edit(_ data: Data, holding previous: JSONValue, into document: JSONValue, codec: YAMLCodec, memo: Memo? = nil) throws -> Data? {
        let root: Node
        var parser: Parser?
        // Whether the nodes may be kept for the next edit: those of a file without anchors or aliases.
        var keepsNodes: Bool
        var editor: YAMLTextEditor
        if let kept = memo?.take(), kept.text.isSameText(as: data) {
            (root, keepsNodes) = (kept.root, true)
            editor = YAMLTextEditor(bytes: kept.bytes, lineStarts: kept.lineStarts, codec: codec)
            editor.keyIndices = kept.keyIndices
            editor.holdsNoAliases = true
        } else {
            guard let text = String(data: data, encoding: .utf8), let read = try? YAMLCodec.parser(of: text), let node = try? read.singleRoot() else { return nil }
            (root, parser) = (node, read)
            keepsNodes = withExtendedLifetime(read) { !holdsAnchorsOrAliases(node) }
            editor = YAMLTextEditor(bytes: Array(data), codec: codec)
            editor.holdsNoAliases = keepsNodes
        }
        // The parser holds the anchors its nodes name (weakly) while it lives.
        let edited = try withExtendedLifetime(parser) {
            guard case .mapping(let mapping) = root, mapping.style != .flow else { return false }
            return try editor.visit(mapping, old: previous, new: document, at: [], indices: [])
        }
        guard edited else { return nil }
        // What is written anew ends its lines as the file does.
        let bytes = editor.bytes
        let crlf = bytes.firstIndex(of: UInt8(ascii: "\n")).map { $0 > 0 && bytes[$0 - 1] == 0x0D } ?? false
        let ordered = editor.edits.sorted {
            ($0.range.lowerBound, $0.range.upperBound) > ($1.range.lowerBound, $1.range.upperBound)
        }
        let output = bytes.splicing(ordered.reversed().map { edit in
            (edit.range, Array((crlf ? edit.text.replacingOccurrences(of: "\n", with: "\r\n") : edit.text).utf8))
        })
        let data = Data(output)
        if editor.replaced.count == editor.edits.count {
            // Scalars replaced, each checked alone: the text around them is what it was.
            let checked = zip(editor.edits, editor.replaced).allSatisfy { edit, replaced in
                codec.reads(edit.text, as: replaced.value)
            }
            if checked {
                // No line moved: each scalar's text is one line, in place of one.
                if keepsNodes, let memo, let lineStarts = editor.lineStarts(after: ordered) {
                    var nodes = consume root
                    for replaced in editor.replaced where keepsNodes {
                        if let style = replaced.restyled { keepsNodes = nodes.restyleScalar(at: replaced.indices[...], as: style) }
                    }
                    if keepsNodes { memo.keep(Kept(text: data, bytes: output, lineStarts: lineStarts, root: nodes, keyIndices: editor.keyIndices)) }
                }
                return data
            }
        }
        guard (try? codec.parse(data)) == document else { return nil }
        return data
    }

    private init(bytes: [UInt8], codec: YAMLCodec) {
        // Lines end at the line feed byte: "\r\n" is one Character, which a split on "\n" would not see. A
        // line keeps its "\r", which `isBlankOrComment` ignores.
        var starts = [0]
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") { starts.append(index + 1) }
        self.init(bytes: bytes, lineStarts: starts, codec: codec)
    }

    private init(bytes: [UInt8], lineStarts: [Int], codec: YAMLCodec) {
        self.bytes = bytes
        self.lineStarts = lineStarts
        self.codec = codec
    }

    /// Where each line starts after `edits` (from the last in the text to the first), each within one
    /// line and writing no line break: the lines after an edit move by what it added or took away. Nil
    /// when an edit writes a line break.
    private func lineStarts(after edits: [(range: Range<Int>, text: String)]) -> [Int]? {
        var starts = lineStarts
        for edit in edits {
            guard !edit.text.utf8.contains(UInt8(ascii: "\n")) else { return nil }
            let moved = edit.text.utf8.count - edit.range.count
            guard moved != 0 else { continue }
            // The first line that starts after the edit's start.
            var low = 0
            var high = starts.count
            while low < high {
                let middle = (low + high) / 2
                if lineStarts[middle] <= edit.range.lowerBound { low = middle + 1 } else { high = middle }
            }
            for line in low..<starts.count { starts[line] += moved }
        }
        return starts
    }

    /// Line `number` (from 1): its bytes, without its line feed.
    private func line(_ number: Int) -> Range<Int> {
        lineStarts[number - 1]..<(number < lineStarts.count ? lineStarts[number] - 1 : bytes.count)
    }

    // MARK: Editing

    private mutating func visit(_ mapping: Node.Mapping, old: JSONValue, new: JSONValue, at path: [String], indices: [Int]) throws -> Bool {
        guard case .object(let before) = old, case .object(let after) = new, mapping.style != .flow else { return false }
        // The keys that come, go or change, found from the documents alone (two mappings count as changed,
        // and are walked into); the mapping's entries are walked until each of its keys among them has been
        // edited (a key stands once in a mapping: Yams refuses a file that writes one twice). A list: an
        // update changes a key or a few; many are looked up in a set.
        let changed = after.keysChanged(from: before, same: ==)
        if changed.isEmpty { return true }
        let changedSet = changed.count > 8 ? Set(changed) : nil
        let written = changed.count { before[$0] != nil }
        var visited = 0
        // The entries to walk: those of the keys that change, in a large mapping whose keys are known; else
        // every entry, in order.
        let entries = mapping.count > Self.indexedMappingSize ? keyIndex(of: mapping, at: indices).map { positions in
            changed.compactMap { positions[$0] }.sorted()
        } : nil
        for index in entries ?? Array(mapping.startIndex..<mapping.endIndex) where visited < written {
            let (keyNode, valueNode) = mapping[index]
            guard let key = keyNode.string else { return false }
            guard changedSet?.contains(key) ?? changed.contains(key) else { continue }
            visited += 1
            let (was, now) = (before[key], after[key])
            guard let keyMark = keyNode.mark, (1...lineStarts.count).contains(keyMark.line) else { return false }
            // Two mappings the walk above took for changed without comparing them: a block mapping of its own
            // is visited (nothing below one that did not change is edited); anything else (a flow mapping,
            // an anchored one, an alias) is compared first, and left alone when it did not change.
            if case .object? = was, case .object? = now {
                let isOwnBlockMapping = if case .mapping(let inner) = valueNode, inner.style != .flow,
                                           holdsNoAliases || valueNode.anchor == nil && !Self.isAlias(valueNode, after: keyMark) { true } else { false }
                if !isOwnBlockMapping, was == now { continue }
            }
            if was != nil, !holdsNoAliases {
                try Self.refuseAliases(in: valueNode, keyMark: keyMark, at: path.appending(key), removing: now == nil, writtenAnew: false)
            }
            // Where the entry ends: for an edit of its lines (not of a mapping below, or a scalar).
            var end: Int { entryEnd(index, of: mapping) }
            switch (was, now) {
            case (_?, nil):
                edits.append((lineStarts[keyMark.line - 1]..<end, ""))
            case (_?, .object(let members)?) where members.isEmpty:
                // A mapping that loses every key: `key: {}` in its place (no lines under a key read as null).
                let indentation = String(repeating: " ", count: keyMark.column - 1)
                edits.append((lineStarts[keyMark.line - 1]..<end, indentation + Self.yamlKey(key, codec: codec) + ": {}\n"))
            case (let was?, let now?):
                if case .mapping(let inner) = valueNode, inner.style != .flow, case .object = now {
                    // The walk of the mapping adds its edits after these; where it cannot edit the mapping in
                    // place, they are taken back, and the entry is written anew below.
                    let (editCount, replacedCount) = (edits.count, replaced.count)
                    if try visit(inner, old: was, new: now, at: path.appending(key), indices: indices.appending(index)) { continue }
                    edits.removeSubrange(editCount...)
                    replaced.removeSubrange(replacedCount...)
                } else if case .scalar(let scalar) = valueNode, let replacement = try replacement(for: scalar, with: now) {
                    edits.append(replacement)
                    let style = Node.Scalar.Style(ofWritten: replacement.text)
                    replaced.append((indices.appending(index), now, style == scalar.style ? nil : style))
                    continue
                }
                // Anything else (a sequence, a flow collection, a multi-line scalar, a change of kind): this
                // entry written anew in its place, at its indentation; the rest of the file stays. (Not when
                // it holds aliases, which that would replace with copies.)
                if !holdsNoAliases {
                    try Self.refuseAliases(in: valueNode, keyMark: keyMark, at: path.appending(key), removing: false, writtenAnew: true)
                }
                let indentation = String(repeating: " ", count: keyMark.column - 1)
                let yaml = String(decoding: try codec.serialize(.object([key: now])), as: UTF8.self)
                let block = yaml.split(separator: "\n").map { indentation + $0 + "\n" }.joined()
                edits.append((lineStarts[keyMark.line - 1]..<end, block))
            default:
                return false
            }
        }
        // A key the document has and the mapping does not write, one a merge key (`<<`) brings in: a new
        // value is written in the mapping, where it wins over the merged one; the merged key cannot be
        // taken out without changing what it merges.
        var added = changed.filter { before[$0] == nil }
        if visited < written {
            // The walk visits every changed key the mapping writes: those it did not, it does not write.
            let writtenHere = Set(mapping.compactMap { $0.key.string })
            for key in changed where before[key] != nil && !writtenHere.contains(key) {
                guard after[key] != nil else {
                    throw DocumentSyntaxError("\(path.appending(key).joined(separator: ".")) comes from a YAML merge key (<<) in its mapping; Loupe does not remove it there, since that would change what the merge brings in: edit it by hand")
                }
                added.append(key)
            }
        }
        added.sort()
        guard !added.isEmpty else { return true }
        guard let first = mapping.first?.key.mark else { return false }
        let insertAt = entryEnd(mapping.endIndex - 1, of: mapping)
        let indentation = String(repeating: " ", count: first.column - 1)
        var block = ""
        for key in added {
            let yaml = String(decoding: try codec.serialize(.object([key: after[key]!])), as: UTF8.self)
            for line in yaml.split(separator: "\n") { block += indentation + line + "\n" }
        }
        var insertion = insertAt
        if insertion > 0, insertion <= bytes.count, bytes[insertion - 1] != UInt8(ascii: "\n") {
            block = "\n" + block
        }
        insertion = min(insertion, bytes.count)
        edits.append((insertion..<insertion, block))
        return true
    }

    /// Throws when the value at `path` (whose key is at `keyMark`), which changes (or goes, when
    /// `removing`), is an alias or holds an anchor: an edit of an anchored value would change its aliases
    /// too, and a write of an alias (or of a value holding aliases) anew would put a copy in its place. A
    /// removed value may be or hold aliases, and may not hold an anchor, which aliases elsewhere may name.
    ///
    /// Yams gives an alias as the node it names: a node written before its key, where the anchor is.
    private static func refuseAliases(in node: Node, keyMark: Mark, at path: @autoclosure () -> [String], removing: Bool, writtenAnew: Bool) throws {
        var name: String { path().joined(separator: ".") }
        if isAlias(node, after: keyMark) {
            if removing { return }
            throw DocumentSyntaxError("\(name) is a YAML alias (*name) of a value written elsewhere in the file; Loupe does not write a copy in its place: edit it by hand, or take the alias out")
        }
        if let anchor = node.anchor {
            throw DocumentSyntaxError("\(name) is anchored (&\(anchor.rawValue)), and its aliases would change with it; Loupe does not edit it: edit it by hand, or take the anchor out")
        }
        if removing {
            if holdsAnchors(node, after: keyMark) {
                throw DocumentSyntaxError("\(name) holds a YAML anchor (&name) that aliases elsewhere may name; Loupe does not remove it: edit it by hand, or take the anchor out")
            }
        } else if writtenAnew || node.mapping == nil, holdsAnchorsOrAliases(node) {
            throw DocumentSyntaxError("\(name) holds YAML anchors or aliases (&name, *name), which a write of it would replace with copies; Loupe does not write it: edit it by hand, or take them out")
        }
    }

    /// Whether `node`, the value of a key at `keyMark`, is an alias: written before the key.
    private static func isAlias(_ node: Node, after keyMark: Mark) -> Bool {
        if case .alias = node { return true }
        guard let mark = node.mark else { return false }
        return (mark.line, mark.column) < (keyMark.line, keyMark.column)
    }

    /// Whether `node` or a node inside it is an anchor's definition (not an alias: written after `start`).
    private static func holdsAnchors(_ node: Node, after start: Mark) -> Bool {
        if isAlias(node, after: start) { return false }
        if node.anchor != nil { return true }
        switch node {
        case .mapping(let mapping): return mapping.contains { holdsAnchors($0.value, after: start) }
        case .sequence(let sequence): return sequence.contains { holdsAnchors($0, after: start) }
        case .scalar, .alias: return false
        }
    }

    /// Whether `node` or a node inside it has an anchor or is an alias.
    static func holdsAnchorsOrAliases(_ node: Node) -> Bool {
        if node.anchor != nil { return true }
        switch node {
        case .alias: return true
        case .mapping(let mapping): return mapping.contains { holdsAnchorsOrAliases($0.value) }
        case .sequence(let sequence): return sequence.contains(where: holdsAnchorsOrAliases)
        case .scalar: return false
        }
    }

    /// Mappings with more entries than this have their keys indexed, rather than walked to find one.
    private static let indexedMappingSize = 16

    /// Where each key of `mapping` (reached through the entries `indices`) stands in it; nil when a key is
    /// not a string, and the mapping is walked instead (which leaves it to be written anew).
    private mutating func keyIndex(of mapping: Node.Mapping, at indices: [Int]) -> [String: Int]? {
        if let known = keyIndices[indices] { return known }
        var positions: [String: Int] = [:]
        positions.reserveCapacity(mapping.count)
        for index in mapping.indices {
            guard let key = mapping[index].key.string else { return nil }
            positions[key] = index  // a key stands once in a mapping: Yams refuses a file that writes one twice
        }
        keyIndices[indices] = positions
        return positions
    }

    /// Where entry `index` of `mapping` ends: after its last line of content (blank lines and comments
    /// before the next key belong to that key).
    private func entryEnd(_ index: Int, of mapping: Node.Mapping) -> Int {
        let keyMark = mapping[index].key.mark
        guard let keyLine = keyMark?.line else { return bytes.count }
        let indentation = (keyMark?.column ?? 1) - 1
        var next = lineStarts.count  // the line (1-based) after the entry's lines
        if index + 1 < mapping.endIndex, let line = mapping[index + 1].key.mark?.line {
            next = line
        } else {
            // The end of the mapping: the first line of content indented less than its keys.
            for number in stride(from: keyLine + 1, through: lineStarts.count, by: 1) {
                let raw = bytes[line(number)]
                if Self.isBlankOrComment(raw) { continue }
                if raw.prefix(while: { $0 == 0x20 }).count < indentation {
                    next = number
                    break
                }
            }
        }
        var last = min(next - 1, lineStarts.count)
        while last > keyLine, Self.isBlankOrComment(bytes[line(last)]) { last -= 1 }
        guard last >= 1 else { return bytes.count }
        return min(line(last).upperBound + 1, bytes.count)
    }

    /// Whether a line holds nothing but blanks, or a comment.
    private static func isBlankOrComment(_ line: ArraySlice<UInt8>) -> Bool {
        let content = line.drop { $0 == 0x20 || $0 == 0x09 }
        return content.isEmpty || content.first == UInt8(ascii: "#") || content.elementsEqual([0x0D])
    }

    /// The edit that replaces a one-line scalar with `value`, quoted as it was; nil for what cannot be.
    private func replacement(for scalar: Node.Scalar, with value: JSONValue) throws -> (range: Range<Int>, text: String)? {
        guard let mark = scalar.mark, mark.line <= lineStarts.count else { return nil }
        switch value {
        case .object, .array: return nil
        default: break
        }
        let range = line(mark.line)
        // The mark's column counts characters: as many bytes, before it, in a line that starts in ASCII.
        let startInLine: Int
        if mark.column - 1 <= range.count, bytes[range.prefix(mark.column - 1)].allSatisfy({ $0 < 0x80 }) {
            startInLine = mark.column - 1
        } else {
            let characters = Array(String(decoding: bytes[range], as: UTF8.self))
            guard mark.column - 1 <= characters.count else { return nil }
            startInLine = String(characters[..<(mark.column - 1)]).utf8.count
        }
        let rest = Array(bytes[range].dropFirst(startInLine))
        let length: Int
        let rendered: String
        switch scalar.style {
        case .doubleQuoted:
            guard case .string(let string) = value, let end = Self.closingQuote(rest, quote: UInt8(ascii: "\""), escape: UInt8(ascii: "\\")) else { return nil }
            length = end
            rendered = JSONValue.string(string).jsonText()
        case .singleQuoted:
            guard case .string(let string) = value, let end = Self.closingQuote(rest, quote: UInt8(ascii: "'"), escape: nil) else { return nil }
            length = end
            rendered = "'" + string.replacingOccurrences(of: "'", with: "''") + "'"
        case .plain:
            // To the end of the line, or a comment, without the spaces before it.
            var end = rest.count
            for index in rest.indices where rest[index] == UInt8(ascii: "#") && index > 0 && (rest[index - 1] == 0x20 || rest[index - 1] == 0x09) {
                end = index
                break
            }
            while end > 0, rest[end - 1] == 0x20 || rest[end - 1] == 0x09 || rest[end - 1] == 0x0D { end -= 1 }
            length = end
            switch value {
            // An integer or a Boolean is plain text as the codec writes it.
            case .integer(let integer): rendered = String(integer)
            case .bool(let bool): rendered = bool ? "true" : "false"
            default:
                // As the codec writes it as a mapping's value: quoted when plain text would read otherwise.
                let entry = String(decoding: try codec.serialize(.object(["k": value])), as: UTF8.self)
                guard entry.hasPrefix("k: "), entry.dropFirst(3).trimmingCharacters(in: .newlines).contains("\n") == false else { return nil }
                rendered = entry.dropFirst(3).trimmingCharacters(in: .whitespacesAndNewlines)
            }
        default:
            return nil
        }
        let start = range.lowerBound + startInLine
        return (start..<(start + length), rendered)
    }

    /// `key` as the codec writes a mapping's key.
    private static func yamlKey(_ key: String, codec: YAMLCodec) -> String {
        let entry = (try? codec.serialize(.object([key: .null]))).map { String(decoding: $0, as: UTF8.self) } ?? ""
        guard let colon = entry.range(of: ": null", options: .backwards) else { return JSONValue.string(key).jsonText() }
        return String(entry[..<colon.lowerBound])
    }

    /// The length of a quoted scalar, quotes included, at the start of `bytes`.
    private static func closingQuote(_ bytes: [UInt8], quote: UInt8, escape: UInt8?) -> Int? {
        guard bytes.first == quote else { return nil }
        var index = 1
        while index < bytes.count {
            if let escape, bytes[index] == escape { index += 2; continue }
            if bytes[index] == quote {
                if escape == nil, index + 1 < bytes.count, bytes[index + 1] == quote { index += 2; continue }
                return index + 1
            }
            index += 1
        }
        return nil
    }
}
extension Node {
    /// Brings the scalar at `indices` (of entries of block mappings, from this node), which an edit wrote
    /// anew in another quoting, up to date for the next edit: its style becomes `style`; its mark stays
    /// where it was. False when there is no scalar there.
    ///
    /// What an edit reads of a value's scalar is its mark and its style, never its string, so the string
    /// is left as it was: setting it would make the scalar a new tag.
    fileprivate mutating func restyleScalar(at indices: ArraySlice<Int>, as style: Node.Scalar.Style) -> Bool {
        var placeholder: Node?
        return restyleScalar(at: indices, as: style, placeholder: &placeholder)
    }

    /// Gives the scalar at `indices` `style`. `placeholder` (made on first use) stands in for a node while
    /// it changes.
    private mutating func restyleScalar(at indices: ArraySlice<Int>, as style: Node.Scalar.Style, placeholder: inout Node?) -> Bool {
        guard let index = indices.first else {
            guard case .scalar(var scalar) = self else { return false }
            scalar.style = style
            self = .scalar(scalar)
            return true
        }
        guard case .mapping(var mapping) = self, mapping.indices.contains(index) else { return false }
        // The mapping is taken out of this node, and the entry's value out of the mapping, while the scalar
        // changes: a mapping still held where it was would be copied whole (every entry) by the change.
        let stand = placeholder ?? Node("")
        placeholder = stand
        self = stand
        let key = mapping[index].key
        var node = mapping[index].value
        mapping[index] = (key, stand)
        let restyled = node.restyleScalar(at: indices.dropFirst(), as: style, placeholder: &placeholder)
        mapping[index] = (key, node)
        self = .mapping(mapping)
        return restyled
    }
}
extension Node.Scalar.Style {
    /// The style of a scalar written as `text` (one line): quoted as it starts, or plain.
    fileprivate init(ofWritten text: String) {
        self = text.hasPrefix("\"") ? .doubleQuoted : text.hasPrefix("'") ? .singleQuoted : .plain
    }
}
extension YAMLCodec {
    /// Whether `text`, a mapping's value alone on its line, reads as `value`. A decimal integer and `true`
    /// or `false` always read as themselves; other text is read to see.
    fileprivate func reads(_ text: String, as value: JSONValue) -> Bool {
        switch value {
        case .integer(let integer) where text == String(integer): true
        case .bool(let bool) where text == (bool ? "true" : "false"): true
        default: (try? parse(Data(("v: " + text).utf8))) == .object(["v": value])
        }
    }
}
#endif
