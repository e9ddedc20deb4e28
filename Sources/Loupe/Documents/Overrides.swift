import Foundation

/// One value an override layer gives (an environment variable, a `--set` argument, a credential file), as
/// text: the settings type decides at load what the text is (`"9000"` is a number for an `Int`, and stays
/// a string for a `String`).
///
/// Override layers lie above a ``LayeredStore``'s top and are never written: see
/// ``LayeredStore/Layer/environment(prefix:variables:)``.
public struct SettingOverride: Sendable, Equatable, CustomStringConvertible {
    /// Which part the value is for.
    public enum Target: Sendable, Equatable {
        /// A path as written (`upstream.token`, `servers[0].port`).
        case path(ValuePath)
        /// An environment variable's name without its prefix, split at `__` into levels: each level's words
        /// (split at `_`) match a coding key in camelCase or snake_case, a dictionary key regardless of
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
    /// Whether the value is a secret: never shown, logged or put in an error. A value for a part the
    /// settings type declares secret (``SecretSettings``) is one whatever this says.
    public var isSecret: Bool
    /// Whether a value that names no setting is an error (a `--set` argument: a typo) rather than a
    /// warning (a variable or a credential meant for something else).
    public var mustNameASetting: Bool

    /// An override value.
    public init(target: Target, text: String, origin: String, isSecret: Bool, mustNameASetting: Bool = false) {
        self.target = target
        self.text = text
        self.origin = origin
        self.isSecret = isSecret
        self.mustNameASetting = mustNameASetting
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

extension SchemaIndex {
    /// Applies the values of `layers`, lowest first, to `document` (the value the files make), each typed by
    /// the schema of the part it sets.
    ///
    /// An index one past an array's end appends to it. A target that names no part is left out and
    /// listed as unmatched, unless it must name one.
    ///
    /// - Throws: ``SettingsError/Code/invalidValue`` naming the origin and the path, for text the type at
    ///   the path refuses or an index past an array's end; ``SettingsError/Code/invalidPath`` for a value
    ///   that must name a setting and does not. A secret's text is never quoted.
    func apply(_ layers: [OverrideLayer], to document: inout JSONValue) throws(SettingsError) -> OverrideResult {
        var result = OverrideResult()
        for layer in layers {
            for value in layer.values {
                let path: ValuePath
                let schema: JSONValue?
                let isSecret: Bool
                switch value.target {
                case .path(let given):
                    let (isDescribed, part, secret) = describedPart(at: given)
                    guard isDescribed else {
                        let closest = closestDescribed(to: given)
                        if value.mustNameASetting {
                            throw SettingsError(
                                .invalidPath, path: given,
                                reason:
                                    "\(value.origin): \(given) names no setting (the closest is \(closest.components.isEmpty ? "<root>" : closest.description))"
                            )
                        }
                        result.unmatched.append((value.origin, closest))
                        continue
                    }
                    (path, schema, isSecret) = (given, part, secret)
                case .environmentName(let levels):
                    switch resolve(levels, in: document) {
                    case .success(let found): (path, schema, isSecret) = found
                    case .failure(let closest):
                        result.unmatched.append((value.origin, closest.path))
                        continue
                    }
                }
                let typed = try typedValue(value, at: path, schema: schema)
                // What the value is put into may be made on the way (an object, an array's next element):
                // the override is then what it made, so that taking it out leaves nothing behind.
                let (made, underneath) = try document.setCreating(typed, at: path, origin: value.origin)
                result.applied.append(
                    AppliedOverride(
                        path: made.depth == path.components.count ? path : path.prefix(made.depth), value: made.value,
                        underneath: underneath, origin: value.origin,
                        isSecret: value.isSecret || isSecret))
            }
        }
        return result
    }

    /// The path an environment variable's levels name: a property by its words (`INTERVAL_SECONDS` is
    /// `intervalSeconds`, or `interval_seconds`), a dictionary key regardless of case (an existing key as it
    /// is spelled, a new one in lower case), an array element by its index; with its schema and whether
    /// it is secret (as ``isSecret(at:)`` says). On failure, the closest path.
    func resolve(
        _ levels: [String], in document: JSONValue
    ) -> Result<(path: ValuePath, schema: JSONValue?, isSecret: Bool), ClosestPath> {
        var part: Part? = root
        var isSecret = root.isSecret
        // The document's part at the path so far; nil where the path goes past what the document holds.
        var current: JSONValue? = document
        var components: [ValuePath.Component] = []
        components.reserveCapacity(levels.count)
        for (position, level) in levels.enumerated() {
            guard !level.isEmpty else { return .failure(ClosestPath(path: ValuePath(components))) }
            if let object = part, object.isObject {
                if let (name, below) = object.property(byWords: level) {
                    components.append(.key(name))
                    part = below
                    // The part below is looked up only for a level after it.
                    current = position == levels.count - 1 ? nil : current?[member: name]
                } else if let element = object.element, let index = Self.index(level) {
                    components.append(.index(index))
                    part = element
                    current = current?[element: index]
                } else if let value = object.value {
                    let existing = Self.existingMember(level, in: current)
                    components.append(.key(existing?.key ?? level.lowercased()))
                    part = value
                    current = existing?.value
                } else if object.saysNothing {
                    components.append(Self.openStep(level, in: &current))
                    part = nil
                } else {
                    return .failure(ClosestPath(path: ValuePath(components)))
                }
                isSecret = isSecret || part?.isSecret == true
            } else {
                // A part the schema says nothing of (a `JSONValue`): keys as in the document, or lower case.
                components.append(Self.openStep(level, in: &current))
                part = nil
            }
        }
        return .success((ValuePath(components), part?.schema, isSecret))
    }

    /// The array index `level` writes, if any.
    private static func index(_ level: String) -> Int? {
        Int(level).flatMap { $0 >= 0 ? $0 : nil }
    }

    /// The step `level` takes into a part the schema says nothing of, `current` (moved to the part below):
    /// an index into an array, else a key as the document spells it, or in lower case.
    private static func openStep(_ level: String, in current: inout JSONValue?) -> ValuePath.Component {
        if case .array = current, let index = index(level) {
            current = current?[element: index]
            return .index(index)
        }
        let existing = existingMember(level, in: current)
        current = existing?.value
        return .key(existing?.key ?? level.lowercased())
    }

    /// The closest part an environment variable's name comes to.
    struct ClosestPath: Error {
        var path: ValuePath
    }

    /// The member of `object` that `level` names, and its key: the key spelled so, or in lower case, or in
    /// lower case with `-` for `_` (a variable cannot name `group-1` but as `GROUP_1`); else the first, in
    /// name order, that is `level` regardless of case, then regardless of case, `_` and `-`.
    private static func existingMember(_ level: String, in object: JSONValue?) -> (key: String, value: JSONValue)? {
        guard case .object(let members)? = object else { return nil }
        if let value = members[level] { return (level, value) }
        let lowered = level.lowercased()
        if let value = members[lowered] { return (lowered, value) }
        if lowered.utf8.contains(UInt8(ascii: "_")) {
            let dashed = String(
                decoding: lowered.utf8.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: "-") : $0 }, as: UTF8.self)
            if let value = members[dashed] { return (dashed, value) }
        }
        if let key = members.keys.filter({ $0.lowercased() == lowered }).min() { return members[key].map { (key, $0) } }
        let words = Part.words(level)
        return members.keys.filter { Part.words($0) == words }.min().flatMap { key in members[key].map { (key, $0) } }
    }

