import Synchronization

/// A settings type's ``SettingsSchema`` as override layers and secret references walk it, part by part:
/// each part is worked out the first time a path reaches it and kept, with its properties found by their
/// words in one lookup (`INTERVAL_SECONDS`, `intervalSeconds` and `interval_seconds` are all the words
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

    /// One part of the schema and the parts below it.
    final class Part: Sendable {
        /// The part's schema, without the `null` an optional also takes.
        let schema: JSONValue
        /// Whether the schema is an object (a part's schema always is; anything else describes nothing).
        let isObject: Bool
        /// Whether the schema says nothing of what the part holds (a `JSONValue`): any path goes on below it.
        let saysNothing: Bool
        /// The properties' schemas by name.
        private let properties: [String: JSONValue]?
        /// The properties' names by their words; the first in name order where several share them.
        private let names: [String: String]
        /// The schema of an array's elements, and of a dictionary's values.
        private let items: JSONValue?
        private let values: JSONValue?
        /// The parts below, as they are walked.
        private let below = Mutex<[Step: Part]>([:])

        /// A step from a part to one below it.
        enum Step: Hashable {
            case property(String)
            case element
            case value
        }

        init(_ schema: JSONValue) {
            let schema = schema.droppingNull
            self.schema = schema
            let members: [String: JSONValue]? = if case .object(let members) = schema { members } else { nil }
            isObject = members != nil
            saysNothing = members.map(SettingsSchema.saysNothing) ?? true
            properties = if case .object(let properties)? = members?["properties"] { properties } else { nil }
            items = members?["items"]
            values = members?["additionalProperties"]
            var names: [String: String] = [:]
            for name in properties?.keys ?? [:].keys {
                let words = Self.words(name)
                if names[words].map({ name < $0 }) ?? true { names[words] = name }
            }
            self.names = names
        }

        /// The property `level` names by its words (regardless of ASCII case, `_` and `-`), if any.
        func property(byWords level: String) -> String? {
            names.isEmpty ? nil : names[Self.words(level)]
        }

        /// Whether the part has a property named `name`, exactly.
        func hasProperty(_ name: String) -> Bool { properties?[name] != nil }

        /// Whether the part is an array (its elements have a schema).
        var hasElements: Bool { items != nil }

        /// Whether the part is a dictionary (its values have a schema).
        var hasValues: Bool { values != nil }

        /// The part one step below; nil when the schema has no such part.
        func part(_ step: Step) -> Part? {
            if let known = below.withLock({ $0[step] }) { return known }
            let schema: JSONValue? = switch step {
            case .property(let name): properties?[name]
            case .element: items
            case .value: values
            }
            guard let schema else { return nil }
            let part = Part(schema)
            return below.withLock { below in
                if let raced = below[step] { return raced }
                below[step] = part
                return part
            }
        }

        /// A name's words: its bytes without `_` and `-`, ASCII letters in lower case.
        static func words(_ name: String) -> String {
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
    /// ``SettingsSchema/describes(_:)`` and ``SettingsSchema/part(at:)`` do.
    func walk(_ path: ValuePath) -> Walked {
        var current = root
        for component in path.components {
            guard current.isObject else { return .missing }
            if current.saysNothing { return .open }
            let next: Part? = switch component {
            case .key(let key): current.hasProperty(key) ? current.part(.property(key)) : current.part(.value)
            case .index: current.part(.element)
            }
            guard let next else { return .missing }
            current = next
        }
        return .part(current.schema)
    }

    /// Whether the type has a part at `path`, and its schema when the schema describes it.
    func describedPart(at path: ValuePath) -> (isDescribed: Bool, schema: JSONValue?) {
        switch walk(path) {
        case .part(let part): (true, part)
        case .open: (true, nil)
        case .missing: (false, nil)
        }
    }

    /// The nearest path above `path` that the type has.
    func closestDescribed(to path: ValuePath) -> ValuePath {
        var count = path.components.count
        while count > 0, !describedPart(at: path.prefix(count)).isDescribed { count -= 1 }
        return path.prefix(count)
    }
}
