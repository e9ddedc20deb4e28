import Foundation

/// Encodes a value straight to a document tree, and reuses the documents of large collections that have
/// not changed since the last value it encoded.
///
/// Why not `JSONEncoder` alone: it writes text, which the pipeline must read back into a tree, and it
/// encodes the whole value on every commit. This encoder builds the tree directly, and does not encode a
/// large collection again that an update did not change (`Benchmarks/README.md` says which row needs it).
///
/// **How a collection is known to be unchanged.** Arrays, dictionaries and sets of `Equatable` elements
/// with at least ``memoThreshold`` elements are remembered with their document, by coding path. The next
/// encode compares the collection at that path with the remembered one using `==`, which answers at once
/// when both share their storage (the copy-on-write case: an update that did not touch the collection) and
/// compares element by element otherwise. Only a collection equal to the remembered one reuses its
/// document; the memo holds the collection itself, never an address.
///
/// **Always the same document as `JSONEncoder`.** Numbers become the text `JSONEncoder` writes, read by
/// the pipeline's own ``JSONReader``; dates, data and URLs are written as `JSONEncoder` writes them. What
/// this encoder does not cover (key strategies other than the default, date strategies other than the four
/// ``DocumentCoding/Dates``) goes to `JSONEncoder`, and so does any value during whose encoding an error
/// was thrown, even one its `encode(to:)` caught and went on from: a document is never built from a
/// half-finished encode. A conformance that misuses its encoder (two kinds of container, two values in a
/// single-value container) is an `EncodingError` naming the path, where `JSONEncoder` would stop the
/// process. `DocumentEncoderTests` compares the two over generated values.
final class DocumentEncoder {
    /// Collections with fewer elements are encoded every time: comparing them would cost about as much.
    static let memoThreshold = 32

    /// What one encode found, and what the next may reuse.
    typealias Memo = PartMemo<MemoEntry>

    /// A collection and its document. The collection is part of a `Sendable` root (the pipeline encodes
    /// only those) and is never mutated here, only compared.
    struct MemoEntry: @unchecked Sendable {
        let collection: Any
        let document: JSONValue
    }

    /// Why the encode must be handed to `JSONEncoder` instead.
    private struct Unsupported: Error {}

    fileprivate let dates: JSONEncoder.DateEncodingStrategy
    fileprivate var previous: [String: MemoEntry]
    fileprivate var next: [String: MemoEntry] = [:]
    /// Set when this encoder threw, even if the conformance caught it.
    fileprivate var threw = false
    /// The first misuse of the encoder by a conformance, reported after the encode.
    fileprivate var misuse: EncodingError?

    private init(dates: JSONEncoder.DateEncodingStrategy, previous: [String: MemoEntry]) {
        self.dates = dates
        self.previous = previous
    }

    /// The document for `value`, or nil when `coding` asks for what only `JSONEncoder` does, or when an
    /// error was thrown and caught during the encode: the caller then uses `JSONEncoder`.
    static func encode<T: Encodable>(_ value: T, coding: DocumentCoding, memo: Memo?) throws -> JSONValue? {
        guard case .useDefaultKeys = coding.keyEncodingStrategy, Self.supports(coding.dateEncodingStrategy) else {
            return nil
        }
        let encoder = DocumentEncoder(dates: coding.dateEncodingStrategy, previous: memo?.take() ?? [:])
        let document: JSONValue
        do {
            document = try encoder.document(for: value, at: [])
        } catch is Unsupported {
            return nil
        } catch {
            if let misuse = encoder.misuse { throw misuse }
            throw error
        }
        if let misuse = encoder.misuse { throw misuse }
        if encoder.threw { return nil }
        memo?.keep(encoder.next)
        return document
    }

    private static func supports(_ strategy: JSONEncoder.DateEncodingStrategy) -> Bool {
        switch strategy {
        case .deferredToDate, .secondsSince1970, .millisecondsSince1970, .iso8601: true
        default: false
        }
    }

    // MARK: Values

    /// The document for `value` at `codingPath`: a remembered one when the value is a large collection
    /// equal to the one encoded there last time.
    fileprivate func document<T: Encodable>(for value: T, at codingPath: [any CodingKey]) throws -> JSONValue {
        do {
            return try memoizedDocument(for: value, at: codingPath)
        } catch {
            threw = true
            throw error
        }
    }

