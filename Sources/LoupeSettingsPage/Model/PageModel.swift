#if SettingsPage
import Foundation
import Loupe

/// What the page shows, worked out from a root: each setting with its schema, value and provenance, the
/// history, the fleet's rollout status. Values at secret paths are masked (the page reveals one only
/// on request, where its configuration `revealsSecrets`).
///
/// Everything is built as `JSONValue`, so what the page receives is exactly what Loupe encodes.
struct PageModel: Sendable {
    let root: AnyRootLens
    let configuration: SettingsPage.Configuration

    // MARK: The settings

    /// `{title, description, readOnly, revealsSecrets, whole: true, groups: [{path, description, settings:
    /// […]}], dictionary}`: `whole` says that it holds every setting, so that a page drops those it does not.
    func settings() throws -> JSONValue {
        let schema = try root.schema()
        let document = try root.document
        let secrets = secretPaths(in: document)
        var leaves: [Leaf] = []
        var groups: [String: JSONValue] = [:]
        // A document of no settings type (`loupe serve` without `--schema`): its schema says nothing, and
        // the settings shown are the values the document holds, each typed by its value.
        let untyped = Self.saysNothing(schema.document)
        var dictionary: JSONValue?
        if untyped {
            collectValues(of: document, at: [], into: &leaves)
        } else if let values = schema.document[path: "additionalProperties"],
            schema.document[path: "properties"] == nil,
            case .object(let entries) = document
        {
            // A root that is a dictionary (`[String: Endpoint]`): the entries the document holds, each under
            // its values' schema.
            let keys = entries.keys.sorted().filter { $0 != "$version" && $0 != "$schema" }
            for key in keys {
                collect(values, at: [.key(key)], into: &leaves, groups: &groups)
            }
            dictionary = self.dictionary(keys, values: values)
        } else {
            collect(schema.document, at: [], into: &leaves, groups: &groups)
        }
        // Every setting's provenance from one state of the root, worked out together.
        let provenances = try root.provenance(ofEach: leaves.map(\.path))
        var grouped: [String: [JSONValue]] = [:]
        var order: [String] = []
        for (leaf, provenance) in zip(leaves, provenances) {
            let group = Self.groupName(leaf.path)
            if grouped[group] == nil { order.append(group) }
            // A value of a document no type describes, and an entry of a dictionary, can be taken out.
            let removable = untyped || (dictionary != nil && leaf.path.components.count == 1)
            grouped[group, default: []].append(
                setting(
                    leaf, provenance, document: document, secrets: secrets, typed: !untyped, removable: removable))
        }
        let groupList: [JSONValue] = order.map { path in
            var group: [String: JSONValue] = ["path": .string(path), "settings": .array(grouped[path] ?? [])]
            if let description = groups[path] { group["description"] = description }
            return .object(group)
        }
        var model: [String: JSONValue] = [
            "title": untyped ? .string("Settings") : schema.document[path: "title"] ?? .string("Settings"),
            "store": .string(root.storeDescription),
            "readOnly": .bool(configuration.readOnly),
            "revealsSecrets": .bool(configuration.revealsSecrets),
            "groups": .array(groupList),
            "whole": .bool(true),
        ]
        if let description = schema.document[path: "description"] { model["description"] = description }
        if let dictionary { model["dictionary"] = dictionary }
        return .object(model)
    }

    /// The model's `dictionary`, with which the page adds and removes the entries of a root that is a
    /// dictionary: `{keys: [{key, path}], new: {type, editor, nullable, choices, items, constraints, value,
    /// editable}}`, the keys it holds and the editor of a new entry's value, which starts from
    /// ``template(of:)``.
    private func dictionary(_ keys: [String], values: JSONValue) -> JSONValue {
        let schema: [String: JSONValue] = if case .object(let part) = values { part } else { [:] }
        var new = Self.editorFields(schema)
        new["editable"] = .bool(!configuration.readOnly)
        if let template = Self.template(of: values) { new["value"] = template }
        let listed: [JSONValue] = keys.map {
            .object(["key": .string($0), "path": .string(ValuePath([.key($0)]).description)])
        }
        return .object(["keys": .array(listed), "new": .object(new)])
    }

