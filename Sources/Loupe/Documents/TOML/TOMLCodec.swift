import Foundation

/// TOML 1.0.0 (`settings.toml`), the format people pick for configuration they write by hand.
///
/// ```swift
/// let store = FileStore(path: "/etc/app/settings.toml", format: TOMLCodec())
/// ```
///
/// It reads the whole of TOML 1.0.0, every rule about defining a key or a table twice included, with an
/// error naming the line and column for anything else. A TOML date-time decodes to a `Date` (the codec's coding is ISO 8601), and a `Date` is
/// written as a TOML date-time. Local dates, times and date-times are read as their text, and written back
/// as the same TOML values; a quoted string in a date's form stays a quoted string when it changes. TOML has no null: a document that needs one (a value removed over a lower
/// layer that holds it) cannot be written, and the write is refused naming where.
///
/// A write to a file edits its text in place: comments, blank lines and the order of keys and sections
/// stay. A file Loupe creates is written in a clean style (tables after values, keys sorted).
public struct TOMLCodec: DocumentCodec {
    /// How the typed value maps to TOML: ISO 8601 dates by default, so that a `Date` is a TOML date-time;
    /// an infinite or NaN `Double` is TOML's `inf` or `nan`.
    public var coding: DocumentCoding {
        get { strategies.encodingNonFiniteNumbers }
        set { strategies = newValue }
    }
    private var strategies: DocumentCoding
    /// The syntax of the text written last, as its read-back read it: the next edit most often starts from it.
    private let lastWritten = SyntaxMemo<TOMLSyntax>()

    /// Creates a TOML codec.
    ///
    /// - Parameter coding: Date and key strategies; ISO 8601 dates by default.
    public init(coding: DocumentCoding = DocumentCoding(dates: .iso8601)) {
        strategies = coding
    }

    public var formatName: String { "TOML" }

    public var fileExtensions: [String] { ["toml"] }

    public func parse(_ data: Data) throws -> JSONValue {
        try TOMLReader.document(from: Self.text(of: data))
    }

    /// `data` read back before a write, with its syntax kept for the next edit of the same bytes.
    public func parseWritten(_ data: Data) throws -> JSONValue {
        let text = try Self.text(of: data)
        let (document, syntax) = try TOMLReader.syntax(of: text)
        lastWritten.remember(syntax, of: text)
        return document
    }

    /// The text of `data`: a byte-order mark is not part of it (an edit keeps it); an empty file is an empty
    /// table.
    private static func text(of data: Data) throws -> [UInt8] {
        let text = TextEngine.withoutByteOrderMark(data)
        guard String(validating: text, as: UTF8.self) != nil else {
            throw DocumentSyntaxError("it is not UTF-8 text")
        }
        return Array(text)
    }

    public func serialize(_ document: JSONValue) throws -> Data {
        Data(try TOMLWriter.text(of: document).utf8)
    }

    /// `document` as an edit of the TOML text `previous`: changed values are replaced where
    /// they stand in their own spelling, removed keys go with their lines and own comments, new keys join
    /// their table's section, arrays and inline tables keep their layout, and comments, blank lines and
    /// order stay. TOML has no null: a document that needs one is refused, naming where.
    public func serialize(
        _ document: JSONValue, editing previous: Data, holding previousDocument: JSONValue
    ) throws -> Data {
        try TextEngine.edit(
            previous, from: previousDocument, to: document,
            with: TOMLEditor(document: document, lastWritten: lastWritten))
    }
}
