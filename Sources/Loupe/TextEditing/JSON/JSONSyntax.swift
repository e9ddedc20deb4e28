/// A JSON or JSONC text read as a lossless syntax tree: where every value, key, comma and comment stands,
/// so that an editor can change one entry by splicing the text and copy every other byte as it is.
///
/// Every byte of the text belongs to exactly one of these places:
/// - the text before the root value and after it (white space, comments, a line break at the end);
/// - a scalar value's raw text (``Node/range``), copied as written (`1.50`, `"\u00e9"`);
/// - in an array or object: its brackets; each entry's *lead* (from the end of the entry before, or the
///   opening bracket, to the entry's first byte: line breaks, indentation, the comments on their own lines
///   above it); the entry itself (a key, its separator and its value, or an element); its *tail* (from the
///   end of its value to ``Entry/tailEnd``: its comma, and the comments on its line, before or after the
///   comma); and the trivia between the last entry's tail and the closing bracket.
///
/// Reading is one pass over the text, each byte looked at a bounded number of times; keys are decoded once
/// and each object indexes its entries by key, so finding the member an edit names costs the same in a
/// 40,000-key object as in a small one.
struct JSONSyntax: Sendable {
    /// A value: its raw text, and for an array or object, its entries.
    struct Node: Sendable {
        /// The value's text, from its first byte to its last (the brackets of an array or object).
        var range: Range<Int>
        /// Where the line the value starts on starts.
        var lineStart: Int
        /// The array or object the value is; nil for a scalar.
        var container: Container?
    }

    /// An array or object.
    struct Container: Sendable {
        var isObject: Bool
        /// The offsets of the opening and closing brackets.
        var open: Int
        var close: Int
        /// Where the line of the opening bracket starts.
        var openLineStart: Int
        /// Whether the closing bracket is on another line than the opening one.
        var spansLines: Bool
        var entries: [Entry]
        /// An object's entries by key, where the tree was read indexing keys; else keys are looked for in
        /// the entries.
        var keys: [String: Int]?

        /// Where the lead of entry `index` starts: after the tail of the entry before, or the opening bracket.
        func leadStart(of index: Int) -> Int {
            index == 0 ? open + 1 : entries[index - 1].tailEnd
        }
    }

    /// A member of an object or an element of an array, with its tail.
    struct Entry: Sendable {
        /// An object member's key, decoded; nil for an array element.
        var key: String?
        /// The entry's first byte: the key's opening quote, or the element's first byte.
        var start: Int
        /// Where the line `start` is on starts.
        var lineStart: Int
        /// The end of the key (`start` for an element): the separator runs from here to the value.
        var keyEnd: Int
        var value: Node
        /// The offset of the comma after the value, if there is one.
        var comma: Int?
        /// The end of the tail: after the comma and the comments on the value's line; before the line break.
        var tailEnd: Int
    }

    let text: [UInt8]
    let root: Node
    /// The file's indentation unit: what an entry on its own line adds to its container's indentation
    /// (two spaces where nothing shows it).
    let indentUnit: [UInt8]
    /// How the file separates a key from its value (`": "` where nothing shows it).
    let keySeparator: [UInt8]
    /// Whether the document has no white space at all between its tokens (a compact file).
    let isCompact: Bool

    /// Reads `text`, which must hold one JSON value (JSONC when `comments`).
    ///
    /// - Throws: ``DocumentSyntaxError`` where the text is not JSON (or JSONC).
    /// With `indexingKeys`, each object's entries are indexed by key as they are read: for an edit that looks
    /// up many keys. A few look-ups scan the entries instead, which costs less than an index of every object.
    init(_ text: [UInt8], comments: Bool, indexingKeys: Bool = true) throws {
        var parser = Parser(text: text, comments: comments, indexingKeys: indexingKeys, buildingValues: false)
        self.init(text, root: try parser.document().node, parser: parser)
    }

