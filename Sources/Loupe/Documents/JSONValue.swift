import Foundation

/// A JSON value: what string paths read and write, and what the CLI prints.
public enum JSONValue: Sendable, Hashable {
    /// `null`; also what a `nil` optional reads as.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without a fraction or exponent.
    case integer(Int)
    /// Any other number that a `Double` holds as written (`0.5`, `1e-7`, `0.1`: its shortest spelling is
    /// the same number).
    case double(Double)
    /// A number that neither `Int` nor `Double` holds as written, kept as its text:
    /// `18446744073709551615`, `12345678901234567.89`, `1e-400`. Writing it writes the text; a `UInt64`,
    /// a `Decimal` or a `Double` field reads it as exactly as it can hold it.
    case exactNumber(String)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; keys are unordered (printing sorts them).
    case object([String: JSONValue])

    /// Parses JSON text (any value, not only objects and arrays).
    ///
    /// - Throws: ``DocumentSyntaxError`` naming the line and column of what is wrong.
    public init(parsing text: String) throws {
        self = try JSONReader.document(from: Array(text.utf8))
    }

    /// The JSON encoding of `value`, as a tree.
    public init(encoding value: some Encodable) throws {
        self = try DocumentCoding().encode(value)
    }

    /// Decodes `type` from this tree.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try DocumentCoding().decode(type, from: self)
    }

    /// This value as JSON text: compact, or pretty-printed with sorted keys.
    ///
    /// NaN and the infinities, which TOML and YAML files hold and JSON has no spelling for, are written as
    /// TOML spells them (`nan`, `inf`, `-inf`): what is shown to people, not JSON another program reads.
    public func jsonText(pretty: Bool = false) -> String {
        (try? JSONWriter.text(of: spellingNonFiniteNumbers(), pretty: pretty)) ?? "null"
    }

    /// This value with each NaN or infinity replaced by its TOML spelling, which the writer copies as it is.
    private func spellingNonFiniteNumbers() -> JSONValue {
        switch self {
        case .double(let number) where !number.isFinite:
            return .exactNumber(number.isNaN ? "nan" : number < 0 ? "-inf" : "inf")
        case .array(let elements) where elements.contains(where: \.holdsNonFiniteNumber):
            return .array(elements.map { $0.spellingNonFiniteNumbers() })
        case .object(let members) where members.values.contains(where: \.holdsNonFiniteNumber):
            return .object(members.mapValues { $0.spellingNonFiniteNumbers() })
        default:
            return self
        }
    }

    private var holdsNonFiniteNumber: Bool {
        switch self {
        case .double(let number): !number.isFinite
        case .array(let elements): elements.contains(where: \.holdsNonFiniteNumber)
        case .object(let members): members.values.contains(where: \.holdsNonFiniteNumber)
        default: false
        }
    }

    /// This value as compact JSON bytes.
    func data() throws -> Data {
        Data(try JSONWriter.bytes(of: self, pretty: false))
    }

    /// The kind of value, for messages: `an integer`, `a string`.
    public var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .double, .exactNumber: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    var foundation: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): value
        case .integer(let value): value
        case .double(let value): value
        case .exactNumber(let text): NSDecimalNumber(string: text)
        case .string(let value): value
        case .array(let values): values.map(\.foundation)
        case .object(let values): values.mapValues(\.foundation)
        }
    }

    init(foundation object: Any) {
        switch object {
        case let number as NSNumber:
            switch String(cString: number.objCType) {
            case "c", "B": self = .bool(number.boolValue)
            case "f", "d": self = .double(number.doubleValue)
            default: self = .integer(number.intValue)
            }
        case let string as String: self = .string(string)
        case let array as [Any]: self = .array(array.map(JSONValue.init(foundation:)))
        case let object as [String: Any]: self = .object(object.mapValues(JSONValue.init(foundation:)))
        default: self = .null
        }
    }
}

extension JSONValue: Codable {
    /// Decodes whatever value the decoder holds: JSON, a property list, YAML.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as it is.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .exactNumber(let text):
            // An encoder other than Loupe's own (which writes the tree as it is) gets the nearest it can hold.
            if let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) {
                try container.encode(decimal)
            } else {
                try container.encode(Double(text) ?? 0)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON text.
    public var description: String { jsonText() }
}
