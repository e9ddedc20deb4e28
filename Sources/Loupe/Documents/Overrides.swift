import Foundation

/// One value an override layer gives (an environment variable, a `--set` argument, a credential file), as
/// text: the settings type decides at load what the text is (`"9000"` is a number for an `Int`, and stays
/// a string for a `String`).
///
/// Override layers lie above a ``LayeredStore``'s top and are never written: see
/// ``LayeredStore/Layer/environment(prefix:)``.
public struct SettingOverride: Sendable, Equatable, CustomStringConvertible {
    /// Which part the value is for.
    public enum Target: Sendable, Equatable {
        /// A path as written (`upstream.token`, `servers[0].port`).
        case path(ValuePath)
        /// An environment variable's name without its prefix, split at `__` into levels: each level's words
        /// (split at `_`) match a property's camelCase or snake_case name, a dictionary key regardless of
        /// case, or an array index.
        case environmentName([String])
    }

    /// Which part the value is for.
    public var target: Target
    /// The value as text: JSON for a structured value.
    public var text: String
    /// Where it comes from, as provenance and errors name it: `environment variable MYAPP_SERVER__PORT`,
    /// `--set logLevel`, `credential upstream.token`. Never a value.
    public var origin: String
    /// Whether the value is a secret: never shown, logged or put in an error.
    public var isSecret: Bool

    /// An override value.
    public init(target: Target, text: String, origin: String, isSecret: Bool) {
        self.target = target
        self.text = text
        self.origin = origin
        self.isSecret = isSecret
    }

    /// Its origin; never its value.
    public var description: String { origin }
}

/// An override layer as the pipeline reads it.
struct OverrideLayer: Sendable, Equatable {
    /// How the layer is named: `environment (MYAPP_)`.
    var source: String
    var values: [SettingOverride]
}

/// A value an override put into the effective document at load, for provenance and for writes, which
/// must never store it.
struct AppliedOverride: Sendable, Equatable {
    var path: ValuePath
    /// The value it gives, typed.
    var value: JSONValue
    /// What the document held there without it; nil: nothing.
    var underneath: JSONValue?
    var origin: String
    var isSecret: Bool
    /// The secret reference that gave the value (`env:TOKEN`), written back in its place; nil for an
    /// override layer's value.
    var reference: String? = nil

    /// Whether the override sets `other` or a part above or below it.
    func overlaps(_ other: ValuePath) -> Bool {
        other.components.starts(with: path.components) || path.components.starts(with: other.components)
    }
}

/// What applying the override layers gave.
struct OverrideResult: Sendable {
    var applied: [AppliedOverride] = []
    /// Values whose target names no part of the type, with the closest part that exists.
    var unmatched: [(origin: String, closest: ValuePath)] = []
}

extension SettingsSchema {
    /// Applies the values of `layers`, lowest first, to `document` (the value the files make), each typed by
    /// the schema of the part it sets.
    ///
    /// An index one past an array's end appends to it. A target that names no part is left out and
    /// listed as unmatched.
    ///
    /// - Throws: ``SettingsError/Code/invalidValue`` naming the origin and the path, for text the type at
    ///   the path refuses or an index past an array's end. A secret's text is never quoted.
    func apply(_ layers: [OverrideLayer], to document: inout JSONValue) throws(SettingsError) -> OverrideResult {
        var result = OverrideResult()
        for layer in layers {
            for value in layer.values {
                let path: ValuePath
                switch value.target {
                case .path(let given):
                    guard describes(given) else {
                        result.unmatched.append((value.origin, closestDescribed(to: given)))
                        continue
                    }
                    path = given
                case .environmentName(let levels):
                    switch resolve(levels, in: document) {
                    case .success(let found): path = found
                    case .failure(let closest):
                        result.unmatched.append((value.origin, closest.path))
                        continue
                    }
                }
                let typed = try typedValue(value, at: path)
                // What the value is put into may be made on the way (an object, an array's next element):
                // the override is then what it made, so that taking it out leaves nothing behind.
                var made = 1
                while made < path.components.count, document.contains(path.prefix(made)) { made += 1 }
                let placed = path.prefix(made)
                let underneath = document[path: placed]
                try document.setCreating(typed, at: path, origin: value.origin)
                result.applied.append(AppliedOverride(
                    path: placed, value: document[path: placed] ?? typed, underneath: underneath, origin: value.origin,
                    isSecret: value.isSecret))
            }
        }
        return result
    }

