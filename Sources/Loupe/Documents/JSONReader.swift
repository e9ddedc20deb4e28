/// Reads JSON text (RFC 8259) into a document.
///
/// Why not `JSONSerialization`: on Linux it reads some numbers inexactly (`1.0000000000000002e-06` comes
/// back as `1.0000000000000004e-06`), it keeps the first of two equal keys without a word, and its errors
/// do not say where. Here integers are read with `Int(_:)` (falling back to `Double` beyond its range),
/// other numbers with `Double(_:)`, the correctly rounded conversion; a repeated key, a syntax error or
/// nesting deeper than ``maximumDepth`` is an error naming the line and column. With `comments`, it reads
/// JSONC as VS Code writes it: `//` and `/* */` comments, and a comma after the last member or element.
struct JSONReader {
    /// The deepest nesting of arrays and objects read; deeper documents are refused rather than risk the
    /// stack.
    static let maximumDepth = 512

    private let bytes: [UInt8]
    private var position = 0
    /// Whether JSONC's comments (`//`, `/* */`) and trailing commas are read.
    private let comments: Bool

    private init(_ bytes: [UInt8], comments: Bool, at position: Int = 0) {
        self.bytes = bytes
        self.comments = comments
        self.position = position
    }

    /// The document `bytes` hold: exactly one JSON value, with white space around it; with `comments`,
    /// JSONC: comments where white space may be, and a comma after the last member or element.
    static func document(from bytes: [UInt8], comments: Bool = false) throws -> JSONValue {
        var reader = JSONReader(bytes, comments: comments)
        try reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        try reader.skipWhitespace()
        guard reader.position == bytes.count else { throw reader.error("unexpected text after the document") }
        return value
    }

