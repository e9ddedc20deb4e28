import Foundation

/// Decodes a value straight from a document tree, as `JSONDecoder` decodes the same document written as
/// JSON text, and can record which keys of the document the value read.
///
/// Why not `JSONDecoder`: the pipeline holds a tree, which `JSONDecoder` would need written out as text and
/// parsed again; and two things the pipeline needs happen only while decoding:
///
/// - **Which keys the type read** (``ReadKeys``). The keys it did not read are the ones a newer program
///   (or a person) put there; they are carried into the next stored document at their place
///   (see ``UnknownKeys``).
/// - **Element defaults.** A value of a ``DefaultProviding`` type found anywhere below the root (a
///   dictionary's or an array's element, say) is decoded from its document merged over the type's own
///   encoded ``DefaultProviding/defaultValue``, so an element that lacks a key takes the element's default.
///
/// Everything else follows `JSONDecoder`: numbers (an integer type takes any number it holds exactly), the
/// date and key strategies, base64 data, URLs, `Decimal`, and dictionaries keyed by `String`, whose keys a
/// key strategy leaves as they are. Its errors are `DecodingError`s with the coding path, as
/// `JSONDecoder`'s. `DocumentDecoderTests` compares the two over generated values.
final class DocumentDecoder {
    fileprivate let coding: DocumentCoding
    /// The encoded defaults of the ``DefaultProviding`` types met so far.
    private var elementDefaults: [ObjectIdentifier: JSONValue] = [:]

    private init(coding: DocumentCoding) {
        self.coding = coding
    }

    /// The `T` that `document` holds; records in `reads` (when given) the keys it read.
    static func decode<T: Decodable>(
        _ type: T.Type, from document: JSONValue, coding: DocumentCoding, reads: ReadKeys? = nil
    ) throws -> T {
        try DocumentDecoder(coding: coding).value(type, from: document, at: [], reads: reads, isRoot: true)
    }

    // MARK: Values

    /// The `T` that `document` holds, at `codingPath`. `reads` is the node for `document` when it is an
    /// object or an array and reads are recorded.
    fileprivate func value<T: Decodable>(
        _ type: T.Type, from document: JSONValue, at codingPath: [any CodingKey], reads: ReadKeys?,
        isRoot: Bool = false
    ) throws -> T {
        // A document value is what it is, numbers kept as written; every key in it is one the type reads.
        if T.self == JSONValue.self {
            reads?.readWhole(document)
            return document as! T
        }
        if let scalar = T.self as? any DocumentScalar.Type {
            return try scalar.init(document: document, decoder: self, at: codingPath) as! T
        }
        if T.self == Date.self { return try date(from: document, at: codingPath, reads: reads) as! T }
        if T.self == Data.self { return try data(from: document, at: codingPath) as! T }
        if T.self == URL.self { return try url(from: document, at: codingPath) as! T }
        if T.self == Decimal.self { return try decimal(from: document, at: codingPath) as! T }
        var document = document
        if !isRoot, case .object = document, let defaults = T.self as? any DefaultProviding.Type {
            document = try elementDefault(of: defaults).merging(patch: document)
        }
        if let dictionary = T.self as? any StringKeyedDictionary.Type, !coding.usesDefaultKeys {
            // As `JSONDecoder`: a key strategy converts a type's coding keys, never a dictionary's keys.
            return try dictionary.init(document: document, decoder: self, at: codingPath, reads: reads) as! T
        }
        if let choices = T.self as? any (CaseIterable & Encodable).Type {
            return try choice(T.self, of: choices, from: document, at: codingPath, reads: reads)
        }
        return try T(from: ValueDecoder(document, at: codingPath, owner: self, reads: reads))
    }

