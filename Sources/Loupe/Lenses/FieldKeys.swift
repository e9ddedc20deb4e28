import Foundation

/// The coding key each stored property of a type is encoded under, found from the type's own `Codable`
/// conformance: the one source of the names in every path Loupe shows or takes.
///
/// A property's Swift name and its key in a document differ wherever a type declares `CodingKeys`
/// (`apiToken = "api_token"`) or writes its coding by hand, so the names are learnt by decoding: the type
/// is decoded with a probe decoder that hands each key it asks for values marked with that key (strings
/// holding `loupe-probe-3`, numbers `104`), and each stored property's value, encoded again, shows the
/// marks of the key it was read from. A property whose value carries no mark (a `Bool`, an enum's case, an
/// absent optional) is told by decoding again with one key's values changed (`true`, the last case,
/// absent) and seeing which property changed; the last property and key left over go together.
///
/// A type no value can be made up for (an enum that is not `CaseIterable` names its cases nowhere a probe
/// can read) is decoded from `sample`, a value of the type when one is at hand, and told by its value:
/// the key whose sample value is the property's; properties holding the same value go in the order they
/// are declared, as a synthesized `init(from:)` reads them. What a sample tells is kept, and a few more
/// samples are tried for what it could not. Decoding runs the type's `init(from:)` with made-up values:
/// a type whose decoding traps on values it does not expect should be `DefaultProviding`, whose default
/// the probe takes as it is. The keys are the type's coding keys, before a key strategy
/// (``DocumentCoding/documentKey(forCodingKey:)``).
enum FieldKeys {
    /// The coding key of each stored property of `type`, in the order of ``StoredField/all(of:)``; `nil` for
    /// a property that is not encoded or could not be told. Empty for a type that is not `Codable`.
    static func keys<Part>(of type: Part.Type, sample: Part?) -> [String?] {
        let id = ObjectIdentifier(type)
        if let known = found.withLock({ $0[id] }), known.isSettled || sample == nil { return known.keys }
        return probe(type, sample: sample)
    }

    /// The coding key of the stored property at `index` in ``StoredField/all(of:)``; probes again, with
    /// `sample`, only while that property is not told yet.
    static func key<Part>(of type: Part.Type, field index: Int, sample: Part?) -> String? {
        let id = ObjectIdentifier(type)
        if let known = found.withLock({ $0[id] }),
            known.keys.indices.contains(index) && known.keys[index] != nil || known.isSettled || sample == nil
        {
            return known.keys.indices.contains(index) ? known.keys[index] : nil
        }
        let keys = probe(type, sample: sample)
        return keys.indices.contains(index) ? keys[index] : nil
    }

    private static func probe<Part>(_ type: Part.Type, sample: Part?) -> [String?] {
        guard let codable = Part.self as? any (Decodable & Encodable).Type else { return [] }
        func probe<T: Decodable & Encodable>(_: T.Type) -> (keys: [String?], settled: Bool) {
            FieldProbe<T>(sample: sample as? T).run()
        }
        let result = probe(codable)
        return found.withLock { found in
            var known = found[ObjectIdentifier(type)] ?? Known(keys: result.keys)
            // A key once told is the type's: later probes only fill in the ones not told yet.
            known.keys = zip(known.keys, result.keys).map { $0 ?? $1 }
            known.isSettled = known.isSettled || result.settled
            known.samplesTried += sample == nil ? 0 : 1
            found[ObjectIdentifier(type)] = known
            return known.keys
        }
    }

    /// What is known of a type's keys.
    private struct Known {
        var keys: [String?]
        /// Whether the keys were told without a sample's values, which no other sample can change; or
        /// ``maximumSamples`` samples were tried.
        var isSettled = false
        var samplesTried = 0 {
            didSet { if samplesTried >= FieldKeys.maximumSamples { isSettled = true } }
        }
    }

    /// How many samples are tried for a type whose keys depend on them (two parts read from the sample
    /// with the same value cannot be told apart), before the keys not told stay so.
    private static let maximumSamples = 8

    private static let found = Locked<[ObjectIdentifier: Known]>([:])
}

extension DocumentCoding {
    /// The key a document holds for the coding key `key`: `key` itself, or as the key strategy converts
    /// it (`apiToken` → `api_token` under `convertToSnakeCase`), exactly as `JSONEncoder` converts it.
    func documentKey(forCodingKey key: String) -> String {
        let isSnakeCase: Bool
        switch keyEncodingStrategy {
        case .useDefaultKeys: return key
        case .convertToSnakeCase: isSnakeCase = true
        default: isSnakeCase = false
        }
        if isSnakeCase, let known = snakeCaseKeys.withLock({ $0[key] }) { return known }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = keyEncodingStrategy
        let converted =
            (try? encoder.encode(OneKey(key: key)))
            .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Int] }?.keys.first ?? key
        if isSnakeCase { snakeCaseKeys.withLock { $0[key] = converted } }
        return converted
    }
}

