/// A settings type's ``SettingsSchema``, worked out the first time it is asked for and kept, with the
/// ``SchemaIndex`` that override layers and secret references walk to place and type their values.
final class SchemaCache: Sendable {
    private let make: @Sendable () throws -> SettingsSchema
    private let made = Locked<SchemaIndex?>(nil)

    /// The schema `make` works out.
    init(_ make: @escaping @Sendable () throws -> SettingsSchema) {
        self.make = make
    }

    /// The schema, worked out once.
    func schema() throws -> SettingsSchema {
        try index().schema
    }

    /// The schema's index, made once.
    func index() throws -> SchemaIndex {
        if let index = made.withLock({ $0 }) { return index }
        let index = SchemaIndex(try make())
        return made.withLock { made in
            if let raced = made { return raced }
            made = index
            return index
        }
    }
}
