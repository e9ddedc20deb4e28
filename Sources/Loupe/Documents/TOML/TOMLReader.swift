/// Reads TOML 1.0.0 text into a document.
///
/// Tables and inline tables are objects, arrays and arrays of tables are arrays. Integers are read exactly
/// (every base, with underscores); floats with `Double(_:)`, the correctly rounded conversion, and `inf` and
/// `nan` as those doubles. An offset date-time is a string in RFC 3339 form (`1979-05-27T07:32:00Z`,
/// `1979-05-27T00:32:00.999-07:00`: an uppercase `T` and `Z`, the offset kept), which the pipeline decodes
/// as a `Date` with ``TOMLCodec``'s ISO 8601 coding; local date-times, dates and times are strings as
/// written.
///
/// Every rule of the specification about defining a key or a table twice is kept, as Python's `tomllib`
/// keeps them: a table is defined once, by a header or by dotted keys; dotted keys never add to a table a
/// header defined, or to one that dotted keys defined in an earlier section; inline tables and arrays are
/// complete where they are written. An error names the line and column. Nesting deeper than
/// ``maximumDepth`` is an error, never a deep recursion.
struct TOMLReader {
    /// The deepest nesting of arrays and inline tables read. Lower than ``JSONReader``'s 512: each level of
    /// an inline table is three calls deep here (its value, the table, its key), and JSON's depth of them
    /// does not fit a thread's stack under AddressSanitizer. toml++ stops at 256; settings nest a handful
    /// of levels.
    static let maximumDepth = 128

    private let bytes: [UInt8]
    private var position = 0
    /// The table the current section writes to, and the section's number.
    private var section: Table
    /// The current section's key, for errors: `a.b` after `[a.b]`.
    private var sectionKey: [String] = []
    private var sectionNumber = 0
    private let root: Table
    /// Where each section, each key/value line and each part of each value is in the text, for an edit in
    /// place.
    private(set) var syntax = TOMLSyntax()
    /// Whether the reader notes the syntax (a parse for an edit), or only reads the document.
    private let outlining: Bool
    /// The path of the table the current section writes to, with the index of an array of tables' element.
    private var sectionPath: [ValuePath.Component] = []
    /// The syntax of the array or inline table read last, and where it starts, for ``readValue(depth:)``.
    private var lastList: (start: Int, syntax: TOMLSyntax.Value)?

    /// The document `bytes` hold.
    static func document(from bytes: [UInt8]) throws -> JSONValue {
        var reader = TOMLReader(bytes, outlining: false)
        try reader.readDocument()
        return reader.root.document
    }

    /// The document `bytes` hold, and its syntax: where each part of it is written.
    static func syntax(of bytes: [UInt8]) throws -> (document: JSONValue, syntax: TOMLSyntax) {
        var reader = TOMLReader(bytes, outlining: true)
        try reader.readDocument()
        for index in reader.syntax.sections.indices {
            let next =
                index + 1 < reader.syntax.sections.count ? reader.syntax.sections[index + 1].headerStart : bytes.count
            reader.syntax.sections[index].end = next
        }
        return (reader.root.document, reader.syntax)
    }

    private init(_ bytes: [UInt8], outlining: Bool) {
        self.bytes = bytes
        self.outlining = outlining
        root = Table(kind: .header, section: 0)
        section = root
    }

    // MARK: Tables, as they are defined

    /// A table while the document is read: its entries, and how it was made, which decides what may add
    /// to it later.
    private final class Table {
        enum Kind {
            /// Made as the parent of a header's table (`a` for `[a.b]`): a header may still define it.
            case implicit
            /// Defined by a header, or the root.
            case header
            /// Made by a dotted key (`a.b = 1` makes `a`) in section `section`.
            case dotted
            /// An inline table, or an element of an array of tables still open: see `frozen`.
            case inline
        }
        var kind: Kind
        /// The section in which dotted keys made it.
        var section: Int
        var entries: [String: Entry] = [:]

        init(kind: Kind, section: Int) {
            self.kind = kind
            self.section = section
        }

        var document: JSONValue {
            .object(entries.mapValues(\.document))
        }
    }

    private enum Entry {
        case value(JSONValue)
        case table(Table)
        /// An array of tables, made by `[[name]]` headers: more may be added.
        case tables([Table])