/// Coding keys converted to snake_case, by coding key: a conversion goes through `JSONEncoder` once.
private let snakeCaseKeys = Locked<[String: String]>([:])

/// A value encoded under one key, to learn what a key strategy makes of the key.
private struct OneKey: Encodable {
    let key: String
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: DocumentCodingKey.self)
        try container.encode(0, forKey: DocumentCodingKey(key))
    }
}

/// One probe of a type: decodes it with marked values and tells each stored property's key.
private struct FieldProbe<T: Decodable & Encodable> {
    let fields = StoredField.all(of: T.self)
    /// The sample's document, in coding keys.
    let sample: [String: JSONValue]?

    init(sample: T?) {
        if let sample, case .object(let object)? = try? DocumentCoding().encode(sample) {
            self.sample = object
        } else {
            self.sample = nil
        }
    }

    /// The keys told, and whether they are settled: told with no value read from the sample.
    func run() -> (keys: [String?], settled: Bool) {
        let base = ProbeSession(changing: nil, sample: sample)
        guard let value = try? T(from: ProbeDecoder(session: base)) else {
            return (fields.map { _ in nil }, false)
        }
        let keys = base.keys
        let encoded = fields.map { encode(value[keyPath: $0.keyPath]) }
        var keyOfField = encoded.map { $0.flatMap { Self.mark(in: $0, keyCount: keys.count) } }
        // Properties with no mark: decode again with one unclaimed key's values changed.
        for changed in keys.indices where !keyOfField.contains(changed) {
            let unresolved = fields.indices.filter { keyOfField[$0] == nil && encoded[$0] != nil }
            guard !unresolved.isEmpty else { break }
            guard let other = try? T(from: ProbeDecoder(session: ProbeSession(changing: changed, sample: sample)))
            else { continue }
            let moved = unresolved.filter { encode(other[keyPath: fields[$0].keyPath]) != encoded[$0] }
            if moved.count == 1 { keyOfField[moved[0]] = changed }
        }
        // Properties read from the sample (no value could be made up): the keys whose sample values are
        // theirs. Where several properties hold the same value under as many keys, they go in order, as a
        // synthesized `init(from:)` reads its properties in the order they are declared.
        if let sample {
            let waiting = fields.indices.filter { keyOfField[$0] == nil && encoded[$0] != nil }
            for value in Set(waiting.compactMap { encoded[$0] }) {
                let holders = waiting.filter { encoded[$0] == value }
                let same = keys.indices.filter { !keyOfField.contains($0) && sample[keys[$0]] == value }
                guard holders.count == same.count else { continue }
                for (field, key) in zip(holders, same) { keyOfField[field] = key }
            }
        }
        let unclaimed = keys.indices.filter { !keyOfField.contains($0) }
        let unresolved = fields.indices.filter { keyOfField[$0] == nil && encoded[$0] != nil }
        if unclaimed.count == 1, unresolved.count == 1 { keyOfField[unresolved[0]] = unclaimed[0] }
        return (keyOfField.map { $0.map { keys[$0] } }, !base.readSample)
    }

    /// A property's value as a document, to read its marks and compare it; `nil` where it cannot be encoded.
    private func encode(_ value: Any?) -> JSONValue? {
        guard let value = value as? any Encodable else { return nil }
        return try? DocumentCoding().encode(value)
    }

    /// The one key whose marks `document` carries: strings first, then numbers.
    private static func mark(in document: JSONValue, keyCount: Int) -> Int? {
        var strings = Set<Int>()
        var numbers = Set<Int>()
        func walk(_ document: JSONValue) {
            switch document {
            case .string(let text):
                // The mark's digits, wherever the mark is in the text (a URL holds it in its host).
                if let prefix = text.range(of: ProbeSession.markPrefix),
                    let key = Int(text[prefix.upperBound...].prefix(while: \.isNumber)),
                    key < keyCount
                {
                    strings.insert(key)
                }
            case .integer(let number):
                let key = number - ProbeSession.markBase
                if key >= 0, key < keyCount { numbers.insert(key) }
            case .double(let number):
                if let whole = Int(exactly: number) { walk(.integer(whole)) }
            case .array(let elements): elements.forEach(walk)
            case .object(let members): members.values.forEach(walk)
            default: break
            }
        }
        walk(document)
        let marks = strings.isEmpty ? numbers : strings
        return marks.count == 1 ? marks.first : nil
    }
}

