import Foundation

/// A JSON Schema (draft 2020-12) of a settings type, for editors and tools: derived from the Swift type and
/// its default value.
///
/// ```swift
/// let schema = try SettingsSchema(for: Settings.self, default: Settings())
/// print(schema.document.jsonText(pretty: true))   // what `loupe schema` prints
/// ```
///
/// An editor that knows the schema (a file's `"$schema"` key names it; Loupe carries that key through as
/// one it does not know) completes keys, shows descriptions and marks wrong values. The schema says:
///
/// - **Types**: objects with their `properties`, strings, booleans, `integer` (with the bounds of the Swift
///   type: `UInt8` is 0 to 255) and `number`, arrays (`items`), dictionaries (`additionalProperties`),
///   optionals (which also take `null`); `URL`, `Date` and `Data` as the root's ``DocumentCoding`` writes them.
/// - **Choices**: the raw values of a `CaseIterable` type, as `enum`.
/// - **Defaults**: each part's `default`, from the encoded default value.
/// - **Rules** of ``Validated`` types that JSON Schema can say: `minimum`, `exclusiveMinimum`, `maximum`,
///   `exclusiveMaximum`, `enum`, `pattern`. A rule it cannot say (``Constraint/satisfying(_:_:)``,
///   ``Validated/validate()``) is left to Loupe.
/// - **Descriptions** that ``DescribedSettings`` types give.
/// - **Secrets** that ``SecretSettings`` types declare, as `"writeOnly": true`: a value to write, never to
///   show.
///
/// No key is required: a stored document may hold only what differs from the defaults. No key is
/// forbidden: keys the type does not know are carried through (a newer program's, an editor's `$schema`).
///
/// How it is derived: the type is decoded once from its encoded default by a decoder that records what
/// each part asks for. A part the default lacks (a `nil` optional, an empty collection's elements) is
/// probed with placeholder values; a type that refuses every placeholder is described as any value (`{}`).
public struct SettingsSchema: Sendable, Hashable {
    /// The schema, as a JSON document.
    public let document: JSONValue

    /// The schema of `type`, whose default value is `defaultValue`, as encoded with `coding`.
    public init<Root: Codable>(
        for type: Root.Type, default defaultValue: Root, coding: DocumentCoding = DocumentCoding()
    ) throws {
        try self.init(for: type, encodedDefault: try coding.encode(defaultValue), coding: coding)
    }

    /// The schema of `type`, whose default value encodes (with `coding`) as `defaults`: for a root, which
    /// has encoded its default already.
    init<Root: Decodable>(for type: Root.Type, encodedDefault defaults: JSONValue, coding: DocumentCoding) throws {
        let builder = SchemaBuilder(coding: coding)
        var schema = try builder.probe(Root.self, backing: defaults).schema
        schema.removeValue(forKey: "default")
        var root: [String: JSONValue] = [
            "$schema": .string("https://json-schema.org/draft/2020-12/schema"),
            "title": .string(String(describing: Root.self)),
        ]
        root.merge(schema) { _, new in new }
        // The version stamp a stored document may carry: an editor then refuses `"$version": "2"`, which
        // Loupe refuses too.
        if case .object(var properties)? = root["properties"], properties[Self.stampKey] == nil {
            properties[Self.stampKey] = .object([
                "type": .string("integer"), "minimum": .integer(1),
                "description": .string(
                    "The version of the settings this document was written by; Loupe writes it, for migrations. Not a setting."
                ),
            ])
            root["properties"] = .object(properties)
        }
        document = .object(root)
    }

    /// The key of the version stamp, which the schema describes beside the settings.
    static let stampKey = "$version"

    /// Whether `bound`, a part's `minimum` or `maximum`, is only the range of its Swift type (an `Int`'s, a
    /// `Float`'s): the schema states it for validators, and it tells a person nothing, so `describe`, a
    /// template and the settings page leave it out.
    package static func isTypesOwnBound(_ bound: JSONValue) -> Bool {
        switch bound {
        case .integer(let value): value == .min || value == .max
        case .double(let value): abs(value) >= Double(Float.greatestFiniteMagnitude)
        default: false
        }
    }

