/// Writes a new document as an edit of the JSON (or JSONC) text that held the previous one: what did not
/// change is copied byte for byte (key order, indentation, spacing, line endings, comments, the spelling of
/// numbers and strings), a changed value is replaced where it stands, a removed key goes with its comma and
/// the comment on its line, and a new key goes after its last sibling in the siblings' style (on their
/// line for an object written on one line, on a line of its own at their indentation otherwise).
///
/// The text is read again here with the position of every value (`Node`); the new text of each object or
/// array is put together from the pieces of the old one. An array whose length changed is written anew
/// where it stands, at its indentation.
struct JSONTextEditor {
    private let bytes: [UInt8]
    /// The file's line ending and indentation unit, for what is written anew.
    private let newline: [UInt8]
    private let unit: [UInt8]

    /// `document` written as an edit of `text`, which holds `previous`; nil when `text` is not JSON this
    /// editor reads (the caller then writes the document anew).
    static func edit(_ text: [UInt8], holding previous: JSONValue, into document: JSONValue) throws -> [UInt8]? {
        var parser = SpanParser(bytes: text)
        guard let root = parser.parseDocument() else { return nil }
        let editor = JSONTextEditor(bytes: text)
        var output: [UInt8] = []
        output.reserveCapacity(text.count + 64)
        output += text[0..<root.range.lowerBound]
        output += try editor.text(of: root, old: previous, new: document, multiline: text.contains(UInt8(ascii: "\n")))
        output += text[root.range.upperBound...]
        return output
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
        newline = bytes.firstIndex(of: UInt8(ascii: "\n")).map { $0 > 0 && bytes[$0 - 1] == UInt8(ascii: "\r") } == true
            ? Array("\r\n".utf8) : [UInt8(ascii: "\n")]
        // The indentation of the first indented line: one level.
        var found: [UInt8] = Array("  ".utf8)
        var index = 0
        while let lineEnd = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) {
            let start = lineEnd + 1
            let indentation = bytes[start...].prefix { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            if !indentation.isEmpty, start + indentation.count < bytes.count, ![UInt8(ascii: "\r"), UInt8(ascii: "\n")].contains(bytes[start + indentation.count]) {
                found = Array(indentation)
                break
            }
            index = start
        }
        unit = found
    }

    // MARK: Editing

    /// The new text of the value `node` stands for, which held `old` and is to hold `new`; `multiline`
    /// when the text around it spans lines.
    private func text(of node: Node, old: JSONValue, new: JSONValue, multiline: Bool) throws -> [UInt8] {
        if old == new { return Array(bytes[node.range]) }
        switch (node.kind, old, new) {
        case (.object(let members), .object(let oldMembers), .object(let newMembers)):
            return try objectText(node, members: members, old: oldMembers, new: newMembers)
        case (.array(let elements), .array(let oldElements), .array(let newElements)) where oldElements.count == newElements.count && elements.count == oldElements.count:
            var output: [UInt8] = []
            var cursor = node.range.lowerBound
            let inside = bytes[node.range].contains(UInt8(ascii: "\n"))
            for (index, element) in elements.enumerated() {
                output += bytes[cursor..<element.range.lowerBound]
                output += try text(of: element, old: oldElements[index], new: newElements[index], multiline: inside)
                cursor = element.range.upperBound
            }
            output += bytes[cursor..<node.range.upperBound]
            return output
        default:
            return try fresh(new, at: node.range.lowerBound, multiline: multiline)
        }
    }