/// What one probe decode hands out and learns: the keys the type asks for at its top level, in order.
private final class ProbeSession {
    static let markPrefix = "loupe-probe-"
    static let markBase = 101
    /// How deep values are made up; below, optionals are absent and collections empty, so that a
    /// recursive type ends.
    static let maximumDepth = 8

    /// The key whose values are changed (`true`, the last case, absent) in this decode.
    let changing: Int?
    let sample: [String: JSONValue]?
    private(set) var keys: [String] = []
    /// Whether a value was read from the sample: what the probe tells then depends on the sample's values.
    private(set) var readSample = false

    init(changing: Int?, sample: [String: JSONValue]?) {
        self.changing = changing
        self.sample = sample
    }

    /// The index of a top-level key, noted the first time the type asks for it.
    func index(of key: any CodingKey) -> Int {
        if let known = keys.firstIndex(of: key.stringValue) { return known }
        keys.append(key.stringValue)
        return keys.count - 1
    }

    /// A made-up scalar marked with `mark`.
    func scalar<S>(_ type: S.Type, mark: Int, changed: Bool, at codingPath: [any CodingKey]) throws -> S {
        let made: Any? =
            switch type {
            case is Bool.Type: changed
            case is String.Type: Self.markPrefix + String(mark)
            case is Double.Type: Double(Self.markBase + mark)
            case is Float.Type: Float(Self.markBase + mark)
            case let integer as any FixedWidthInteger.Type: integer.init(truncatingIfNeeded: Self.markBase + mark)
            default: nil
            }
        guard let made = made as? S else {
            throw DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "probe"))
        }
        return made
    }

    /// A made-up value of `type` marked with `mark`.
    func value<V: Decodable>(
        _ type: V.Type, mark: Int, changed: Bool, depth: Int, at codingPath: [any CodingKey]
    ) throws -> V {
        if let choices = V.self as? any CaseIterable.Type {
            func pick<C: CaseIterable>(_: C.Type) -> Any? { changed ? Array(C.allCases).last : C.allCases.first }
            if let made = pick(choices) as? V { return made }
        }
        if let defaulted = V.self as? any DefaultProviding.Type, let made = defaulted.defaultValue as? V { return made }
        if let made = foundationValue(type, mark: mark, changed: changed) { return made }
        let place = MadeUp(session: self, mark: mark, changed: changed, depth: depth, codingPath: codingPath)
        return try V(from: ProbeDecoder(session: self, place: place))
    }

    /// A value of a Foundation type whose own decoding refuses the probe's scalars: a URL and a decimal
    /// carry the mark; a UUID cannot, and differs when its values are the changed ones.
    private func foundationValue<V>(_ type: V.Type, mark: Int, changed: Bool) -> V? {
        switch type {
        case is URL.Type: URL(string: "http://\(Self.markPrefix)\(mark).invalid") as? V
        case is Decimal.Type: Decimal(Self.markBase + mark) as? V
        case is UUID.Type: UUID(uuidString: "00000000-0000-0000-0000-00000000000\(changed ? 1 : 0)") as? V
        default: nil
        }
    }

    /// The value at a top-level key: made up, or read from the sample where a made-up one does not decode.
    func topValue<V: Decodable>(_ type: V.Type, forKey key: any CodingKey) throws -> V {
        let mark = index(of: key)
        do {
            return try value(type, mark: mark, changed: changing == mark, depth: 1, at: [key])
        } catch {
            guard let document = sample?[key.stringValue] else { throw error }
            readSample = true
            return try DocumentCoding().decode(V.self, from: document)
        }
    }
}

/// Where a made-up value is: the top-level key it is marked with, whether its values are the changed ones,
/// how deep it lies, and its coding path.
private struct MadeUp {
    let session: ProbeSession
    let mark: Int
    let changed: Bool
    let depth: Int
    let codingPath: [any CodingKey]

    /// Below the deepest level optionals are absent and collections empty.
    var isDeep: Bool { depth >= ProbeSession.maximumDepth }

    /// The place one level down, under `key` when there is one.
    func below(_ key: (any CodingKey)? = nil) -> MadeUp {
        let path = codingPath + (key.map { [$0] } ?? [])
        return MadeUp(session: session, mark: mark, changed: changed, depth: depth + 1, codingPath: path)
    }

    /// A value's place in this container, under `key`.
    func at(_ key: any CodingKey) -> MadeUp {
        MadeUp(session: session, mark: mark, changed: changed, depth: depth, codingPath: codingPath + [key])
    }

    /// A made-up value of `type` here: a scalar, or one decoded one level down.
    func value<V: Decodable>(_ type: V.Type) throws -> V {
        if let scalar = try? session.scalar(type, mark: mark, changed: changed, at: codingPath) { return scalar }
        return try session.value(type, mark: mark, changed: changed, depth: depth + 1, at: codingPath)
    }
}