    /// Reads `text` into both the document it holds and its syntax tree, in one pass: a write's read-back
    /// (``JSONCodec/parseWritten(_:)``), whose tree the next edit of the same text starts from.
    ///
    /// The document is the one ``JSONReader`` reads, and the same texts are refused: scalars and keys are
    /// read by its code, and keys written twice refused by it. The tree indexes no keys.
    ///
    /// - Throws: ``DocumentSyntaxError`` where the text is not JSON (or JSONC).
    static func document(from text: [UInt8], comments: Bool) throws -> (document: JSONValue, syntax: JSONSyntax) {
        var parser = Parser(text: text, comments: comments, indexingKeys: false, buildingValues: true)
        let (root, document) = try parser.document()
        guard let document else { preconditionFailure("a parser building values yields the document") }
        return (document, JSONSyntax(text, root: root, parser: parser))
    }

    private init(_ text: [UInt8], root: Node, parser: Parser) {
        self.text = text
        self.root = root
        indentUnit = parser.unit ?? Array("  ".utf8)
        keySeparator = parser.separator ?? Array(": ".utf8)
        isCompact = root.container != nil && !parser.sawSpace
    }
}

extension JSONSyntax {
    /// The one-pass reader that builds the tree.
    fileprivate struct Parser {
        let text: [UInt8]
        let comments: Bool
        var position = 0
        /// Where the line `position` is on starts, and how many line breaks came before it.
        var lineStart = 0
        var lines = 0
        var unit: [UInt8]?
        var separator: [UInt8]?
        /// Whether white space was seen inside the root value.
        var sawSpace = false
        /// Whether objects' entries are indexed by key.
        let indexesKeys: Bool
        /// Whether the values are read too (each node's ``JSONValue`` beside it), as ``JSONReader`` reads them.
        let buildsValues: Bool
        private var depth = 0

        init(text: [UInt8], comments: Bool, indexingKeys: Bool, buildingValues: Bool) {
            self.text = text
            self.comments = comments
            indexesKeys = indexingKeys
            buildsValues = buildingValues
        }

        /// The text's one value, with the trivia around it; its document where values are read.
        mutating func document() throws -> (node: Node, value: JSONValue?) {
            try skipTrivia()
            guard position < text.count else { throw DocumentSyntaxError("the text holds no JSON value") }
            let root = try value(depth: 0)
            try skipTrivia()
            guard position == text.count else { throw error("unexpected text after the document") }
            return root
        }

        func error(_ reason: String) -> DocumentSyntaxError {
            DocumentSyntaxError("at byte \(position): \(reason)")
        }

        /// Moves past white space and comments.
        mutating func skipTrivia() throws {
            while position < text.count {
                switch text[position] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                    position += 1
                    if depth > 0 { sawSpace = true }
                case UInt8(ascii: "\n"):
                    position += 1
                    newLine()
                    if depth > 0 { sawSpace = true }
                case UInt8(ascii: "/"):
                    guard comments else { throw error("a comment in strict JSON") }
                    let commentStart = position
                    position = try JSONSyntax.commentEnd(in: text, at: position)
                    for offset in commentStart..<position where text[offset] == UInt8(ascii: "\n") {
                        lineStart = offset + 1
                        lines += 1
                    }
                default:
                    return
                }
            }
        }

        private mutating func newLine() {
            lineStart = position
            lines += 1
        }