    /// A value of `schema`'s type for a new entry to start from: the schema's default; an object of its
    /// properties' values to start from; `null` for an optional; the first choice; an empty text, list or
    /// dictionary, `0` or `false`. Nil where the schema names no type.
    static func template(of schema: JSONValue) -> JSONValue? {
        guard case .object(let part) = schema else { return nil }
        if let value = part["default"] { return value }
        if case .object(let properties)? = part["properties"] {
            return .object(properties.compactMapValues { template(of: $0) })
        }
        let kind = editor(for: part)
        if kind.nullable { return .null }
        if let first = kind.choices?.first { return first }
        switch kind.type {
        case "boolean": return .bool(false)
        case "integer", "number": return .integer(0)
        case "string": return .string("")
        case "array": return .array([])
        case "object": return .object([:])
        default: return nil
        }
    }

    /// The group a setting is shown in: its parent's path, `""` for the settings at the top.
    static func groupName(_ path: ValuePath) -> String {
        let parent = path.components.dropLast()
        return parent.isEmpty ? "" : ValuePath(Array(parent)).description
    }

    /// A setting the page shows: a part of the schema that is not an object of properties.
    struct Leaf {
        var path: ValuePath
        var schema: [String: JSONValue]
    }

    /// The leaves under `schema` (the part at `path`), in key order; the descriptions of the objects on
    /// the way, by path, for the groups' headings.
    private func collect(
        _ schema: JSONValue, at path: [ValuePath.Component], into leaves: inout [Leaf],
        groups: inout [String: JSONValue]
    ) {
        guard case .object(let part) = schema else { return }
        if case .object(let properties)? = part["properties"] {
            if let description = part["description"] {
                groups[Self.groupName(ValuePath(path + [.key("")]))] = description
            }
            for key in properties.keys.sorted() where !(path.isEmpty && key == "$version") {
                collect(properties[key]!, at: path + [.key(key)], into: &leaves, groups: &groups)
            }
            return
        }
        guard !path.isEmpty else { return }
        leaves.append(Leaf(path: ValuePath(path), schema: part))
    }

    /// Whether `schema` places no constraint on a value: no type, no choices, no properties.
    static func saysNothing(_ schema: JSONValue) -> Bool {
        guard case .object(let part) = schema else { return false }
        let constraints: Set = [
            "type", "enum", "const", "properties", "additionalProperties", "items", "anyOf", "oneOf", "allOf", "$ref",
        ]
        return part.keys.allSatisfy { !constraints.contains($0) }
    }

    /// The leaves of `value` (the part at `path` of a document no type describes): an object's members,
    /// nested objects in turn, in key order; every other value a setting whose schema is its value's type.
    private func collectValues(of value: JSONValue, at path: [ValuePath.Component], into leaves: inout [Leaf]) {
        if case .object(let members) = value, !members.isEmpty || path.isEmpty {
            // The version stamp and the `$schema` an editor reads are the file's own, not settings.
            for key in members.keys.sorted() where !(path.isEmpty && (key == "$version" || key == "$schema")) {
                collectValues(of: members[key]!, at: path + [.key(key)], into: &leaves)
            }
            return
        }
        leaves.append(Leaf(path: ValuePath(path), schema: Self.schema(of: value)))
    }

    /// The schema of `value`'s type (a list's with its items' when they share one scalar type), nothing
    /// for null: the page's editor for that type, or JSON for the rest.
    static func schema(of value: JSONValue) -> [String: JSONValue] {
        guard value != .null else { return [:] }
        if case .array(let items) = value, let first = items.first?.schemaType,
            ["string", "integer", "number", "boolean"].contains(first), items.allSatisfy({ $0.schemaType == first })
        {
            return ["type": .string("array"), "items": .object(["type": .string(first)])]
        }
        return ["type": .string(value.schemaType)]
    }

