/// The parts `Root` declares secret (``SecretSettings``), as errors, log lines and tools ask about them:
/// found in its schema, where nested types mark their own parts; where the schema cannot be worked out,
/// the root type's own paths.
extension DocumentPipeline {
    /// Whether the value at `path` is a secret the type declares: the part there, or one above it, is.
    func isSecret(at path: ValuePath) -> Bool {
        if let index = secretIndex { return index.isSecret(at: path) }
        return Self.secretPaths.contains { path.components.starts(with: $0.components) }
    }

    /// Whether the value at `path` is, lies in or holds a secret the type declares: what an error must not
    /// quote.
    func containsSecrets(at path: ValuePath) -> Bool {
        if let index = secretIndex { return index.containsSecrets(at: path) }
        return Self.secretPaths.contains {
            path.components.starts(with: $0.components) || $0.components.starts(with: path.components)
        }
    }

    /// The paths of the declared secrets `document` (the value, encoded) holds.
    func secretPaths(in document: JSONValue) -> [ValuePath] {
        if let index = secretIndex { return index.secretPaths(in: document) }
        return Self.secretPaths.filter { document[path: $0] != nil }
    }

    /// The paths (from the root) of the declared secrets `value`, the part at `path`, holds.
    func secretPaths(in value: JSONValue, at path: ValuePath) -> [ValuePath] {
        if let index = secretIndex { return index.secretPaths(in: value, at: path) }
        return Self.secretPaths.compactMap { secret in
            if path.components.starts(with: secret.components) { return path }
            guard secret.components.starts(with: path.components),
                value[path: ValuePath(Array(secret.components.dropFirst(path.components.count)))] != nil
            else { return nil }
            return secret
        }
    }

    /// Whether `Root` declares any part secret.
    var containsSecrets: Bool {
        secretIndex?.containsSecrets ?? !Self.secretPaths.isEmpty
    }

    /// The schema's index, when the schema can be worked out.
    private var secretIndex: SchemaIndex? { try? schema.index() }

    /// The secret paths `Root` itself declares.
    private static var secretPaths: [ValuePath] {
        (Root.self as? any SecretSettings.Type)?.secretPaths ?? []
    }
}
