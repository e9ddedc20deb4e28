import Foundation

/// A format of stored bytes: turns them into a document (a ``JSONValue`` tree) and back.
///
/// Codecs decide the format only. What a document means for the typed value (defaults, unknown keys,
/// dates) is decided once, by the root's document pipeline, for every store and format alike; how
/// dates and keys are encoded is the codec's ``coding``.
///
/// Loupe ships ``JSONCodec``, ``JSONCCodec``, ``TOMLCodec`` and ``PropertyListCodec``; `LoupeYAML` adds
/// `YAMLCodec`.
public protocol DocumentCodec: Sendable {
    /// The format's name in messages: `JSON`, `property list`.
    var formatName: String { get }

    /// The extensions of files in this format, the usual one first, without the dot: `["yaml", "yml"]`.
    /// A drop-in directory of layers reads the files that end in one of them. By default, `["json"]`.
    var fileExtensions: [String] { get }

    /// How the typed value maps to documents in this format: date and key strategies.
    var coding: DocumentCoding { get }

    /// The document that `data` holds.
    ///
    /// - Throws: ``DocumentSyntaxError`` (or any error) when `data` is not a document in this format.
    func parse(_ data: Data) throws -> JSONValue

    /// The bytes of `document` in this format.
    func serialize(_ document: JSONValue) throws -> Data

    /// The bytes of `document`, written as an edit of `previous`, the bytes the store holds, which hold
    /// `previousDocument`: a format people edit by hand changes only what changed, and keeps the rest of
    /// the text (order, spacing, comments) as it is. By default, ``serialize(_:)``.
    func serialize(_ document: JSONValue, editing previous: Data, holding previousDocument: JSONValue) throws -> Data

    /// The document `data` holds, read back before a write hands `data` to its store: the format's own reader,
    /// as ``parse(_:)`` reads. A codec whose edits start from a syntax tree may keep the one it reads here for
    /// the next edit of the same bytes. By default, ``parse(_:)``.
    func parseWritten(_ data: Data) throws -> JSONValue

    /// Where the part at `path` is written in `data`, a document in this format: the line and column of
    /// its value, or of the nearest part above it the text writes, for messages that point into a file
    /// (`loupe check`). By default nil: the format cannot say.
    func position(of path: ValuePath, in data: Data) -> TextPosition?

    /// Where the parts at `paths` are written in `data`, each as ``position(of:in:)`` says, the text read
    /// once. By default, ``position(of:in:)`` for each.
    func positions(of paths: [ValuePath], in data: Data) -> [TextPosition?]
}

extension DocumentCodec {
    public var coding: DocumentCoding { DocumentCoding() }

    public func serialize(
        _ document: JSONValue, editing previous: Data, holding previousDocument: JSONValue
    ) throws -> Data {
        try serialize(document)
    }

    public func parseWritten(_ data: Data) throws -> JSONValue {
        try parse(data)
    }

    public var fileExtensions: [String] { ["json"] }

    public func position(of path: ValuePath, in data: Data) -> TextPosition? { nil }

    public func positions(of paths: [ValuePath], in data: Data) -> [TextPosition?] {
        paths.map { position(of: $0, in: data) }
    }

    /// Parses `data`, or throws a ``SettingsError`` with code ``SettingsError/Code/corrupt`` naming `store` and,
    /// unless `quotingValues` is false, what the format's parser said.
    ///
    /// `quotingValues` is whether an error may quote what it found, which may be a value: false for a
    /// store whose every value is a secret. It is not revealing, a person's request to see a secret: an
    /// error never quotes one, whoever asks.
    ///
    /// Every store that keeps bytes parses through this, so every store reports bad bytes the same way. Empty
    /// bytes are whatever the format makes of them (an empty TOML or YAML file is an empty document), or an
    /// error saying the store is empty.
    public func parseDocument(_ data: Data, store: String, quotingValues: Bool = true) throws -> JSONValue {
        do {
            return try parse(data)
        } catch {
            if data.isEmpty {
                throw SettingsError(.corrupt, store: store, reason: "it is empty (expected a \(formatName) document)")
            }
            let detail = quotingValues ? ": \(error)" : ""
            throw SettingsError(
                .corrupt, store: store, reason: "it is not a valid \(formatName) document\(detail)", cause: error)
        }
    }

