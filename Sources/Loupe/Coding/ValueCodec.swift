import Foundation

/// How a store turns a value into bytes and back: JSON, property lists, or a format added by another
/// module (`LoupeYAML`).
///
/// A codec decides the format only; the store decides where the bytes go and how they are written.
public protocol ValueCodec: Sendable {
    /// The format's name in messages: `JSON`, `property list`.
    var formatName: String { get }

    /// The bytes for `value`.
    func encode<T: Encodable>(_ value: T) throws -> Data

    /// The value `data` encodes. Errors are `DecodingError`s where the format can say where it failed.
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T

    /// Describes, for an error message, the encoded value found at `codingPath` in `data`
    /// (`String "80a"`), or nil when the codec cannot tell.
    func describeValue(at codingPath: [any CodingKey], in data: Data) -> String?
}

extension ValueCodec {
    public func describeValue(at codingPath: [any CodingKey], in data: Data) -> String? { nil }
}

/// JSON, pretty-printed with sorted keys by default, so files diff well and people can edit them.
public struct JSONCodec: ValueCodec {
    /// Whether output is indented and keys sorted (on by default).
    public var prettyPrinted: Bool

    /// Creates a JSON codec.
    public init(prettyPrinted: Bool = true) {
        self.prettyPrinted = prettyPrinted
    }

    public var formatName: String { "JSON" }

    /// The bytes for `value`: what Foundation's `JSONEncoder` writes with `.sortedKeys` (and, pretty,
    /// `.prettyPrinted` and `.withoutEscapingSlashes`), written several times faster by Loupe's own
    /// streaming encoder.
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        try encode(value, memo: nil)
    }

    /// Encodes `value`, reusing from `memo` the bytes of large collections unchanged since the last encode.
    func encode<T: Encodable>(_ value: T, memo: JSONEncodingMemo?) throws -> Data {
        var data: Data
        if let bytes = try JSONStreamEncoder.encode(value, pretty: prettyPrinted, memo: memo) {
            data = Data(bytes)
        } else {
            // A value that uses the Codable API in a way the streaming encoder leaves to Foundation.
            let encoder = JSONEncoder()
            encoder.outputFormatting = prettyPrinted ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys]
            data = try encoder.encode(value)
        }
        if prettyPrinted { data.append(0x0A) }  // end the file with a newline, as editors do
        return data
    }

    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try JSONDecoder().decode(type, from: data)
    }

    public func describeValue(at codingPath: [any CodingKey], in data: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else { return nil }
        return describeFoundValue(walk(object, codingPath))
    }
}

/// Property lists, XML (readable) or binary (compact).
public struct PropertyListCodec: ValueCodec {
    /// The property-list flavour written; both are read.
    public var format: PropertyListSerialization.PropertyListFormat

    /// Creates a property-list codec writing `format` (XML by default).
    public init(format: PropertyListSerialization.PropertyListFormat = .xml) {
        self.format = format
    }

    public var formatName: String { format == .binary ? "binary property list" : "property list" }

    public func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = format
        return try encoder.encode(value)
    }

    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try PropertyListDecoder().decode(type, from: data)
    }

    public func describeValue(at codingPath: [any CodingKey], in data: Data) -> String? {
        guard let object = try? PropertyListSerialization.propertyList(from: data, format: nil) else { return nil }
        return describeFoundValue(walk(object, codingPath))
    }
}

extension ValueCodec where Self == JSONCodec {
    /// Pretty-printed JSON with sorted keys.
    public static var json: JSONCodec { JSONCodec() }
}

extension ValueCodec where Self == PropertyListCodec {
    /// An XML property list.
    public static var propertyList: PropertyListCodec { PropertyListCodec() }
    /// A binary property list.
    public static var binaryPropertyList: PropertyListCodec { PropertyListCodec(format: .binary) }
}

/// The object at `codingPath` inside a decoded JSON or property-list tree.
private func walk(_ object: Any, _ codingPath: [any CodingKey]) -> Any? {
    var current: Any? = object
    for key in codingPath {
        if let index = key.intValue, let array = current as? [Any] {
            current = array.indices.contains(index) ? array[index] : nil
        } else if let dictionary = current as? [String: Any] {
            current = dictionary[key.stringValue]
        } else {
            return nil
        }
    }
    return current
}

/// `String "80a"`, `Int 3`, `an object`, … for an error message.
private func describeFoundValue(_ value: Any?) -> String? {
    switch value {
    case nil: return nil
    case is NSNull: return "null"
    case let string as String:
        let shown = string.count > 40 ? String(string.prefix(40)) + "…" : string
        return "String \(String(reflecting: shown))"
    case let number as NSNumber:
        // Booleans decode as NSNumbers of Objective-C type `c` on every platform.
        if String(cString: number.objCType) == "c" { return "Bool \(number.boolValue)" }
        return "number \(number)"
    case is [Any]: return "an array"
    case is [String: Any]: return "an object"
    case is Data: return "data"
    case is Date: return "a date"
    default: return "a value"
    }
}