        /// The value at `position`; its ``JSONValue`` too where values are read.
        mutating func value(depth: Int) throws -> (node: Node, value: JSONValue?) {
            guard depth <= JSONReader.maximumDepth else { throw error("nested too deeply") }
            guard position < text.count else { throw error("unexpected end of the text") }
            let start = position
            let line = lineStart
            switch text[position] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let (container, value) = try self.container(depth: depth)
                return (Node(range: start..<position, lineStart: line, container: container), value)
            default:
                if buildsValues {
                    let (value, end) = try JSONReader.scalar(in: text, at: start)
                    position = end
                    return (Node(range: start..<position, lineStart: line, container: nil), value)
                }
                if text[position] == UInt8(ascii: "\"") {
                    try skipString()
                } else {
                    while position < text.count, !JSONSyntax.endsScalar(text[position]) { position += 1 }
                    guard position > start else { throw error("expected a value") }
                }
                return (Node(range: start..<position, lineStart: line, container: nil), nil)
            }
        }

        private mutating func skipString() throws {
            position += 1
            while position < text.count {
                switch text[position] {
                case UInt8(ascii: "\""):
                    position += 1
                    return
                case UInt8(ascii: "\\"): position += 2
                default: position += 1
                }
            }
            throw error("a string that never ends")
        }

        /// The array or object at `position`; its ``JSONValue`` too where values are read.
        private mutating func container(depth: Int) throws -> (container: Container, value: JSONValue?) {
            let open = position
            let openLineStart = lineStart
            let openLines = lines
            let isObject = text[open] == UInt8(ascii: "{")
            let closing = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            position += 1
            self.depth += 1
            defer { self.depth -= 1 }
            var entries: [Entry] = []
            var keys: [String: Int] = [:]
            var members: [(key: String, value: JSONValue, offset: Int)] = []
            var elements: [JSONValue] = []
            while true {
                try skipTrivia()
                guard position < text.count else {
                    throw error("unexpected end of the text in an \(isObject ? "object" : "array")")
                }
                if text[position] == closing {
                    if !comments, !entries.isEmpty { throw error("a comma after the last entry in strict JSON") }
                    break
                }
                let start = position
                let entryLine = lineStart
                noteIndentation(entryAt: start, lineStart: entryLine, containerLineStart: openLineStart)
                var key: String?
                var keyEnd = start
                if isObject {
                    guard text[position] == UInt8(ascii: "\"") else { throw error("expected a key in quotes") }
                    guard case (.string(let decoded), let end) = try JSONReader.scalar(in: text, at: start) else {
                        preconditionFailure("a quote starts a string")
                    }
                    position = end
                    keyEnd = end
                    key = decoded
                    try skipTrivia()
                    guard position < text.count, text[position] == UInt8(ascii: ":") else {
                        throw error("expected : after a key")
                    }
                    position += 1
                    try skipTrivia()
                    if separator == nil,
                        text[keyEnd..<position].allSatisfy({ $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: " ") })
                    {
                        separator = Array(text[keyEnd..<position])
                    }
                    if indexesKeys { keys[decoded] = entries.count }
                }
                let (value, decoded) = try self.value(depth: depth + 1)
                if let decoded {
                    if let key { members.append((key, decoded, start)) } else { elements.append(decoded) }
                }
                let valueEnd = position
                try skipTrivia()
                var comma: Int?
                if position < text.count, text[position] == UInt8(ascii: ",") {
                    comma = position
                    position += 1
                } else if position >= text.count || text[position] != closing {
                    throw error("expected , or \(Character(Unicode.Scalar(closing)))")
                }
                let tailEnd = JSONSyntax.tailEnd(in: text, from: comma.map { $0 + 1 } ?? valueEnd)
                entries.append(
                    Entry(
                        key: key, start: start, lineStart: entryLine, keyEnd: keyEnd, value: value, comma: comma,
                        tailEnd: tailEnd))
                if comma == nil { break }  // at the closing bracket
            }
            let close = position
            position += 1
            let container = Container(
                isObject: isObject, open: open, close: close, openLineStart: openLineStart,
                spansLines: lines != openLines,
                entries: entries, keys: isObject && indexesKeys ? keys : nil)
            guard buildsValues else { return (container, nil) }
            return (container, isObject ? try JSONReader.object(of: members, in: text) : .array(elements))
        }

        /// The first entry seen on a line of its own shows the file's indentation unit: what its
        /// indentation adds to its container's.
        private mutating func noteIndentation(entryAt start: Int, lineStart entryLine: Int, containerLineStart: Int) {
            guard unit == nil, entryLine != containerLineStart else { return }
            let indentation = JSONSyntax.indentation(in: text, lineStart: entryLine)
            guard entryLine + indentation.count == start else { return }
            let outer = JSONSyntax.indentation(in: text, lineStart: containerLineStart)
            if indentation.count > outer.count, indentation.starts(with: outer) {
                unit = Array(indentation.dropFirst(outer.count))
            }
        }
    }

    /// Whether `byte` ends a scalar's raw text (`true`, `-1.5e3`).
    fileprivate static func endsScalar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ":"), UInt8(ascii: " "),
            UInt8(ascii: "\t"),
            UInt8(ascii: "\r"), UInt8(ascii: "\n"), UInt8(ascii: "/"):
            true
        default: false
        }
    }

    /// The end of the comment that starts at `offset` (`//` up to its line break, `/* */` through `*/`).
    static func commentEnd(in text: [UInt8], at offset: Int) throws -> Int {
        guard offset + 1 < text.count else { throw DocumentSyntaxError("at byte \(offset): unexpected '/'") }
        switch text[offset + 1] {
        case UInt8(ascii: "/"):
            var end = offset + 2
            while end < text.count, text[end] != UInt8(ascii: "\n") { end += 1 }
            if end > offset + 2, end < text.count, text[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            return end
        case UInt8(ascii: "*"):
            var end = offset + 2
            while end + 1 < text.count {
                if text[end] == UInt8(ascii: "*"), text[end + 1] == UInt8(ascii: "/") { return end + 2 }
                end += 1
            }
            throw DocumentSyntaxError("at byte \(offset): a comment that never ends")
        default:
            throw DocumentSyntaxError("at byte \(offset): unexpected '/'")
        }
    }

    /// The end of an entry's tail, from `offset` (after its comma, or after its value when it has none):
    /// the comments on the same line belong to the entry when nothing but its line break, the end of the
    /// text or its container's closing bracket follows them; where another entry follows on the line,
    /// they are that entry's.
    fileprivate static func tailEnd(in text: [UInt8], from offset: Int) -> Int {
        var position = offset
        var end = offset
        while true {
            while position < text.count, text[position] == UInt8(ascii: " ") || text[position] == UInt8(ascii: "\t") {
                position += 1
            }
            guard position < text.count else { return position }
            switch text[position] {
            case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                return position
            case UInt8(ascii: "/"):
                guard let commentEnd = try? commentEnd(in: text, at: position),
                    !text[position..<commentEnd].contains(UInt8(ascii: "\n"))
                else { return end }
                position = commentEnd
                end = commentEnd
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                return end
            default:
                return offset
            }
        }
    }

    /// The spaces and tabs that start the line starting at `lineStart`.
    static func indentation(in text: [UInt8], lineStart: Int) -> ArraySlice<UInt8> {
        var end = lineStart
        while end < text.count, text[end] == UInt8(ascii: " ") || text[end] == UInt8(ascii: "\t") { end += 1 }
        return text[lineStart..<end]
    }

    /// The node at `path` (components of the document the text holds).
    func node(at path: [ValuePath.Component]) throws -> Node {
        var node = root
        for (depth, component) in path.enumerated() {
            guard let container = node.container, let index = container.index(of: component) else {
                throw TextEditRefusal(path: Array(path[...depth]), reason: "the JSON text holds nothing at this path")
            }
            node = container.entries[index].value
        }
        return node
    }
}

extension JSONSyntax.Container {
    /// The index of the member `key` (the last, where a key is written twice, as readers take it).
    func index(ofKey key: String) -> Int? {
        if let keys { return keys[key] }
        return entries.lastIndex { $0.key == key }
    }

    /// The index of the entry `component` names.
    func index(of component: ValuePath.Component) -> Int? {
        switch component {
        case .key(let key): isObject ? index(ofKey: key) : nil
        case .index(let index): !isObject && entries.indices.contains(index) ? index : nil
        }
    }
}
