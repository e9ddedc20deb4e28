/// Where everything of a TOML text is: its sections (the root's first, then one per `[table]` or
/// `[[array.of.tables]]` header), each `key = value` line of a section, and inside each value its
/// structure down to every array element and inline-table member, as byte ranges of the text.
///
/// It is the lossless syntax tree an edit in place works on: what it does not name (white space, line
/// breaks, comments, commas it does not note) is the text between the ranges it names, which an edit copies
/// as it stands. ``TOMLReader/syntax(of:)`` makes it in the same pass that reads the document, so an edit
/// sees the text exactly as the read-back of the write does.
struct TOMLSyntax: Sendable {
    /// A value as written: a scalar (string, number, boolean, date), or an array or inline table with its
    /// entries.
    indirect enum Value: Sendable {
        case scalar(Range<Int>)
        case list(List)

        /// The value's bytes, brackets and braces included.
        var range: Range<Int> {
            switch self {
            case .scalar(let range): range
            case .list(let list): list.range
            }
        }
    }

    /// An array (`[…]`) or an inline table (`{…}`), with its entries in written order.
    struct List: Sendable {
        /// From the opening bracket through the closing one.
        var range: Range<Int>
        /// Whether it is an inline table (entries with keys).
        var isTable: Bool
        var items: [Item]
    }

    /// An array element, or an inline-table member (`key = value`).
    struct Item: Sendable {
        /// The member's key, dotted keys as their parts; empty for an array element.
        var key: [String]
        /// From the key (an element: the value) through the value.
        var range: Range<Int>
        var value: Value
        /// Where the comma after it is, if one is.
        var comma: Int?
    }

    /// The root's lines before the first header, or a header's section.
    struct Section: Sendable {
        /// The document path of its table: `[a, b]` for `[a.b]`, `[a, .index(2)]` for the third `[[a]]`.
        var path: [ValuePath.Component]
        /// Whether its header is an array of tables' (`[[…]]`).
        var isArrayElement: Bool
        /// Where its header line starts (0 for the root's section), and where the line after it starts.
        var headerStart: Int
        var bodyStart: Int
        /// Where the next section's header line starts, or the end of the text.
        var end: Int
    }

    /// A `key = value` line of a section.
    struct KeyValue: Sendable {
        /// The key as written, dotted keys as their parts.
        var key: [String]
        /// The index of its section.
        var section: Int
        /// The whole line, from its start through its line break (or the end of the text).
        var line: Range<Int>
        /// From the key through the value.
        var range: Range<Int>
        var value: Value
    }

    var sections: [Section] = [Section(path: [], isArrayElement: false, headerStart: 0, bodyStart: 0, end: 0)]
    var keyValues: [KeyValue] = []

    /// The document path of a `key = value` line's value: its section's, then its key's parts.
    func path(of keyValue: Int) -> [ValuePath.Component] {
        let line = keyValues[keyValue]
        return sections[line.section].path + line.key.map(ValuePath.Component.key)
    }
}
