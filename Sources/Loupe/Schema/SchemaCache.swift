/// A settings type's ``SettingsSchema``, worked out the first time it is asked for and kept: override
/// layers place and type their values by it.
final class SchemaCache: Sendable {
    private let make: @Sendable () throws -> SettingsSchema
    private let made = Locked<SettingsSchema?>(nil)

    /// The schema `make` works out.
    init(_ make: @escaping @Sendable () throws -> SettingsSchema) {
        self.make = make
    }

    /// The schema, worked out once.
    func schema() throws -> SettingsSchema {
        if let schema = made.withLock({ $0 }) { return schema }
        let schema = try make()
        made.withLock { $0 = schema }
        return schema
    }
}