    /// A value of a `CaseIterable` type; a value that is none of its cases is an error listing them.
    private func choice<T: Decodable, C: CaseIterable & Encodable>(
        _ type: T.Type, of cases: C.Type, from document: JSONValue, at codingPath: [any CodingKey], reads: ReadKeys?
    ) throws -> T {
        do {
            return try T(from: ValueDecoder(document, at: codingPath, owner: self, reads: reads))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.count == codingPath.count {
            let choices = C.allCases.compactMap { try? coding.encode($0) }
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath, debugDescription: context.debugDescription,
                    underlyingError: NotAChoice(choices: choices)))
        }
    }

    /// `type`'s encoded default, encoded once per decode.
    private func elementDefault(of type: any DefaultProviding.Type) throws -> JSONValue {
        let id = ObjectIdentifier(type)
        if let known = elementDefaults[id] { return known }
        let encoded = try type.encodedDefault(coding: coding)
        elementDefaults[id] = encoded
        return encoded
    }

    private func date(from document: JSONValue, at codingPath: [any CodingKey], reads: ReadKeys?) throws -> Date {
        switch coding.dateDecodingStrategy {
        case .deferredToDate:
            return try Date(from: ValueDecoder(document, at: codingPath, owner: self, reads: reads))
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try Double(document: document, decoder: self, at: codingPath))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try Double(document: document, decoder: self, at: codingPath) / 1000)
        case .iso8601:
            let text = try String(document: document, decoder: self, at: codingPath)
            guard let date = try? Date.ISO8601FormatStyle().parse(text) else {
                throw corrupted(codingPath, "Expected date string to be ISO8601-formatted.")
            }
            return date
        case .custom(let decode):
            return try decode(ValueDecoder(document, at: codingPath, owner: self, reads: reads))
        #if canImport(Darwin)
        @unknown default:
            // Darwin's `.formatted(_:)` and strategies added later: `JSONDecoder` reads this one value.
            // (On Linux, `.formatted` is made with `.custom`.)
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = coding.dateDecodingStrategy
            do {
                return try decoder.decode(Date.self, from: try document.data())
            } catch let error as DecodingError {
                let failure = DecodingFailure(error, in: nil, coding: coding, quotingValues: false)
                throw corrupted(codingPath, failure.reason)
            }
        #endif
        }
    }

    private func data(from document: JSONValue, at codingPath: [any CodingKey]) throws -> Data {
        let text = try String(document: document, decoder: self, at: codingPath)
        guard let data = Data(base64Encoded: text) else {
            throw corrupted(codingPath, "Encountered Data is not valid Base64.")
        }
        return data
    }

    private func url(from document: JSONValue, at codingPath: [any CodingKey]) throws -> URL {
        let text = try String(document: document, decoder: self, at: codingPath)
        guard let url = URL(string: text) else { throw corrupted(codingPath, "Invalid URL string.") }
        return url
    }

    private func decimal(from document: JSONValue, at codingPath: [any CodingKey]) throws -> Decimal {
        switch document {
        case .integer(let value): return Decimal(value)
        case .exactNumber(let text):
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw corrupted(codingPath, "expected Decimal, which cannot hold \(text)")
            }
            return decimal
        case .double(let value):
            guard let decimal = Decimal(string: "\(value)", locale: Locale(identifier: "en_US_POSIX")) else {
                throw corrupted(codingPath, "Parsed JSON number <\(value)> does not fit in Decimal.")
            }
            return decimal
        default: throw mismatch(Decimal.self, document, codingPath)
        }
    }

    // MARK: Keys

    /// The keys of `object` as the type's coding keys see them, each with the document key it came from.
    fileprivate func codingKeys(of object: [String: JSONValue], at codingPath: [any CodingKey]) -> [String: String]? {
        switch coding.keyDecodingStrategy {
        case .useDefaultKeys:
            return nil
        case .convertFromSnakeCase:
            var keys: [String: String] = [:]
            for key in object.keys { keys[Self.camelCase(fromSnakeCase: key)] = key }
            return keys
        case .custom(let convert):
            var keys: [String: String] = [:]
            for key in object.keys { keys[convert(codingPath + [DocumentCodingKey(key)]).stringValue] = key }
            return keys
        @unknown default:
            return nil
        }
    }

    /// `JSONDecoder`'s snake-case conversion: `first_name` → `firstName`, leading and trailing underscores
    /// kept; each later word is capitalized as `String.capitalized` does.
    static func camelCase(fromSnakeCase key: String) -> String {
        guard !key.isEmpty else { return key }
        guard let firstNonUnderscore = key.firstIndex(where: { $0 != "_" }) else { return key }
        var lastNonUnderscore = key.index(before: key.endIndex)
        while lastNonUnderscore > firstNonUnderscore && key[lastNonUnderscore] == "_" {
            key.formIndex(before: &lastNonUnderscore)
        }
        let keyRange = firstNonUnderscore...lastNonUnderscore
        let leading = key[key.startIndex..<firstNonUnderscore]
        let trailing = key[key.index(after: lastNonUnderscore)..<key.endIndex]
        let words = key[keyRange].split(separator: "_")
        guard words.count > 1 else { return key }
        let joined = words[0].lowercased() + words.dropFirst().map { $0.capitalized }.joined()
        return String(leading) + joined + String(trailing)
    }

    // MARK: Errors

    fileprivate func mismatch(_ type: Any.Type, _ found: JSONValue, _ codingPath: [any CodingKey]) -> DecodingError {
        if case .null = found {
            return .valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        }
        return .typeMismatch(
            type,
            DecodingError.Context(
                codingPath: codingPath, debugDescription: "Expected to decode \(type) but found \(found.kind) instead.")
        )
    }

    fileprivate func corrupted(_ codingPath: [any CodingKey], _ description: String) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: description))
    }
}