/// The decoder of a probe: at the top level (no place) it notes the keys the type asks for; below, it
/// makes up values marked with the top-level key they are under.
private struct ProbeDecoder: Decoder {
    let session: ProbeSession
    var place: MadeUp? = nil
    var codingPath: [any CodingKey] { place?.codingPath ?? [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// A place for a type that decodes itself from one value or an array at the top level.
    private var anyPlace: MadeUp {
        place ?? MadeUp(session: session, mark: 0, changed: false, depth: 0, codingPath: [])
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if let place { return KeyedDecodingContainer(MadeUpKeyed<Key>(place: place)) }
        return KeyedDecodingContainer(TopKeyed<Key>(session: session))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { MadeUpUnkeyed(place: anyPlace) }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { MadeUpSingle(place: anyPlace) }
}

/// The type's own keyed container: every key is present (absent where its values are the changed ones).
private struct TopKeyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let session: ProbeSession
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] { (session.sample?.keys).map { $0.compactMap(Key.init(stringValue:)) } ?? [] }

    func contains(_ key: Key) -> Bool { session.changing != session.index(of: key) }
    func decodeNil(forKey key: Key) throws -> Bool { session.changing == session.index(of: key) }

    func decode<V: Decodable>(_ type: V.Type, forKey key: Key) throws -> V {
        try session.topValue(type, forKey: key)
    }

    func decodeIfPresent<V: Decodable>(_ type: V.Type, forKey key: Key) throws -> V? {
        guard contains(key) else { return nil }
        return try? decode(type, forKey: key)
    }

    /// The place of the values under `key`.
    private func place(_ key: Key) -> MadeUp {
        let mark = session.index(of: key)
        return MadeUp(session: session, mark: mark, changed: session.changing == mark, depth: 1, codingPath: [key])
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(MadeUpKeyed<NestedKey>(place: place(key)))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        MadeUpUnkeyed(place: place(key))
    }

    func superDecoder() throws -> any Decoder {
        ProbeDecoder(
            session: session, place: MadeUp(session: session, mark: 0, changed: false, depth: 1, codingPath: []))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { ProbeDecoder(session: session, place: place(key)) }
}

/// A keyed container below the top level: holds one made-up entry, and none below the deepest level.
private struct MadeUpKeyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let place: MadeUp
    var codingPath: [any CodingKey] { place.codingPath }

    var allKeys: [Key] {
        place.isDeep ? [] : [Key(stringValue: ProbeSession.markPrefix + String(place.mark))].compactMap { $0 }
    }
    func contains(_ key: Key) -> Bool { !place.isDeep }
    func decodeNil(forKey key: Key) throws -> Bool { place.isDeep }

    func decode<V: Decodable>(_ type: V.Type, forKey key: Key) throws -> V { try place.at(key).value(type) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(MadeUpKeyed<NestedKey>(place: place.below(key)))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        MadeUpUnkeyed(place: place.below(key))
    }

    func superDecoder() throws -> any Decoder { ProbeDecoder(session: place.session, place: place.below()) }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ProbeDecoder(session: place.session, place: place.below(key))
    }
}

/// An array below the top level: one made-up element, none below the deepest level.
private struct MadeUpUnkeyed: UnkeyedDecodingContainer {
    let place: MadeUp
    private(set) var currentIndex = 0

    init(place: MadeUp) {
        self.place = place
    }

    var codingPath: [any CodingKey] { place.codingPath }
    var count: Int? { place.isDeep ? 0 : 1 }
    var isAtEnd: Bool { currentIndex >= (count ?? 0) }

    mutating func decodeNil() throws -> Bool { false }

    /// The key of the next element, which it takes.
    private mutating func next() throws -> any CodingKey {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                Any.self, .init(codingPath: codingPath, debugDescription: "probe: no more elements"))
        }
        defer { currentIndex += 1 }
        return DocumentCodingKey(index: currentIndex)
    }

    mutating func decode<V: Decodable>(_ type: V.Type) throws -> V { try place.at(try next()).value(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(MadeUpKeyed<NestedKey>(place: place.below(try next())))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        MadeUpUnkeyed(place: place.below(try next()))
    }

    mutating func superDecoder() throws -> any Decoder {
        ProbeDecoder(session: place.session, place: place.below(try next()))
    }
}

/// A single value below the top level: made up, absent below the deepest level.
private struct MadeUpSingle: SingleValueDecodingContainer {
    let place: MadeUp
    var codingPath: [any CodingKey] { place.codingPath }

    func decodeNil() -> Bool { place.isDeep }

    func decode<V: Decodable>(_ type: V.Type) throws -> V { try place.value(type) }
}
