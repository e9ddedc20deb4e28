import Foundation

/// A schema being built: JSON Schema keywords.
typealias SchemaObject = [String: JSONValue]

/// Derives the schema of a `Decodable` type by decoding it, from its encoded default where there is one,
/// with a decoder that records what each part asks for (``ProbeDecoder``).
final class SchemaBuilder {
    let coding: DocumentCoding
    /// Document keys of coding keys, under the coding's key strategy.
    private var documentKeys: [String: String] = [:]

    init(coding: DocumentCoding) {
        self.coding = coding
    }

    /// The schema of `T` and a value of it: decoded from `backing` (the default's part), or a placeholder
    /// where the default has none.
    func probe<T: Decodable>(_ type: T.Type, backing: JSONValue?) throws -> (schema: SchemaObject, value: T) {
        var (schema, value) = try probeShape(type, backing: backing)
        if let backing, schema["default"] == nil { schema["default"] = backing }
        return (schema, value)
    }

    /// The schema of `T` when the default holds none of it, or `{}` (any value) when no placeholder decodes.
    func schemaWithoutDefault<T: Decodable>(of type: T.Type) -> SchemaObject {
        (try? probeShape(type, backing: nil).schema) ?? [:]
    }

    private func probeShape<T: Decodable>(
        _ type: T.Type, backing: JSONValue?
    ) throws -> (schema: SchemaObject, value: T) {
        if let choices = T.self as? any (CaseIterable & Encodable).Type {
            return try enumeration(choices, T.self, backing: backing)
        }
        if let leaf = leafSchema(of: T.self) {
            return (leaf.schema, try coding.decode(T.self, from: backing ?? leaf.placeholder))
        }
        if let optional = T.self as? any OptionalSchema.Type {
            let (schema, value) = try optional.probeOptional(self, backing: backing)
            return (schema, value as! T)
        }
        if let sequence = T.self as? any SequenceSchema.Type {
            let items = sequence.elementSchema(self, backing: backing.flatMap(\.firstElement))
            return (
                ["type": .string("array"), "items": .object(items)],
                try coding.decode(T.self, from: backing ?? .array([]))
            )
        }
        if let dictionary = T.self as? any DictionarySchema.Type {
            let values = dictionary.valueSchema(self, backing: backing.flatMap(\.firstMemberValue))
            return (
                ["type": .string("object"), "additionalProperties": .object(values)],
                try coding.decode(T.self, from: backing ?? .object([:]))
            )
        }
        let shape = ProbeShape()
        let value = try T(from: ProbeDecoder(builder: self, backing: backing, shape: shape))
        var schema = shape.schema
        if let validated = T.self as? any Validated.Type { apply(validated, of: value, to: &schema) }
        if let described = T.self as? any DescribedSettings.Type { apply(described.descriptions, to: &schema) }
        if let secret = T.self as? any SecretSettings.Type {
            for path in secret.secretPaths {
                schema.modifyPart(at: path.components[...]) { $0["writeOnly"] = .bool(true) }
            }
        }
        return (schema, value)
    }

    /// A `CaseIterable` type: its encoded cases, as `enum`.
    private func enumeration<C: CaseIterable & Encodable, T: Decodable>(
        _ cases: C.Type, _ type: T.Type, backing: JSONValue?
    ) throws -> (schema: SchemaObject, value: T) {
        let choices = try C.allCases.map { try coding.encode($0) }
        var schema: SchemaObject = ["enum": .array(choices)]
        if let kind = choices.first?.schemaType, choices.allSatisfy({ $0.schemaType == kind }) {
            schema["type"] = .string(kind)
        }
        if let backing { return (schema, try coding.decode(T.self, from: backing)) }
        guard let first = C.allCases.first as? T else { throw SchemaProbeError.noPlaceholder }
        return (schema, first)
    }

