import Foundation

/// Writes a document as TOML 1.0.0 text, in a clean style: each table's values first (keys sorted, bare
/// where TOML allows), then its tables as `[a.b]` sections and its arrays of tables as `[[a.b]]`, a blank
/// line before each section; objects inside arrays as inline tables.
///
/// A string in RFC 3339 form (what a `Date` encodes to with ISO 8601 coding, and what ``TOMLReader``
/// makes of TOML's date-times, dates and times) is written as a TOML date-time, date or time, unquoted,
/// so a date-time read from a file stays one; where it replaces a quoted string in a file, it stays a
/// quoted string. TOML has no null, and its integers are 64-bit: a
/// document holding a null, or a larger integer, is refused with an error naming where.
struct TOMLWriter {
    private var text = ""

    /// The TOML text of `document`, which must be an object.
    ///
    /// - Throws: ``DocumentSyntaxError`` for what TOML cannot hold, naming where.
    static func text(of document: JSONValue) throws -> String {
        guard case .object(let members) = document else {
            throw DocumentSyntaxError("a TOML document is a table; \(document.kind) cannot be one")
        }
        var writer = TOMLWriter()
        try writer.writeTable(members, at: [], header: nil)
        return writer.text
    }

    /// The TOML text of the table `document` at `path` (`[path]` and its sections), as appended to a file.
    static func text(of document: JSONValue, under path: [String]) throws -> String {
        guard case .object(let members) = document else {
            throw DocumentSyntaxError("a TOML table is an object; \(document.kind) cannot be one")
        }
        var writer = TOMLWriter()
        try writer.writeTable(members, at: path, header: path.isEmpty ? nil : "[" + dotted(path) + "]")
        return writer.text
    }

    /// The `[[path]]` sections of `elements`, elements of the array of tables at `path`, a blank line between
    /// them, as appended after the array's last element.
    static func text(ofArrayOfTables elements: [JSONValue], under path: [String]) throws -> String {
        var writer = TOMLWriter()
        for element in elements {
            guard case .object(let members) = element else {
                throw DocumentSyntaxError("an element of an array of tables is a table; \(element.kind) cannot be one")
            }
            if !writer.text.isEmpty { writer.text += "\n" }
            writer.text += "[[" + dotted(path) + "]]\n"
            try writer.writeTable(members, at: path, header: nil)
        }
        return writer.text
    }

    /// Writes the values of a table, then its sections. `header` is the table's own header line, written
    /// only when the table has values of its own or nothing at all (a table holding only tables needs none).
    private mutating func writeTable(_ members: [String: JSONValue], at path: [String], header: String?) throws {
        let keys = members.keys.sorted()
        var values: [String] = []
        var tables: [String] = []
        var arraysOfTables: [String] = []
        for key in keys {
            switch members[key]! {
            case .object: tables.append(key)
            case .array(let elements)
            where !elements.isEmpty && elements.allSatisfy({ if case .object = $0 { true } else { false } }):
                arraysOfTables.append(key)
            default: values.append(key)
            }
        }
        if let header, !values.isEmpty || (tables.isEmpty && arraysOfTables.isEmpty) {
            if !text.isEmpty { text += "\n" }
            text += header + "\n"
        }
        for key in values {
            text +=
                Self.key(key) + " = " + (try inline(members[key]!, at: path.map(ValuePath.Component.key) + [.key(key)]))
                + "\n"
        }
        for key in tables {
            guard case .object(let inner) = members[key]! else { continue }
            let innerPath = path + [key]
            try writeTable(inner, at: innerPath, header: "[" + Self.dotted(innerPath) + "]")
        }
        for key in arraysOfTables {
            guard case .array(let elements) = members[key]! else { continue }
            let innerPath = path + [key]
            for element in elements {
                guard case .object(let inner) = element else { continue }
                // Every element has its header, even an empty one: it is what makes the element.
                if !text.isEmpty { text += "\n" }
                text += "[[" + Self.dotted(innerPath) + "]]\n"
                try writeTable(inner, at: innerPath, header: nil)
            }
        }
    }

    /// `value` on one line, as TOML writes a value: a scalar, an array, or an inline table. `path` (where
    /// the value goes) names the place in an error.
    static func inlineText(of value: JSONValue, at path: [ValuePath.Component] = []) throws -> String {
        try TOMLWriter().inline(value, at: path)
    }

    /// `value` on one line, spelled like `previous` (the text of the value it replaces) where it can be:
    /// a literal string stays literal and a multi-line string multi-line when the new string can be written
    /// so, a quoted string stays quoted even in a date-time's form, and an integer keeps its base (`0x`,
    /// `0o`, `0b`) or its `_` grouping.
    static func inlineText(
        of value: JSONValue, spelledLike previous: ArraySlice<UInt8>, at path: [ValuePath.Component] = []
    ) throws -> String {
        let previous = String(decoding: previous, as: UTF8.self)
        switch value {
        case .string(let string) where TOMLReader.dateTime(string) != string:
            return spelledString(string, like: previous) ?? quoted(string)
        case .string(let string) where previous.first == "\"" || previous.first == "'":
            // A string in a date-time's form where a string stood stays a string (for every other reader of
            // the file, a date-time is another type); where a date-time stood, or nothing, it is a date-time.
            return spelledString(string, like: previous) ?? quoted(string)
        case .integer(let number):
            return spelledInteger(number, like: previous) ?? String(number)
        default:
            return try inlineText(of: value, at: path)
        }
    }