    /// Serializes `document` (as an edit of `previous`, the bytes the store holds and the document they
    /// hold, when given), and reads the bytes back with the format's own reader before handing them over.
    ///
    /// Every write goes through this, so no store writes bytes that do not read back as the document it
    /// means to store: where they would not (an editor's mistake), the write fails, and the store is left
    /// as it is.
    ///
    /// - Throws: ``SettingsError`` with code ``SettingsError/Code/unwritable`` naming `store` and, for an
    ///   edit the format refuses or bytes that would read back as another value, the path.
    public func serializeDocument(
        _ document: JSONValue, editing previous: (text: Data, document: JSONValue)? = nil, store: String
    ) throws -> Data {
        let data: Data
        do {
            if let previous {
                data = try serialize(document, editing: previous.text, holding: previous.document)
            } else {
                data = try serialize(document)
            }
        } catch let refusal as TextEditRefusal {
            throw SettingsError(
                .unwritable, path: ValuePath(refusal.path), store: store, reason: refusal.reason, cause: refusal)
        } catch {
            throw SettingsError(
                .unwritable, store: store, reason: "cannot write the value as \(formatName): \(error)", cause: error)
        }
        try checkReadsBack(data, as: document, store: store)
        return data
    }

    /// Reads `data` back with the format's reader: it must hold `document`, value for value.
    ///
    /// - Throws: ``SettingsError`` with code ``SettingsError/Code/unwritable`` naming `store` and the first
    ///   path that would read as something else. The message names no value: they may be secrets.
    public func checkReadsBack(_ data: Data, as document: JSONValue, store: String) throws {
        let readBack: JSONValue
        do {
            readBack = try parseWritten(data)
        } catch {
            throw SettingsError(
                .unwritable, store: store,
                reason:
                    "the \(formatName) text to be written does not read back (\(error)); nothing was written (this is a bug in Loupe, please report it)",
                cause: error)
        }
        // Compared whole first; the path of a difference is looked for only where there is one.
        if !readBack.isSameValue(as: document), let path = readBack.firstDifference(from: document) {
            throw SettingsError(
                .unwritable, path: path, store: store,
                reason:
                    "the \(formatName) text to be written reads back as another value at this path; nothing was written (this is a bug in Loupe, please report it)"
            )
        }
    }
}

/// Bytes that are not a document in a codec's format, with what the parser said.
public struct DocumentSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, in words, after where when the parser says: `line 3, column 7: expected a value`.
    public var reason: String
    /// What is wrong, without where: `expected a value`.
    public var problem: String
    /// Where in the text, when the parser says.
    public var position: TextPosition?

    /// Creates a syntax error.
    public init(_ reason: String) {
        self.reason = reason
        problem = reason
    }

    /// Creates a syntax error at `position`.
    public init(_ problem: String, at position: TextPosition) {
        reason = "line \(position.line), column \(position.column): \(problem)"
        self.problem = problem
        self.position = position
    }

    public var description: String { reason }

    /// Whether two errors say the same: their ``reason``, which holds the position where there is one.
    public static func == (lhs: DocumentSyntaxError, rhs: DocumentSyntaxError) -> Bool {
        lhs.reason == rhs.reason
    }
}

/// JSON, pretty-printed with sorted keys by default, so files diff well and people can edit them.
public struct JSONCodec: DocumentCodec {
    /// Whether output is indented (on by default). Keys are always sorted.
    public var prettyPrinted: Bool
    /// Whether comments (`//`, `/* */`) and trailing commas are read, as in VS Code's `settings.json`
    /// (off by default: JSON is strict). They are kept through writes, which edit the text in place.
    public var allowsComments: Bool
    /// How the typed value maps to JSON: date and key strategies.
    public var coding: DocumentCoding
    /// The syntax of the text written last, as its read-back read it: the next edit most often starts from it.
    private let lastWritten = SyntaxMemo<JSONSyntax>()

    /// Creates a JSON codec.
    ///
    /// - Parameters:
    ///   - prettyPrinted: Whether output is indented, one key per line (on by default).
    ///   - coding: Date and key strategies, as `JSONEncoder` and `JSONDecoder` take them.
    public init(prettyPrinted: Bool = true, coding: DocumentCoding = DocumentCoding()) {
        self.init(prettyPrinted: prettyPrinted, coding: coding, allowsComments: false)
    }

    /// Creates a JSON codec that reads comments and trailing commas when `allowsComments` is true, as in
    /// VS Code's `settings.json`; they are kept through writes, which edit the text in place.
    public init(prettyPrinted: Bool = true, coding: DocumentCoding = DocumentCoding(), allowsComments: Bool) {
        self.prettyPrinted = prettyPrinted
        self.coding = coding
        self.allowsComments = allowsComments
    }

