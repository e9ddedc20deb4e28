/// A settings type's ``SettingsSchema`` as override layers and secret references walk it, part by part:
/// each part is worked out once, when the index is made, with its properties found by their words in one
/// lookup (`INTERVAL_SECONDS`, `intervalSeconds` and `interval_seconds` are all the words
/// `intervalseconds`). A load with a hundred environment variables walks the same few parts a hundred
/// times; this makes each step a lookup.
final class SchemaIndex: Sendable {
    /// The schema it walks.
    let schema: SettingsSchema
    /// The settings type's own part.
    let root: Part

    init(_ schema: SettingsSchema) {
        self.schema = schema
        root = Part(schema.document)
    }

    /// One part of the schema and the parts below it, all worked out when the index is made (once for
    /// the roots of a type that share it).
    final class Part: Sendable {
        /// The part's schema, without the `null` an optional also takes.
        let schema: JSONValue
        /// Whether the schema is an object (a part's schema always is; anything else describes nothing).
        let isObject: Bool
        /// Whether the schema says nothing of what the part holds (a `JSONValue`): any path goes on below it.
        let saysNothing: Bool
        /// The properties' parts by name.
        let properties: [String: Part]
        /// The properties by their words; the first in name order where several share them.
        private let byWords: [String: (name: String, part: Part)]
        /// An array's elements, and a dictionary's values.
        let element: Part?
        let value: Part?
        /// Whether the part's value is a secret (``SecretSettings``: `"writeOnly": true`).
        let isSecret: Bool
        /// Whether the part or a part below it is a secret.
        let containsSecrets: Bool

        init(_ schema: JSONValue) {
            isSecret = Self.isSecret(schema) || Self.isSecret(schema.droppingNull)
            let schema = schema.droppingNull
            self.schema = schema
            let members: [String: JSONValue]? = if case .object(let members) = schema { members } else { nil }
            isObject = members != nil
            saysNothing = members.map(SettingsSchema.saysNothing) ?? true
            var properties: [String: Part] = [:]
            var byWords: [String: (name: String, part: Part)] = [:]
            if case .object(let described)? = members?["properties"] {
                properties.reserveCapacity(described.count)
                for (name, schema) in described {
                    let part = Part(schema)
                    properties[name] = part
                    let words = Self.words(name)
                    if byWords[words].map({ name < $0.name }) ?? true { byWords[words] = (name, part) }
                }
            }
            self.properties = properties
            self.byWords = byWords
            element = members?["items"].map(Part.init)
            value = members?["additionalProperties"].map(Part.init)
            containsSecrets =
                isSecret || properties.values.contains(where: \.containsSecrets)
                || element?.containsSecrets == true || value?.containsSecrets == true
        }

        private static func isSecret(_ schema: JSONValue) -> Bool {
            if case .object(let members) = schema, members["writeOnly"] == .bool(true) { return true }
            return false
        }

        /// The property `level` names by its words (regardless of ASCII case, `_` and `-`), if any.
        func property(byWords level: String) -> (name: String, part: Part)? {
            byWords.isEmpty ? nil : byWords[Self.words(level)]
        }