    /// The schema of a type the decoder reads from one scalar, and a placeholder value for it.
    private func leafSchema(of type: Any.Type) -> (schema: SchemaObject, placeholder: JSONValue)? {
        switch type {
        case is Bool.Type: return (["type": .string("boolean")], .bool(false))
        case is String.Type: return (["type": .string("string")], .string(""))
        case is Double.Type, is Decimal.Type: return (["type": .string("number")], .integer(0))
        case is Float.Type:
            let bound = Double(Float.greatestFiniteMagnitude)
            return (["type": .string("number"), "minimum": .double(-bound), "maximum": .double(bound)], .integer(0))
        case let integer as any FixedWidthInteger.Type:
            var schema: SchemaObject = ["type": .string("integer")]
            if let minimum = integer.schemaMinimum { schema["minimum"] = .integer(minimum) }
            if let maximum = integer.schemaMaximum { schema["maximum"] = .integer(maximum) }
            return (schema, .integer(0))
        case is URL.Type:
            return (["type": .string("string"), "format": .string("uri")], .string("http://example.invalid"))
        case is Data.Type: return (["type": .string("string"), "contentEncoding": .string("base64")], .string(""))
        case is Date.Type:
            switch coding.dateEncodingStrategy {
            case .iso8601:
                return (["type": .string("string"), "format": .string("date-time")], .string("2001-01-01T00:00:00Z"))
            default: return (["type": .string("number")], .integer(0))
            }
        case is JSONValue.Type: return ([:], .null)
        default: return nil
        }
    }

    /// Adds what JSON Schema can say of `type`'s rules to the parts they are about.
    private func apply<V: Validated>(_ type: V.Type, of value: Any, to schema: inout SchemaObject) {
        for rule in V.rules {
            let path = (value as? V).map { rule.path(in: $0, coding: coding) } ?? rule.path
            schema.modifyPart(at: path.components[...]) { part in
                let constraint = rule.constraint
                let keywords: [(String, JSONValue?)] = [
                    ("minimum", constraint.minimum), ("exclusiveMinimum", constraint.exclusiveMinimum),
                    ("maximum", constraint.maximum), ("exclusiveMaximum", constraint.exclusiveMaximum),
                    ("enum", constraint.choices.map(JSONValue.array)),
                    ("pattern", constraint.pattern.map(JSONValue.string)),
                ]
                for case let (keyword, value?) in keywords { part[keyword] = value }
            }
        }
    }

    /// Adds `descriptions` to the parts they are about.
    private func apply(_ descriptions: [ValuePath: String], to schema: inout SchemaObject) {
        for (path, text) in descriptions {
            schema.modifyPart(at: path.components[...]) { $0["description"] = .string(text) }
        }
    }

    /// The key a document holds for `key`, under the coding's key strategy (converted as `JSONEncoder`
    /// converts it).
    func documentKey(for key: any CodingKey) -> String {
        guard case .convertToSnakeCase = coding.keyEncodingStrategy else { return key.stringValue }
        if let known = documentKeys[key.stringValue] { return known }
        let converted = coding.documentKey(forCodingKey: key.stringValue)
        documentKeys[key.stringValue] = converted
        return converted
    }
}

enum SchemaProbeError: Error {
    /// A type with no value to stand in for it.
    case noPlaceholder
}

// MARK: - Containers the builder knows by type

private protocol OptionalSchema {
    static func probeOptional(_ builder: SchemaBuilder, backing: JSONValue?) throws -> (SchemaObject, Self)
}

extension Optional: OptionalSchema where Wrapped: Decodable {
    fileprivate static func probeOptional(_ builder: SchemaBuilder, backing: JSONValue?) throws -> (SchemaObject, Self)
    {
        if let backing, backing != .null {
            let (schema, value) = try builder.probe(Wrapped.self, backing: backing)
            return (schema.allowingNull, Self.some(value))
        }
        var schema = builder.schemaWithoutDefault(of: Wrapped.self).allowingNull
        schema["default"] = .null
        return (schema, Self.none)
    }
}

private protocol SequenceSchema {
    static func elementSchema(_ builder: SchemaBuilder, backing: JSONValue?) -> SchemaObject
}

extension Array: SequenceSchema where Element: Decodable {
    fileprivate static func elementSchema(_ builder: SchemaBuilder, backing: JSONValue?) -> SchemaObject {
        builder.elementSchema(of: Element.self, backing: backing)
    }
}

extension Set: SequenceSchema where Element: Decodable {
    fileprivate static func elementSchema(_ builder: SchemaBuilder, backing: JSONValue?) -> SchemaObject {
        builder.elementSchema(of: Element.self, backing: backing)
    }
}

private protocol DictionarySchema {
    static func valueSchema(_ builder: SchemaBuilder, backing: JSONValue?) -> SchemaObject
}

extension Dictionary: DictionarySchema where Key == String, Value: Decodable {
    fileprivate static func valueSchema(_ builder: SchemaBuilder, backing: JSONValue?) -> SchemaObject {
        builder.elementSchema(of: Value.self, backing: backing)
    }
}