/// A type whose instances have a default, from which a document of it that lacks a key takes that key.
///
/// The root's default is the one given to ``RootLens``; a type that appears as an element of a collection
/// (a dictionary's values, an array's elements) adopts this protocol so that its elements may be stored
/// sparsely too:
///
/// ```swift
/// struct Upstream: Codable, Sendable, DefaultProviding {
///     var url = "http://localhost"
///     var timeoutSeconds = 30
///     static var defaultValue: Upstream { Upstream() }
/// }
/// // {"upstreams": {"eu": {"url": "https://eu.example"}}} decodes eu with a 30 s timeout.
/// ```
///
/// Without it, an element that lacks a key its type requires is an error naming the element's path.
public protocol DefaultProviding: Encodable {
    /// The value a document of this type is read over.
    static var defaultValue: Self { get }
}

extension DefaultProviding {
    fileprivate static func encodedDefault(coding: DocumentCoding) throws -> JSONValue {
        try coding.encode(defaultValue)
    }
}

/// The keys a decode read from a document, in the document's shape: for an object, which of its keys were
/// read and what was read below those that hold objects or arrays; for an array, what was read in its
/// elements.
final class ReadKeys {
    /// Keys read whose values hold no further reads (scalars, or values read whole).
    fileprivate(set) var leaves: Set<String> = []
    /// Keys read whose values are objects or arrays, with what was read in them.
    fileprivate(set) var children: [String: ReadKeys] = [:]
    /// Elements of an array that are objects or arrays, with what was read in them.
    fileprivate(set) var elements: [Int: ReadKeys] = [:]

    init() {}

    /// Records that `key` was read; returns the node for its value when that is an object or an array.
    fileprivate func read(_ key: String, holding value: JSONValue) -> ReadKeys? {
        guard let node = Self.node(for: key, holding: value, in: &children) else {
            leaves.insert(key)
            return nil
        }
        return node
    }

    /// Makes room for `count` keys read as leaves: growing the set key by key hashed every key again on
    /// each resize.
    fileprivate func expectKeys(_ count: Int) {
        leaves.reserveCapacity(count)
    }

    /// Records that everything in `document` (the document of this node) was read.
    fileprivate func readWhole(_ document: JSONValue) {
        switch document {
        case .object(let members):
            for (key, value) in members { read(key, holding: value)?.readWhole(value) }
        case .array(let elements):
            for (index, element) in elements.enumerated() { readElement(index, holding: element)?.readWhole(element) }
        default:
            break
        }
    }