    /// `value`'s text as the part at `path` takes it: a number for a number, `true` or `false` for a
    /// boolean, the text itself for a string, JSON for anything structured (and for a part the schema says
    /// nothing of, the text itself when it is not JSON).
    ///
    /// - Parameter schema: The schema of the part at `path` (nil: it says nothing of it).
    func typedValue(_ value: SettingOverride, at path: ValuePath, schema: JSONValue?) throws(SettingsError) -> JSONValue
    {
        let text = value.text
        func refuse(_ expected: String) -> SettingsError {
            // Nor a value the type declares secret (``SecretSettings``), or one that holds such a value.
            let found =
                value.isSecret || containsSecrets(at: path) ? "" : ", found \(JSONValue.string(text).shortJSON)"
            return SettingsError(
                .invalidValue, path: path, reason: "\(value.origin): \(path): expected \(expected)\(found)")
        }
        guard case .object(let schema)? = schema else { return (try? JSONValue(parsing: text)) ?? .string(text) }
        // The type the schema names, when it names exactly one; and whether it names none.
        let type: String?
        let namesNone: Bool
        switch schema["type"] {
        case .string(let name)?:
            (type, namesNone) = (name, false)
        case .array(let names)?:
            let strings = names.compactMap { if case .string(let name) = $0 { name } else { nil } }
            (type, namesNone) = (strings.count == 1 ? strings[0] : nil, strings.isEmpty)
        default:
            (type, namesNone) = (nil, true)
        }
        if type == "string" { return .string(text) }
        // Most often a plain whole number: read it without the JSON reader.
        if type == "integer" || type == "number", let first = text.utf8.first,
            first == UInt8(ascii: "-") || (first >= 48 && first <= 57),
            let number = Int(text), text.utf8.count == 1 || !text.hasPrefix("0") && !text.hasPrefix("-0")
        {
            return .integer(number)
        }
        let json = try? JSONValue(parsing: text)
        if namesNone && schema["enum"] != nil && json == nil { return .string(text) }
        // A number is the number alone: `12\n` (a credential file with a second newline) is refused.
        let bare = !(text.first?.isWhitespace ?? true) && !(text.last?.isWhitespace ?? true)
        switch type {
        case "integer":
            switch json {
            case .integer? where bare: return json!
            case .exactNumber(let digits)? where bare && !digits.contains(where: { ".eE".contains($0) }): return json!
            default: throw refuse("a whole number")
            }
        case "number":
            switch bare ? json : nil {
            case .integer?, .double?, .exactNumber?: return json!
            default: throw refuse("a number")
            }
        case "boolean":
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: throw refuse("true or false")
            }
        case "array":
            guard case .array? = json else { throw refuse("a JSON array") }
            return json!
        case "object":
            guard case .object? = json else { throw refuse("a JSON object") }
            return json!
        default:
            break
        }
        return json ?? .string(text)
    }
}