    private func memoizedDocument<T: Encodable>(for value: T, at codingPath: [any CodingKey]) throws -> JSONValue {
        if let scalar = try scalarDocument(for: value, at: codingPath) { return scalar }
        if let leaf = try leafDocument(for: value, at: codingPath) { return leaf }
        guard let collection = value as? any MemoizableCollection, collection.memoCount >= Self.memoThreshold else {
            return try encodeNested(value, at: codingPath)
        }
        let key = Self.memoKey(codingPath)
        if let entry = previous[key], collection.isEqual(to: entry.collection) {
            next[key] = entry
            return entry.document
        }
        let document = try encodeNested(value, at: codingPath)
        next[key] = MemoEntry(collection: value, document: document)
        return document
    }

    /// What `value.encode(to:)` encodes; `{}` when a nested value encodes nothing, as `JSONEncoder` has
    /// it. A top-level value that encodes nothing is `JSONEncoder`'s error to report.
    private func encodeNested<T: Encodable>(_ value: T, at codingPath: [any CodingKey]) throws -> JSONValue {
        let encoder = NestedEncoder(self, codingPath: codingPath)
        try value.encode(to: encoder)
        guard let content = encoder.content else {
            if codingPath.isEmpty { throw Unsupported() }
            return .object([:])
        }
        return content.resolved
    }

    /// The document of a value of a type that encodes itself as one JSON scalar, made at once: the elements
    /// of a collection of strings or numbers reach the encoder as generic values, and encoding each through
    /// its own single-value container would build an encoder per element. The type is compared first, so
    /// that no other type pays for a cast.
    private func scalarDocument<T: Encodable>(for value: T, at codingPath: [any CodingKey]) throws -> JSONValue? {
        switch T.self {
        case is String.Type: .string(value as! String)
        case is Bool.Type: .bool(value as! Bool)
        case is Int.Type: .integer(value as! Int)
        case is Double.Type: try number(value as! Double, at: codingPath)
        case is Int64.Type: .integer(Int(value as! Int64))
        case is Int32.Type: .integer(Int(value as! Int32))
        case is Float.Type: try number(value as! Float, at: codingPath)
        default: nil
        }
    }

    /// The documents `JSONEncoder` writes for the types it treats specially (dates, data, URLs, decimals,
    /// 128-bit integers); nil for any other type.
    private func leafDocument<T: Encodable>(for value: T, at codingPath: [any CodingKey]) throws -> JSONValue? {
        switch value {
        case let date as Date:
            switch dates {
            case .deferredToDate: return try encodeNested(date, at: codingPath)
            case .secondsSince1970: return try number(date.timeIntervalSince1970, at: codingPath)
            case .millisecondsSince1970: return try number(1000 * date.timeIntervalSince1970, at: codingPath)
            case .iso8601: return .string(date.formatted(.iso8601))
            default: throw Unsupported()
            }
        case let data as Data: return .string(data.base64EncodedString())
        case let url as URL: return .string(url.absoluteString)
        case let decimal as Decimal: return try Self.number(text: decimal.description)
        case let document as JSONValue: return document
        case let integer as Int128: return try integerDocument(integer)
        case let integer as UInt128: return try integerDocument(integer)
        default: return nil
        }
    }

    fileprivate func integerDocument<I: BinaryInteger>(_ value: I) throws -> JSONValue {
        if let small = Int(exactly: value) { return .integer(small) }
        return .exactNumber(String(value))
    }

    fileprivate func number<F: BinaryFloatingPoint & LosslessStringConvertible>(
        _ value: F, at codingPath: [any CodingKey]
    ) throws -> JSONValue {
        guard value.isFinite else {
            threw = true
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: codingPath, debugDescription: "Unable to encode \(F.self).\(value) directly in JSON."))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return try Self.number(text: text)
    }

    /// The document for number text, read as the pipeline reads a stored number.
    private static func number(text: String) throws -> JSONValue {
        try JSONReader.document(from: Array(text.utf8))
    }

    private static func memoKey(_ codingPath: [any CodingKey]) -> String {
        codingPath.map(\.stringValue).joined(separator: "\u{1F}")
    }

    fileprivate func noteMisuse(_ reason: String, at codingPath: [any CodingKey]) {
        guard misuse == nil else { return }
        misuse = EncodingError.invalidValue(
            "", EncodingError.Context(codingPath: codingPath, debugDescription: reason))
    }
}

/// A collection whose equality with another value can be asked without knowing its element type.
private protocol MemoizableCollection {
    var memoCount: Int { get }
    func isEqual(to other: Any) -> Bool
}

