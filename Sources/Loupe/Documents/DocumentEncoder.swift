import Foundation

/// Encodes a value straight to a document tree, and reuses the documents of the parts that have not
/// changed since the last value it encoded.
///
/// Why not `JSONEncoder` alone: it writes text, which the pipeline must read back into a tree, and it
/// encodes the whole value on every commit. This encoder builds the tree directly, and does not encode a
/// part again that an update did not change (the memo, in `FastPaths/EncoderMemo.swift`, says which
/// benchmark rows need it).
///
/// **How a part is known to be unchanged.** Every part that is not a scalar (a struct, an enum with
/// values, a collection) is remembered with its document in a tree of ``MemoNode``s that follows the
/// document: by key in an object, by index in an array. The next encode compares the part at the same
/// place with the remembered one, and reuses the document, and the nodes below it, when the part is
/// unchanged: it has the same bytes (a part an update did not touch is a copy of them, its collections
/// sharing their storage; see ``SameBytes``), or, for an `Equatable` type, `==` says so, as
/// the core's commit does for the root (an update to a root `==` to the current one saves nothing). A
/// part that changed is encoded again, reusing in turn what did not change inside it: one element of
/// a large array costs one element's encode. A dictionary with `String` keys that changed is compared
/// with the one before member by member, and only the members that changed are encoded: its encoding is
/// the standard library's, an object with a member under each key. The memo holds the parts themselves,
/// never an address.
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
    /// Why the encode must be handed to `JSONEncoder` instead.
    private struct Unsupported: Error {}

    fileprivate let dates: JSONEncoder.DateEncodingStrategy
    /// Whether an infinite or NaN number is encoded (see ``DocumentCoding/encodesNonFiniteNumbers``).
    fileprivate var encodesNonFiniteNumbers = false
    /// Set when this encoder threw, even if the conformance caught it.
    fileprivate var threw = false
    /// The first misuse of the encoder by a conformance, reported after the encode.
    fileprivate var misuse: EncodingError?

    private init(dates: JSONEncoder.DateEncodingStrategy) {
        self.dates = dates
    }

    /// The document for `value`, or nil when `coding` asks for what only `JSONEncoder` does, or when an
    /// error was thrown and caught during the encode: the caller then uses `JSONEncoder`.
    static func encode<T: Encodable>(_ value: T, coding: DocumentCoding, memo: Memo?) throws -> JSONValue? {
        try encodeNotingLast(value, coding: coding, memo: memo)?.document
    }

    /// The document for `value` as ``encode(_:coding:memo:)`` makes it, and the document of the last encode
    /// it started from (what `memo` kept; nil when it kept nothing).
    ///
    /// Wherever the document is the same as the last one (its scalars the same, its objects and arrays of
    /// the same parts), it is the last one's, sharing its storage: a document that does not share the last
    /// one's storage differs from it.
    static func encodeNotingLast<T: Encodable>(
        _ value: T, coding: DocumentCoding, memo: Memo?
    ) throws -> (document: JSONValue, last: JSONValue?)? {
        guard case .useDefaultKeys = coding.keyEncodingStrategy, Self.supports(coding.dateEncodingStrategy) else {
            return nil
        }
        let encoder = DocumentEncoder(dates: coding.dateEncodingStrategy)
        encoder.encodesNonFiniteNumbers = coding.encodesNonFiniteNumbers
        let document: JSONValue
        let node: MemoNode?
        let previous = memo?.take()
        do {
            (document, node) = try encoder.part(value, at: [], isWhole: true, previous: previous)
        } catch is Unsupported {
            return nil
        } catch {
            if let misuse = encoder.misuse { throw misuse }
            throw error
        }
        if let misuse = encoder.misuse { throw misuse }
        if encoder.threw { return nil }
        if let node { memo?.keep(node) }
        return (document, previous?.document)
    }

    private static func supports(_ strategy: JSONEncoder.DateEncodingStrategy) -> Bool {
        switch strategy {
        case .deferredToDate, .secondsSince1970, .millisecondsSince1970, .iso8601: true
        default: false
        }
    }

    // MARK: Values

    /// The document for `value` at `codingPath`, and the node to remember it by (none for a scalar):
    /// `previous`, the node of the part at the same place last time, when `value` is unchanged from it.
    ///
    /// The path is made only when it is needed (an error, a part encoded again): a part found unchanged
    /// costs none. `isWhole` says `value` is the whole value, which is compared by its bytes only: the
    /// pipeline encodes a root that changed.
    func part<T: Encodable>(
        _ value: T, at codingPath: @autoclosure () -> [any CodingKey], isWhole: Bool = false, previous: MemoNode?
    ) throws -> (document: JSONValue, node: MemoNode?) {
        do {
            if let scalar = try scalarDocument(for: value, at: codingPath()) { return (scalar, nil) }
            if let leaf = try leafDocument(for: value, at: codingPath()) { return (leaf, nil) }
            if let previous, Self.isUnchanged(value, from: previous, comparing: !isWhole) {
                return (previous.document, previous)
            }
            if let previous, let dictionary = value as? any EncodedDictionary,
                let changed = try dictionary.document(changedFrom: previous, by: self, at: codingPath())
            {
                return changed
            }
            let encoder = NestedEncoder(self, codingPath: codingPath(), previous: previous)
            let document = try encodeNested(value, with: encoder)
            return (
                document,
                MemoNode(part: value, document: document, members: encoder.memoMembers, elements: encoder.memoElements)
            )
        } catch {
            threw = true
            throw error
        }
    }

    /// What `value.encode(to:)` encodes; `{}` when a nested value encodes nothing, as `JSONEncoder` has
    /// it. A top-level value that encodes nothing is `JSONEncoder`'s error to report.
    private func encodeNested<T: Encodable>(_ value: T, at codingPath: [any CodingKey]) throws -> JSONValue {
        try encodeNested(value, with: NestedEncoder(self, codingPath: codingPath, previous: nil))
    }

    private func encodeNested<T: Encodable>(_ value: T, with encoder: NestedEncoder) throws -> JSONValue {
        try value.encode(to: encoder)
        guard let content = encoder.content else {
            if encoder.codingPath.isEmpty { throw Unsupported() }
            return .object([:])
        }
        return content.resolved(like: encoder.previous?.document)
    }

    /// The document of a value of a type that encodes itself as one JSON scalar, made at once: the elements
    /// of a collection of strings or numbers reach the encoder as generic values, and encoding each through
    /// its own single-value container would build an encoder per element. The type is compared first, so
    /// that no other type pays for a cast.
    private func scalarDocument<T: Encodable>(
        for value: T, at codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> JSONValue? {
        let type: Any.Type = T.self
        if type == String.self { return .string(value as! String) }
        if type == Bool.self { return .bool(value as! Bool) }
        if type == Int.self { return .integer(value as! Int) }
        if type == Double.self { return try number(value as! Double, at: codingPath()) }
        if type == Int64.self { return .integer(Int(value as! Int64)) }
        if type == Int32.self { return .integer(Int(value as! Int32)) }
        if type == Float.self { return try number(value as! Float, at: codingPath()) }
        return nil
    }

    /// The documents `JSONEncoder` writes for the types it treats specially (dates, data, URLs, decimals,
    /// 128-bit integers); nil for any other type.
    ///
    /// The type is compared first (each of these is a struct or an enum, so no other type is one of them),
    /// so that the many types that are none of them pay for no cast.
    private func leafDocument<T: Encodable>(
        for value: T, at codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> JSONValue? {
        let type: Any.Type = T.self
        guard
            type == Date.self || type == Data.self || type == URL.self || type == Decimal.self || type == JSONValue.self
                || type == Int128.self || type == UInt128.self
        else { return nil }
        switch value {
        case let date as Date:
            switch dates {
            case .deferredToDate: return try encodeNested(date, at: codingPath())
            case .secondsSince1970: return try number(date.timeIntervalSince1970, at: codingPath())
            case .millisecondsSince1970: return try number(1000 * date.timeIntervalSince1970, at: codingPath())
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
        _ value: F, at codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> JSONValue {
        if !value.isFinite, encodesNonFiniteNumbers { return .double(Double(value)) }
        guard value.isFinite else {
            threw = true
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath(), debugDescription: "Unable to encode \(F.self).\(value) directly in JSON.")
            )
        }
        // A `Double` that is not a whole number reads back from its shortest text (`description`) as
        // itself, so that text's document is the `Double`. A whole number's text is an integer's, and a
        // `Float`'s text is read as the decimal it spells.
        if let double = value as? Double, double.rounded(.towardZero) != double { return .double(double) }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return try Self.number(text: text)
    }

    /// The document for number text, read as the pipeline reads a stored number.
    private static func number(text: String) throws -> JSONValue {
        try JSONReader.document(from: Array(text.utf8))
    }

    fileprivate func noteMisuse(_ reason: String, at codingPath: [any CodingKey]) {
        guard misuse == nil else { return }
        misuse = EncodingError.invalidValue(
            "", EncodingError.Context(codingPath: codingPath, debugDescription: reason))
    }
}

// MARK: Building documents

/// A part of the document under construction: finished, or a container a conformance may still add to.
private enum Slot {
    case value(JSONValue)
    case object(ObjectBuilder)
    case array(ArrayBuilder)

    /// The part's document; `previous` itself (the document at the same place last time) when the part's
    /// is the same, so that the two share their storage: a document that shares none with the last one
    /// differs from it (``DocumentEncoder/encodeNotingLast(_:coding:memo:)``).
    func resolved(like previous: JSONValue?) -> JSONValue {
        switch self {
        case .value(let value): value
        case .object(let builder): builder.resolved(like: previous)
        case .array(let builder): builder.resolved(like: previous)
        }
    }
}

/// A container's builder, kept in its value's slot: an object's members or an array's elements.
private protocol ContainerBuilder: AnyObject {
    init(previous: DocumentEncoder.MemoNode?)
    /// The builder `slot` holds, when it is one of this kind.
    static func held(in slot: Slot?) -> Self?
    /// The slot that holds this builder.
    var slot: Slot { get }
}

/// The members of an object in the order they were encoded; one encoded again under the same key replaces
/// the earlier one, as in a dictionary. Kept as a list until the object is done, so that the dictionary is
/// built once, at its size.
private final class ObjectBuilder: ContainerBuilder {
    private var members: [(key: String, slot: Slot)] = []
    /// The node of the value at the same place last time, whose members' nodes may be reused.
    private let previous: DocumentEncoder.MemoNode?
    /// Where in `previous`'s members the next one is looked for first.
    private var hint = 0
    /// The nodes of the members encoded as parts, in order, for the next encode.
    private(set) var memoMembers: [(key: String, node: DocumentEncoder.MemoNode)] = []

    init(previous: DocumentEncoder.MemoNode?) {
        self.previous = previous
        // As many members as last time, most likely: room for them at once, rather than grown to it.
        if let previous {
            if case .object(let object) = previous.document { members.reserveCapacity(object.count) }
            memoMembers.reserveCapacity(previous.members.count)
        }
    }

    static func held(in slot: Slot?) -> ObjectBuilder? { if case .object(let builder)? = slot { builder } else { nil } }
    var slot: Slot { .object(self) }

    func set(_ slot: Slot, for key: String, node: DocumentEncoder.MemoNode? = nil) {
        members.append((key, slot))
        if let node { memoMembers.append((key, node)) }
    }

    /// The node of the member under `key` last time.
    func previousMember(_ key: String) -> DocumentEncoder.MemoNode? {
        previous?.member(key, hint: &hint)
    }

    /// The object; `previous` itself when every member is the same part as there.
    func resolved(like previous: JSONValue?) -> JSONValue {
        let old: [String: JSONValue]? = if case .object(let old)? = previous { old } else { nil }
        var object = [String: JSONValue](minimumCapacity: members.count)
        for member in members { object[member.key] = member.slot.resolved(like: old?[member.key]) }
        if let previous, let old, old.count == object.count,
            object.allSatisfy({ key, value in old[key].map(value.isSamePart) ?? false })
        {
            return previous
        }
        return .object(object)
    }
}

private final class ArrayBuilder: ContainerBuilder {
    var elements: [Slot] = []
    /// The node of the value at the same place last time, whose elements' nodes may be reused.
    let previous: DocumentEncoder.MemoNode?
    /// The nodes of the elements encoded as parts, at their indices, for the next encode.
    var memoElements: [DocumentEncoder.MemoNode?] = []

    init(previous: DocumentEncoder.MemoNode?) { self.previous = previous }

    static func held(in slot: Slot?) -> ArrayBuilder? { if case .array(let builder)? = slot { builder } else { nil } }
    var slot: Slot { .array(self) }

    func append(_ slot: Slot, node: DocumentEncoder.MemoNode? = nil) {
        elements.append(slot)
        memoElements.append(node)
    }

    /// The array; `previous` itself when every element is the same part as there.
    func resolved(like previous: JSONValue?) -> JSONValue {
        let old: [JSONValue]? = if case .array(let old)? = previous { old } else { nil }
        let array = elements.indices.map { index in
            elements[index].resolved(like: old.flatMap { index < $0.count ? $0[index] : nil })
        }
        if let previous, let old, old.count == array.count, zip(array, old).allSatisfy({ $0.isSamePart(as: $1) }) {
            return previous
        }
        return .array(array)
    }

    /// The node of the element at `index` last time.
    func previousElement(at index: Int) -> DocumentEncoder.MemoNode? {
        guard let previous, index < previous.elements.count else { return nil }
        return previous.elements[index]
    }
}

/// The `Encoder` one value's `encode(to:)` receives.
private final class NestedEncoder: Encoder, SingleValueEncodingContainer {
    let root: DocumentEncoder
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var content: Slot?
    /// The node of the value at the same place last time.
    let previous: DocumentEncoder.MemoNode?

    init(_ root: DocumentEncoder, codingPath: [any CodingKey], previous: DocumentEncoder.MemoNode?) {
        self.root = root
        self.codingPath = codingPath
        self.previous = previous
    }

    /// The nodes of the parts the value encoded in a keyed container.
    var memoMembers: [(key: String, node: DocumentEncoder.MemoNode)] {
        ObjectBuilder.held(in: content)?.memoMembers ?? []
    }

    /// The nodes of the parts the value encoded in an unkeyed container.
    var memoElements: [DocumentEncoder.MemoNode?] {
        ArrayBuilder.held(in: content)?.memoElements ?? []
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(
            KeyedContainer<Key>(root: root, builder: builder(for: "a keyed container"), codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedContainer(root: root, builder: builder(for: "an unkeyed container"), codingPath: codingPath)
    }

    /// The builder of the container the value asks for (`container`, in words): the one it has, or a new
    /// one in its slot, which takes from last time unless the value already encoded something else (a
    /// misuse, noted).
    private func builder<Builder: ContainerBuilder>(for container: String) -> Builder {
        if let existing = Builder.held(in: content) { return existing }
        if content != nil { root.noteMisuse("asked for \(container) after encoding something else", at: codingPath) }
        let builder = Builder(previous: content == nil ? previous : nil)
        content = builder.slot
        return builder
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
    func encode<T: Encodable>(_ value: T) throws { set(try root.part(value, at: codingPath, previous: nil).document) }
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
        let name = key.stringValue
        let (document, node) = try root.part(value, at: codingPath + [key], previous: builder.previousMember(name))
        builder.set(.value(document), for: name, node: node)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectBuilder(previous: nil)
        builder.set(.object(nested), for: key.stringValue)
        return KeyedEncodingContainer(
            KeyedContainer<NestedKey>(root: root, builder: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayBuilder(previous: nil)
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
    private func append(_ value: JSONValue) { builder.append(.value(value)) }

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
        let (document, node) = try root.part(value, at: nextPath, previous: builder.previousElement(at: count))
        builder.append(.value(document), node: node)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectBuilder(previous: nil)
        let path = nextPath
        builder.append(.object(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(root: root, builder: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ArrayBuilder(previous: nil)
        let path = nextPath
        builder.append(.array(nested))
        return UnkeyedContainer(root: root, builder: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let index = count
        builder.append(.value(.object([:])))
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
        nested = NestedEncoder(root, codingPath: codingPath, previous: nil)
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