    /// Records that element `index` was read; returns the node for it when it is an object or an array.
    fileprivate func readElement(_ index: Int, holding value: JSONValue) -> ReadKeys? {
        Self.node(for: index, holding: value, in: &elements)
    }

    /// The node under `key` in `nodes`, made if need be, when `value` is an object or an array.
    private static func node<Key: Hashable>(
        for key: Key, holding value: JSONValue, in nodes: inout [Key: ReadKeys]
    ) -> ReadKeys? {
        switch value {
        case .object, .array:
            if let known = nodes[key] { return known }
            let node = ReadKeys()
            nodes[key] = node
            return node
        default:
            return nil
        }
    }

}

// MARK: - Decoders and containers

private final class ValueDecoder: Decoder, SingleValueDecodingContainer {
    let document: JSONValue
    let codingPath: [any CodingKey]
    let owner: DocumentDecoder
    let reads: ReadKeys?

    init(_ document: JSONValue, at codingPath: [any CodingKey], owner: DocumentDecoder, reads: ReadKeys?) {
        self.document = document
        self.codingPath = codingPath
        self.owner = owner
        self.reads = reads
    }

    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = document else {
            if case .null = document {
                throw DecodingError.valueNotFound(
                    [String: Any].self,
                    DecodingError.Context(
                        codingPath: codingPath,
                        debugDescription: "Cannot get keyed decoding container -- found null value instead"))
            }
            throw owner.mismatch([String: Any].self, document, codingPath)
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(object, decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = document else {
            if case .null = document {
                throw DecodingError.valueNotFound(
                    [Any].self,
                    DecodingError.Context(
                        codingPath: codingPath,
                        debugDescription: "Cannot get unkeyed decoding container -- found null value instead"))
            }
            throw owner.mismatch([Any].self, document, codingPath)
        }
        return UnkeyedContainer(array, decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool {
        if case .null = document { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try Bool(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: String.Type) throws -> String { try String(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try Double(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try Float(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try Int(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try Int8(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try Int16(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try Int32(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try Int64(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: Int128.Type) throws -> Int128 { try Int128(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try UInt(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try UInt8(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try UInt16(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try UInt32(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try UInt64(document: document, decoder: owner, at: codingPath) }
    func decode(_ type: UInt128.Type) throws -> UInt128 {
        try UInt128(document: document, decoder: owner, at: codingPath)
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try owner.value(type, from: document, at: codingPath, reads: reads)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: JSONValue]
    let decoder: ValueDecoder
    /// Coding key → document key, when a key strategy converts them.
    let converted: [String: String]?

    init(_ object: [String: JSONValue], decoder: ValueDecoder) {
        self.object = object
        self.decoder = decoder
        self.converted = decoder.owner.codingKeys(of: object, at: decoder.codingPath)
        decoder.reads?.expectKeys(object.count)
    }

    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        if let converted { return converted.keys.compactMap { Key(stringValue: $0) } }
        return object.keys.compactMap { Key(stringValue: $0) }
    }

    private func documentKey(_ key: Key) -> String {
        guard let converted else { return key.stringValue }
        return converted[key.stringValue] ?? key.stringValue
    }

    func contains(_ key: Key) -> Bool { object[documentKey(key)] != nil }

    /// The value under `key`, recorded as read, with the node for what is read below it.
    private func entry(_ key: Key) throws -> (value: JSONValue, reads: ReadKeys?) {
        let name = documentKey(key)
        guard let value = object[name] else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return (value, decoder.reads?.read(name, holding: value))
    }

    private func scalar<T: DocumentScalar>(_ type: T.Type, _ key: Key) throws -> T {
        try T(document: try entry(key).value, decoder: decoder.owner, at: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try entry(key).value { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try scalar(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try scalar(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try scalar(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try scalar(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try scalar(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try scalar(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try scalar(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try scalar(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try scalar(type, key) }
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try scalar(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try scalar(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try scalar(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try scalar(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try scalar(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try scalar(type, key) }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try scalar(type, key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let (value, reads) = try entry(key)
        return try decoder.owner.value(type, from: value, at: codingPath + [key], reads: reads)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, reads) = try entry(key)
        return try ValueDecoder(value, at: codingPath + [key], owner: decoder.owner, reads: reads).container(
            keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let (value, reads) = try entry(key)
        return try ValueDecoder(value, at: codingPath + [key], owner: decoder.owner, reads: reads).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        try superDecoder(named: DocumentCodingKey.super)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try superDecoder(named: key)
    }

    private func superDecoder(named key: any CodingKey) throws -> any Decoder {
        let name = key.stringValue
        let value = object[name] ?? .null
        let reads = object[name] == nil ? nil : decoder.reads?.read(name, holding: value)
        return ValueDecoder(value, at: codingPath + [key], owner: decoder.owner, reads: reads)
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let array: [JSONValue]
    let decoder: ValueDecoder
    private(set) var currentIndex = 0

    init(_ array: [JSONValue], decoder: ValueDecoder) {
        self.array = array
        self.decoder = decoder
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    private var currentPath: [any CodingKey] { codingPath + [DocumentCodingKey(index: currentIndex)] }

    /// The next element, with the node for what is read in it; the index moves on only once it is read.
    private func element(_ type: Any.Type) throws -> (value: JSONValue, reads: ReadKeys?) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: currentPath, debugDescription: "Unkeyed container is at end."))
        }
        let value = array[currentIndex]
        return (value, decoder.reads?.readElement(currentIndex, holding: value))
    }

    private mutating func scalar<T: DocumentScalar>(_ type: T.Type) throws -> T {
        let value = try T(document: try element(type).value, decoder: decoder.owner, at: currentPath)
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard case .null = try element(Never?.self).value else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try scalar(type) }
    mutating func decode(_ type: String.Type) throws -> String { try scalar(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try scalar(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try scalar(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try scalar(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try scalar(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try scalar(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try scalar(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try scalar(type) }
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try scalar(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try scalar(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try scalar(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try scalar(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try scalar(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try scalar(type) }
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try scalar(type) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, reads) = try element(type)
        let decoded = try decoder.owner.value(type, from: value, at: currentPath, reads: reads)
        currentIndex += 1
        return decoded
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, reads) = try element(type)
        let container = try ValueDecoder(value, at: currentPath, owner: decoder.owner, reads: reads).container(
            keyedBy: type)
        currentIndex += 1
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, reads) = try element([Any].self)
        let container = try ValueDecoder(value, at: currentPath, owner: decoder.owner, reads: reads).unkeyedContainer()
        currentIndex += 1
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, reads) = try element((any Decoder).self)
        let nested = ValueDecoder(value, at: currentPath, owner: decoder.owner, reads: reads)
        currentIndex += 1
        return nested
    }
}

/// A value that is none of a `CaseIterable` type's cases: `expected one of trace, debug, info`.
struct NotAChoice: Error {
    /// The cases, as documents hold them.
    let choices: [JSONValue]

    /// `trace, debug, info`: strings bare, other values as JSON.
    var list: String {
        choices.map { if case .string(let text) = $0 { text } else { $0.jsonText() } }.joined(separator: ", ")
    }
}

// MARK: - Scalars

/// A type the decoder reads from a scalar document itself.
private protocol DocumentScalar: Decodable {
    init(document: JSONValue, decoder: DocumentDecoder, at codingPath: @autoclosure () -> [any CodingKey]) throws
}

/// A scalar the document holds as it is, nothing converted: a boolean, a string.
private protocol DocumentVerbatimScalar: DocumentScalar {
    /// The value `document` holds, when it is one of this type.
    static func held(in document: JSONValue) -> Self?
}

extension DocumentVerbatimScalar {
    fileprivate init(
        document: JSONValue, decoder: DocumentDecoder, at codingPath: @autoclosure () -> [any CodingKey]
    ) throws {
        guard let value = Self.held(in: document) else { throw decoder.mismatch(Self.self, document, codingPath()) }
        self = value
    }
}

extension Bool: DocumentVerbatimScalar {
    fileprivate static func held(in document: JSONValue) -> Bool? {
        if case .bool(let value) = document { value } else { nil }
    }
}

extension String: DocumentVerbatimScalar {
    fileprivate static func held(in document: JSONValue) -> String? {
        if case .string(let value) = document { value } else { nil }
    }
}

extension Double: DocumentScalar {
    fileprivate init(
        document: JSONValue, decoder: DocumentDecoder, at codingPath: @autoclosure () -> [any CodingKey]
    ) throws {
        switch document {
        case .integer(let value): self = Double(value)
        case .double(let value): self = value
        case .exactNumber(let text):
            // The nearest Double, as JSONDecoder reads a number it cannot hold as written.
            guard let value = Double(text), value.isFinite else {
                throw decoder.corrupted(codingPath(), "expected Double (±\(Double.greatestFiniteMagnitude))")
            }
            self = value
        default: throw decoder.mismatch(Double.self, document, codingPath())
        }
    }
}

extension Float: DocumentScalar {
    fileprivate init(
        document: JSONValue, decoder: DocumentDecoder, at codingPath: @autoclosure () -> [any CodingKey]
    ) throws {
        let double = try Double(document: document, decoder: decoder, at: codingPath())
        let value = Float(double)
        guard value.isFinite || !double.isFinite else {
            throw decoder.corrupted(codingPath(), "expected Float (±\(Float.greatestFiniteMagnitude))")
        }
        self = value
    }
}

/// Integers take any number they hold exactly, as with `JSONDecoder` (`3`, `3.0`, `3e0`).
private protocol DocumentInteger: DocumentScalar, FixedWidthInteger {}

extension DocumentInteger {
    fileprivate init(
        document: JSONValue, decoder: DocumentDecoder, at codingPath: @autoclosure () -> [any CodingKey]
    ) throws {
        let exact: Self?
        switch document {
        case .integer(let value): exact = Self(exactly: value)
        case .double(let value): exact = Self(exactly: value)
        case .exactNumber(let text): exact = Self(text)
        default: throw decoder.mismatch(Self.self, document, codingPath())
        }
        guard let exact else {
            let fractional =
                switch document {
                case .double(let value): value.rounded() != value
                case .exactNumber(let text): NumberText(text).map { !$0.isWhole } ?? false
                default: false
                }
            if fractional {
                throw decoder.corrupted(codingPath(), "expected \(Self.self) (a whole number)")
            }
            throw decoder.corrupted(codingPath(), "expected \(Self.self) (\(Self.min) to \(Self.max))")
        }
        self = exact
    }
}

extension Int: DocumentInteger {}
extension Int8: DocumentInteger {}
extension Int16: DocumentInteger {}
extension Int32: DocumentInteger {}
extension Int64: DocumentInteger {}
extension Int128: DocumentInteger {}
extension UInt: DocumentInteger {}
extension UInt8: DocumentInteger {}
extension UInt16: DocumentInteger {}
extension UInt32: DocumentInteger {}
extension UInt64: DocumentInteger {}
extension UInt128: DocumentInteger {}

// MARK: - Dictionaries keyed by String

/// `[String: Value]`, whose keys a key strategy leaves as they are.
private protocol StringKeyedDictionary {
    init(document: JSONValue, decoder: DocumentDecoder, at codingPath: [any CodingKey], reads: ReadKeys?) throws
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Decodable {
    fileprivate init(
        document: JSONValue, decoder: DocumentDecoder, at codingPath: [any CodingKey], reads: ReadKeys?
    ) throws {
        guard case .object(let object) = document else {
            throw decoder.mismatch([String: Value].self, document, codingPath)
        }
        var result: [String: Value] = [:]
        result.reserveCapacity(object.count)
        for (key, value) in object {
            result[key] = try decoder.value(
                Value.self, from: value, at: codingPath + [DocumentCodingKey(key)],
                reads: reads?.read(key, holding: value))
        }
        self = result
    }
}

extension DocumentCoding {
    var usesDefaultKeys: Bool {
        if case .useDefaultKeys = keyDecodingStrategy { return true }
        return false
    }
}