extension Array: MemoizableCollection where Element: Equatable {
    var memoCount: Int { count }
    func isEqual(to other: Any) -> Bool { (other as? Self).map { $0 == self } ?? false }
}

extension Dictionary: MemoizableCollection where Value: Equatable {
    var memoCount: Int { count }
    func isEqual(to other: Any) -> Bool { (other as? Self).map { $0 == self } ?? false }
}

extension Set: MemoizableCollection {
    var memoCount: Int { count }
    func isEqual(to other: Any) -> Bool { (other as? Self).map { $0 == self } ?? false }
}

// MARK: Building documents

/// A part of the document under construction: finished, or a container a conformance may still add to.
private enum Slot {
    case value(JSONValue)
    case object(ObjectBuilder)
    case array(ArrayBuilder)

    var resolved: JSONValue {
        switch self {
        case .value(let value): value
        case .object(let builder): .object(builder.resolved)
        case .array(let builder): .array(builder.elements.map(\.resolved))
        }
    }
}

/// The members of an object in the order they were encoded; one encoded again under the same key replaces
/// the earlier one, as in a dictionary. Kept as a list until the object is done, so that the dictionary is
/// built once, at its size.
private final class ObjectBuilder {
    private var members: [(key: String, slot: Slot)] = []

    func set(_ slot: Slot, for key: String) { members.append((key, slot)) }

    var resolved: [String: JSONValue] {
        var object = [String: JSONValue](minimumCapacity: members.count)
        for member in members { object[member.key] = member.slot.resolved }
        return object
    }
}

private final class ArrayBuilder {
    var elements: [Slot] = []
}

/// The `Encoder` one value's `encode(to:)` receives.
private final class NestedEncoder: Encoder, SingleValueEncodingContainer {
    let root: DocumentEncoder
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var content: Slot?

