/// Writes a document as JSON text: keys sorted, numbers exact, optionally indented as `JSONEncoder`'s
/// `.prettyPrinted` indents.
///
/// Why not `JSONSerialization`: on Linux it writes some doubles with too few digits
/// (`1.0000000000000002e-06` comes back as `1e-06`), so a value would change on its way through a file.
/// Swift's own `description` of a `Double` is the shortest text that reads back as the same number.
/// `DocumentCodecTests` checks this writer against random documents in a round trip.
struct JSONWriter {
    let pretty: Bool
    private(set) var text = ""

    init(pretty: Bool) {
        self.pretty = pretty
    }

    /// The JSON text of `document`.
    ///
    /// - Throws: ``DocumentSyntaxError`` for a number JSON cannot hold (NaN, infinity), naming where.
    static func text(of document: JSONValue, pretty: Bool) throws -> String {
        var writer = JSONWriter(pretty: pretty)
        try writer.write(document, depth: 0, path: ValuePath([]))
        return writer.text
    }

    private mutating func write(_ value: JSONValue, depth: Int, path: ValuePath) throws {
        switch value {
        case .null: text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .integer(let number): text += String(number)
        case .double(let number):
            guard number.isFinite else {
                throw DocumentSyntaxError("JSON cannot hold the number \(number) (at \(path))")
            }
            text += number.description
        case .string(let string): writeString(string)
        case .array(let elements):
            guard !elements.isEmpty else { text += "[]"; return }
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += "," }
                newline(depth + 1)
                try write(element, depth: depth + 1, path: ValuePath(path.components + [.index(index)]))
            }
            newline(depth)
            text += "]"
        case .object(let members):
            guard !members.isEmpty else { text += "{}"; return }
            text += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                newline(depth + 1)
                writeString(key)
                text += pretty ? " : " : ":"
                try write(members[key]!, depth: depth + 1, path: ValuePath(path.components + [.key(key)]))
            }
            newline(depth)
            text += "}"
        }
    }

    private mutating func newline(_ depth: Int) {
        guard pretty else { return }
        text += "\n"
        text += String(repeating: "  ", count: depth)
    }

    private mutating func writeString(_ string: String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{8}": text += "\\b"
            case "\u{C}": text += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
