/// Writes a document as JSON text: keys sorted, numbers exact, optionally indented as `JSONEncoder`'s
/// `.prettyPrinted` indents.
///
/// Why not `JSONSerialization`: on Linux it writes some doubles with too few digits
/// (`1.0000000000000002e-06` comes back as `1e-06`), so a value would change on its way through a file.
/// Swift's own `description` of a `Double` is the shortest text that reads back as the same number.
/// `DocumentCodecTests` checks this writer against random documents in a round trip.
///
/// It writes UTF-8 bytes and keeps the path it is at as a stack, made into a ``ValuePath`` only for an
/// error. Given a ``Memo``, it reuses the text of large arrays and objects that are equal to the ones
/// written at the same place last time, as ``DocumentEncoder`` reuses their documents: an update of one
/// field of a 157 KB settings file writes the rest from memory.
struct JSONWriter {
    /// Arrays and objects with fewer elements are written every time.
    static let memoThreshold = 32

    /// The text of the large arrays and objects one write wrote, for the next to reuse.
    ///
    /// An entry is used only for a value `==` to the one it was written from, at the same place and
    /// depth: the comparison answers at once when both share their storage (the document of an unchanged
    /// collection, which ``DocumentEncoder`` reuses) and compares element by element otherwise.
    typealias Memo = PartMemo<[String: MemoEntry]>

    /// A large array or object and its text.
    struct MemoEntry: Sendable {
        let value: JSONValue
        let text: [UInt8]
    }

    let pretty: Bool
    private(set) var bytes: [UInt8] = []
    private var path: [ValuePath.Component] = []
    private var previous: [String: MemoEntry] = [:]
    private var next: [String: MemoEntry] = [:]
    /// A newline and the indentation of the deepest level written so far; a prefix of it starts a line.
    private var indentation: [UInt8] = [UInt8(ascii: "\n")]

    init(pretty: Bool) {
        self.pretty = pretty
    }

    /// The JSON text of `document`, as UTF-8 bytes.
    ///
    /// - Throws: ``DocumentSyntaxError`` for a number JSON cannot hold (NaN, infinity), naming where.
    static func bytes(of document: JSONValue, pretty: Bool, memo: Memo? = nil) throws -> [UInt8] {
        var writer = JSONWriter(pretty: pretty)
        writer.bytes.reserveCapacity(4096)
        writer.previous = memo?.take() ?? [:]
        try writer.write(document, depth: 0)
        memo?.keep(writer.next)
        return writer.bytes
    }

    /// The JSON text of `document`.
    ///
    /// - Throws: ``DocumentSyntaxError`` for a number JSON cannot hold (NaN, infinity), naming where.
    static func text(of document: JSONValue, pretty: Bool) throws -> String {
        String(decoding: try bytes(of: document, pretty: pretty), as: UTF8.self)
    }

    private mutating func write(_ value: JSONValue, depth: Int) throws {
        let count: Int
        switch value {
        case .array(let elements): count = elements.count
        case .object(let members): count = members.count
        default: count = 0
        }
        guard count >= Self.memoThreshold else { return try writeValue(value, depth: depth) }
        let key = "\(pretty) \(depth) \(ValuePath(path))"
        if let entry = previous[key], entry.value == value {
            bytes.append(contentsOf: entry.text)
            next[key] = entry
            return
        }
        let start = bytes.count
        try writeValue(value, depth: depth)
        next[key] = MemoEntry(value: value, text: Array(bytes[start...]))
    }

    private mutating func writeValue(_ value: JSONValue, depth: Int) throws {
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