    init(_ root: DocumentEncoder, codingPath: [any CodingKey]) {
        self.root = root
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let builder: ObjectBuilder
        switch content {
        case .object(let existing): builder = existing
        case nil:
            builder = ObjectBuilder()
            content = .object(builder)
        default:
            root.noteMisuse("asked for a keyed container after encoding something else", at: codingPath)
            builder = ObjectBuilder()
            content = .object(builder)
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(root: root, builder: builder, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let builder: ArrayBuilder
        switch content {
        case .array(let existing): builder = existing
        case nil:
            builder = ArrayBuilder()
            content = .array(builder)
        default:
            root.noteMisuse("asked for an unkeyed container after encoding something else", at: codingPath)
            builder = ArrayBuilder()
            content = .array(builder)
        }
        return UnkeyedContainer(root: root, builder: builder, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: SingleValueEncodingContainer

    private func set(_ value: JSONValue) {
        if content != nil { root.noteMisuse("encoded a second value into a single-value container", at: codingPath) }
        content = .value(value)
    }

    func encodeNil() throws { set(.null) }
    func encode(_ value: Bool) throws { set(.bool(value)) }
    func encode(_ value: String) throws { set(.string(value)) }
    func encode(_ value: Double) throws { set(try root.number(value, at: codingPath)) }
    func encode(_ value: Float) throws { set(try root.number(value, at: codingPath)) }
    func encode(_ value: Int) throws { set(.integer(value)) }
    func encode(_ value: Int8) throws { set(.integer(Int(value))) }
    func encode(_ value: Int16) throws { set(.integer(Int(value))) }
    func encode(_ value: Int32) throws { set(.integer(Int(value))) }
    func encode(_ value: Int64) throws { set(.integer(Int(value))) }
    func encode(_ value: UInt) throws { set(try root.integerDocument(value)) }
    func encode(_ value: UInt8) throws { set(.integer(Int(value))) }
    func encode(_ value: UInt16) throws { set(.integer(Int(value))) }
    func encode(_ value: UInt32) throws { set(.integer(Int(value))) }
    func encode(_ value: UInt64) throws { set(try root.integerDocument(value)) }
    func encode<T: Encodable>(_ value: T) throws { set(try root.document(for: value, at: codingPath)) }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let root: DocumentEncoder
    let builder: ObjectBuilder
    let codingPath: [any CodingKey]

    private func put(_ value: JSONValue, _ key: Key) { builder.set(.value(value), for: key.stringValue) }

    mutating func encodeNil(forKey key: Key) throws { put(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        put(try root.number(value, at: codingPath + [key]), key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        put(try root.number(value, at: codingPath + [key]), key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(.integer(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(try root.integerDocument(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(.integer(Int(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(try root.integerDocument(value), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        put(try root.document(for: value, at: codingPath + [key]), key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectBuilder()
        builder.set(.object(nested), for: key.stringValue)
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(root: root, builder: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayBuilder()
        builder.set(.array(nested), for: key.stringValue)
        return UnkeyedContainer(root: root, builder: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        SuperEncoder(root: root, codingPath: codingPath + [DocumentCodingKey.super]) { [builder] in
            builder.set($0, for: "super")
        }
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        SuperEncoder(root: root, codingPath: codingPath + [key]) { [builder] in builder.set($0, for: key.stringValue) }
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let root: DocumentEncoder
    let builder: ArrayBuilder
    let codingPath: [any CodingKey]
    var count: Int { builder.elements.count }

    private var nextPath: [any CodingKey] { codingPath + [DocumentCodingKey(index: count)] }
    private func append(_ value: JSONValue) { builder.elements.append(.value(value)) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(try root.number(value, at: nextPath)) }
    mutating func encode(_ value: Float) throws { append(try root.number(value, at: nextPath)) }
    mutating func encode(_ value: Int) throws { append(.integer(value)) }
    mutating func encode(_ value: Int8) throws { append(.integer(Int(value))) }
    mutating func encode(_ value: Int16) throws { append(.integer(Int(value))) }
    mutating func encode(_ value: Int32) throws { append(.integer(Int(value))) }
    mutating func encode(_ value: Int64) throws { append(.integer(Int(value))) }
    mutating func encode(_ value: UInt) throws { append(try root.integerDocument(value)) }
    mutating func encode(_ value: UInt8) throws { append(.integer(Int(value))) }
    mutating func encode(_ value: UInt16) throws { append(.integer(Int(value))) }
    mutating func encode(_ value: UInt32) throws { append(.integer(Int(value))) }
    mutating func encode(_ value: UInt64) throws { append(try root.integerDocument(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        append(try root.document(for: value, at: nextPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectBuilder()
        let path = nextPath
        builder.elements.append(.object(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(root: root, builder: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ArrayBuilder()
        let path = nextPath
        builder.elements.append(.array(nested))
        return UnkeyedContainer(root: root, builder: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let index = count
        builder.elements.append(.value(.object([:])))
        return SuperEncoder(root: root, codingPath: codingPath + [DocumentCodingKey(index: index)]) { [builder] in
            builder.elements[index] = $0
        }
    }
}

/// The encoder a `superEncoder()` hands out: what is encoded into it lands in its parent's container.
private final class SuperEncoder: Encoder {
    let nested: NestedEncoder
    let land: (Slot) -> Void

    init(root: DocumentEncoder, codingPath: [any CodingKey], land: @escaping (Slot) -> Void) {
        nested = NestedEncoder(root, codingPath: codingPath)
        self.land = land
        land(.value(.object([:])))
    }

    var codingPath: [any CodingKey] { nested.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        defer { landContent() }
        return nested.container(keyedBy: type)
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        defer { landContent() }
        return nested.unkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SuperSingleValue(encoder: self) }

    func landContent() {
        if let content = nested.content { land(content) }
    }
}

/// A single-value container whose value lands in the parent as soon as it is encoded.
private struct SuperSingleValue: SingleValueEncodingContainer {
    let encoder: SuperEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func then(_ body: () throws -> Void) rethrows {
        try body()
        encoder.landContent()
    }

    mutating func encodeNil() throws { try then { try encoder.nested.encodeNil() } }
    mutating func encode(_ value: Bool) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode(_ value: String) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode(_ value: Double) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode(_ value: Float) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode(_ value: Int) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode(_ value: Int8) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode(_ value: Int16) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode(_ value: Int32) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode(_ value: Int64) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode(_ value: UInt) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode(_ value: UInt8) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode(_ value: UInt16) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode(_ value: UInt32) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode(_ value: UInt64) throws { try then { try encoder.nested.encode(value) } }
    mutating func encode<T: Encodable>(_ value: T) throws { try then { try encoder.nested.encode(value) } }
}

/// A coding key the document encoder and decoder make themselves: `super`, a document's own keys, and
/// array indices (`Index 3`, as `JSONEncoder` and `JSONDecoder` name them).
struct DocumentCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { self.init(index: intValue) }

    static let `super` = DocumentCodingKey("super")
}