        /// A name's words: its bytes without `_` and `-`, ASCII letters in lower case.
        static func words(_ name: String) -> String {
            // An ASCII name without `_` or `-` (most of them) is its words in lower case.
            if name.utf8.allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "_") && $0 != UInt8(ascii: "-") }) {
                return name.lowercased()
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(name.utf8.count)
            for byte in name.utf8 where byte != UInt8(ascii: "_") && byte != UInt8(ascii: "-") {
                bytes.append(byte >= 65 && byte <= 90 ? byte + 32 : byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// What the schema says of a path.
    enum Walked {
        /// The part's schema.
        case part(JSONValue)
        /// A part on the way takes any value: the schema says nothing of what is below it.
        case open
        /// A part on the way has no part the path names.
        case missing
    }

    /// Follows `path` through the schema's properties, dictionary values and array elements, as
    /// ``SettingsSchema/describes(_:)`` and ``SettingsSchema/part(at:)`` do; and whether a part it passed
    /// through (or the last) is secret, as ``isSecret(at:)`` says.
    func walk(_ path: ValuePath) -> (walked: Walked, isSecret: Bool) {
        var current = root
        var isSecret = root.isSecret
        for component in path.components {
            guard current.isObject else { return (.missing, isSecret) }
            if current.saysNothing { return (.open, isSecret) }
            let next: Part? =
                switch component {
                case .key(let key): current.properties[key] ?? current.value
                case .index: current.element
                }
            guard let next else { return (.missing, isSecret) }
            isSecret = isSecret || next.isSecret
            current = next
        }
        return (.part(current.schema), isSecret)
    }

    /// Whether the schema declares any secret part.
    var containsSecrets: Bool { root.containsSecrets }

    /// Whether the value at `path` is a secret the type declares: the part there, or a part above it, is
    /// secret.
    func isSecret(at path: ValuePath) -> Bool {
        secretWalk(path).covered
    }

    /// Whether the value at `path` is, or holds, a secret the type declares: an error must not quote it.
    func containsSecrets(at path: ValuePath) -> Bool {
        let walked = secretWalk(path)
        return walked.covered || walked.part?.containsSecrets == true
    }

    /// Follows `path` as ``walk(_:)`` does: whether a part on the way (or the last) is secret, and the
    /// last part when the schema describes it.
    private func secretWalk(_ path: ValuePath) -> (covered: Bool, part: Part?) {
        var current = root
        if current.isSecret { return (true, current) }
        for component in path.components {
            guard current.isObject, !current.saysNothing else { return (false, nil) }
            let next: Part? =
                switch component {
                case .key(let key): current.properties[key] ?? current.value
                case .index: current.element
                }
            guard let next else { return (false, nil) }
            if next.isSecret { return (true, next) }
            current = next
        }
        return (false, current)
    }

    /// The paths of the secret parts `document` (a value of the type, encoded) holds, outermost: each
    /// entry of a dictionary and element of an array whose parts are secret.
    func secretPaths(in document: JSONValue) -> [ValuePath] {
        secretPaths(in: document, at: ValuePath([]))
    }

    /// The paths of the secret parts `value`, the part at `path`, holds (from the root): `path` itself
    /// when the part there is secret.
    func secretPaths(in value: JSONValue, at path: ValuePath) -> [ValuePath] {
        guard root.containsSecrets else { return [] }
        let (covered, start) = secretWalk(path)
        if covered { return [path] }
        guard let start else { return [] }
        var found: [ValuePath] = []
        var components = path.components
        func visit(_ value: JSONValue, _ part: Part) {
            if part.isSecret { return found.append(ValuePath(components)) }
            guard part.containsSecrets else { return }
            switch value {
            case .object(let members):
                for key in members.keys.sorted() {
                    guard let next = part.properties[key] ?? part.value, let member = members[key] else { continue }
                    components.append(.key(key))
                    visit(member, next)
                    components.removeLast()
                }
            case .array(let elements):
                guard let next = part.element else { return }
                for (index, element) in elements.enumerated() {
                    components.append(.index(index))
                    visit(element, next)
                    components.removeLast()
                }
            default:
                return
            }
        }
        visit(value, start)
        return found
    }

    /// Whether the type has a part at `path`, and its schema when the schema describes it.
    /// Whether it is secret, as ``isSecret(at:)`` says, comes with it.
    func describedPart(at path: ValuePath) -> (isDescribed: Bool, schema: JSONValue?, isSecret: Bool) {
        let (walked, isSecret) = walk(path)
        return switch walked {
        case .part(let part): (true, part, isSecret)
        case .open: (true, nil, isSecret)
        case .missing: (false, nil, isSecret)
        }
    }

    /// The nearest path above `path` that the type has.
    func closestDescribed(to path: ValuePath) -> ValuePath {
        var count = path.components.count
        while count > 0, !describedPart(at: path.prefix(count)).isDescribed { count -= 1 }
        return path.prefix(count)
    }
}
