extension JSONValue {
    /// This value with every scalar replaced by asterisks: how a tool shows a secret. Numbers and booleans
    /// are masked too (PINs, counters); the shape (objects, arrays, null) stays.
    public var masked: JSONValue {
        switch self {
        case .array(let values): .array(values.map(\.masked))
        case .object(let values): .object(values.mapValues(\.masked))
        case .null: .null
        default: .string("********")
        }
    }

    /// This value, the part at `path` of a root's value, with the values at `secrets` (paths from the root,
    /// as ``ReadableLens/secretPaths`` gives them) masked: the whole value when a secret holds it, the secrets
    /// inside it otherwise.
    public func masking(_ secrets: [ValuePath], at path: ValuePath) -> JSONValue {
        var shown = self
        for secret in secrets {
            if path.components.starts(with: secret.components) { return masked }
            guard secret.components.starts(with: path.components) else { continue }
            let inside = ValuePath(Array(secret.components.dropFirst(path.components.count)))
            if let part = shown[path: inside] { shown[path: inside] = part.masked }
        }
        return shown
    }
}