    /// The path an environment variable's levels name: a property by its words (`INTERVAL_SECONDS` is
    /// `intervalSeconds`, or `interval_seconds`), a dictionary key regardless of case (an existing key as it
    /// is spelled, a new one in lower case), an array element by its index. On failure, the closest path.
    func resolve(_ levels: [String], in document: JSONValue) -> Result<ValuePath, ClosestPath> {
        var schema: JSONValue? = self.document
        var current: JSONValue? = document
        var components: [ValuePath.Component] = []
        for level in levels {
            guard !level.isEmpty else { return .failure(ClosestPath(path: ValuePath(components))) }
            let node = schema.flatMap { if case .object(let members) = $0 { members } else { nil } }
            let wanted = Self.folded(level)
            var next: ValuePath.Component?
            var nextSchema: JSONValue?
            if case .object(let properties)? = node?["properties"],
               let name = properties.keys.sorted().first(where: { Self.folded($0) == wanted }) {
                next = .key(name)
                nextSchema = properties[name]
            } else if let items = node?["items"], let index = Int(level), index >= 0, level.allSatisfy(\.isASCII) {
                next = .index(index)
                nextSchema = items
            } else if let values = node?["additionalProperties"] {
                next = .key(existingKey(level, in: current) ?? level.lowercased())
                nextSchema = values
            } else if node.map(Self.isOpen) ?? true {
                // A part the schema says nothing of (a `JSONValue`): keys as in the document, or lower case.
                if case .array = current, let index = Int(level), index >= 0 {
                    next = .index(index)
                } else {
                    next = .key(existingKey(level, in: current) ?? level.lowercased())
                }
                nextSchema = nil
            }
            guard let next else { return .failure(ClosestPath(path: ValuePath(components))) }
            components.append(next)
            schema = nextSchema?.droppingNull
            current = current?[path: ValuePath([next])]
        }
        return .success(ValuePath(components))
    }

    /// The nearest path above `path` that the type has.
    func closestDescribed(to path: ValuePath) -> ValuePath {
        var count = path.components.count
        while count > 0, !describes(path.prefix(count)) { count -= 1 }
        return path.prefix(count)
    }

    /// The closest part an environment variable's name comes to.
    struct ClosestPath: Error {
        var path: ValuePath
    }

    /// A name as compared with a variable's level: lower case, without `_` and `-`.
    private static func folded(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" })
    }

    /// Whether a part's schema says nothing of what it holds.
    private static func isOpen(_ schema: [String: JSONValue]) -> Bool {
        schema["type"] == nil && schema["anyOf"] == nil && schema["oneOf"] == nil && schema["enum"] == nil
    }

    /// The key of `object` that is `level` regardless of case.
    private func existingKey(_ level: String, in object: JSONValue?) -> String? {
        guard case .object(let members)? = object else { return nil }
        if members[level] != nil { return level }
        let lowered = level.lowercased()
        return members.keys.sorted().first { $0.lowercased() == lowered }
    }

