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
public struct AnyRootLens: Sendable, CustomStringConvertible {
    private let root: any ErasedRoot

    /// The type-erased face of `root`.
    public init<Root: Codable & Sendable>(_ root: RootLens<Root>) {
        self.root = root
    }

    /// The store, as it describes itself.
    public var storeDescription: String { root.storeDescription }

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

    /// The document the store holds, as it holds it (see ``RootLens/storedDocument()``).
    public func storedDocument() throws -> JSONValue? {
        try root.storedDocument()
    }

    /// The layers, from the defaults up (see ``RootLens/layers()``).
    public func layers() throws -> [SettingsLayer] {
        try root.layers()
    }

    /// The encoded default value: the bottom layer.
    public var defaults: JSONValue {
        get throws { try layers().first { $0.source == .defaultValue }?.document ?? .object([:]) }
    }

    /// The locks that hold paths at the value of the layers below (see ``RootLens/locks``).
    public var locks: [SettingsLock] { root.locks }
    /// The paths whose values are secrets (see ``ReadableLens/secretPaths``).
    public var secretPaths: [ValuePath] { root.secretPaths }

    /// The paths (from the root) of the parts `value`, the part at `path` of any document of the settings
    /// (a stored one, a layer, an old version), holds that the settings type declares secret
    /// (``SecretSettings``): `path` itself when that part is, or lies in, a secret one.
    package func secretPaths(in value: JSONValue, at path: ValuePath) -> [ValuePath] {
        root.secretPaths(in: value, at: path)
    }

    /// Where the value at `path` comes from (see ``RootLens/provenance(of:)``).
    public func provenance(of path: ValuePath) throws -> Provenance {
        try root.provenance(of: path)
    }

    /// Every problem `document` has as the root's user file: the parts that do not fit the type, the
    /// rules it breaks, the locked paths it sets. See ``RootLens/problems(in:named:coding:)``.
    public func problems(in document: JSONValue, named name: String, coding: DocumentCoding? = nil) -> [SettingsProblem]
    {
        root.problems(in: document, named: name, coding: coding)
    }

    /// Where the values at each of `paths` come from, from one state of the root (see
    /// ``RootLens/provenance(ofEach:)``).
    public func provenance(ofEach paths: [ValuePath]) throws -> [Provenance] {
        try root.provenance(ofEach: paths)
    }

    /// The JSON Schema of the settings type (see ``RootLens/schema()``).
    public func schema() throws -> SettingsSchema {
        try root.schema()
    }

    /// Calls `handler` with the whole value, encoded, after each commit that changes it.
    public func observe(_ handler: @escaping @Sendable (_ document: JSONValue) -> Void) -> ObservationToken {
        root.observeDocument(handler)
    }

    /// Calls `handler` with each outside change the root could not take (see ``RootLens/observeErrors(_:)``).
    public func observeErrors(_ handler: @escaping @Sendable (any Error) -> Void) -> ObservationToken {
        root.observeErrors(handler)
    }

    /// Reads the store again (as `RootLens.reload()` does).
    public func reload() throws {
        try root.reload()
    }

    /// Writes what a coalescing store holds back (as `RootLens.flush()` does).
    public func flush() throws {
        try root.flush()
    }

    /// The changes the store keeps a record of (as `RootLens.history()` gives them).
    public func history() throws -> SettingsHistory {
        try root.history()
    }

    /// Stores the document the store held after `revision` again (as `RootLens.rollback(to:)` does).
    public func rollback(to revision: Int) throws {
        try root.rollback(to: revision)
    }

    /// Takes the values at `path` out of every record of the store's history (as
    /// `RootLens.purgeHistory(of:)` does); returns how many records held one.
    @discardableResult
    public func purgeHistory(of path: ValuePath) throws -> Int {
        try root.purgeHistory(of: path)
    }

    /// Which revision of the store each of its readers runs (as `RootLens.appliedStatus()` gives it).
    public func appliedStatus() throws -> AppliedStatus? {
        try root.appliedStatus()
    }
}

extension RootLens {
    /// This root with its type hidden, for tools that work on any settings type.
    public var erased: AnyRootLens { AnyRootLens(self) }
}

/// What ``AnyRootLens`` asks of a root: its non-generic operations, which `RootLens` has already.
protocol ErasedRoot: Sendable, CustomStringConvertible {
    var storeDescription: String { get }
    var locks: [SettingsLock] { get }
    var secretPaths: [ValuePath] { get }
    func secretPaths(in value: JSONValue, at path: ValuePath) -> [ValuePath]
    func value(atPath path: String) throws -> JSONValue
    func set(atPath path: String, to newValue: JSONValue) throws
    func set(atPath path: String, to newValue: JSONValue, ifUnchangedFrom expected: JSONValue) throws
    func remove(atPath path: String) throws
    func reset(atPath path: String) throws
    func storedDocument() throws -> JSONValue?
    func layers() throws -> [SettingsLayer]
    func provenance(of path: ValuePath) throws -> Provenance
    func provenance(ofEach paths: [ValuePath]) throws -> [Provenance]
    func schema() throws -> SettingsSchema
    func problems(in document: JSONValue, named name: String, coding: DocumentCoding?) -> [SettingsProblem]
    func observeDocument(_ handler: @escaping @Sendable (JSONValue) -> Void) -> ObservationToken
    func observeErrors(_ handler: @escaping @Sendable (any Error) -> Void) -> ObservationToken
    func reload() throws
    func flush() throws
    func history() throws -> SettingsHistory
    func rollback(to revision: Int) throws
    func purgeHistory(of path: ValuePath) throws -> Int
    func appliedStatus() throws -> AppliedStatus?
}

extension RootLens: ErasedRoot {
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
