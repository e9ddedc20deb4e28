#if YAML
import Foundation
import Loupe
import Yams

/// Writes values as YAML text for an edit: scalars in a given style where the value allows it, keys and
/// strings quoted wherever another reader (YAML 1.1's, as PyYAML reads, or 1.2's, as Yams and ruamel.yaml
/// do) would see another type, and collections in block or flow style at a given indentation.
enum YAMLValueWriter {
    /// How a scalar is written.
    enum Style {
        case plain, singleQuoted, doubleQuoted
    }

    // MARK: Plain text another reader would see as another type

    /// The words YAML 1.1 (PyYAML) or 1.2 (Yams, ruamel.yaml) read as a boolean or null, and `=` and `<<`,
    /// which PyYAML reads as a value key and a merge key.
    private static let typedWords: Set<String> = [
        "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
        "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "~", "=", "<<",
        ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN",
    ]

    /// Whether a YAML 1.1 or 1.2 reader sees `text`, written plain, as something other than a string: a
    /// boolean, null, a number in any of their spellings (`0x1F`, `0o17`, `017`, `0b101`, `1_000`, `1e3`,
    /// `.5`, `12:30`, `.inf`), or a date. Spellings close to a number's are taken for one.
    static func readsAsAnotherType(_ text: String) -> Bool {
        if typedWords.contains(text) { return true }
        let bytes = Array(text.utf8)
        // A date or a time stamp: `2001-12-14…`.
        if bytes.count >= 8, bytes.prefix(4).allSatisfy(isDigit), bytes[4] == UInt8(ascii: "-") { return true }
        var body = bytes[...]
        if let sign = body.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { body = body.dropFirst() }
        guard let first = body.first, isDigit(first) || first == UInt8(ascii: ".") else { return false }
        if body.count > 2, first == UInt8(ascii: "0") {
            let digits = body.dropFirst(2)
            switch body[body.startIndex + 1] {
            case UInt8(ascii: "b"):
                return digits.allSatisfy {
                    $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: "1") || $0 == UInt8(ascii: "_")
                }
            case UInt8(ascii: "o"):
                return digits.allSatisfy {
                    (UInt8(ascii: "0")...UInt8(ascii: "7")).contains($0) || $0 == UInt8(ascii: "_")
                }
            case UInt8(ascii: "x"):
                return digits.allSatisfy {
                    isDigit($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0 | 0x20)
                        || $0 == UInt8(ascii: "_")
                }
            default: break
            }
        }
        // Decimal, float, sexagesimal: digits, `_` and `:`, one `.`, an exponent.
        var index = body.startIndex
        var digits = 0
        while index < body.endIndex,
            isDigit(body[index]) || body[index] == UInt8(ascii: "_") || body[index] == UInt8(ascii: ":")
        {
            if isDigit(body[index]) { digits += 1 }
            index += 1
        }
        if index < body.endIndex, body[index] == UInt8(ascii: ".") {
            index += 1
            while index < body.endIndex, isDigit(body[index]) || body[index] == UInt8(ascii: "_") {
                digits += 1
                index += 1
            }
        }
        guard digits > 0 else { return false }
        if index < body.endIndex, body[index] == UInt8(ascii: "e") || body[index] == UInt8(ascii: "E") {
            index += 1
            if index < body.endIndex, body[index] == UInt8(ascii: "+") || body[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < body.endIndex, body[index...].allSatisfy(isDigit) else { return false }
            return true
        }
        return index == body.endIndex
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Whether `text` written plain reads as this string for every reader: not another type, and not
    /// broken by YAML's indicators (in `flow` context, `,[]{}` too).
    static func isPlainSafe(_ text: String, flow: Bool, tagged: Bool = false) -> Bool {
        guard let first = text.unicodeScalars.first, let last = text.unicodeScalars.last else { return false }
        if " \t".unicodeScalars.contains(first) || " \t".unicodeScalars.contains(last) { return false }
        if "-?:,[]{}#&*!|>'\"%@`".unicodeScalars.contains(first) { return false }
        if last == ":" { return false }
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) { return false }
            if flow, ",[]{}".unicodeScalars.contains(scalar) { return false }
        }
        if text.contains(": ") || text.contains(" #") || text.contains(":\t") || text.contains("\t#") { return false }
        // A string's tag (`!!str`) says what it is whatever it spells.
        if tagged { return true }
        if readsAsAnotherType(text) { return false }
        // Whatever Yams resolves as something else, too.
        return ScalarTags.readsAsString(text)
    }

    // MARK: Scalars

    /// `text` in double quotes, escaped as YAML (and JSON) escape.
    static func doubleQuoted(_ text: String) -> String {
        text.doubleQuoted(namesBackspaceAndFormFeed: false, escaping: needsEscape)
    }

    /// Whether `scalar` is one YAML writes only escaped, in double quotes: a C0 or C1 control character,
    /// DEL, a byte-order mark, or a line or paragraph separator.
    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value)
            || scalar.value == 0xFEFF || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// `text` in single quotes, or nil where single quotes cannot hold it (line breaks, control characters).
    static func singleQuoted(_ text: String) -> String? {
        guard !text.unicodeScalars.contains(where: needsEscape) else { return nil }
        return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// A key, plain where that reads as the same string for every reader, else double-quoted.
    static func key(_ key: String, flow: Bool) -> String {
        isPlainSafe(key, flow: flow) ? key : doubleQuoted(key)
    }

    /// A string in `style` where that reads back as the string, else double-quoted.
    static func string(_ value: String, style: Style, flow: Bool, tagged: Bool = false) -> String {
        switch style {
        case .plain: isPlainSafe(value, flow: flow, tagged: tagged) ? value : doubleQuoted(value)
        case .singleQuoted: singleQuoted(value) ?? doubleQuoted(value)
        case .doubleQuoted: doubleQuoted(value)
        }
    }

    /// A scalar value (anything but a non-empty collection) as one line; a string in `style` where it
    /// allows.
    static func scalar(_ value: JSONValue, style: Style = .plain, flow: Bool, tagged: Bool = false) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let number): return String(number)
        case .double(let number): return double(number)
        case .exactNumber(let text): return text
        case .string(let text): return string(text, style: style, flow: flow, tagged: tagged)
        case .array(let elements):
            return "[" + elements.map { scalarOrFlow($0) }.joined(separator: ", ") + "]"
        case .object(let members):
            return "{"
                + members.keys.sorted().map { key($0, flow: true) + ": " + scalarOrFlow(members[$0]!) }.joined(
                    separator: ", ") + "}"
        }
    }

    /// A value in flow style, on one line.
    static func scalarOrFlow(_ value: JSONValue) -> String { scalar(value, flow: true) }

    /// A double as every reader reads it: with a `.` before an exponent (PyYAML reads `1e-05` as a string),
    /// `.inf`, `-.inf`, `.nan`.
    static func double(_ number: Double) -> String {
        if number.isNaN { return ".nan" }
        if number.isInfinite { return number > 0 ? ".inf" : "-.inf" }
        var text = "\(number)"
        if let exponent = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            let mantissa = text[..<exponent]
            var power = String(text[text.index(after: exponent)...])
            if !power.hasPrefix("-"), !power.hasPrefix("+") { power = "+" + power }
            text = (mantissa.contains(".") ? String(mantissa) : mantissa + ".0") + "e" + power
        }
        return text
    }

    // MARK: Block scalars

    /// `text` as a block scalar (`|` literal or `>` folded, `folded`) whose lines are indented by `indent`
    /// spaces: its header and its body (without a final line break); nil where a block scalar cannot hold
    /// it as it is.
    static func blockScalar(_ text: String, folded: Bool, indent: Int) -> (header: String, body: String)? {
        guard !text.isEmpty, text.contains(where: { !$0.isNewline }) else { return nil }
        for scalar in text.unicodeScalars
        where (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || scalar == "\r"
            || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) || scalar.value == 0xFEFF
            || scalar.value == 0x2028 || scalar.value == 0x2029
        {
            return nil
        }
        var content = Substring(text)
        var breaks = 0
        while content.hasSuffix("\n") {
            content = content.dropLast()
            breaks += 1
        }
        var lines = content.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let first = lines.first, !first.isEmpty, first.first != " ", first.first != "\t" else { return nil }
        let chomping = breaks == 0 ? "-" : breaks == 1 ? "" : "+"
        lines += Array(repeating: "", count: max(0, breaks - 1))
        let padding = String(repeating: " ", count: indent)
        var folded = folded
        if folded, lines.contains(where: { $0.hasPrefix(" ") || $0.hasPrefix("\t") }) { folded = false }
        if folded {
            // A line break between two lines of text folds into a space: text lines `k` breaks apart are
            // written with `k` empty lines between them.
            var written: [String] = []
            var emptySince = 0
            for line in content.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.isEmpty {
                    emptySince += 1
                    continue
                }
                if !written.isEmpty { written += Array(repeating: "", count: emptySince + 1) }
                written.append(String(line))
                emptySince = 0
            }
            written += Array(repeating: "", count: max(0, breaks - 1))
            return (">" + chomping, written.map { $0.isEmpty ? "" : padding + $0 }.joined(separator: "\n"))
        }
        return ("|" + chomping, lines.map { $0.isEmpty ? "" : padding + $0 }.joined(separator: "\n"))
    }

    // MARK: Collections

    /// A value written after a mapping's `key:` whose key stands at column `indent`: ` scalar`, ` []`, or a
    /// line break and a block collection one `layout` step further in (a sequence at the key's column, where
    /// the layout writes sequences so).
    ///
    /// `order`: a node of the text whose keys (and its nested nodes' keys) the collection written takes in
    /// their order (an anchored value an alias written out in full shows); other keys come after, sorted.
    static func afterKey(
        _ value: JSONValue, indent: Int, layout: YAMLLayout = YAMLLayout(), order: YAMLSyntaxNode? = nil
    ) -> String {
        switch value {
        case .object(let members) where !members.isEmpty:
            return "\n" + blockMapping(members, indent: indent + layout.step, layout: layout, order: order)
        case .array(let elements) where !elements.isEmpty:
            let column = layout.indentlessSequences ? indent : indent + layout.step
            return "\n" + blockSequence(elements, indent: column, layout: layout, order: order)
        default:
            return " " + scalar(value, flow: false)
        }
    }

    /// A value written after a sequence's `-` at column `indent`: ` scalar`, or a compact block collection
    /// (`- key: v` with its other keys below, at the first key's column).
    static func afterDash(
        _ value: JSONValue, indent: Int, layout: YAMLLayout = YAMLLayout(), order: YAMLSyntaxNode? = nil
    ) -> String {
        switch value {
        case .object(let members) where !members.isEmpty:
            return " "
                + String(blockMapping(members, indent: indent + 2, layout: layout, order: order).dropFirst(indent + 2))
        case .array(let elements) where !elements.isEmpty:
            return " "
                + String(
                    blockSequence(elements, indent: indent + 2, layout: layout, order: order).dropFirst(indent + 2))
        default:
            return " " + scalar(value, flow: false)
        }
    }

    /// A document's whole value: a mapping or a sequence in block style at column 0, anything else (an empty
    /// collection too) on one line.
    static func document(_ value: JSONValue, layout: YAMLLayout = YAMLLayout()) -> String {
        switch value {
        case .object(let members) where !members.isEmpty: blockMapping(members, indent: 0, layout: layout)
        case .array(let elements) where !elements.isEmpty: blockSequence(elements, indent: 0, layout: layout)
        default: scalar(value, flow: false)
        }
    }

    /// A block mapping's lines at column `indent` (keys in `order`'s order, the others sorted), without a
    /// final line break.
    static func blockMapping(
        _ members: [String: JSONValue], indent: Int, layout: YAMLLayout = YAMLLayout(), order: YAMLSyntaxNode? = nil
    ) -> String {
        let padding = String(repeating: " ", count: indent)
        let known = (order?.isMapping == true ? order!.entries.compactMap { $0.isMerge ? nil : $0.key } : [])
            .filter { members[$0] != nil }
        let keys = known + members.keys.filter { !known.contains($0) }.sorted()
        return keys.map {
            padding + key($0, flow: false) + ":"
                + afterKey(members[$0]!, indent: indent, layout: layout, order: order?.member($0)?.value)
        }
        .joined(separator: "\n")
    }

    /// A block sequence's lines with their dashes at column `indent`, without a final line break; each
    /// element's keys in the order of `order`'s element at its index.
    static func blockSequence(
        _ elements: [JSONValue], indent: Int, layout: YAMLLayout = YAMLLayout(), order: YAMLSyntaxNode? = nil
    ) -> String {
        let padding = String(repeating: " ", count: indent)
        let nested = order?.isSequence == true ? order!.entries.map(\.value) : []
        return elements.enumerated().map { index, element in
            padding + "-"
                + afterDash(element, indent: indent, layout: layout, order: index < nested.count ? nested[index] : nil)
        }
        .joined(separator: "\n")
    }
}

/// How a YAML text lays out nested block collections, so that a collection an edit writes looks like its
/// neighbours: how far a nested mapping stands further in than its key (2 columns, or 4), and whether a
/// sequence under a key has its dashes at the key's column (`args:` over `- --verbose`, as Kubernetes
/// manifests write them). What most of the text's collections do; 2 and indented where it holds none.
struct YAMLLayout: Sendable, Equatable {
    var step = 2
    var indentlessSequences = false

    init() {}

    init(of tree: YAMLSyntaxTree) {
        var steps: [Int: Int] = [:]
        var indentless = 0
        var indented = 0
        func visit(_ node: YAMLSyntaxNode, depth: Int) {
            guard depth < 256 else { return }
            for entry in node.entries {
                let value = entry.value
                if node.kind == .blockMapping, value.kind == .blockMapping, value.column > node.column {
                    steps[value.column - node.column, default: 0] += 1
                } else if node.kind == .blockMapping, value.kind == .blockSequence {
                    if value.column == node.column { indentless += 1 } else { indented += 1 }
                }
                visit(value, depth: depth + 1)
            }
        }
        if let root = tree.root { visit(root, depth: 0) }
        step = steps.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key ?? 2
        indentlessSequences = indentless > indented
    }
}
#endif