        var document: JSONValue {
            switch self {
            case .value(let value): value
            case .table(let table): table.document
            case .tables(let tables): .array(tables.map(\.document))
            }
        }
    }

    private mutating func readDocument() throws {
        while true {
            skipBlank()
            guard let byte = peek() else { return }
            switch byte {
            case UInt8(ascii: "#"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                break
            case UInt8(ascii: "["):
                let lineStart = self.lineStart(of: position)
                let isArray = starts(with: "[[")
                try readHeader()
                try endOfLine()
                if outlining {
                    syntax.sections.append(
                        .init(
                            path: sectionPath, isArrayElement: isArray, headerStart: lineStart, bodyStart: position,
                            end: position))
                }
                continue
            default:
                let lineStart = self.lineStart(of: position)
                let keyStart = position
                let (key, value) = try readKeyValue(into: section, depth: 0)
                let valueEnd = position
                try endOfLine()
                if outlining {
                    syntax.keyValues.append(
                        .init(
                            key: key, section: syntax.sections.count - 1,
                            line: lineStart..<position, range: keyStart..<valueEnd, value: value))
                }
                continue
            }
            try endOfLine()
        }
    }

    /// `[a.b]` or `[[a.b]]`: the section that follows writes to that table.
    private mutating func readHeader() throws {
        let start = position
        position += 1
        let isArray = peek() == UInt8(ascii: "[")
        if isArray { position += 1 }
        skipBlank()
        let key = try readKey()
        skipBlank()
        try expect("]", "a ']' to end the table header")
        if isArray { try expect("]", "']]' to end the array of tables header") }
        sectionNumber += 1
        var table = root
        var path: [ValuePath.Component] = []
        defer { sectionPath = path }
        for (index, part) in key.enumerated() {
            let isLast = index == key.count - 1
            path.append(.key(part))
            switch table.entries[part] {
            case nil:
                let made = Table(kind: isLast ? .header : .implicit, section: sectionNumber)
                table.entries[part] = isLast && isArray ? .tables([made]) : .table(made)
                if isLast && isArray { path.append(.index(0)) }
                table = made
            case .table(let existing):
                if existing.kind == .inline {
                    throw error(
                        "the table \(name(key, upTo: index)) is an inline table, complete where it is written",
                        at: start)
                }
                if isLast {
                    guard !isArray else {
                        throw error("\(name(key)) is already a table, not an array of tables", at: start)
                    }
                    guard existing.kind == .implicit else {
                        throw error("the table \(name(key)) is defined twice", at: start)
                    }
                    existing.kind = .header
                }
                table = existing
            case .tables(let tables):
                if isLast {
                    guard isArray else { throw error("\(name(key)) is already an array of tables", at: start) }
                    let made = Table(kind: .header, section: sectionNumber)
                    table.entries[part] = .tables(tables + [made])
                    path.append(.index(tables.count))
                    table = made
                } else {
                    path.append(.index(tables.count - 1))
                    table = tables[tables.count - 1]
                }
            case .value(let value):
                let what = if case .array = value { "an array, complete where it is written," } else { "a value," }
                throw error("\(name(key, upTo: index)) is already \(what) not a table", at: start)
            }
        }
        section = table
        sectionKey = key
    }

    /// `key = value` (the key may be dotted), into `table`; returns the key and the value's syntax.
    @discardableResult
    private mutating func readKeyValue(into table: Table, depth: Int) throws -> (key: [String], value: TOMLSyntax.Value)
    {
        let start = position
        let relative = try readKey()
        // Errors name the whole key, from the section's header (inside an inline table, from there).
        let key = depth == 0 ? sectionKey + relative : relative
        let skipped = key.count - relative.count
        skipBlank()
        // (The message names the key, which takes time to write: only when it is needed.)
        if peek() == UInt8(ascii: "=") { position += 1 } else { try expect("=", "'=' after the key \(name(key))") }
        skipBlank()
        let (value, valueSyntax) = try readValue(depth: depth)
        var target = table
        for (index, part) in key.enumerated().dropFirst(skipped).dropLast().map({ ($0.offset, $0.element) }) {
            switch target.entries[part] {
            case nil:
                let made = Table(kind: .dotted, section: sectionNumber)
                target.entries[part] = .table(made)
                target = made
            case .table(let existing):
                switch existing.kind {
                case .inline:
                    throw error(
                        "the table \(name(key, upTo: index)) is an inline table, complete where it is written",
                        at: start)
                case .header:
                    throw error(
                        "the table \(name(key, upTo: index)) is defined by a header; dotted keys cannot add to it",
                        at: start)
                case .dotted where existing.section != sectionNumber && depth == 0:
                    throw error(
                        "the table \(name(key, upTo: index)) was defined by dotted keys in an earlier section",
                        at: start)
                case .dotted, .implicit:
                    if existing.kind == .implicit { existing.kind = .dotted; existing.section = sectionNumber }
                    target = existing
                }
            case .tables:
                throw error("\(name(key, upTo: index)) is an array of tables; dotted keys cannot add to it", at: start)
            case .value:
                throw error("\(name(key, upTo: index)) is already a value, not a table", at: start)
            }
        }
        let last = key[key.count - 1]
        guard target.entries[last] == nil else { throw error("the key \(name(key)) is defined twice", at: start) }
        target.entries[last] = value
        return (relative, valueSyntax)
    }

    private func lineStart(of offset: Int) -> Int {
        bytes[..<offset].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
    }

    /// `key`, `"quoted key"`, `'literal'`, or those joined by dots (white space around the dots allowed).
    private mutating func readKey() throws -> [String] {
        var parts: [String] = []
        while true {
            skipBlank()
            guard let byte = peek() else { throw error("a key was expected") }
            switch byte {
            case UInt8(ascii: "\""):
                guard !starts(with: "\"\"\"") else { throw error("a key cannot be a multi-line string") }
                parts.append(try readBasicString())
            case UInt8(ascii: "'"):
                guard !starts(with: "'''") else { throw error("a key cannot be a multi-line string") }
                parts.append(try readLiteralString())
            default:
                let start = position
                while let next = peek(), Self.isBareKeyByte(next) { position += 1 }
                guard position > start else { throw error("a key was expected, not \(describe(byte))") }
                parts.append(String(decoding: bytes[start..<position], as: UTF8.self))
            }
            let beforeDot = position
            skipBlank()
            guard peek() == UInt8(ascii: ".") else {
                position = beforeDot
                return parts
            }
            position += 1
        }
    }

    /// Whether `byte` may stand in a bare key: `A-Z a-z 0-9 _ -`.
    static func isBareKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    // MARK: Values

    /// A value, and its syntax (an array's or inline table's entries only when the reader notes the syntax).
    private mutating func readValue(depth: Int) throws -> (Entry, TOMLSyntax.Value) {
        guard depth < Self.maximumDepth else { throw error("nested more than \(Self.maximumDepth) levels deep") }
        guard let byte = peek() else { throw error("a value was expected at the end of the text") }
        let start = position
        let entry: Entry
        switch byte {
        case UInt8(ascii: "\""):
            entry = .value(.string(starts(with: "\"\"\"") ? try readMultilineString(byte) : try readBasicString()))
        case UInt8(ascii: "'"):
            entry = .value(.string(starts(with: "'''") ? try readMultilineString(byte) : try readLiteralString()))
        case UInt8(ascii: "["):
            entry = .value(try readArray(depth: depth))
        case UInt8(ascii: "{"):
            entry = .table(try readInlineTable(depth: depth))
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            if starts(with: "true") {
                position += 4
                entry = .value(.bool(true))
            } else if starts(with: "false") {
                position += 5
                entry = .value(.bool(false))
            } else {
                throw error("a value was expected, not \(describe(byte))")
            }
        default:
            entry = .value(try readNumberOrDate())
        }
        if let list = lastList, list.start == start {
            lastList = nil
            return (entry, list.syntax)
        }
        return (entry, .scalar(start..<position))
    }

    private mutating func readArray(depth: Int) throws -> JSONValue {
        let start = position
        position += 1
        var elements: [JSONValue] = []
        var items: [TOMLSyntax.Item] = []
        func done(_ position: Int) -> JSONValue {
            if outlining {
                lastList = (start, .list(TOMLSyntax.List(range: start..<position, isTable: false, items: items)))
            }
            return .array(elements)
        }
        while true {
            try skipBlankLinesAndComments()
            if peek() == UInt8(ascii: "]") { position += 1; return done(position) }
            let elementStart = position
            let (element, syntax) = try readValue(depth: depth + 1)
            elements.append(element.document)
            if outlining {
                items.append(TOMLSyntax.Item(key: [], range: elementStart..<position, value: syntax, comma: nil))
            }
            try skipBlankLinesAndComments()
            switch peek() {
            case UInt8(ascii: ","):
                if outlining { items[items.count - 1].comma = position }
                position += 1
            case UInt8(ascii: "]"): position += 1; return done(position)
            case let other:
                throw error("',' or ']' was expected in the array, not \(other.map(describe) ?? "the end of the text")")
            }
        }
    }

    private mutating func readInlineTable(depth: Int) throws -> Table {
        let start = position
        position += 1
        // Dotted keys inside may add to the tables they make there (`{ a.b = 1, a.c = 2 }`).
        let table = Table(kind: .dotted, section: sectionNumber)
        var items: [TOMLSyntax.Item] = []
        func done(_ position: Int) -> Table {
            if outlining {
                lastList = (start, .list(TOMLSyntax.List(range: start..<position, isTable: true, items: items)))
            }
            freeze(table)
            return table
        }
        skipBlank()
        if peek() == UInt8(ascii: "}") {
            position += 1
            return done(position)
        }
        while true {
            skipBlank()
            let memberStart = position
            let (key, syntax) = try readKeyValue(into: table, depth: depth + 1)
            if outlining {
                items.append(TOMLSyntax.Item(key: key, range: memberStart..<position, value: syntax, comma: nil))
            }
            skipBlank()
            switch peek() {
            case UInt8(ascii: ","):
                if outlining { items[items.count - 1].comma = position }
                position += 1
                skipBlank()
                if peek() == UInt8(ascii: "}") { throw error("an inline table cannot end with a ','") }
            case UInt8(ascii: "}"):
                position += 1
                return done(position)
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"): throw error("an inline table must be on one line")
            case let other:
                throw error(
                    "',' or '}' was expected in the inline table, not \(other.map(describe) ?? "the end of the text")")
            }
        }
    }

    /// Makes `table` and the tables dotted keys made in it complete: nothing may add to them.
    private func freeze(_ table: Table) {
        table.kind = .inline
        for case .table(let inner) in table.entries.values { freeze(inner) }
    }

    // MARK: Strings

    private mutating func readBasicString() throws -> String {
        let start = position
        position += 1
        var text: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("the string is not closed", at: start) }
            position += 1
            switch byte {
            case UInt8(ascii: "\""): return try string(text, at: start)
            case UInt8(ascii: "\\"): try readEscape(into: &text)
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                throw error("a string on one line cannot hold a line break", at: position - 1)
            default:
                try checkAllowed(byte, at: position - 1, in: "a string")
                text.append(byte)
            }
        }
    }

    /// A multi-line string, from its three opening quotes (`quote`): `"""…"""` (basic: escapes read) or
    /// `'''…'''` (literal: as written).
    private mutating func readMultilineString(_ quote: UInt8) throws -> String {
        let start = position
        position += 3
        skipNewline()  // a newline right after the opening quotes is trimmed
        var text: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("the string is not closed", at: start) }
            if byte == quote, position + 2 < bytes.count, bytes[position + 1] == quote, bytes[position + 2] == quote {
                // Up to two more quotes end the content: `""""` is a quote, then the closing three.
                var quotes = 3
                while quotes < 5, position + quotes < bytes.count, bytes[position + quotes] == quote { quotes += 1 }
                text.append(contentsOf: repeatElement(quote, count: quotes - 3))
                position += quotes
                return try string(text, at: start)
            }
            position += 1
            switch byte {
            case UInt8(ascii: "\\") where quote == UInt8(ascii: "\""):
                // A backslash at the end of a line trims it and the white space after it.
                let afterBackslash = position
                skipBlank()
                if peek() == UInt8(ascii: "\n") || starts(with: "\r\n") {
                    while true {
                        skipBlank()
                        guard skipNewline() else { break }
                    }
                } else {
                    position = afterBackslash
                    try readEscape(into: &text)
                }
            case UInt8(ascii: "\r"):
                guard peek() == UInt8(ascii: "\n") else {
                    throw error("a carriage return must be followed by a line feed", at: position - 1)
                }
                text.append(byte)
            case UInt8(ascii: "\n"):
                text.append(byte)
            default:
                try checkAllowed(byte, at: position - 1, in: "a string")
                text.append(byte)
            }
        }
    }

    private mutating func readLiteralString() throws -> String {
        let start = position
        position += 1
        let contentStart = position
        while true {
            guard let byte = peek() else { throw error("the string is not closed", at: start) }
            if byte == UInt8(ascii: "'") {
                position += 1
                return try string(Array(bytes[contentStart..<(position - 1)]), at: start)
            }
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                throw error("a string on one line cannot hold a line break")
            }
            try checkAllowed(byte, at: position, in: "a string")
            position += 1
        }
    }

    /// After a backslash: one of TOML's escapes.
    private mutating func readEscape(into text: inout [UInt8]) throws {
        guard let byte = peek() else { throw error("the escape is not complete") }
        position += 1
        switch byte {
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "\""): text.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): text.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = byte == UInt8(ascii: "u") ? 4 : 8
            guard position + count <= bytes.count,
                let code = UInt32(String(decoding: bytes[position..<(position + count)], as: UTF8.self), radix: 16),
                bytes[position..<(position + count)].allSatisfy({ Self.isHexDigit($0) }),
                let scalar = Unicode.Scalar(code)
            else {
                throw error(
                    "\\\(Character(Unicode.Scalar(byte))) must be followed by \(count) hex digits of a Unicode scalar value",
                    at: position - 2)
            }
            position += count
            text += Array(String(Character(scalar)).utf8)
        default:
            throw error("\\\(describe(byte)) is not an escape TOML knows", at: position - 2)
        }
    }

    /// Control characters other than tab may not appear in strings or comments.
    private func checkAllowed(_ byte: UInt8, at offset: Int, in what: String) throws {
        if (byte < 0x20 && byte != 0x09) || byte == 0x7F {
            throw error("\(what) cannot hold the control character \(describe(byte)); escape it", at: offset)
        }
    }

    private func string(_ text: [UInt8], at start: Int) throws -> String {
        guard let string = String(validating: text, as: UTF8.self) else {
            throw error("the string is not UTF-8 text", at: start)
        }
        return string
    }

    // MARK: Numbers and dates

    private mutating func readNumberOrDate() throws -> JSONValue {
        let start = position
        while let byte = peek(), Self.isValueByte(byte) { position += 1 }
        // A date and a time may be separated by one space: `1979-05-27 07:32:00`.
        if position - start == 10, peek() == UInt8(ascii: " "), position + 2 < bytes.count,
            Self.isDigit(bytes[position + 1]), Self.isDigit(bytes[position + 2]), bytes[start + 4] == UInt8(ascii: "-")
        {
            position += 1
            while let byte = peek(), Self.isValueByte(byte) { position += 1 }
        }
        if let integer = Self.plainInteger(bytes[start..<position]) { return .integer(integer) }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        guard !text.isEmpty else {
            throw error("a value was expected, not \(peek().map(describe) ?? "the end of the text")")
        }
        if let value = Self.number(text) { return value }
        if let date = Self.dateTime(text) { return .string(date) }
        throw error("\(text) is not a TOML value", at: start)
    }

    private static func isValueByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"):
            true
        default: false
        }
    }

    /// A decimal integer of up to 18 digits with no `_`, `+` or leading zero (the common case, which
    /// cannot overflow), read from its bytes; nil for any other text, which ``number(_:)`` reads.
    private static func plainInteger(_ text: ArraySlice<UInt8>) -> Int? {
        var digits = text[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 18, digits.count == 1 || digits.first != UInt8(ascii: "0") else {
            return nil
        }
        var value = 0
        for byte in digits {
            guard isDigit(byte) else { return nil }
            value = value * 10 + Int(byte &- UInt8(ascii: "0"))
        }
        return negative ? -value : value
    }

    /// An integer or a float as TOML writes them; nil for anything else.
    static func number(_ text: String) -> JSONValue? {
        switch text {
        case "inf", "+inf": return .double(.infinity)
        case "-inf": return .double(-.infinity)
        case "nan", "+nan", "-nan": return .double(.nan)
        default: break
        }
        var body = Substring(text)
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where body.hasPrefix(prefix) {
            body = body.dropFirst(2)
            guard
                let digits = withoutUnderscores(
                    body, isDigit: { radix == 16 ? isHexDigit($0) : ($0 >= 0x30 && $0 < 0x30 + UInt8(radix)) })
            else { return nil }
            // TOML's integers are 64-bit signed: a larger one is an error, never a rounded number.
            return Int(digits, radix: radix).map(JSONValue.integer)
        }
        var sign = ""
        if let first = body.first, first == "+" || first == "-" {
            sign = first == "-" ? "-" : ""
            body = body.dropFirst()
        }
        // The integer part: no leading zero unless it is the only digit.
        let integerPart = body.prefix { $0 != "." && $0 != "e" && $0 != "E" }
        guard let integerDigits = withoutUnderscores(integerPart, isDigit: isDigit),
            integerDigits.count == 1 || integerDigits.first != "0"
        else { return nil }
        var rest = body.dropFirst(integerPart.count)
        if rest.isEmpty { return Int(sign + integerDigits).map(JSONValue.integer) }
        var normalized = sign + integerDigits
        if rest.first == "." {
            let fraction = rest.dropFirst().prefix { $0 != "e" && $0 != "E" }
            guard let digits = withoutUnderscores(fraction, isDigit: isDigit) else { return nil }
            normalized += "." + digits
            rest = rest.dropFirst(1 + fraction.count)
        }
        if let e = rest.first, e == "e" || e == "E" {
            var exponent = rest.dropFirst()
            var exponentSign = ""
            if let first = exponent.first, first == "+" || first == "-" {
                exponentSign = String(first)
                exponent = exponent.dropFirst()
            }
            guard let digits = withoutUnderscores(exponent, isDigit: isDigit) else { return nil }
            normalized += "e" + exponentSign + digits
            rest = rest.dropFirst(rest.count)
        }
        guard rest.isEmpty, let value = Double(normalized) else { return nil }
        return .double(value)
    }

    /// `digits` without the underscores between them; nil when empty, or an underscore is not between two
    /// digits, or a byte is not a digit.
    private static func withoutUnderscores(_ digits: Substring, isDigit: (UInt8) -> Bool) -> String? {
        var result = ""
        var previousWasDigit = false
        for byte in digits.utf8 {
            if byte == UInt8(ascii: "_") {
                guard previousWasDigit else { return nil }
                previousWasDigit = false
            } else {
                guard isDigit(byte) else { return nil }
                result.unicodeScalars.append(Unicode.Scalar(byte))
                previousWasDigit = true
            }
        }
        return previousWasDigit ? result : nil
    }

    /// A date-time, date or time as RFC 3339 and TOML write them; nil for anything else. An offset
    /// date-time comes back with an uppercase `T` and `Z`; the others as written, with `T` between date
    /// and time.
    static func dateTime(_ text: String) -> String? {
        let characters = Array(text.utf8)
        var index = 0
        func digits(_ count: Int) -> Int? {
            guard index + count <= characters.count, characters[index..<(index + count)].allSatisfy(isDigit) else {
                return nil
            }
            defer { index += count }
            return Int(String(decoding: characters[index..<(index + count)], as: UTF8.self))
        }
        func take(_ byte: UInt8) -> Bool {
            guard index < characters.count, characters[index] == byte else { return false }
            index += 1
            return true
        }
        func time() -> String? {
            let start = index
            guard let hour = digits(2), hour < 24, take(UInt8(ascii: ":")), let minute = digits(2), minute < 60,
                take(UInt8(ascii: ":")), let second = digits(2), second <= 60
            else { return nil }
            if take(UInt8(ascii: ".")) {
                let fractionStart = index
                while index < characters.count, isDigit(characters[index]) { index += 1 }
                guard index > fractionStart else { return nil }
            }
            return String(decoding: characters[start..<index], as: UTF8.self)
        }
        // A local time alone.
        if characters.count >= 3, characters[2] == UInt8(ascii: ":") {
            guard let time = time(), index == characters.count else { return nil }
            return time
        }
        guard let year = digits(4), take(UInt8(ascii: "-")), let month = digits(2), (1...12).contains(month),
            take(UInt8(ascii: "-")), let day = digits(2), day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        let date = String(decoding: characters[0..<10], as: UTF8.self)
        if index == characters.count { return date }
        guard index < characters.count,
            [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(characters[index])
        else { return nil }
        index += 1
        guard let time = time() else { return nil }
        if index == characters.count { return date + "T" + time }
        if take(UInt8(ascii: "Z")) || take(UInt8(ascii: "z")) {
            return index == characters.count ? date + "T" + time + "Z" : nil
        }
        let offsetStart = index
        guard take(UInt8(ascii: "+")) || take(UInt8(ascii: "-")), let hours = digits(2), hours < 24,
            take(UInt8(ascii: ":")), let minutes = digits(2), minutes < 60, index == characters.count
        else { return nil }
        return date + "T" + time + String(decoding: characters[offsetStart...], as: UTF8.self)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
    }

    // MARK: White space, comments, lines

    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private func starts(with text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        return text.withUTF8Buffer { $0.elementsEqual(bytes[position..<(position + count)]) }
    }

    /// Skips spaces and tabs.
    private mutating func skipBlank() {
        while let byte = peek(), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { position += 1 }
    }

    /// Skips one line ending (LF or CRLF); says whether there was one.
    @discardableResult
    private mutating func skipNewline() -> Bool {
        if peek() == UInt8(ascii: "\n") { position += 1; return true }
        if starts(with: "\r\n") { position += 2; return true }
        return false
    }

    /// Skips a comment to the end of its line (not the line ending).
    private mutating func skipComment() throws {
        guard peek() == UInt8(ascii: "#") else { return }
        position += 1
        while let byte = peek(), byte != UInt8(ascii: "\n") {
            if byte == UInt8(ascii: "\r") {
                guard starts(with: "\r\n") else { throw error("a carriage return must be followed by a line feed") }
                return
            }
            try checkAllowed(byte, at: position, in: "a comment")
            position += 1
        }
    }

    /// Inside an array: white space, line breaks and comments.
    private mutating func skipBlankLinesAndComments() throws {
        while true {
            skipBlank()
            try skipComment()
            guard skipNewline() else { return }
        }
    }

    /// After an expression: white space, a comment, then a line ending or the end of the text.
    private mutating func endOfLine() throws {
        skipBlank()
        try skipComment()
        guard peek() == nil || skipNewline() else {
            throw error(
                "a line break was expected after the \(peek() == UInt8(ascii: "\r") ? "value (a lone carriage return is not one)" : "value, not \(describe(peek()!))")"
            )
        }
    }

    private mutating func expect(_ character: Unicode.Scalar, _ what: String) throws {
        guard let byte = peek(), byte == UInt8(ascii: character) else {
            throw error(
                "\(what) was expected\(peek().map { ", not \(describe($0))" } ?? " before the end of the text")")
        }
        position += 1
    }

    // MARK: Errors

    private func describe(_ byte: UInt8) -> String {
        switch byte {
        case 0x20...0x7E: "'\(Character(Unicode.Scalar(byte)))'"
        case UInt8(ascii: "\n"): "a line break"
        default: "the byte 0x\(String(byte, radix: 16, uppercase: true))"
        }
    }

    /// A key as TOML writes it: `a.b."c d"`, the first `upTo + 1` parts.
    private func name(_ key: [String], upTo last: Int? = nil) -> String {
        TOMLWriter.dotted(Array(key.prefix((last ?? key.count - 1) + 1)))
    }

    /// An error at `offset` (the current position by default), with its line and column.
    private func error(_ reason: String, at offset: Int? = nil) -> DocumentSyntaxError {
        let offset = min(offset ?? position, bytes.count)
        var line = 1
        var lineStart = 0
        for index in 0..<offset where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        let column = String(decoding: bytes[lineStart..<offset], as: UTF8.self).count + 1
        return DocumentSyntaxError(reason, at: TextPosition(line: line, column: column))
    }
}