    public var formatName: String { "JSON" }

    public func parse(_ data: Data) throws -> JSONValue {
        try JSONReader.document(from: Self.text(of: data), comments: allowsComments)
    }

    /// `data` read back before a write, its syntax read in the same pass and kept for the next edit of the
    /// same bytes.
    public func parseWritten(_ data: Data) throws -> JSONValue {
        let text = try Self.text(of: data)
        let (document, syntax) = try JSONSyntax.document(from: text, comments: allowsComments)
        lastWritten.remember(syntax, of: text)
        return document
    }

    /// The text of `data`: a byte-order mark is not part of it (an edit keeps it).
    private static func text(of data: Data) throws -> [UInt8] {
        guard String(validating: data, as: UTF8.self) != nil else {
            throw DocumentSyntaxError("it is not UTF-8 text")
        }
        return Array(TextEngine.withoutByteOrderMark(data))
    }

    public func serialize(_ document: JSONValue) throws -> Data {
        var data = Data(try JSONWriter.bytes(of: document, pretty: prettyPrinted))
        if prettyPrinted { data.append(0x0A) }  // end the file with a newline, as editors do
        return data
    }

    /// `document` as an edit of the JSON text `previous`: only the entries that changed are spliced, where
    /// they stand, in the style of their neighbours; key order, comments, indentation, spacing, line
    /// endings and a byte-order mark stay as the text has them.
    public func serialize(
        _ document: JSONValue, editing previous: Data, holding previousDocument: JSONValue
    ) throws -> Data {
        let editor = JSONEditor(allowsComments: allowsComments, lastWritten: lastWritten)
        return try TextEngine.edit(previous, from: previousDocument, to: document, with: editor)
    }
}

/// JSONC (`settings.jsonc`): JSON with `//` and `/* */` comments and trailing commas, as VS Code's settings
/// are written. Comments are kept through every write: a write edits the text in place, changing only the
/// values that changed. A file Loupe creates is written as pretty JSON.
public struct JSONCCodec: DocumentCodec {
    private var json: JSONCodec

    /// How the typed value maps to JSON: date and key strategies.
    public var coding: DocumentCoding { json.coding }

    /// Creates a JSONC codec.
    public init(coding: DocumentCoding = DocumentCoding()) {
        json = JSONCodec(coding: coding, allowsComments: true)
    }

    public var formatName: String { "JSONC" }

    public var fileExtensions: [String] { ["jsonc"] }

    public func parse(_ data: Data) throws -> JSONValue { try json.parse(data) }

    /// `data` read back before a write, its syntax kept for the next edit of the same bytes.
    public func parseWritten(_ data: Data) throws -> JSONValue { try json.parseWritten(data) }

    public func serialize(_ document: JSONValue) throws -> Data { try json.serialize(document) }

    public func serialize(
        _ document: JSONValue, editing previous: Data, holding previousDocument: JSONValue
    ) throws -> Data {
        try json.serialize(document, editing: previous, holding: previousDocument)
    }
}

/// Property lists, XML (readable) or binary (compact).
///
/// Property lists have no `null`, which a stored merge patch uses to remove a part the defaults have: it is
/// written as the string `$null`, as `NSKeyedArchiver` writes `nil` (a string `$null` of the value's own is
/// written `$$null`, and so on, so every string reads back as it was). Data and dates read from a property
/// list become what the typed value's coding expects of them: base64 strings and seconds since 2001 (as
/// `JSONEncoder` writes them by default).
public struct PropertyListCodec: DocumentCodec {
    /// The property-list flavour written; both are read.
    public var format: PropertyListSerialization.PropertyListFormat
    /// How the typed value maps to documents: date and key strategies.
    public var coding: DocumentCoding

    /// Creates a property-list codec writing `format` (XML by default).
    public init(format: PropertyListSerialization.PropertyListFormat = .xml, coding: DocumentCoding = DocumentCoding())
    {
        self.format = format
        self.coding = coding
    }

    public var formatName: String { format == .binary ? "binary property list" : "property list" }

    public var fileExtensions: [String] { ["plist"] }

