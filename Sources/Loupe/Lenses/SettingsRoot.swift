/// What every root does whatever its settings type: the store it keeps the settings in,
/// the layers and where each value comes from, and the history. ``RootLens`` and its type-erased face
/// ``AnyRootLens`` are settings roots.
///
/// ```swift
/// func explain(_ root: some SettingsRoot, _ path: ValuePath) throws {
///     print(try root.provenance(of: path), "in", root.storeDescription)
/// }
/// ```
public protocol SettingsRoot: Sendable, CustomStringConvertible {
    /// This root with its type hidden, for tools that work on any settings type.
    var erased: AnyRootLens { get }
}

extension SettingsRoot {
    private var graph: any RootGraph { erased.rootGraph }

    /// The store, as it describes itself (`JSON file /etc/app/settings.json`); never a value.
    public var storeDescription: String { graph.storeName }

    /// The locks in force: paths the top layer of a ``LayeredStore`` may not set.
    public var locks: [SettingsLock] { graph.locks }

    /// The document the store holds now, as it is stored: what differs from the defaults, the keys the
    /// type does not know, and the version stamp (`"$version"`) when there is one; nil when the store holds
    /// nothing (the value is then the default). A root with no store holds no document.
    ///
    /// It reads the store and changes nothing: the root's next update still applies to what the store
    /// holds then, whoever changed it meanwhile.
    public func storedDocument() throws -> JSONValue? {
        try graph.storedDocument()
    }

    /// The layers of the value, lowest first: the default, each read-only layer's document (as last read,
    /// after migrations), and the top layer's patch for the current value.
    public func layers() throws -> [SettingsLayer] {
        try graph.layers()
    }

    /// Where the value at `path` comes from: the layer that set it (a file, a store, or the default), the
    /// lower layers it overrides, and the lock that holds it, if any. For a store that is not a
    /// ``LayeredStore``, the layers are the default and the store. ``RootLens/provenance(ofPath:)`` takes
    /// the path as text.
    public func provenance(of path: ValuePath) throws -> Provenance {
        try graph.provenance(of: path)
    }

    /// Where the values at each of `paths` come from, worked out from one state of the root: for a tool
    /// that explains every setting at once (a settings page), the root's value encoded once rather than
    /// for each path.
    public func provenance(ofEach paths: [ValuePath]) throws -> [Provenance] {
        try graph.provenance(ofEach: paths)
    }

    /// The JSON Schema (draft 2020-12) of the settings: their type, with this root's default value and
    /// coding; see ``SettingsSchema``.
    public func schema() throws -> SettingsSchema {
        try graph.schema()
    }

    /// Re-reads the store and commits what it holds now (the default, if it holds nothing), notifying the
    /// lenses whose values changed.
    public func reload() throws {
        try graph.reload()
    }

    /// Makes every saved change durable now, for stores that defer writes (a coalescing file store).
    public func flush() throws {
        try graph.flush()
    }

    /// The changes the store keeps a record of, oldest first: for a ``FileStore`` (and a ``LayeredStore``
    /// over one) its journal beside the file, each with its time, author and merge patches.
    ///
    /// ```swift
    /// for change in try root.history().changes where change.touches(try ValuePath(parsing: "upstream.url")) {
    ///     print(change.revision, change.time, change.author?.userName ?? "outside edit")
    /// }
    /// ```
    ///
    /// - Throws: ``SettingsError/Code/unavailable`` when the store keeps no history; the store's error
    ///   when its record cannot be read.
    public func history() throws -> SettingsHistory {
        try graph.history()
    }