    /// `value`'s text as the part at `path` takes it: a number for a number, `true` or `false` for a
    /// boolean, the text itself for a string, JSON for anything structured (and for a part the schema says
    /// nothing of, the text itself when it is not JSON).
    func typedValue(_ value: SettingOverride, at path: ValuePath) throws(SettingsError) -> JSONValue {
        let text = value.text
        let json = try? JSONValue(parsing: text)
        func refuse(_ expected: String) -> SettingsError {
            let found = value.isSecret ? "" : ", found \(JSONValue.string(text).shortJSON)"
            return SettingsError(.invalidValue, path: path, reason: "\(value.origin): \(path): expected \(expected)\(found)")
        }
        guard case .object(let schema)? = part(at: path) else { return json ?? .string(text) }
        let types: [String] = switch schema["type"] {
        case .string(let type)?: [type]
        case .array(let names)?: names.compactMap { if case .string(let name) = $0 { name } else { nil } }
        default: []
        }
        if types == ["string"] || (types.isEmpty && schema["enum"] != nil && json == nil) { return .string(text) }
        // A number is the number alone: `12\n` (a credential file with a second newline) is refused.
        let bare = text.trimmingCharacters(in: .whitespacesAndNewlines) == text
        if types == ["integer"] {
            switch json {
            case .integer? where bare: return json!
            case .exactNumber(let digits)? where bare && !digits.contains(where: { ".eE".contains($0) }): return json!
            default: throw refuse("a whole number")
            }
        }
        if types == ["number"] {
            switch bare ? json : nil {
            case .integer?, .double?, .exactNumber?: return json!
            default: throw refuse("a number")
            }
        }
        if types == ["boolean"] {
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: throw refuse("true or false")
            }
        }
        if types == ["array"] || types == ["object"] {
            switch (types[0], json) {
            case ("array", .array?), ("object", .object?): return json!
            default: throw refuse(types[0] == "array" ? "a JSON array" : "a JSON object")
            }
        }
        return json ?? .string(text)
    }
}

extension JSONValue {
    /// Sets `value` at `path`, creating objects on the way; an index one past an array's end appends.
    fileprivate mutating func setCreating(_ value: JSONValue, at path: ValuePath, origin: String) throws(SettingsError) {
        try setCreating(value, at: path.components[...], origin: origin, whole: path)
    }

    private mutating func setCreating(
        _ value: JSONValue, at rest: ArraySlice<ValuePath.Component>, origin: String, whole: ValuePath
    ) throws(SettingsError) {
        guard let first = rest.first else {
            self = value
            return
        }
        let last = rest.count == 1
        switch (self, first) {
        case (.object(var members), .key(let key)):
            var child = members[key] ?? .object([:])
            try child.setCreating(value, at: rest.dropFirst(), origin: origin, whole: whole)
            members[key] = child
            self = .object(members)
        case (.null, .key):
            self = .object([:])
            try setCreating(value, at: rest, origin: origin, whole: whole)
        case (.array(var elements), .index(let index)) where index <= elements.count:
            if index == elements.count { elements.append(last ? value : .object([:])) }
            try elements[index].setCreating(value, at: rest.dropFirst(), origin: origin, whole: whole)
            self = .array(elements)
        case (.array(let elements), .index(let index)):
            let at = ValuePath(Array(whole.components.prefix(whole.components.count - rest.count)))
            throw SettingsError(
                .invalidValue, path: whole,
                reason: "\(origin): \(whole): index \(index) is past the end of \(at.components.isEmpty ? "<root>" : at.description) (\(elements.count) element\(elements.count == 1 ? "" : "s"); the next index, \(elements.count), adds one)")
        default:
            throw SettingsError(.invalidValue, path: whole, reason: "\(origin): \(whole): a part on the way is a \(kind), not what the path names")
        }
    }
}

extension [ValuePath] {
    /// These paths from the root, as paths from the part at `base`: the empty path when `base` is at or
    /// under one of them; all of the part (the empty path) when no path names it and there are any.
    func relative(to base: ValuePath?) -> [ValuePath] {
        let whole = ValuePath([ValuePath.Component]())
        guard let base else { return isEmpty ? [] : [whole] }
        var relative: [ValuePath] = []
        for path in self {
            if base.components.starts(with: path.components) { return [whole] }
            if path.components.starts(with: base.components) {
                relative.append(ValuePath([ValuePath.Component](path.components.dropFirst(base.components.count))))
            }
        }
        return relative
    }
}