extension SchemaBuilder {
    /// The schema of a collection's elements, from one the default holds if any, without a `default`
    /// (each element has its own).
    fileprivate func elementSchema<T: Decodable>(of type: T.Type, backing: JSONValue?) -> SchemaObject {
        var schema = backing.flatMap { try? probe(T.self, backing: $0).schema } ?? schemaWithoutDefault(of: T.self)
        schema.removeValue(forKey: "default")
        return schema
    }
}

extension FixedWidthInteger {
    /// The type's least value, when a JSON integer holds it.
    fileprivate static var schemaMinimum: Int? { Int(exactly: min) }
    /// The type's greatest value, when a JSON integer holds it.
    fileprivate static var schemaMaximum: Int? { Int(exactly: max) }
}

// MARK: - Schema objects

extension SchemaObject {
    /// This schema, also taking `null`.
    fileprivate var allowingNull: SchemaObject {
        if case .string(let type)? = self["type"] {
            var schema = self
            schema["type"] = .array([.string(type), .string("null")])
            if case .array(let choices)? = schema["enum"] { schema["enum"] = .array(choices + [.null]) }
            return schema
        }
        if isEmpty { return self }
        return ["anyOf": .array([.object(self), .object(["type": .string("null")])])]
    }

    /// Changes the schema of the part at `path` (through `properties`, `items` and `additionalProperties`),
    /// if this schema describes it.
    fileprivate mutating func modifyPart(
        at path: ArraySlice<ValuePath.Component>, _ change: (inout SchemaObject) -> Void
    ) {
        guard let first = path.first else { return change(&self) }
        let rest = path.dropFirst()
        func modify(_ keyword: String, key: String? = nil) -> Bool {
            guard var container = self[keyword] else { return false }
            if let key {
                guard case .object(var members) = container, case .object(var part)? = members[key] else {
                    return false
                }
                part.modifyPart(at: rest, change)
                members[key] = .object(part)
                container = .object(members)
            } else {
                guard case .object(var part) = container else { return false }
                part.modifyPart(at: rest, change)
                container = .object(part)
            }
            self[keyword] = container
            return true
        }
        let found =
            switch first {
            case .key(let key): modify("properties", key: key) || modify("additionalProperties")
            case .index: modify("items")
            }
        // An optional part's schema: the choice that is not `null`.
        guard !found, case .array(var choices)? = self["anyOf"],
            let index = choices.firstIndex(where: { $0 != .object(["type": .string("null")]) }),
            case .object(var choice) = choices[index]
        else { return }
        choice.modifyPart(at: path, change)
        choices[index] = .object(choice)
        self["anyOf"] = .array(choices)
    }
}

extension JSONValue {
    /// JSON Schema's name of this value's type.
    package var schemaType: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .double, .exactNumber: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    fileprivate var firstElement: JSONValue? {
        if case .array(let elements) = self { return elements.first }
        return nil
    }

    fileprivate var firstMemberValue: JSONValue? {
        if case .object(let members) = self { return members.keys.min().flatMap { members[$0] } }
        return nil
    }
}

// MARK: - The recording decoder

/// What a type's `init(from:)` asked of the probe decoder: the container it took and what it read there.
final class ProbeShape {
    /// A part read: its schema, or the shape of a nested container.
    enum Part {
        case schema(SchemaObject)
        case shape(ProbeShape)

        var schema: SchemaObject {
            switch self {
            case .schema(let schema): schema
            case .shape(let shape): shape.schema
            }
        }
    }

    enum Kind {
        case unknown
        case object(properties: [String: Part])
        case array(items: Part?)
        case single(SchemaObject)
    }

    var kind = Kind.unknown

    /// The recorded schema.
    var schema: SchemaObject {
        switch kind {
        case .unknown: return [:]
        case .object(let properties):
            return ["type": .string("object"), "properties": .object(properties.mapValues { .object($0.schema) })]
        case .array(let items):
            guard var element = items?.schema else { return ["type": .string("array")] }
            element.removeValue(forKey: "default")
            return ["type": .string("array"), "items": .object(element)]
        case .single(let schema): return schema
        }
    }

    func record(_ part: Part, forKey key: String) {
        var properties: [String: Part] = [:]
        if case .object(let known) = kind { properties = known }
        properties[key] = part
        kind = .object(properties: properties)
    }

