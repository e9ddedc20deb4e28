/// A settings type's ``SettingsSchema``, worked out the first time it is asked for and kept, with the
/// ``SchemaIndex`` that override layers and secret references walk to place and type their values.
final class SchemaCache: Sendable {
    private let make: @Sendable () throws -> SchemaIndex
    /// The index, or why the schema could not be worked out: the same type and default fail the same way,
    /// and the secrets a type declares are asked for at each commit a provider sees.
    private let made = Locked<Result<SchemaIndex, any Error>?>(nil)

    /// The schema `make` works out.
    init(_ make: @escaping @Sendable () throws -> SettingsSchema) {
        self.make = { SchemaIndex(try make()) }
    }

    private init(index make: @escaping @Sendable () throws -> SchemaIndex) {
        self.make = make
    }

    /// The schema of `Root`, whose default encodes (with `coding`) as `encodedDefault`, shared with the
    /// other roots of `Root` in the process that have the same default and strategies: a program that
    /// opens its settings again, or many roots of one type, works the schema out once.
    ///
    /// Strategies that cannot be compared (a closure, a formatter) are never shared. One schema is kept
    /// for each type and set of strategies: a root with another default replaces it.
    static func shared<Root: Decodable & Sendable>(
        for type: Root.Type, encodedDefault: JSONValue, coding: DocumentCoding
    ) -> SchemaCache {
        guard let strategies = coding.comparableStrategies else {
            return SchemaCache { try SettingsSchema(for: Root.self, encodedDefault: encodedDefault, coding: coding) }
        }
        let key = SharedKey(type: ObjectIdentifier(Root.self), strategies: strategies)
        return SchemaCache(index: {
            if let kept = sharedIndexes.withLock({ $0[key] }), kept.defaults == encodedDefault { return kept.index }
            let index = SchemaIndex(try SettingsSchema(for: Root.self, encodedDefault: encodedDefault, coding: coding))
            sharedIndexes.withLock { $0[key] = (encodedDefault, index) }
            return index
        })
    }

    private struct SharedKey: Hashable {
        var type: ObjectIdentifier
        var strategies: DocumentCoding.ComparableStrategies
    }

    /// The schemas shared in the process, with the encoded default each was worked out for.
    private static let sharedIndexes = Locked<[SharedKey: (defaults: JSONValue, index: SchemaIndex)]>([:])

    /// The schema, worked out once.
    func schema() throws -> SettingsSchema {
        try index().schema
    }

    /// The schema's index, made once.
    func index() throws -> SchemaIndex {
        if let result = made.withLock({ $0 }) { return try result.get() }
        let result = Result { try make() }
        return try made.withLock { made in
            if let raced = made { return raced }
            made = result
            return result
        }.get()
    }
}
