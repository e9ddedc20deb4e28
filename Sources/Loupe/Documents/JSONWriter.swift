/// Writes a document as JSON text: keys sorted, numbers exact, optionally indented as `JSONEncoder`'s
/// `.prettyPrinted` indents.
///
/// Why not `JSONSerialization`: on Linux it writes some doubles with too few digits
/// (`1.0000000000000002e-06` comes back as `1e-06`), so a value would change on its way through a file.
/// Swift's own `description` of a `Double` is the shortest text that reads back as the same number.
/// `DocumentCodecTests` checks this writer against random documents in a round trip.
///
/// It writes UTF-8 bytes and keeps the path it is at as a stack, made into a ``ValuePath`` only for an
/// error.
struct JSONWriter {
    let pretty: Bool
    private(set) var bytes: [UInt8] = []
    private var path: [ValuePath.Component] = []
    /// A newline and the indentation of the deepest level written so far; a prefix of it starts a line.
    private var indentation: [UInt8] = [UInt8(ascii: "\n")]

    init(pretty: Bool) {
        self.pretty = pretty
    }

    /// The JSON text of `document`, as UTF-8 bytes.
    ///
    /// - Throws: ``DocumentSyntaxError`` for a number JSON cannot hold (NaN, infinity), naming where.
    static func bytes(of document: JSONValue, pretty: Bool) throws -> [UInt8] {
        var writer = JSONWriter(pretty: pretty)
        writer.bytes.reserveCapacity(4096)
        try writer.write(document, depth: 0)
        return writer.bytes
    }

    /// The JSON text of `document`.
    ///
    /// - Throws: ``DocumentSyntaxError`` for a number JSON cannot hold (NaN, infinity), naming where.
    static func text(of document: JSONValue, pretty: Bool) throws -> String {
        String(decoding: try bytes(of: document, pretty: pretty), as: UTF8.self)
    }

    private mutating func write(_ value: JSONValue, depth: Int) throws {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .integer(let number): append(String(number))
        case .double(let number):
            guard number.isFinite else {
                throw DocumentSyntaxError("JSON cannot hold the number \(number) (at \(ValuePath(path)))")
            }
            append(number.description)
        case .exactNumber(let text): append(text)
        case .string(let string): writeString(string)
        case .array(let elements):
            guard !elements.isEmpty else { append("[]"); return }
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(depth + 1)
                path.append(.index(index))
                try write(element, depth: depth + 1)
                path.removeLast()
            }
            newline(depth)
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            guard !members.isEmpty else { append("{}"); return }
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(depth + 1)
                writeString(member.key)
                append(pretty ? " : " : ":")
                path.append(.key(member.key))
                try write(member.value, depth: depth + 1)
                path.removeLast()
            }
            newline(depth)
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    private mutating func newline(_ depth: Int) {
        guard pretty else { return }
        let length = 1 + 2 * depth
        while indentation.count < length { indentation.append(UInt8(ascii: " ")) }
        bytes.append(contentsOf: indentation[..<length])
    }

    private mutating func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        defer { bytes.append(UInt8(ascii: "\"")) }
        // Most strings need no escape: copied whole.
        var string = string
        let plain = string.withUTF8 { text in
            guard !text.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                return false
            }
            bytes.append(contentsOf: text)
            return true
        }
        if plain { return }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case UInt8(ascii: "\n"): append("\\n")
            case UInt8(ascii: "\r"): append("\\r")
            case UInt8(ascii: "\t"): append("\\t")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case ..<0x20:
                let hex = String(byte, radix: 16)
                append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default: bytes.append(byte)
            }
        }
    }
}