extension JSONValue {
    /// An object's member `key`; nil when there is none or this is not an object.
    fileprivate subscript(member key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// An array's element at `index`; nil when there is none or this is not an array.
    fileprivate subscript(element index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// Sets `value` at `path`, creating objects on the way; an index one past an array's end appends.
    /// Returns the part it put in place (the value, or the first part it made on the way) with its depth,
    /// and what was there before (nil: nothing).
    fileprivate mutating func setCreating(
        _ value: JSONValue, at path: ValuePath, origin: String
    ) throws(SettingsError) -> (made: (depth: Int, value: JSONValue), underneath: JSONValue?) {
        var made: (depth: Int, value: JSONValue)?
        var underneath: JSONValue?
        try setCreating(
            value, at: path.components[...], origin: origin, whole: path, made: &made, underneath: &underneath)
        return (made ?? (path.components.count, value), underneath)
    }

    private mutating func setCreating(
        _ value: JSONValue, at rest: ArraySlice<ValuePath.Component>, origin: String, whole: ValuePath,
        made: inout (depth: Int, value: JSONValue)?, underneath: inout JSONValue?
    ) throws(SettingsError) {
        let depth = whole.components.count - rest.count
        guard let first = rest.first else {
            if made == nil { underneath = self }
            self = value
            if made == nil { made = (depth, value) }
            return
        }
        if case .null = self, case .key = first { self = .object([:]) }
        switch first {
        case .key(let key):
            guard case .object(var members) = self else { break }
            // The object and the child are taken out before they change, so that neither is copied.
            self = .null
            if rest.count == 1 {
                let existing = members.updateValue(value, forKey: key)
                if made == nil { (made, underneath) = ((depth + 1, value), existing) }
                self = .object(members)
                return
            }
            defer { self = .object(members) }
            if let index = members.index(forKey: key) {
                // Changed where it lies in the object: found once, and not copied.
                return try members.values[index].setCreating(
                    value, at: rest.dropFirst(), origin: origin, whole: whole, made: &made, underneath: &underneath)
            }
            var child = JSONValue.object([:])
            let making = made == nil
            defer {
                if making { made = (depth + 1, child) }
                members[key] = child
            }
            if making { made = (depth + 1, .null) }
            return try child.setCreating(
                value, at: rest.dropFirst(), origin: origin, whole: whole, made: &made, underneath: &underneath)
        case .index(let index):
            guard case .array(var elements) = self else { break }
            guard index <= elements.count else {
                let at = ValuePath(Array(whole.components.prefix(whole.components.count - rest.count)))
                throw SettingsError(
                    .invalidValue, path: whole,
                    reason:
                        "\(origin): \(whole): index \(index) is past the end of \(at.components.isEmpty ? "<root>" : at.description) (\(elements.count) element\(elements.count == 1 ? "" : "s"); the next index, \(elements.count), adds one)"
                )
            }
            self = .null
            let making = index == elements.count && made == nil
            defer {
                if making { made = (depth + 1, elements[index]) }
                self = .array(elements)
            }
            if rest.count == 1 {
                if made == nil {
                    (made, underneath) = ((depth + 1, value), index < elements.count ? elements[index] : nil)
                }
                if index < elements.count { elements[index] = value } else { elements.append(value) }
                return
            }
            if index == elements.count {
                elements.append(.object([:]))
                made = (depth + 1, .null)
            }
            return try elements[index].setCreating(
                value, at: rest.dropFirst(), origin: origin, whole: whole, made: &made, underneath: &underneath)
        }
        throw SettingsError(
            .invalidValue, path: whole,
            reason: "\(origin): \(whole): a part on the way is a \(kind), not what the path names")
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