    /// An object's new text. Each member is its *lead* (from the end of the member before, or the `{`, to
    /// its key: line break, indentation, the comments above it), the member itself, and its *tail* (its
    /// comma, and a comment that ends its line). A kept member keeps all three (its tail gains or loses the
    /// comma as it becomes last or not); a removed member goes with all three; a new member goes after the
    /// last, with the last one's line break and indentation and no comment.
    private func objectText(_ node: Node, members: [Member], old: [String: JSONValue], new: [String: JSONValue]) throws -> [UInt8] {
        let multiline = bytes[node.range].contains(UInt8(ascii: "\n"))
        guard !members.isEmpty else { return try fillingEmpty(node, with: new, multiline: multiline) }
        if new.isEmpty { return Array("{}".utf8) }
        let open = node.range.lowerBound + 1
        let close = node.range.upperBound - 1
        let tails = members.map { tail(after: $0.value.range.upperBound) }
        func lead(_ index: Int) -> ArraySlice<UInt8> {
            bytes[(index == 0 ? open : tails[index - 1].end)..<members[index].start]
        }
        // A trailing comma after the last member (JSONC) is the file's style: the last keeps one.
        let trailingComma = tails[members.count - 1].comma != nil
        let kept = members.indices.filter { new[members[$0].key] != nil }
        let added = new.keys.filter { key in !members.contains { $0.key == key } }.sorted()
        var output: [UInt8] = [UInt8(ascii: "{")]
        for (position, index) in kept.enumerated() {
            let member = members[index]
            let leading = lead(index)
            // On one line, the first member keeps the object's own leading space.
            output += position == 0 && index != 0 && !leading.contains(UInt8(ascii: "\n")) ? lead(0) : leading
            output += bytes[member.start..<member.value.range.lowerBound]  // the key and its separator
            output += try text(of: member.value, old: old[member.key] ?? .null, new: new[member.key]!, multiline: multiline)
            let isLast = position == kept.count - 1 && added.isEmpty
            output += withComma(tails[index], member.value.range.upperBound, isLast && !trailingComma ? false : true)
        }
        if !added.isEmpty {
            let last = members[members.count - 1]
            let lastLead = lead(members.count - 1)
            let newLead: [UInt8] = lastLead.lastIndex(of: UInt8(ascii: "\n")).map { newline + bytes[($0 + 1)..<last.start] }
                ?? (lastLead.isEmpty ? [UInt8(ascii: " ")] : Array(lastLead))
            let keySeparator = bytes[last.keyEnd..<last.value.range.lowerBound]
            for (position, key) in added.enumerated() {
                output += kept.isEmpty && position == 0 ? Array(lead(0)) : newLead
                output += try JSONWriter.bytes(of: .string(key), pretty: false)
                output += keySeparator
                output += try fresh(new[key]!, at: last.start, multiline: multiline)
                if position < added.count - 1 || trailingComma { output.append(UInt8(ascii: ",")) }
            }
        }
        output += bytes[tails[members.count - 1].end..<close]
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// An object that held no member (but perhaps comments, as a template's settings commented out) with
    /// `new`'s members added before its closing brace, after whatever it held.
    private func fillingEmpty(_ node: Node, with new: [String: JSONValue], multiline: Bool) throws -> [UInt8] {
        let inside = bytes[(node.range.lowerBound + 1)..<(node.range.upperBound - 1)]
        guard multiline, inside.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) else {
            return try fresh(.object(new), at: node.range.lowerBound, multiline: multiline)
        }
        let lineStart = bytes[..<node.range.lowerBound].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        let indentation = Array(bytes[lineStart...].prefix { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
        // What the object held, without the line break and indentation before its brace.
        var held = Array(inside)
        while let last = held.last, [0x20, 0x09, 0x0A, 0x0D].contains(last) { held.removeLast() }
        var output: [UInt8] = [UInt8(ascii: "{")] + held
        for (index, key) in new.keys.sorted().enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output += newline + indentation + unit
            output += try JSONWriter.bytes(of: .string(key), pretty: false) + Array(": ".utf8)
            var value: [UInt8] = []
            try write(new[key]!, indentation: indentation + unit, multiline: true, into: &value)
            output += value
        }
        return output + newline + indentation + [UInt8(ascii: "}")]
    }

    /// What follows a member's value up to the next member's lead: its comma if any, and a comment
    /// that ends its line (the line break stays in the next lead).
    private func tail(after valueEnd: Int) -> (end: Int, comma: Int?) {
        var position = valueEnd
        func skipSpaces() { while position < bytes.count, bytes[position] == 0x20 || bytes[position] == 0x09 { position += 1 } }
        skipSpaces()
        var comma: Int?
        if position < bytes.count, bytes[position] == UInt8(ascii: ",") {
            comma = position
            position += 1
        }
        let afterComma = comma.map { $0 + 1 } ?? valueEnd
        skipSpaces()
        guard position < bytes.count else { return (afterComma, comma) }
        if bytes[position...].starts(with: "//".utf8) {
            while position < bytes.count, bytes[position] != UInt8(ascii: "\n"), bytes[position] != UInt8(ascii: "\r") { position += 1 }
            return (position, comma)
        }
        if bytes[position...].starts(with: "/*".utf8), let end = bytes[(position + 2)...].firstRange(of: "*/".utf8)?.upperBound {
            var after = end
            while after < bytes.count, bytes[after] == 0x20 || bytes[after] == 0x09 { after += 1 }
            if after == bytes.count || bytes[after] == UInt8(ascii: "\n") || bytes[after] == UInt8(ascii: "\r") { return (end, comma) }
        }
        return (afterComma, comma)
    }

    /// A member's tail with its comma (added right after the value if it had none) or without it.
    private func withComma(_ tail: (end: Int, comma: Int?), _ valueEnd: Int, _ wanted: Bool) -> [UInt8] {
        let text = bytes[valueEnd..<tail.end]
        switch (tail.comma, wanted) {
        case (nil, true): return [UInt8(ascii: ",")] + text
        case (let comma?, false): return Array(bytes[valueEnd..<comma] + bytes[(comma + 1)..<tail.end])
        default: return Array(text)
        }
    }

    /// `value` written anew, to stand at `offset`: on one line when the text around is on one line
    /// (`multiline` false), else pretty, each line indented as the line `offset` is on, in the file's unit
    /// and line ending.
    private func fresh(_ value: JSONValue, at offset: Int, multiline: Bool) throws -> [UInt8] {
        let lineStart = bytes[..<offset].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        let indentation = Array(bytes[lineStart...].prefix { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
        var output: [UInt8] = []
        try write(value, indentation: indentation, multiline: multiline, into: &output)
        return output
    }

    private func write(_ value: JSONValue, indentation: [UInt8], multiline: Bool, into output: inout [UInt8]) throws {
        switch value {
        case .object(let members) where !members.isEmpty:
            output.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                if multiline { output += newline + indentation + unit } else if index > 0 { output.append(UInt8(ascii: " ")) }
                output += try JSONWriter.bytes(of: .string(key), pretty: false)
                output += Array(": ".utf8)
                try write(members[key]!, indentation: indentation + unit, multiline: multiline, into: &output)
            }
            if multiline { output += newline + indentation }
            output.append(UInt8(ascii: "}"))
        case .array(let elements) where !elements.isEmpty:
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                if multiline { output += newline + indentation + unit } else if index > 0 { output.append(UInt8(ascii: " ")) }
                try write(element, indentation: indentation + unit, multiline: multiline, into: &output)
            }
            if multiline { output += newline + indentation }
            output.append(UInt8(ascii: "]"))
        default:
            output += try JSONWriter.bytes(of: value, pretty: false)
        }
    }

    // MARK: The text, with where each value is

    struct Node {
        enum Kind {
            case scalar
            case object([Member])
            case array([Node])
        }
        let kind: Kind
        let range: Range<Int>
    }

    struct Member {
        let key: String
        /// Where the key starts (its quote) and ends (after its closing quote).
        let start: Int
        let keyEnd: Int
        let value: Node
    }

    /// Reads JSON text ``JSONReader`` has already accepted, noting where each value is.
    private struct SpanParser {
        let bytes: [UInt8]
        var position = 0

        mutating func parseDocument() -> Node? {
            skipWhitespace()
            guard let node = value(depth: 0) else { return nil }
            skipWhitespace()
            return position == bytes.count ? node : nil
        }

        private mutating func value(depth: Int) -> Node? {
            guard depth <= JSONReader.maximumDepth, position < bytes.count else { return nil }
            let start = position
            switch bytes[position] {
            case UInt8(ascii: "{"):
                position += 1
                var members: [Member] = []
                skipWhitespace()
                if peek() == UInt8(ascii: "}") { position += 1; return Node(kind: .object([]), range: start..<position) }
                while true {
                    skipWhitespace()
                    if peek() == UInt8(ascii: "}") { position += 1; return Node(kind: .object(members), range: start..<position) }
                    let keyStart = position
                    guard peek() == UInt8(ascii: "\""), let key = string() else { return nil }
                    let keyEnd = position
                    skipWhitespace()
                    guard peek() == UInt8(ascii: ":") else { return nil }
                    position += 1
                    skipWhitespace()
                    guard let value = value(depth: depth + 1) else { return nil }
                    members.append(Member(key: key, start: keyStart, keyEnd: keyEnd, value: value))
                    skipWhitespace()
                    switch peek() {
                    case UInt8(ascii: ","): position += 1
                    case UInt8(ascii: "}"): position += 1; return Node(kind: .object(members), range: start..<position)
                    default: return nil
                    }
                }
            case UInt8(ascii: "["):
                position += 1
                var elements: [Node] = []
                skipWhitespace()
                if peek() == UInt8(ascii: "]") { position += 1; return Node(kind: .array([]), range: start..<position) }
                while true {
                    skipWhitespace()
                    if peek() == UInt8(ascii: "]") { position += 1; return Node(kind: .array(elements), range: start..<position) }
                    guard let element = value(depth: depth + 1) else { return nil }
                    elements.append(element)
                    skipWhitespace()
                    switch peek() {
                    case UInt8(ascii: ","): position += 1
                    case UInt8(ascii: "]"): position += 1; return Node(kind: .array(elements), range: start..<position)
                    default: return nil
                    }
                }
            case UInt8(ascii: "\""):
                guard string() != nil else { return nil }
                return Node(kind: .scalar, range: start..<position)
            default:
                while let byte = peek(), !Self.isDelimiter(byte) { position += 1 }
                return position > start ? Node(kind: .scalar, range: start..<position) : nil
            }
        }

        /// A string's value, read with ``JSONReader``; the position moves past its closing quote.
        private mutating func string() -> String? {
            let start = position
            position += 1
            while let byte = peek(), byte != UInt8(ascii: "\"") {
                position += byte == UInt8(ascii: "\\") ? 2 : 1
            }
            guard peek() == UInt8(ascii: "\"") else { return nil }
            position += 1
            guard case .string(let text)? = try? JSONReader.document(from: Array(bytes[start..<position])) else { return nil }
            return text
        }

        private func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

        /// White space, and JSONC's comments.
        private mutating func skipWhitespace() {
            while let byte = peek() {
                if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                    position += 1
                } else if bytes[position...].starts(with: "//".utf8) {
                    while let next = peek(), next != 0x0A { position += 1 }
                } else if bytes[position...].starts(with: "/*".utf8) {
                    position = bytes[(position + 2)...].firstRange(of: "*/".utf8)?.upperBound ?? bytes.count
                } else {
                    return
                }
            }
        }

        private static func isDelimiter(_ byte: UInt8) -> Bool {
            [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: "/")].contains(byte)
        }
    }
}