    /// Stores the document the store held after `revision` again, as a new change that the history
    /// records: checked by the type, the rules and the locks as any update is, and written as any update is
    /// (a file's text is edited in place). Observers of what changed are notified. Revision
    /// ``SettingsHistory/baseRevision`` is the document before the oldest change kept.
    ///
    /// A path whose values were purged from the history up to `revision`
    /// (``SettingsHistory/purgedPaths(through:)``) keeps what the store holds there now: the history no
    /// longer knows what it held then, and a rollback never removes a value for that.
    ///
    /// ```swift
    /// try root.rollback(to: 41)   // undoes revision 42 and any after it
    /// ```
    ///
    /// - Throws: ``SettingsError/Code/notFound`` when the history does not keep `revision` (naming those it
    ///   keeps); ``SettingsError/Code/invalidValue`` when that document no longer fits the type or its rules;
    ///   ``SettingsError/Code/locked`` when it would store another value at a locked path (as a `set` there
    ///   would; taking a held value out, as a reset does, is allowed); the store's error. Nothing changes.
    public func rollback(to revision: Int) throws {
        try graph.rollback(to: revision)
    }

    /// Takes the values at `path`, and everything under it, out of every record of the store's history:
    /// a value an `unset` removed stays readable there (in ``SettingsChange/reversePatch``, and so in
    /// `loupe diff`) until the history drops it, which may be 100 changes later. Returns how many records
    /// held one (0: none did, and nothing was written); the root path purges every value.
    ///
    /// ```swift
    /// try root.upstream.token.set(nil)
    /// try root.purgeHistory(of: "upstream.token")   // 2: the change that set it, and the unset
    /// ```
    ///
    /// Each record that held one names the path in ``SettingsChange/purgedPaths`` (or, for the document
    /// before the oldest change, ``SettingsHistory/basePurgedPaths``), so that a diff shows it as purged
    /// and a ``rollback(to:)`` leaves it as it is. What the store holds now is not changed: a value still
    /// set stays set, and the next change that touches it is recorded as any is. A ``FileStore``'s journal
    /// is written again whole, under the file's lock, atomically and durably, with the settings file's
    /// mode and owner.
    ///
    /// - Throws: ``SettingsError/Code/unavailable`` when the store keeps no history, or keeps one that
    ///   is not Loupe's to rewrite (an `EtcdStore`'s revisions: `etcdctl compact` drops them);
    ///   ``SettingsError/Code/corrupt`` when a journal is there that does not read; the store's error when
    ///   the history cannot be written.
    @discardableResult
    public func purgeHistory(of path: ValuePath) throws -> Int {
        try graph.purgeHistory(of: path)
    }

    /// Which revision of the store each of its readers runs, as they report it (an `EtcdStore` whose
    /// roots report their status); nil when the store has no such report.
    ///
    /// - Throws: the store's error when the report cannot be read.
    public func appliedStatus() throws -> AppliedStatus? {
        try graph.appliedStatus()
    }

    /// Calls `handler` with each error met while applying a change made outside this process (a corrupt
    /// edit of the settings file, for example). The in-memory value is kept; the next good change is
    /// picked up as usual.
    public func observeErrors(_ handler: @escaping @Sendable (any Error) -> Void) -> ObservationToken {
        graph.observeErrors(handler)
    }
}

/// What ``SettingsRoot`` asks of a root's graph: the operations whose types do not name the settings
/// type, which `GraphCore` has.
protocol RootGraph: AnyObject, Sendable {
    var storeName: String { get }
    var locks: [SettingsLock] { get }
    func storedDocument() throws -> JSONValue?
    func layers() throws -> [SettingsLayer]
    func provenance(of path: ValuePath) throws -> Provenance
    func provenance(ofEach paths: [ValuePath]) throws -> [Provenance]
    func schema() throws -> SettingsSchema
    func reload() throws
    func flush() throws
    func history() throws -> SettingsHistory
    func rollback(to revision: Int) throws
    func purgeHistory(of path: ValuePath) throws -> Int
    func appliedStatus() throws -> AppliedStatus?
    func observeErrors(_ handler: @escaping @Sendable (any Error) -> Void) -> ObservationToken
}

extension GraphCore: RootGraph {
    func storedDocument() throws -> JSONValue? {
        try store?.load().document
    }

    func schema() throws -> SettingsSchema {
        try pipeline.schema.schema()
    }

    func appliedStatus() throws -> AppliedStatus? {
        try store?.appliedStatus()
    }
}