    func recordElement(_ part: Part) {
        if case .array(let items?) = kind, !items.schema.isEmpty { return }
        kind = .array(items: part)
    }

    func beginObject() {
        if case .object = kind { return }
        kind = .object(properties: [:])
    }

    func beginArray() {
        if case .array = kind { return }
        kind = .array(items: nil)
    }
}

/// A decoder over the default's part (or nothing) that hands each value asked for to the
/// ``SchemaBuilder`` and records its schema in a ``ProbeShape``.
private struct ProbeDecoder: Decoder {
    let builder: SchemaBuilder
    let backing: JSONValue?
    let shape: ProbeShape
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        shape.beginObject()
        var members: [String: JSONValue] = [:]
        if case .object(let object)? = backing { members = object }
        return KeyedDecodingContainer(ProbeKeyedContainer<Key>(decoder: self, members: members))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        shape.beginArray()
        var elements: [JSONValue] = []
        if case .array(let array)? = backing { elements = array }
        return ProbeUnkeyedContainer(decoder: self, elements: elements)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ProbeSingleValueContainer(decoder: self)
    }

    /// A decoder for a nested part, whose shape is recorded by `record`.
    func nested(_ backing: JSONValue?, at key: any CodingKey, record: (ProbeShape.Part) -> Void) -> ProbeDecoder {
        let shape = ProbeShape()
        record(.shape(shape))
        return ProbeDecoder(builder: builder, backing: backing, shape: shape, codingPath: codingPath + [key])
    }
}

private struct ProbeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ProbeDecoder
    let members: [String: JSONValue]
    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[decoder.builder.documentKey(for: key)] != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        let value = members[decoder.builder.documentKey(for: key)]
        return value == nil || value == .null
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let name = decoder.builder.documentKey(for: key)
        let (schema, value) = try decoder.builder.probe(T.self, backing: members[name])
        decoder.shape.record(.schema(schema), forKey: name)
        return value
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        let name = decoder.builder.documentKey(for: key)
        guard let member = members[name], member != .null else {
            decoder.shape.record(.schema(decoder.builder.schemaWithoutDefault(of: T.self).allowingNull), forKey: name)
            return nil
        }
        let (schema, value) = try decoder.builder.probe(T.self, backing: member)
        decoder.shape.record(.schema(schema.allowingNull), forKey: name)
        return value
    }

    // The standard library's own `decodeIfPresent` for these skips an absent key unrecorded.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try decodeIfPresent(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try decodeIfPresent(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try decodeIfPresent(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try decodeIfPresent(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try decodeIfPresent(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try decodeIfPresent(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try decodeIfPresent(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try decodeIfPresent(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try decodeIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try decodeIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try decodeIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try decodeIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try decodeIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try decodeIfPresent(type, key) }

    private func decodeIfPresent<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        let present: T? = try decodeIfPresent(type, forKey: key)
        return present
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try nested(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try nested(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { nested(name: "super", key: DocumentCodingKey("super")) }

    func superDecoder(forKey key: Key) throws -> any Decoder { nested(key) }

    private func nested(_ key: Key) -> ProbeDecoder {
        nested(name: decoder.builder.documentKey(for: key), key: key)
    }

    private func nested(name: String, key: any CodingKey) -> ProbeDecoder {
        decoder.nested(members[name], at: key) { decoder.shape.record($0, forKey: name) }
    }
}

private struct ProbeUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: ProbeDecoder
    let elements: [JSONValue]
    var currentIndex = 0
    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard !isAtEnd else { throw SchemaProbeError.noPlaceholder }
        let (schema, value) = try decoder.builder.probe(T.self, backing: elements[currentIndex])
        decoder.shape.recordElement(.schema(schema))
        currentIndex += 1
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try nextDecoder().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try nextDecoder().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try nextDecoder() }

    private mutating func nextDecoder() throws -> ProbeDecoder {
        guard !isAtEnd else { throw SchemaProbeError.noPlaceholder }
        defer { currentIndex += 1 }
        let shape = decoder.shape
        return decoder.nested(elements[currentIndex], at: DocumentCodingKey(index: currentIndex)) {
            shape.recordElement($0)
        }
    }
}

private struct ProbeSingleValueContainer: SingleValueDecodingContainer {
    let decoder: ProbeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.backing == nil || decoder.backing == .null }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (schema, value) = try decoder.builder.probe(T.self, backing: decoder.backing)
        decoder.shape.kind = .single(schema)
        return value
    }
}
