/// A root lens with its type hidden: the settings as documents and paths, for tools that work on any
/// settings type (the `loupe` commands, a swift-configuration provider, an admin endpoint).
///
/// Everything goes through the root's own pipeline, so the type and its rules still check every write,
/// locks still hold, and observers of the typed root see each change:
///
/// ```swift
/// let root = try RootLens(default: AppSettings(), store: FileStore(path: path))
/// let any = AnyRootLens(root)                       // or root.erased
/// try any.set(atPath: "server.port", to: 9090)      // decoded as AppSettings, checked, saved
/// print(try any.value(atPath: "server"))            // {"host": …, "port": 9090}
/// ```
public struct AnyRootLens: SettingsRoot {
    private let root: any ErasedRoot

    /// The type-erased face of `root`.
    public init<Root: Codable & Sendable>(_ root: RootLens<Root>) {
        self.root = root
    }

    /// This root: its type is hidden already.
    public var erased: AnyRootLens { self }

    /// The root's graph, for the operations of ``SettingsRoot``.
    var rootGraph: any RootGraph { root.graph }

    /// The root's type and store: `RootLens<AppSettings>(JSON file /etc/app/settings.json)`.
    public var description: String { "\(root)" }

    /// The whole value, encoded.
    public var document: JSONValue {
        get throws { try root.value(atPath: "") }
    }

    /// The part at `path`, encoded (see ``ReadableLens/value(atPath:)``).
    public func value(atPath path: String) throws -> JSONValue {
        try root.value(atPath: path)
    }

    /// Writes the part at `path`, checked by the type and its rules (see ``RootLens/set(atPath:to:)``).
    public func set(atPath path: String, to newValue: JSONValue) throws {
        try root.set(atPath: path, to: newValue)
    }

    /// Writes the part at `path` only if it still holds `expected`; otherwise throws
    /// ``SettingsError/Code/conflict`` and writes nothing (see ``MutableLens/set(atPath:to:ifUnchangedFrom:)``).
    public func set(atPath path: String, to newValue: JSONValue, ifUnchangedFrom expected: JSONValue) throws {
        try root.set(atPath: path, to: newValue, ifUnchangedFrom: expected)
    }

    /// Removes the part at `path` (see ``RootLens/remove(atPath:)``).
    public func remove(atPath path: String) throws {
        try root.remove(atPath: path)
    }

    /// Puts the part at `path` back to its default (see ``RootLens/reset(atPath:)``).
    public func reset(atPath path: String) throws {
        try root.reset(atPath: path)
    }

    /// The encoded default value: the bottom layer.
    public var defaults: JSONValue {
        get throws { try layers().first { $0.source == .defaultValue }?.document ?? .object([:]) }
    }

    /// The paths whose values are secrets (see ``ReadableLens/secretPaths``).
    public var secretPaths: [ValuePath] { root.secretPaths }

    /// The paths (from the root) of the parts `value`, the part at `path` of any document of the settings
    /// (a stored one, a layer, an old version), holds that the settings type declares secret
    /// (``SecretSettings``): `path` itself when that part is, or lies in, a secret one.
    package func secretPaths(in value: JSONValue, at path: ValuePath) -> [ValuePath] {
        root.secretPaths(in: value, at: path)
    }

    /// Every problem `document` has as the root's user file: the parts that do not fit the type, the
    /// rules it breaks, the locked paths it sets, and, when asked, the keys the type does not know. See
    /// ``RootLens/problems(in:named:coding:reportingUnknownKeys:)``.
    public func problems(
        in document: JSONValue, named name: String, coding: DocumentCoding? = nil, reportingUnknownKeys: Bool = false
    ) -> [SettingsProblem] {
        root.problems(in: document, named: name, coding: coding, reportingUnknownKeys: reportingUnknownKeys)
    }

    /// Calls `handler` with the whole value, encoded, after each commit that changes it.
    public func observe(_ handler: @escaping @Sendable (_ document: JSONValue) -> Void) -> ObservationToken {
        root.observeDocument(handler)
    }
}

extension RootLens {
    /// This root with its type hidden, for tools that work on any settings type.
    public var erased: AnyRootLens { AnyRootLens(self) }
}

/// What ``AnyRootLens`` asks of a root besides its graph: the operations that go through its typed
/// value, which `RootLens` has already.
protocol ErasedRoot: Sendable, CustomStringConvertible {
    var graph: any RootGraph { get }
    var secretPaths: [ValuePath] { get }
    func secretPaths(in value: JSONValue, at path: ValuePath) -> [ValuePath]
    func value(atPath path: String) throws -> JSONValue
    func set(atPath path: String, to newValue: JSONValue) throws
    func set(atPath path: String, to newValue: JSONValue, ifUnchangedFrom expected: JSONValue) throws
    func remove(atPath path: String) throws
    func reset(atPath path: String) throws
    func problems(
        in document: JSONValue, named name: String, coding: DocumentCoding?, reportingUnknownKeys: Bool
    ) -> [SettingsProblem]
    func observeDocument(_ handler: @escaping @Sendable (JSONValue) -> Void) -> ObservationToken
}

extension RootLens: ErasedRoot {
    var graph: any RootGraph { core }

    func secretPaths(in value: JSONValue, at path: ValuePath) -> [ValuePath] {
        core.pipeline.secretPaths(in: value, at: path)
    }

    func observeDocument(_ handler: @escaping @Sendable (JSONValue) -> Void) -> ObservationToken {
        let coding = core.pipeline.coding
        return observe { newValue in
            if let document = try? coding.encode(newValue) { handler(document) }
        }
    }
}