    /// One setting: `{path, description, type, editor, nullable, choices, constraints, default, value,
    /// source, line, overrides, lock, isSecret, editable, reset}` (`reset`: `default`, `remove`, or absent
    /// where the setting has neither).
    private func setting(
        _ leaf: Leaf, _ provenance: Provenance, document: JSONValue, secrets: [ValuePath], typed: Bool,
        removable: Bool
    ) -> JSONValue {
        let secret = provenance.isSecret || isSecret(leaf.path, secrets) || leaf.schema["writeOnly"] == .bool(true)
        var entry = Self.editorFields(leaf.schema)
        entry["path"] = .string(leaf.path.description)
        entry["isSecret"] = .bool(secret)
        entry["source"] = Self.source(provenance.source)
        entry["overrides"] = .array(provenance.overrides.map(Self.source))
        entry["editable"] = .bool(!configuration.readOnly && provenance.lock == nil)
        // What a reset does: back to the default (or to none, for an optional), or the value taken out. A
        // document no type describes has no default; a part of a dictionary's entry neither has one nor
        // goes alone: only its whole entry does.
        let hasDefault =
            typed
            && (leaf.schema["default"] != nil || provenance.source == .defaultValue
                || provenance.overrides.contains(.defaultValue) || entry["nullable"] == .bool(true))
        if hasDefault {
            entry["reset"] = .string("default")
        } else if removable {
            entry["reset"] = .string("remove")
        }
        if let position = provenance.position { entry["line"] = .integer(position.line) }
        if let description = leaf.schema["description"] { entry["description"] = description }
        if let value = document[path: leaf.path] {
            entry["value"] = secret ? value.masked : value
        }
        if let defaultValue = leaf.schema["default"] {
            entry["default"] = secret ? defaultValue.masked : defaultValue
        }
        if let lock = provenance.lock {
            entry["lock"] = .object([
                "file": .string(lock.file), "line": .integer(lock.line), "path": .string(lock.path.description),
            ])
        }
        return .object(entry)
    }

    /// How the page edits a value of `schema`: `{type, editor, nullable, choices, items, constraints}`.
    static func editorFields(_ schema: [String: JSONValue]) -> [String: JSONValue] {
        let kind = editor(for: schema)
        var fields: [String: JSONValue] = [
            "type": .string(kind.type), "editor": .string(kind.editor), "nullable": .bool(kind.nullable),
        ]
        if let choices = kind.choices { fields["choices"] = .array(choices) }
        if let items = kind.items { fields["items"] = .string(items) }
        var constraints: [String: JSONValue] = [:]
        for key in [
            "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern", "format", "minLength", "maxLength",
        ] {
            if let value = schema[key] ?? kind.inner[key], !SettingsSchema.isTypesOwnBound(value) {
                constraints[key] = value
            }
        }
        fields["constraints"] = .object(constraints)
        return fields
    }

    /// How the page edits a value of this schema, and how it names its type.
    struct EditorKind {
        var type: String
        var editor: String
        var nullable = false
        var choices: [JSONValue]?
        /// The scalar type of a list's or a dictionary's elements, when they are scalars.
        var items: String?
        /// The schema of the non-null alternative, for its constraints.
        var inner: [String: JSONValue] = [:]
    }

    static func editor(for schema: [String: JSONValue]) -> EditorKind {
        var part = schema
        var nullable = false
        // `{"type": ["string", "null"]}` or `{"anyOf": [X, {"type": "null"}]}`: an optional.
        if case .array(let types)? = part["type"] {
            let named = types.compactMap { value -> String? in if case .string(let name) = value { name } else { nil } }
            nullable = named.contains("null")
            if let first = named.first(where: { $0 != "null" }) { part["type"] = .string(first) }
        } else if case .array(let choices)? = part["anyOf"] {
            let others = choices.filter { $0 != .object(["type": .string("null")]) }
            nullable = others.count < choices.count
            if others.count == 1, case .object(let inner) = others[0] {
                part.merge(inner) { _, new in new }
                part["anyOf"] = nil
            }
        }
        let type: String? = if case .string(let name)? = part["type"] { name } else { nil }
        if case .array(var choices)? = part["enum"] {
            choices.removeAll { $0 == .null }
            return EditorKind(
                type: type ?? "choice", editor: "choice", nullable: nullable, choices: choices, inner: part)
        }
        switch type {
        case "boolean": return EditorKind(type: "boolean", editor: "toggle", nullable: nullable, inner: part)
        case "integer": return EditorKind(type: "integer", editor: "number", nullable: nullable, inner: part)
        case "number": return EditorKind(type: "number", editor: "number", nullable: nullable, inner: part)
        case "string": return EditorKind(type: "string", editor: "text", nullable: nullable, inner: part)
        case "array":
            let items = scalarType(part["items"])
            return EditorKind(
                type: "array", editor: items == nil ? "json" : "list", nullable: nullable, items: items, inner: part)
        case "object":
            let values = scalarType(part["additionalProperties"])
            return EditorKind(
                type: "object", editor: values == nil ? "json" : "dictionary", nullable: nullable, items: values,
                inner: part)
        default:
            return EditorKind(type: type ?? "any", editor: "json", nullable: nullable, inner: part)
        }
    }