    /// Whether the type has a part at `path`: the schema describes it, or a part above it takes any
    /// value (a `JSONValue`, a type the schema could not probe). A path into a settings type's object
    /// that names no property of it is a part the type does not have.
    package func describes(_ path: ValuePath) -> Bool {
        SchemaIndex(self).describedPart(at: path).isDescribed
    }

    /// The schema of the part at `path` (through `properties`, `additionalProperties` and `items`), or nil
    /// when the schema does not describe it.
    public func part(at path: ValuePath) -> JSONValue? {
        SchemaIndex(self).describedPart(at: path).schema
    }

    /// The paths of `document` (a value of the type, encoded) whose values the type declares secret
    /// (``SecretSettings``): each secret part it holds, every entry of a dictionary and element of an array
    /// whose parts are secret.
    public func secretPaths(in document: JSONValue) -> [ValuePath] {
        SchemaIndex(self).secretPaths(in: document)
    }

    /// The paths (from the root) of the parts `value`, the part at `path`, holds that the type declares
    /// secret: `path` itself when that part is, or lies in, a secret one.
    public func secretPaths(in value: JSONValue, at path: ValuePath) -> [ValuePath] {
        SchemaIndex(self).secretPaths(in: value, at: path)
    }

    /// Whether a part's schema says nothing of what it holds (a `JSONValue`, a type the probe could not
    /// describe): any value fits it, and any path goes on below it.
    static func saysNothing(_ schema: [String: JSONValue]) -> Bool {
        schema["properties"] == nil && schema["additionalProperties"] == nil && schema["items"] == nil
            && schema["type"] == nil && schema["anyOf"] == nil && schema["oneOf"] == nil
    }
}

/// A settings type that says what its parts mean, for people: in its ``SettingsSchema`` (which editors
/// show), and in `describe` of `LoupeCommands`.
///
/// ```swift
/// extension Upstream: DescribedSettings {
///     static let descriptions: [ValuePath: String] = [
///         "": "Where the daemon connects.",
///         "url": "The upstream's address: http or https.",
///         "timeoutSeconds": "How long a request may take, in seconds.",
///     ]
/// }
/// ```
public protocol DescribedSettings: SendableMetatype {
    /// What each part means, by its path from a value of this type (as documents and errors name it);
    /// the empty path describes the type itself. A nested type may describe its own parts.
    static var descriptions: [ValuePath: String] { get }
}

/// A settings type whose parts hold secrets (tokens, passwords, keys): their values are masked wherever
/// they come from (a file, the environment, `--set`, a credential) in every tool and never quoted in an
/// error or a log line.
///
/// ```swift
/// extension Upstream: SecretSettings {
///     static let secretPaths: [ValuePath] = ["token"]
/// }
/// ```
///
/// The paths are relative to a value of the type, as ``DescribedSettings/descriptions`` are; the empty
/// path makes the whole value secret. A nested type marks its own parts, wherever it is used (in a
/// dictionary's values, an array's elements, an optional). A path that goes through a dictionary or an
/// array names every entry or element (`"upstreams.any.token"` with `upstreams` a dictionary marks each
/// upstream's token, whatever the key written). A path names a part the schema describes, not one inside
/// a `JSONValue` (mark the `JSONValue` itself).
///
/// A root lists the secret parts its value holds in ``ReadableLens/secretPaths`` (with those override layers
/// mark secret), which `LoupeCommands` masks and `LoupeConfiguration` marks secret, and the schema marks
/// each secret part `"writeOnly": true`. Without a schema (a type the probe cannot describe), only the
/// root type's own paths are known.
public protocol SecretSettings: SendableMetatype {
    /// The paths of the parts of a value of this type that hold secrets; the empty path: all of it.
    static var secretPaths: [ValuePath] { get }
}

extension JSONValue {
    /// The schema of an optional part without the `null` it also takes.
    var droppingNull: JSONValue {
        guard case .object(let schema) = self, case .array(let choices)? = schema["anyOf"], choices.count == 2,
            let nonNull = choices.first(where: { $0 != .object(["type": .string("null")]) })
        else { return self }
        return nonNull
    }
}