    public func parse(_ data: Data) throws -> JSONValue {
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, format: nil)
        } catch {
            let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            throw DocumentSyntaxError(text)
        }
        return JSONValue(propertyList: object)
    }

    public func serialize(_ document: JSONValue) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: document.propertyListObject(), format: format, options: 0)
    }

    /// `document`, written over the property list `previous`: the data and dates it holds that the document
    /// holds unchanged (as base64 text, as seconds since 2001) are written back as data and dates, not as
    /// the text and numbers documents hold them as.
    public func serialize(
        _ document: JSONValue, editing previous: Data, holding previousDocument: JSONValue
    ) throws -> Data {
        let object = try? PropertyListSerialization.propertyList(from: previous, format: nil)
        return try PropertyListSerialization.data(
            fromPropertyList: document.propertyListObject(keeping: object), format: format, options: 0)
    }
}

extension DocumentCodec where Self == JSONCodec {
    /// Pretty-printed JSON with sorted keys.
    public static var json: JSONCodec { JSONCodec() }
}

extension DocumentCodec where Self == PropertyListCodec {
    /// An XML property list.
    public static var propertyList: PropertyListCodec { PropertyListCodec() }
    /// A binary property list.
    public static var binaryPropertyList: PropertyListCodec { PropertyListCodec(format: .binary) }
}

extension JSONValue {
    /// A document from a property-list object: data becomes base64 text, dates seconds since 2001, and an
    /// integer beyond `Int` (up to 2⁶⁴ − 1) an exact number.
    init(propertyList object: Any) {
        switch object {
        case let number as NSNumber
        where String(cString: number.objCType) == "Q" && number.uint64Value > UInt64(Int.max):
            self = .exactNumber(String(number.uint64Value))
        case let data as Data: self = .string(data.base64EncodedString())
        case let string as String: self = PropertyListNull.unescaping(string)
        case let date as Date: self = .double(date.timeIntervalSinceReferenceDate)
        case let array as [Any]: self = .array(array.map(JSONValue.init(propertyList:)))
        case let object as [String: Any]: self = .object(object.mapValues(JSONValue.init(propertyList:)))
        default: self = JSONValue(foundation: object)
        }
    }

    /// The property-list object for this document, with `null` as the string `$null`. Where `previous`
    /// (what the store holds) has data or a date at the same place that this document holds unchanged (as
    /// base64 text, as seconds since 2001), that data or date is kept.
    ///
    /// - Throws: ``DocumentSyntaxError`` for an integer a property list cannot hold (below −2⁶³ or above
    ///   2⁶⁴ − 1), naming it, rather than a rounded number.
    func propertyListObject(keeping previous: Any? = nil) throws -> Any {
        switch (self, previous) {
        case (.string(let text), let data as Data) where text == data.base64EncodedString():
            return data
        case (.double(let seconds), let date as Date) where seconds == date.timeIntervalSinceReferenceDate:
            return date
        case (.integer(let seconds), let date as Date) where Double(seconds) == date.timeIntervalSinceReferenceDate:
            return date
        case (.null, _):
            return PropertyListNull.marker
        case (.bool(let value), _):
            return value
        case (.integer(let value), _):
            return value
        case (.double(let value), _):
            return value
        case (.exactNumber(let text), _):
            if let integer = Int64(text) { return integer }
            if let integer = UInt64(text) { return integer }
            guard text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let number = Double(text) else {
                throw DocumentSyntaxError(
                    "a property list holds integers from -9223372036854775808 to 18446744073709551615; \(text) cannot be written exactly"
                )
            }
            return number
        case (.string(let value), _):
            return PropertyListNull.escaping(value)
        case (.array(let values), _):
            let old = previous as? [Any]
            return try values.indices.map { index in
                try values[index].propertyListObject(
                    keeping: old.flatMap { $0.indices.contains(index) ? $0[index] : nil })
            }
        case (.object(let values), _):
            let old = previous as? [String: Any]
            return try values.reduce(into: [String: Any]()) { result, member in
                result[member.key] = try member.value.propertyListObject(keeping: old?[member.key])
            }
        }
    }
}

/// How `null` is written where a property list (or `UserDefaults`) holds a document: the string `$null`,
/// and a string made of one or more `$` then `null` with one `$` more.
enum PropertyListNull {
    static let marker = "$null"

    private static func isMarkerLike(_ string: String) -> Bool {
        string.hasSuffix("null") && string.count > 4 && string.dropLast(4).allSatisfy { $0 == "$" }
    }

    static func escaping(_ string: String) -> String {
        isMarkerLike(string) ? "$" + string : string
    }

    static func unescaping(_ string: String) -> JSONValue {
        guard isMarkerLike(string) else { return .string(string) }
        return string == marker ? .null : .string(String(string.dropFirst()))
    }
}