    /// The string, number, `true`, `false` or `null` that starts at `start` in `bytes`, and where it ends:
    /// for a reader that finds the structure itself (``JSONSyntax``) and reads its scalars and keys as this
    /// reader does, so that both read the same values and refuse the same texts.
    ///
    /// - Throws: ``DocumentSyntaxError`` where no such value starts there, naming the line and column.
    static func scalar(in bytes: [UInt8], at start: Int) throws -> (value: JSONValue, end: Int) {
        var reader = JSONReader(bytes, comments: false, at: start)
        if let byte = reader.peek(), byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
            throw reader.error("expected a string, a number, true, false or null")
        }
        let value = try reader.value(depth: 0)
        return (value, reader.position)
    }

    /// The object of `members`, read from `bytes` (each key's offset names the place of a key written twice).
    ///
    /// - Throws: ``DocumentSyntaxError`` for a key that appears twice.
    static func object(
        of members: [(key: String, value: JSONValue, offset: Int)], in bytes: [UInt8]
    ) throws -> JSONValue {
        try JSONReader(bytes, comments: false).object(of: members)
    }

    private mutating func value(depth: Int) throws -> JSONValue {
        guard depth <= Self.maximumDepth else {
            throw error("nested more than \(Self.maximumDepth) levels deep")
        }
        guard let byte = peek() else { throw error("unexpected end of the document (it may be truncated)") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected \(describe(byte))")
        }
    }

    private mutating func object(depth: Int) throws -> JSONValue {
        position += 1  // {
        try skipWhitespace()
        if peek() == UInt8(ascii: "}") { position += 1; return .object([:]) }
        // The members are gathered first and hashed once into a dictionary of their number: growing the
        // dictionary member by member hashed every key again on each resize.
        var members: [(key: String, value: JSONValue, offset: Int)] = []
        while true {
            try skipWhitespace()
            if comments, peek() == UInt8(ascii: "}"), !members.isEmpty {  // JSONC: a comma after the last
                position += 1
                return try object(of: members)
            }
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a key in quotes") }
            let keyStart = position
            let key = try string()
            try skipWhitespace()
            guard peek() == UInt8(ascii: ":") else {
                throw error("expected : after the key \(String(reflecting: key))")
            }
            position += 1
            try skipWhitespace()
            members.append((key, try value(depth: depth + 1), keyStart))
            try skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return try object(of: members)
            case nil: throw error("unexpected end of the document in an object (it may be truncated)")
            case let byte?: throw error("expected , or } in an object, found \(describe(byte))")
            }
        }
    }

    private func object(of members: [(key: String, value: JSONValue, offset: Int)]) throws -> JSONValue {
        var object = [String: JSONValue](minimumCapacity: members.count)
        for member in members {
            guard object.updateValue(member.value, forKey: member.key) == nil else {
                // Swift compares strings by canonical equivalence: "é" composed (NFC) and decomposed (NFD)
                // are one key. Two spellings that look the same must be told apart in words.
                if let first = members.first(where: { $0.key == member.key }),
                    !first.key.utf8.elementsEqual(member.key.utf8)
                {
                    throw error(
                        "the keys \(String(reflecting: first.key)) and \(String(reflecting: member.key)) look the same but are written differently (Unicode normalization: composed and decomposed characters), and count as one key; write both the same way",
                        at: member.offset)
                }
                throw error("the key \(String(reflecting: member.key)) appears twice in one object", at: member.offset)
            }
        }
        return .object(object)
    }

    private mutating func array(depth: Int) throws -> JSONValue {
        position += 1  // [
        var elements: [JSONValue] = []
        try skipWhitespace()
        if peek() == UInt8(ascii: "]") { position += 1; return .array(elements) }
        while true {
            try skipWhitespace()
            if comments, peek() == UInt8(ascii: "]"), !elements.isEmpty {  // JSONC: a comma after the last
                position += 1
                return .array(elements)
            }
            elements.append(try value(depth: depth + 1))
            try skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return .array(elements)
            case nil: throw error("unexpected end of the document in an array (it may be truncated)")
            case let byte?: throw error("expected , or ] in an array, found \(describe(byte))")
            }
        }
    }

    private mutating func string() throws -> String {
        let start = position
        position += 1  // "
        // Most strings hold no escape: made straight from their bytes.
        var runStart = position
        var utf8: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("a string that never ends (it may be truncated)", at: start) }
            switch byte {
            case UInt8(ascii: "\""):
                defer { position += 1 }
                if utf8.isEmpty { return String(decoding: bytes[runStart..<position], as: UTF8.self) }
                utf8.append(contentsOf: bytes[runStart..<position])
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                utf8.append(contentsOf: bytes[runStart..<position])
                position += 1
                UTF8.encode(try escape()) { utf8.append($0) }
                runStart = position
            case 0..<0x20:
                throw error("a control character in a string (write it as an escape, such as \\n)")
            default:
                position += 1
            }
        }
    }

    private mutating func escape() throws -> Unicode.Scalar {
        guard let byte = peek() else { throw error("unexpected end of the document in an escape") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{8}"
        case UInt8(ascii: "f"): return "\u{C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try hexQuad()
            if (0xD800..<0xDC00).contains(high) {
                guard peek() == UInt8(ascii: "\\"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u")
                else {
                    throw error("a lone surrogate \\u\(String(high, radix: 16)) in a string")
                }
                position += 2
                let low = try hexQuad()
                guard (0xDC00..<0xE000).contains(low),
                    let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                else { throw error("an invalid surrogate pair in a string") }
                return scalar
            }
            guard let scalar = Unicode.Scalar(high) else {
                throw error("a lone surrogate \\u\(String(high, radix: 16)) in a string")
            }
            return scalar
        default:
            throw error("an invalid escape \\\(describe(byte)) in a string")
        }
    }

    private mutating func hexQuad() throws -> UInt32 {
        guard position + 4 <= bytes.count,
            let value = UInt32(String(decoding: bytes[position..<(position + 4)], as: UTF8.self), radix: 16)
        else { throw error("expected four hexadecimal digits after \\u") }
        position += 4
        return value
    }

    private mutating func number() throws -> JSONValue {
        let start = position
        var isInteger = true
        if peek() == UInt8(ascii: "-") { position += 1 }
        guard let first = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw error("expected a digit after -")
        }
        if first == UInt8(ascii: "0") {
            position += 1
        } else {
            skipDigits()
        }
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard skipDigits() > 0 else { throw error("expected a digit after the decimal point") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard skipDigits() > 0 else { throw error("expected a digit in the exponent") }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if isInteger, let integer = Int(text) { return .integer(integer) }
        // A number no Swift type holds as written is kept as written (see ``JSONValue/exactNumber(_:)``).
        if !isInteger, let double = Double(text), double.isFinite {
            // Up to 15 significant digits a normal Double always gives the number back (DBL_DIG); only
            // longer spellings need the comparison.
            if double.isNormal && significantDigits(bytes[start..<position]) <= 15 { return .double(double) }
            if NumberText(text) == NumberText(double.description) { return .double(double) }
        }
        return .exactNumber(text)
    }

    /// The significant digits of a number's mantissa: its digits less leading zeros (trailing zeros count,
    /// which only errs towards the careful comparison).
    private func significantDigits(_ number: ArraySlice<UInt8>) -> Int {
        var count = 0
        var leading = true
        for byte in number {
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { break }
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { continue }
            if leading && byte == UInt8(ascii: "0") { continue }
            leading = false
            count += 1
        }
        return count
    }

    @discardableResult
    private mutating func skipDigits() -> Int {
        let start = position
        while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { position += 1 }
        return position - start
    }

    private mutating func literal(_ word: String) throws {
        let utf8 = Array(word.utf8)
        guard position + utf8.count <= bytes.count, Array(bytes[position..<(position + utf8.count)]) == utf8 else {
            throw error("unexpected text (expected \(word)?)")
        }
        position += utf8.count
    }

    private mutating func skipWhitespace() throws {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
        if comments, peek() == UInt8(ascii: "/") { try skipComments() }
    }

    /// JSONC's comments, and the white space between them.
    private mutating func skipComments() throws {
        while peek() == UInt8(ascii: "/") {
            let start = position
            guard position + 1 < bytes.count else { throw error("unexpected '/'") }
            switch bytes[position + 1] {
            case UInt8(ascii: "/"):
                while let byte = peek(), byte != 0x0A { position += 1 }
            case UInt8(ascii: "*"):
                guard let end = bytes[(position + 2)...].firstRange(of: "*/".utf8)?.upperBound else {
                    throw error("a comment that never ends (it may be truncated)", at: start)
                }
                position = end
            default:
                throw error("unexpected '/'")
            }
            while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
        }
    }

    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private func describe(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }

    /// An error at `offset` (the current position by default), with its line and column.
    private func error(_ reason: String, at offset: Int? = nil) -> DocumentSyntaxError {
        let offset = min(offset ?? position, bytes.count)
        var line = 1
        var lineStart = 0
        for index in 0..<offset where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        let column = String(decoding: bytes[lineStart..<offset], as: UTF8.self).count + 1
        return DocumentSyntaxError(reason, at: TextPosition(line: line, column: column))
    }
}
