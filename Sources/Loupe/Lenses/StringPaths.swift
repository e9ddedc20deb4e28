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
extension ReadableLens where Value: Encodable {
    /// The document of the part at `path` (relative to this lens's value), as the graph's coding writes it.
    ///
    /// - Throws: ``SettingsError`` when the path is malformed or names nothing; the error names the nearest
    ///   existing parent and its keys.
    public func value(atPath path: String) throws -> JSONValue {
        try readOnly.node.coding.encode(value).value(at: ValuePath(parsing: path))
    }
}

extension MutableLens where Value: Codable {
    /// Replaces the part at `path` with `newValue`, type-checked against the Swift type.
    ///
    /// The write is applied to the document of the current value, which is then decoded again as a whole,
    /// so `set(atPath: "server.port", to: .string("abc"))` fails with
    /// `server.port: expected Int, found String "abc"` and changes nothing. Missing objects on the way are
    /// created (so an optional part that is `nil` can be set member by member, if what results decodes), and
    /// an index one past an array's end appends an element (`items[2]` of an array of two).
    ///
    /// - Throws: ``SettingsError`` (``SettingsError/Code/invalidValue`` when the type refuses the value,
    ///   ``SettingsError/Code/notFound`` when the path names a key the type does not have), or the store's
    ///   error; either way nothing changes.
    public func set(atPath path: String, to newValue: JSONValue) throws {
        try set(atPath: path, to: newValue, expecting: nil)
    }

    /// Replaces the part at `path` with `newValue` if it still holds `expected`: for an editor that shows a
    /// person the value, and writes their edit later only if nobody changed the value meanwhile. A part that
    /// is absent holds `null`, as a `nil` optional reads: `expected` `.null` adds an entry to a dictionary
    /// only if no one added it meanwhile.
    ///
    /// - Throws: ``SettingsError/Code/conflict`` when the part no longer holds `expected` (nothing changes);
    ///   otherwise as ``set(atPath:to:)``.
    public func set(atPath path: String, to newValue: JSONValue, ifUnchangedFrom expected: JSONValue) throws {
        try set(atPath: path, to: newValue, expecting: expected)
    }

    private func set(atPath path: String, to newValue: JSONValue, expecting expected: JSONValue?) throws {
        try update(replacing(at: try ValuePath(parsing: path), with: newValue, expecting: expected))
    }

    /// The change that replaces the part at `path` with `newValue`, type-checked, if it still holds
    /// `expected` (when given).
    func replacing(
        at path: ValuePath, with newValue: JSONValue, expecting expected: JSONValue?
    ) -> (inout Value) throws -> Void {
        let coding = node.coding
        let quoting = quotesValue
        return { value in
            var tree = try coding.encode(value)
            if let expected, !((try? tree.value(at: path)) ?? .null).isSameDocument(as: expected) {
                throw SettingsError(
                    .conflict, path: path,
                    reason:
                        "\(path.description.isEmpty ? "the settings" : path.description) changed meanwhile; nothing was written"
                )
            }
            try tree.set(newValue, at: path)
            let decoded = try decodeChecked(tree, coding: coding, quoting: quoting)
            // A key the type does not have decodes without complaint and is dropped: report it.
            // (A nil optional is encoded as an absent key, so writing null has landed when the key is gone.)
            let written = try coding.encode(decoded)
            if newValue != .null, (try? written.value(at: path)) == nil { try written.throwNearestNotFound(path) }
            // So does a key inside the value written (`{"intervalSecond": 30}` for `intervalSeconds`).
            // It is a value the type refuses (the path written exists), named with the keys that do.
            if let stray = newValue.firstKey(missingFrom: (try? written.value(at: path)) ?? .null, at: path) {
                do {
                    try written.throwNearestNotFound(stray)
                } catch let error as SettingsError {
                    let keys =
                        error.validKeys.isEmpty
                        ? ""
                        : "; \(error.parent.map { $0.description.isEmpty ? "the settings" : $0.description } ?? "its parent") has \(error.validKeys.joined(separator: ", "))"
                    throw SettingsError(
                        .invalidValue, path: stray, reason: "\(stray): the type has no such key\(keys)",
                        parent: error.parent, validKeys: error.validKeys)
                }
            }
            value = decoded
        }
    }

    /// Removes the part at `path`: an optional becomes `nil`, a dictionary entry or array element goes.
    ///
    /// - Throws: ``SettingsError`` with code ``SettingsError/Code/notRemovable`` when the type requires the part,
    ///   ``SettingsError/Code/notFound`` when there is nothing at `path`.
    public func remove(atPath path: String) throws {
        let path = try ValuePath(parsing: path)
        guard !path.components.isEmpty else { throw SettingsError.notRemovable(path) }
        let coding = node.coding
        let quoting = quotesValue
        try update { value in
            var tree = try coding.encode(value)
            try tree.remove(at: path)
            do {
                value = try coding.decode(Value.self, from: tree)
            } catch DecodingError.keyNotFound, DecodingError.valueNotFound {
                throw SettingsError.notRemovable(path)
            } catch let error as DecodingError {
                throw invalidValue(error, in: tree, coding: coding, quoting: quoting)
            }
        }
    }

    /// Whether an error may quote the value at `path`, relative to this lens's value: not a secret's
    /// (the store keeps secrets, or the settings type declares the value or a part of it secret).
    private func quotesValue(at path: ValuePath) -> Bool {
        // A lens with no path (a step that is not a stored property) names no part: any secret counts.
        node.quotesValue(at: valuePath.map { ValuePath($0.components + path.components) } ?? ValuePath([]))
    }

    private func decodeChecked(
        _ tree: JSONValue, coding: DocumentCoding, quoting: (ValuePath) -> Bool
    ) throws -> Value {
        do {
            return try coding.decode(Value.self, from: tree)
        } catch let error as DecodingError {
            throw invalidValue(error, in: tree, coding: coding, quoting: quoting)
        }
    }
}

extension JSONValue {
    /// The path of the first key of this document (written at `path`) that `kept` (what the type kept of
    /// it) does not have: a key the type does not know, which decoding dropped without a word. Elements of
    /// arrays are compared when both arrays have the same length.
    func firstKey(missingFrom kept: JSONValue, at path: ValuePath) -> ValuePath? {
        switch (self, kept) {
        case (.object(let written), .object(let held)):
            for key in written.keys.sorted() {
                // A key written as null means "absent": it is not there to keep.
                guard let inner = written[key], inner != .null else { continue }
                let innerPath = ValuePath(path.components + [.key(key)])
                guard let heldInner = held[key] else { return innerPath }
                if let stray = inner.firstKey(missingFrom: heldInner, at: innerPath) { return stray }
            }
            return nil
        case (.array(let written), .array(let held)) where written.count == held.count:
            for index in written.indices {
                if let stray = written[index].firstKey(
                    missingFrom: held[index], at: ValuePath(path.components + [.index(index)]))
                {
                    return stray
                }
            }
            return nil
        default:
            return nil
        }
    }

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

/// A decoding error of a value written by path, in the one dialect of decoding failures.
private func invalidValue(
    _ error: DecodingError, in tree: JSONValue, coding: DocumentCoding, quoting: (ValuePath) -> Bool
) -> SettingsError {
    let path = DecodingFailure(error, in: tree, coding: coding, quotingValues: false).path
    let failure = DecodingFailure(error, in: tree, coding: coding, quotingValues: quoting(path))
    return .invalidValue(failure.path, reason: failure.reason, cause: error)
}
