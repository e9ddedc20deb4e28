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
/// as the same TOML values. TOML has no null: a document that needs one (a value removed over a lower
/// layer that holds it) cannot be written, and the write is refused naming where.
///
/// A write to a file edits its text in place: comments, blank lines and the order of keys and sections
/// stay. A file Loupe creates is written in a clean style (tables after values, keys sorted).
public struct TOMLCodec: DocumentCodec {
    /// How the typed value maps to TOML: ISO 8601 dates by default, so that a `Date` is a TOML date-time.
    public var coding: DocumentCoding
    /// Where each part of the text written last is, so that the next edit of that text does not read it
    /// again.
    private let lastEdit = TOMLTextEditor.Memo()

    /// Creates a TOML codec.
    ///
    /// - Parameter coding: Date and key strategies; ISO 8601 dates by default.
    public init(coding: DocumentCoding = DocumentCoding(dates: .iso8601)) {
        self.coding = coding
    }

    public var formatName: String { "TOML" }

    public var fileExtensions: [String] { ["toml"] }

    public func parse(_ data: Data) throws -> JSONValue {
        guard String(validating: data, as: UTF8.self) != nil else {
            throw DocumentSyntaxError("it is not UTF-8 text")
        }
        return try TOMLReader.document(from: Array(data))
    }

    public func serialize(_ document: JSONValue) throws -> Data {
        Data(try TOMLWriter.text(of: document).utf8)
    }

    /// `document` as an edit of the TOML text `previous`: changed values are replaced where they stand,
    /// removed keys go with their line, new keys join their table's section, and comments, blank lines and
    /// order stay; a changed value keeps its spelling where it can (a literal string stays literal, an
    /// integer keeps its base or grouping), and an array of tables gains or loses `[[…]]` sections. What
    /// cannot be edited in place (a new table inside an element of an array of tables that is not its last)
    /// is written anew.
    public func serialize(_ document: JSONValue, editing previous: Data, holding previousDocument: JSONValue) throws -> Data {
        // What the edit cannot make (what TOML cannot hold among it) is written anew, or refused as a fresh
        // write refuses it.
        if let edited = TOMLTextEditor.edit(previous, into: document, memo: lastEdit) { return edited }
        return try serialize(document)
    }
}