    /// `string`, `integer`, `number` or `boolean` when `schema` describes such a scalar (not an optional,
    /// not a choice): what the list and dictionary editors edit in a row.
    private static func scalarType(_ schema: JSONValue?) -> String? {
        guard case .object(let part)? = schema, part["enum"] == nil, case .string(let type)? = part["type"] else {
            return nil
        }
        return ["string", "integer", "number", "boolean"].contains(type) ? type : nil
    }

    /// `{kind: default|layer|override, name}`.
    static func source(_ source: Provenance.Source) -> JSONValue {
        switch source {
        case .defaultValue: .object(["kind": .string("default"), "name": .string("default")])
        case .layer(let name): .object(["kind": .string("layer"), "name": .string(name)])
        case .override(let name): .object(["kind": .string("override"), "name": .string(name)])
        }
    }

    // MARK: Secrets

    /// The paths whose values are secret in `document`, a value of the settings at `path`: the root's and
    /// those the settings type declares.
    func secretPaths(in document: JSONValue, at path: ValuePath = ValuePath([])) -> [ValuePath] {
        root.secretPaths + root.secretPaths(in: document, at: path)
    }

    /// Whether the value at `path` is, or lies in, a secret, or holds one: then the page shows it masked.
    func isSecret(_ path: ValuePath, _ secrets: [ValuePath]) -> Bool {
        secrets.contains { secret in
            path.components.starts(with: secret.components) || secret.components.starts(with: path.components)
        }
    }

    /// `value`, the part at `path`, as the page may show it: masked where secret.
    func shown(_ value: JSONValue, at path: ValuePath, in secrets: [ValuePath]) -> JSONValue {
        value.masking(secrets, at: path)
    }

    // MARK: History

    /// `{recordsAuthors, changes: [{revision, time, author, paths: [{path, old, new, purged}]}]}`, newest
    /// first; `{changes: []}` for a store that keeps no history.
    func history() throws -> JSONValue {
        let history: SettingsHistory
        do {
            history = try root.history()
        } catch let error as SettingsError where error.code == .unavailable {
            return .object(["available": .bool(false), "reason": .string("\(error)"), "changes": .array([])])
        }
        var changes: [JSONValue] = []
        var before = history.base
        for change in history.changes {
            let after = try history.document(after: change.revision)
            var paths: [JSONValue] = []
            for path in change.changedPaths {
                var entry: [String: JSONValue] = [
                    "path": .string(path.components.isEmpty ? "<root>" : path.description)
                ]
                if change.purgedPaths.contains(path) {
                    entry["purged"] = .bool(true)
                } else {
                    if let old = before?[path: path] {
                        entry["old"] = shown(old, at: path, in: secretPaths(in: old, at: path))
                    }
                    if let new = after?[path: path] {
                        entry["new"] = shown(new, at: path, in: secretPaths(in: new, at: path))
                    }
                }
                paths.append(.object(entry))
            }
            var record: [String: JSONValue] = ["revision": .integer(change.revision), "paths": .array(paths)]
            if let time = change.time { record["time"] = .string(time.formatted(.iso8601)) }
            if let author = change.author { record["author"] = .string(Self.name(of: author)) }
            changes.append(.object(record))
            before = after
        }
        return .object([
            "available": .bool(true),
            "recordsAuthors": .bool(history.recordsAuthors),
            "kept": .string(history.keptRevisions),
            "changes": .array(changes.reversed()),
        ])
    }

    /// `alice@host (loupe, pid 42)`.
    static func name(of author: SettingsChange.Author) -> String {
        "\(author.userName ?? "uid \(author.userID)")@\(author.host) (\(author.program), pid \(author.processID))"
    }

    /// The fleet's rollout status, for a store that shares its settings (etcd): `{currentRevision,
    /// readers: [{name, revision, time, behind, refusal: {revision, reason}}]}`, or `null`.
    func status() throws -> JSONValue {
        guard let status = try root.appliedStatus() else { return .null }
        let readers: [JSONValue] = status.readers.map { reader in
            var entry: [String: JSONValue] = [
                "name": .string(reader.name), "revision": .integer(reader.revision),
                "time": .string(reader.time.formatted(.iso8601)),
                "behind": .bool(reader.revision < status.currentRevision),
            ]
            if let refusal = reader.refusal {
                entry["refusal"] = .object(["revision": .integer(refusal.revision), "reason": .string(refusal.reason)])
            }
            return .object(entry)
        }
        return .object(["currentRevision": .integer(status.currentRevision), "readers": .array(readers)])
    }
}
#endif
