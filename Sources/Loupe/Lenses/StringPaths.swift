/// Reading and writing parts of a lens's value by a path in text, over its `Codable` encoding: for tools,
/// command lines and configuration UIs that do not know the Swift types.
///
/// ```swift
/// try root.value(atPath: "server.port")                        // .integer(8080)
/// try root.set(atPath: "features.beta", to: .bool(true))
/// try root.set(atPath: "server.port", to: .string("abc"))      // throws: server.port: expected an integer, got "abc"
/// try root.remove(atPath: "features.beta")
/// ```
///
/// Paths are ``ValuePath``s: `server.port`, `items[3].name`, `"key.with.dots"`.
extension Lens where Value: Encodable {
    /// The JSON encoding of the part at `path` (relative to this lens's value).
    ///
    /// - Throws: ``PathError`` when the path is malformed or names nothing; the error names the nearest
    ///   existing parent and its keys.
    public func value(atPath path: String) throws -> JSONValue {
        try JSONValue(encoding: value).value(at: ValuePath(parsing: path))
    }
}

extension MutableLens where Value: Codable {
    /// The JSON encoding of the part at `path`. See ``Lens/value(atPath:)``.
    public func value(atPath path: String) throws -> JSONValue {
        try readOnly.value(atPath: path)
    }

    /// Replaces the part at `path` with `newValue`, type-checked against the Swift type.
    ///
    /// The write is applied to the JSON encoding of the current value, which is then decoded again as a
    /// whole, so `set(atPath: "server.port", to: .string("abc"))` fails with
    /// `server.port: expected an integer, got "abc"` and changes nothing. Missing objects on the way are
    /// created (so an optional part that is `nil` can be set member by member, if what results decodes).
    ///
    /// - Throws: ``PathError`` (`invalidValue` when the type refuses the value, `notFound` when the path
    ///   names a key the type does not have), or the store's error; either way nothing changes.
    public func set(atPath path: String, to newValue: JSONValue) throws {
        let path = try ValuePath(parsing: path)
        try update { value in
            var tree = try JSONValue(encoding: value)
            try tree.set(newValue, at: path)
            let decoded = try decodeChecked(tree)
            // A key the type does not have decodes without complaint and is dropped: report it.
            // (A nil optional is encoded as an absent key, so writing null has landed when the key is gone.)
            let written = try JSONValue(encoding: decoded)
            if newValue != .null, (try? written.value(at: path)) == nil { try written.throwNearestNotFound(path) }
            value = decoded
        }
    }

    /// Removes the part at `path`: an optional becomes `nil`, a dictionary entry or array element goes.
    ///
    /// - Throws: ``PathError/notRemovable(path:)`` when the type requires the part, ``PathError/notFound(path:parent:validKeys:)``
    ///   when there is nothing at `path`.
    public func remove(atPath path: String) throws {
        let path = try ValuePath(parsing: path)
        guard !path.components.isEmpty else { throw PathError.notRemovable(path: path.description) }
        try update { value in
            var tree = try JSONValue(encoding: value)
            try tree.remove(at: path)
            do {
                value = try tree.decode(Value.self)
            } catch DecodingError.keyNotFound, DecodingError.valueNotFound {
                throw PathError.notRemovable(path: path.description)
            } catch let error as DecodingError {
                throw invalidValue(error, in: tree)
            }
        }
    }

    private func decodeChecked(_ tree: JSONValue) throws -> Value {
        do {
            return try tree.decode(Value.self)
        } catch let error as DecodingError {
            throw invalidValue(error, in: tree)
        }
    }
}

extension JSONValue {
    /// Throws "nothing at `path`", naming the deepest part of `path` that exists.
    func throwNearestNotFound(_ path: ValuePath) throws -> Never {
        var current = self
        for (depth, component) in path.components.enumerated() {
            switch (current, component) {
            case (.object(let object), .key(let key)) where object[key] != nil: current = object[key]!
            case (.array(let array), .index(let index)) where array.indices.contains(index): current = array[index]
            default: throw current.notFound(path, depth: depth)
            }
        }
        throw current.notFound(path, depth: path.components.count)
    }
}

/// A decoding error of a value written by path, as the user should read it: where, what was expected,
/// and what came.
private func invalidValue(_ error: DecodingError, in tree: JSONValue) -> PathError {
    func at(_ codingPath: [any CodingKey]) -> ValuePath {
        ValuePath(codingPath.map { key in key.intValue.map { .index($0) } ?? .key(key.stringValue) })
    }
    func got(_ path: ValuePath) -> String {
        (try? tree.value(at: path)).map { $0.jsonText() } ?? "nothing"
    }
    switch error {
    case .typeMismatch(let type, let context):
        let path = at(context.codingPath)
        return .invalidValue(path: path.description, reason: "expected \(kindName(type)), got \(got(path))")
    case .valueNotFound(let type, let context):
        let path = at(context.codingPath)
        return .invalidValue(path: path.description, reason: "expected \(kindName(type)), got null")
    case .keyNotFound(let key, let context):
        return .invalidValue(path: at(context.codingPath + [key]).description, reason: "required, but missing")
    case .dataCorrupted(let context):
        let path = at(context.codingPath)
        return .invalidValue(path: path.description, reason: "\(context.debugDescription) (got \(got(path)))")
    @unknown default:
        return .invalidValue(path: "<root>", reason: "\(error)")
    }
}

/// `an integer`, `a string`, … for a Swift type in a message.
private func kindName(_ type: Any.Type) -> String {
    switch type {
    case is String.Type, is Substring.Type: return "a string"
    case is Bool.Type: return "a boolean"
    case is any BinaryInteger.Type: return "an integer"
    case is any BinaryFloatingPoint.Type: return "a number"
    default:
        let name = "\(type)"
        if name.hasPrefix("Array<") || name.hasPrefix("Set<") { return "an array" }
        if name.hasPrefix("Dictionary<") { return "an object" }
        return "\(name)"
    }
}