    /// `string` in the quoting of `previous`, or nil when that quoting cannot hold it (or is a basic string,
    /// which ``quoted(_:)`` writes).
    private static func spelledString(_ string: String, like previous: String) -> String? {
        let control = string.unicodeScalars.contains {
            ($0.value < 0x20 && $0 != "\t" && $0 != "\n") || $0.value == 0x7F
        }
        guard !control else { return nil }
        for delimiter in ["'''", "\"\"\""] where previous.hasPrefix(delimiter) {
            // A multi-line string: its first line break, when it had one right after the delimiter, stays
            // (TOML drops it); a basic one escapes what it must, and leaves line breaks as they are.
            let opening =
                previous.dropFirst(3).hasPrefix("\r\n") ? "\r\n" : previous.dropFirst(3).hasPrefix("\n") ? "\n" : ""
            var body = string
            if delimiter == "\"\"\"" {
                // Escapes but for line breaks and tabs; a backslash is left to a basic string.
                guard !string.contains("\\") else { return nil }
                body = String(quoted(string).dropFirst().dropLast()).replacingOccurrences(of: "\\n", with: "\n")
                    .replacingOccurrences(of: "\\t", with: "\t")
            } else if string.contains("'''") || string.hasSuffix("'") {
                return nil
            }
            // A line break the string starts with would be taken for the one TOML drops.
            if opening.isEmpty, body.hasPrefix("\n") { return nil }
            return delimiter + opening + body + delimiter
        }
        if previous.hasPrefix("'") {
            guard !string.contains("'"), !string.contains("\n") else { return nil }
            return "'" + string + "'"
        }
        return nil
    }

    /// `number` in the base, or with the `_` grouping, of the integer `previous`; nil for plain decimal.
    private static func spelledInteger(_ number: Int, like previous: String) -> String? {
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where previous.hasPrefix(prefix) {
            // TOML allows no sign on these: a negative number is written in decimal.
            guard number >= 0 else { return nil }
            let digits = previous.dropFirst(2)
            let uppercase = digits.contains { $0.isUppercase }
            return prefix + String(number, radix: radix, uppercase: uppercase)
        }
        let digits = previous.drop { $0 == "+" || $0 == "-" }
        // By its bytes: `contains` of a string goes through Foundation's search.
        guard digits.utf8.contains(UInt8(ascii: "_")), let group = digits.split(separator: "_").last?.count, group > 0
        else { return nil }
        let plain = String(number.magnitude)
        var grouped = ""
        for (index, digit) in plain.enumerated() {
            if index > 0, (plain.count - index) % group == 0 { grouped += "_" }
            grouped.append(digit)
        }
        return (number < 0 ? "-" : "") + grouped
    }

    /// A value on one line: a scalar, an array, or an inline table.
    private func inline(_ value: JSONValue, at path: [ValuePath.Component]) throws -> String {
        switch value {
        case .null:
            throw DocumentSyntaxError("TOML cannot hold a null (at \(ValuePath(path)))")
        case .bool(let flag):
            return flag ? "true" : "false"
        case .integer(let number):
            return String(number)
        case .double(let number):
            if number.isNaN { return "nan" }
            if number.isInfinite { return number < 0 ? "-inf" : "inf" }
            let text = number.description
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        case .exactNumber(let text):
            // A number beyond what `Double` or `Int` hold exactly: TOML holds it only as a float.
            guard TOMLReader.number(text) != nil, text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) else {
                throw DocumentSyntaxError(
                    "TOML cannot hold the integer \(text), beyond 64 bits (at \(ValuePath(path)))")
            }
            return text
        case .string(let string):
            if TOMLReader.dateTime(string) == string { return string }
            return Self.quoted(string)
        case .array(let elements):
            var parts: [String] = []
            for (index, element) in elements.enumerated() {
                parts.append(try inline(element, at: path + [.index(index)]))
            }
            return "[" + parts.joined(separator: ", ") + "]"
        case .object(let members):
            guard !members.isEmpty else { return "{}" }
            var parts: [String] = []
            for key in members.keys.sorted() {
                parts.append(Self.key(key) + " = " + (try inline(members[key]!, at: path + [.key(key)])))
            }
            return "{ " + parts.joined(separator: ", ") + " }"
        }
    }

    /// A key: bare when TOML allows it, else a basic string.
    static func key(_ key: String) -> String {
        !key.isEmpty && key.utf8.allSatisfy(TOMLReader.isBareKeyByte) ? key : quoted(key)
    }

    static func dotted(_ path: [String]) -> String {
        path.map(key).joined(separator: ".")
    }

    /// `string` as a TOML basic string, with TOML's escapes: a control character or DEL as `\uXXXX`
    /// where TOML has no shorter escape for it.
    static func quoted(_ string: String) -> String {
        string.doubleQuoted(namesBackspaceAndFormFeed: true) { $0.value < 0x20 || $0.value == 0x7F }
    }
}
