import Foundation

/// How a typed value maps to a document and back: the strategies `JSONEncoder` and `JSONDecoder` take,
/// applied the same way whatever format the document is stored in.
///
/// ```swift
/// let store = FileStore(path: "settings.json",
///                       format: JSONCodec(coding: DocumentCoding(dates: .iso8601, keys: .snakeCase)))
/// ```
public struct DocumentCoding: Sendable {
    /// How `Date`s are written.
    public var dateEncodingStrategy: JSONEncoder.DateEncodingStrategy
    /// How `Date`s are read.
    public var dateDecodingStrategy: JSONDecoder.DateDecodingStrategy
    /// How coding keys become document keys.
    public var keyEncodingStrategy: JSONEncoder.KeyEncodingStrategy
    /// How document keys become coding keys.
    public var keyDecodingStrategy: JSONDecoder.KeyDecodingStrategy
    /// Whether a `Double` or `Float` that is infinite or NaN is encoded (as that double), for a format that
    /// holds them (TOML's `inf` and `nan`); JSON holds none, and the encode fails as `JSONEncoder`'s does.
    package var encodesNonFiniteNumbers = false

    /// These strategies, encoding infinite and NaN numbers: for a format that holds them.
    package var encodingNonFiniteNumbers: DocumentCoding {
        var coding = self
        coding.encodesNonFiniteNumbers = true
        return coding
    }

    /// Strategies given one by one; the defaults are `JSONEncoder`'s and `JSONDecoder`'s.
    public init(
        dateEncodingStrategy: JSONEncoder.DateEncodingStrategy = .deferredToDate,
        dateDecodingStrategy: JSONDecoder.DateDecodingStrategy = .deferredToDate,
        keyEncodingStrategy: JSONEncoder.KeyEncodingStrategy = .useDefaultKeys,
        keyDecodingStrategy: JSONDecoder.KeyDecodingStrategy = .useDefaultKeys
    ) {
        self.dateEncodingStrategy = dateEncodingStrategy
        self.dateDecodingStrategy = dateDecodingStrategy
        self.keyEncodingStrategy = keyEncodingStrategy
        self.keyDecodingStrategy = keyDecodingStrategy
    }

    /// How dates are written and read, both ways at once.
    public enum Dates: Sendable {
        /// `Date`'s own `Codable` form: seconds since 2001 (the default).
        case deferredToDate
        /// Seconds since 1970.
        case secondsSince1970
        /// Milliseconds since 1970.
        case millisecondsSince1970
        /// ISO 8601 text, such as `2026-11-23T10:00:00Z`.
        case iso8601
    }

    /// How keys are written and read, both ways at once.
    public enum Keys: Sendable {
        /// The coding keys as they are (the default).
        case useDefaultKeys
        /// `camelCase` coding keys as `snake_case` document keys.
        case snakeCase
    }

    /// Strategies for both directions at once.
    public init(dates: Dates = .deferredToDate, keys: Keys = .useDefaultKeys) {
        switch dates {
        case .deferredToDate: (dateEncodingStrategy, dateDecodingStrategy) = (.deferredToDate, .deferredToDate)
        case .secondsSince1970: (dateEncodingStrategy, dateDecodingStrategy) = (.secondsSince1970, .secondsSince1970)
        case .millisecondsSince1970:
            (dateEncodingStrategy, dateDecodingStrategy) = (.millisecondsSince1970, .millisecondsSince1970)
        case .iso8601: (dateEncodingStrategy, dateDecodingStrategy) = (.iso8601, .iso8601)
        }
        switch keys {
        case .useDefaultKeys: (keyEncodingStrategy, keyDecodingStrategy) = (.useDefaultKeys, .useDefaultKeys)
        case .snakeCase: (keyEncodingStrategy, keyDecodingStrategy) = (.convertToSnakeCase, .convertFromSnakeCase)
        }
    }

    /// The document for `value`.
    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        try encode(value, memo: nil)
    }

    /// The document for `value`, reusing from `memo` the documents of the parts that have not changed
    /// since the last encode with it (see ``DocumentEncoder``).
    func encode<T: Encodable>(_ value: T, memo: DocumentEncoder.Memo?) throws -> JSONValue {
        try encodeNotingLast(value, memo: memo).document
    }

    /// The document for `value` as ``encode(_:memo:)`` makes it, and the document of the last encode with
    /// `memo` it started from (nil when it started from none): the two share their storage if and only if
    /// they are the same (see ``DocumentEncoder``).
    func encodeNotingLast<T: Encodable>(
        _ value: T, memo: DocumentEncoder.Memo?
    ) throws -> (document: JSONValue, last: JSONValue?) {
        if let encoded = try DocumentEncoder.encodeNotingLast(value, coding: self, memo: memo) {
            return encoded
        }
        return (try encodeWithJSONEncoder(value), nil)
    }

    /// The document for `value`, by way of `JSONEncoder`'s text.
    func encodeWithJSONEncoder<T: Encodable>(_ value: T) throws -> JSONValue {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = dateEncodingStrategy
        encoder.keyEncodingStrategy = keyEncodingStrategy
        return try JSONReader.document(from: Array(try encoder.encode(value)))
    }

    /// The value `document` encodes.
    ///
    /// - Throws: `DecodingError`, whose coding path names the part that does not fit.
    public func decode<T: Decodable>(_ type: T.Type, from document: JSONValue) throws -> T {
        try DocumentDecoder.decode(type, from: document, coding: self)
    }

    /// The value `document` encodes, recording in `reads` which of its keys the value read.
    func decode<T: Decodable>(_ type: T.Type, from document: JSONValue, reads: ReadKeys?) throws -> T {
        try DocumentDecoder.decode(type, from: document, coding: self, reads: reads)
    }
}

extension DocumentCoding {
    /// The four strategies as a value that can be compared: nil when one of them is a closure or a
    /// formatter, which cannot be.
    struct ComparableStrategies: Hashable {
        var dateEncoding: UInt8
        var dateDecoding: UInt8
        var keyEncoding: UInt8
        var keyDecoding: UInt8
    }

    /// The strategies, when all four can be compared.
    var comparableStrategies: ComparableStrategies? {
        let dateEncoding: UInt8? =
            switch dateEncodingStrategy {
            case .deferredToDate: 0
            case .secondsSince1970: 1
            case .millisecondsSince1970: 2
            case .iso8601: 3
            default: nil
            }
        let dateDecoding: UInt8? =
            switch dateDecodingStrategy {
            case .deferredToDate: 0
            case .secondsSince1970: 1
            case .millisecondsSince1970: 2
            case .iso8601: 3
            default: nil
            }
        let keyEncoding: UInt8? =
            switch keyEncodingStrategy {
            case .useDefaultKeys: 0
            case .convertToSnakeCase: 1
            default: nil
            }
        let keyDecoding: UInt8? =
            switch keyDecodingStrategy {
            case .useDefaultKeys: 0
            case .convertFromSnakeCase: 1
            default: nil
            }
        guard let dateEncoding, let dateDecoding, let keyEncoding, let keyDecoding else { return nil }
        return ComparableStrategies(
            dateEncoding: dateEncoding, dateDecoding: dateDecoding, keyEncoding: keyEncoding, keyDecoding: keyDecoding)
    }
}
