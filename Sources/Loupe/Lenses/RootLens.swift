import Logging

/// The root of a settings graph: it owns the value, its store, the store's watch and its lifecycle, and
/// hands out lenses onto the parts.
///
/// ```swift
/// let root = try RootLens(default: Settings(), store: FileStore(path: "/etc/app/settings.json"))
/// let port: MutableLens<Int> = root.server.port     // a part lens names only its own value type
/// try port.set(9090)                                // saved, then visible, then observed
/// try await root.async.update { $0.server.port += 1 }  // async: the store's I/O runs off the cooperative pool
/// try root.reload()                                 // what only the root can do: reload, remove, flush
/// ```
///
/// The root reads and writes like a `MutableLens<Root>` (``lens`` is exactly that): its reads are
/// ``ReadableLens``'s, its writes ``WritableLens``'s, and its path is `<root>`. Only the root can
/// `reload()`, `remove()` and `flush()`, and only it reports the failures of outside changes
/// (``errors``, ``observeErrors(_:)``): part lenses read, write and observe, nothing else.
///
/// Between the store and the typed value runs the document pipeline: the store keeps a document, the
/// root decodes it on load and encodes each commit into one. A store that other processes write is
/// watched (unless `watch` is false), and their changes reach observers like local updates.
///
/// The graph lives as long as the root or any lens derived from it; when the last goes, the watch stops
/// and deferred writes are flushed. With swift-service-lifecycle, `LoupeServiceLifecycle` makes a root a
/// `Service` that flushes on graceful shutdown.
@dynamicMemberLookup
public final class RootLens<Root: Codable & Sendable>: WritableLens {
    let core: GraphCore<Root>

    /// The value the root reads: the settings.
    public typealias Value = Root

    /// The whole graph as a lens, to hand to code that takes a `MutableLens<Root>`.
    public let lens: MutableLens<Root>

    private init(core: GraphCore<Root>) {
        self.core = core
        lens = MutableLens(node: Focus<Root, Root>(core: core, step: IdentityStep(), path: .root))
    }

    /// Creates a root over `store`: it starts from the stored document lying over `defaultValue`, or from
    /// `defaultValue` when the store holds nothing. Loading never writes.
    ///
    /// A stored document is a JSON Merge Patch (RFC 7386) over the encoded default: a key it lacks takes
    /// the default's value (`{}` is the default), keys the type does not know are kept and written back at
    /// their place, and an update stores what differs from the default and keeps every key the document
    /// already held (see `storing`, and ``reset(atPath:)`` for how a key leaves). See
    /// <doc:EvolvingYourSettings>.
    ///
    /// ```swift
    /// let root = try RootLens(default: Settings(), store: FileStore(path: "settings.json"), version: 2,
    ///                         migrations: [2: { try $0.move(from: "ticker.interval", to: "ticker.intervalSeconds") }])
    /// ```
    ///
    /// - Parameters:
    ///   - defaultValue: What a stored document lies over, and the value while the store holds nothing;
    ///     never saved by itself.
    ///   - store: Where the document is kept. One store instance serves one root. A store that is only a
    ///     ``DocumentStore`` is read-only: writes throw ``SettingsError/Code/readOnly``.
    ///   - version: The version of the documents this program writes; 1 (the default) for a program that
    ///     has never changed their shape. A document records its version as `"$version": N` (unstamped
    ///     means 1); one stamped newer than `version` is read as far as the type allows, its unknown keys
    ///     kept and its stamp never lowered.
    ///   - migrations: For each version N from 2, the step that turns a version N−1 document into a
    ///     version N one. They run on load, in order, on the stored document; the upgraded document is
    ///     written, stamped, with the next update. A version without a step needs none.
    ///   - storing: What the stored document holds: only the differences from the defaults (the default),
    ///     or the whole value, for files that other programs read without the defaults.
    ///   - watch: Whether to pick up changes that other processes make to the store, for stores that can
    ///     see them (files, etcd). On by default.
    ///   - logger: Where outside changes and their failures are logged. Values are never logged.
    /// - Throws: ``SettingsError`` when the store holds something that cannot be read, migrated or decoded;
    ///   the stored data is left as it is.
    public convenience init(
        default defaultValue: Root, store: some DocumentStore, version: Int = 1,
        migrations: [Int: @Sendable (inout JSONValue) throws -> Void] = [:],
        storing: StoredForm = .differencesFromDefaults, watch: Bool = true,
        logger: Logger = Logger(label: "loupe")
    ) throws {
        try self.init(
            core: GraphCore(
                default: defaultValue, store: store, version: version, migrations: migrations, form: storing,
                watch: watch, equality: RuntimeEquality(Root.self), logger: logger))
    }

    /// Creates a root with no store: the value lives in memory only, and no update encodes or saves it.
    public convenience init(_ value: Root) {
        // With no store, loading cannot fail.
        try! self.init(
            core: GraphCore(
                default: value, store: nil, watch: false, equality: RuntimeEquality(Root.self),
                logger: Logger(label: "loupe")))
    }

    // MARK: Reading

    /// The store, as it describes itself (`JSON file /etc/app/settings.json`); never a value.
    public var storeDescription: String { core.storeName }

    /// A lens onto a writable part of the value.
    public subscript<Part: Sendable>(dynamicMember keyPath: WritableKeyPath<Root, Part> & Sendable) -> MutableLens<Part>
    {
        lens[keyPath]
    }

    /// A read-only lens onto a part that cannot be written (a `let`, a computed property).
    public subscript<Part: Sendable>(dynamicMember keyPath: KeyPath<Root, Part> & Sendable) -> Lens<Part> {
        lens.readOnly[keyPath]
    }

    /// A lens onto a writable part, by an explicit key path: `root[\.features["beta"]]`.
    public subscript<Part: Sendable>(_ keyPath: WritableKeyPath<Root, Part> & Sendable) -> MutableLens<Part> {
        lens[keyPath]
    }

    /// A read-only lens, by an explicit key path that cannot write: `root[\Settings.protection?.enabled]`.
    public subscript<Part: Sendable>(_ keyPath: KeyPath<Root, Part> & Sendable) -> Lens<Part> {
        lens.readOnly[keyPath]
    }

    // MARK: Paths in text

    /// Replaces the part at `path`, type-checked against `Root`. See ``MutableLens/set(atPath:to:)``.
    ///
    /// The version stamp, `"$version"`, is not a setting: a path that names it (or a whole document that
    /// holds it) is refused with ``SettingsError/Code/invalidValue``.
    public func set(atPath path: String, to newValue: JSONValue) throws {
        try DocumentPipeline<Root>.refuseStampWrite(at: ValuePath(parsing: path), writing: newValue)
        try lens.set(atPath: path, to: newValue)
    }

    /// Replaces the part at `path` if it still holds `expected`. See
    /// ``MutableLens/set(atPath:to:ifUnchangedFrom:)``; the version stamp is refused as by ``set(atPath:to:)``.
    public func set(atPath path: String, to newValue: JSONValue, ifUnchangedFrom expected: JSONValue) throws {
        try DocumentPipeline<Root>.refuseStampWrite(at: ValuePath(parsing: path), writing: newValue)
        try lens.set(atPath: path, to: newValue, ifUnchangedFrom: expected)
    }

    /// Removes the part at `path`. See ``MutableLens/remove(atPath:)``; the version stamp is refused as by
    /// ``set(atPath:to:)``.
    public func remove(atPath path: String) throws {
        try DocumentPipeline<Root>.refuseStampWrite(at: ValuePath(parsing: path), writing: nil)
        try lens.remove(atPath: path)
    }

    /// Resets the part at `path` to the default value's: the stored document then holds nothing there (only
    /// the unknown keys it had below it), so a later change of the default reaches it. A part the default
    /// does not have (an optional that is `nil`, an entry of a dictionary) is removed. Over a
    /// ``LayeredStore``, the part takes the value of the layers below the top one.
    ///
    /// It is how a key leaves the stored document: an update keeps every key the document holds, even one
    /// whose value equals the default (an administrator's explicit `logLevel = "info"`), and a reset of a
    /// key held at the default's value removes it from the document although the value does not change.
    ///
    /// ```swift
    /// try root.reset(atPath: "ticker.intervalSeconds")
    /// ```
    ///
    /// - Throws: ``SettingsError`` when the path is malformed or names nothing in the value or the default; or
    ///   the store's error. Either way nothing changes.
    public func reset(atPath path: String) throws {
        let parsed = try ValuePath(parsing: path)
        if !parsed.components.isEmpty { try DocumentPipeline<Root>.refuseStampWrite(at: parsed, writing: nil) }
        guard let defaultPart = try core.baseDocument()[path: parsed] else {
            if parsed.components.isEmpty {
                let defaultValue = core.defaultValue
                return try core.update(path: .root, releasing: [parsed]) { $0 = defaultValue }
            }
            return try lens.remove(atPath: path)
        }
        try core.update(path: .root, releasing: [parsed], lens.replacing(at: parsed, with: defaultPart, expecting: nil))
    }

    /// The document the store holds now, as it is stored: what differs from the defaults, the keys the
    /// type does not know, and the version stamp (`"$version"`) when there is one; nil when the store holds
    /// nothing (the value is then the default). A root with no store holds no document.
    ///
    /// It reads the store and changes nothing: the root's next update still applies to what the store
    /// holds then, whoever changed it meanwhile.
    public func storedDocument() throws -> JSONValue? {
        try core.store?.load().document
    }

    // MARK: Layers and provenance

    /// Where the value at `path` comes from: the layer that set it (a file, a store, or the default), the
    /// lower layers it overrides, and the lock that holds it, if any. For a store that is not a
    /// ``LayeredStore``, the layers are the default and the store.
    ///
    /// ```swift
    /// let origin = try root.provenance(ofPath: "upstream.url")
    /// // upstream.url = "https://eu.example" from /etc/app/settings.d/10-site.json
    /// //     (overrides /usr/share/app/settings.json, default)
    /// ```
    ///
    /// - Throws: ``SettingsError`` when `path` is malformed.
    public func provenance(ofPath path: String) throws -> Provenance {
        try core.provenance(of: ValuePath(parsing: path))
    }

    /// Where the value at `path` comes from; see ``provenance(ofPath:)``.
    public func provenance(of path: ValuePath) throws -> Provenance {
        try core.provenance(of: path)
    }

    /// Where the values at each of `paths` come from, worked out from one state of the root: for a tool
    /// that explains every setting at once (a settings page), the root's value encoded once rather than
    /// for each path.
    public func provenance(ofEach paths: [ValuePath]) throws -> [Provenance] {
        try core.provenance(ofEach: paths)
    }

    /// The layers of the value, lowest first: the default, each read-only layer's document (as last read,
    /// after migrations), and the top layer's patch for the current value.
    public func layers() throws -> [SettingsLayer] {
        try core.layers()
    }

    /// The locks in force: paths the top layer of a ``LayeredStore`` may not set.
    public var locks: [SettingsLock] { core.locks }

    /// The version of the settings this program reads and writes: the `version` the root was made with (1
    /// without migrations).
    public var version: Int { core.pipeline.version }

    /// The version the stored document is stamped with (`"$version"`; 1 when it has no stamp or nothing is
    /// stored). Greater than ``version`` when a newer program wrote it: the root then reads what this
    /// version knows of it (the keys it does not know are kept), logs a warning once, and writes the
    /// document back with the newer stamp. See "Evolving your settings".
    public var storedVersion: Int { core.storedVersion }

    /// Whether the stored document comes from a newer version of the settings than this program's.
    public var storedDocumentIsNewer: Bool { storedVersion > version }

    /// The JSON Schema (draft 2020-12) of the settings: their type, with this root's default value and
    /// coding; see ``SettingsSchema``.
    public func schema() throws -> SettingsSchema {
        try core.pipeline.schema.schema()
    }

    // MARK: The store

    /// Re-reads the store and commits what it holds now (the default, if it holds nothing), notifying the
    /// lenses whose values changed.
    public func reload() throws {
        try core.reload()
    }

    /// Re-reads the store, off Swift's cooperative pool.
    @available(
        *, deprecated,
        message:
            "use 'try await root.async.reload()': at top level, 'try await root.reload()' resolves to the synchronous form"
    )
    public func reload() async throws {
        try await self.async.reload()
    }

    /// Deletes the stored document (the file, the keyring item, …) and returns the graph to its default.
    public func remove() throws {
        try core.removeStored()
    }

    /// Deletes the stored document, off Swift's cooperative pool.
    @available(
        *, deprecated,
        message:
            "use 'try await root.async.remove()': at top level, 'try await root.remove()' resolves to the synchronous form"
    )
    public func remove() async throws {
        try await self.async.remove()
    }

    /// Makes every saved change durable now, for stores that defer writes (a coalescing file store).
    public func flush() throws {
        try core.flush()
    }

    // MARK: History

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
        try core.history()
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
        try core.rollback(to: revision)
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
        try core.purgeHistory(of: path)
    }

    /// Which revision of the store each of its readers runs, as they report it (an `EtcdStore` whose
    /// roots report their status); nil when the store has no such report.
    ///
    /// - Throws: the store's error when the report cannot be read.
    public func appliedStatus() throws -> AppliedStatus? {
        try core.store?.appliedStatus()
    }

    /// Makes every saved change durable now, off Swift's cooperative pool.
    @available(
        *, deprecated,
        message:
            "use 'try await root.async.flush()': at top level, 'try await root.flush()' resolves to the synchronous form"
    )
    public func flush() async throws {
        try await self.async.flush()
    }

    // MARK: Async code

    /// The root's writes and store operations for async code: each suspends the caller while the work and
    /// the store's I/O run off Swift's cooperative pool, on the graph's own queue.
    ///
    /// ```swift
    /// try await root.async.update { $0.server.port += 1 }
    /// try await root.async.reload()
    /// ```
    ///
    /// They have names of their own (rather than `async` overloads of `update(_:)`, `reload()`, …) because
    /// Swift resolves `try await root.reload()` in a `main.swift` to the synchronous form. A settings
    /// property named `async` is reached with an explicit key path: `root[\.async]`.
    public var async: Async { Async(root: self) }

    /// The writes and store operations of a ``RootLens`` for async code. See ``RootLens/async``.
    public struct Async: Sendable {
        let root: RootLens<Root>

        /// Replaces the whole value. See `RootLens.set(_:)`.
        public func set(_ newValue: Root) async throws {
            try await root.lens.async.set(newValue)
        }

        /// Changes the value in place and returns what `body` returns. See `RootLens.update(_:)`.
        @discardableResult
        public func update<Result: Sendable>(
            _ body: @escaping @Sendable (inout Root) throws -> Result
        ) async throws -> Result {
            try await root.lens.async.update(body)
        }

        /// Re-reads the store and commits what it holds now. See `RootLens.reload()`.
        public func reload() async throws {
            let core = root.core
            try await core.offPool { try core.reload() }
        }

        /// Deletes the stored document and returns the graph to its default. See `RootLens.remove()`.
        public func remove() async throws {
            let core = root.core
            try await core.offPool { try core.removeStored() }
        }

        /// Makes every saved change durable now. See `RootLens.flush()`.
        public func flush() async throws {
            let core = root.core
            try await core.offPool { try core.flush() }
        }

        /// The changes the store keeps a record of. See `RootLens.history()`.
        public func history() async throws -> SettingsHistory {
            let core = root.core
            return try await core.offPool { try core.history() }
        }

        /// Stores the document the store held after `revision` again. See `RootLens.rollback(to:)`.
        public func rollback(to revision: Int) async throws {
            let core = root.core
            try await core.offPool { try core.rollback(to: revision) }
        }

        /// Takes the values at `path` out of every record of the store's history. See
        /// `RootLens.purgeHistory(of:)`.
        @discardableResult
        public func purgeHistory(of path: ValuePath) async throws -> Int {
            let core = root.core
            return try await core.offPool { try core.purgeHistory(of: path) }
        }
    }

    // MARK: Errors from outside changes

    /// Calls `handler` with each error met while applying a change made outside this process (a corrupt
    /// edit of the settings file, for example). The in-memory value is kept; the next good change is
    /// picked up as usual.
    public func observeErrors(_ handler: @escaping @Sendable (any Error) -> Void) -> ObservationToken {
        core.observeErrors(handler)
    }

    /// Each error met while applying a change made outside this process, as it happens.
    ///
    /// ```swift
    /// for await error in root.errors { logger.error("ignored a bad edit: \(error)") }
    /// ```
    public var errors: OutsideChangeErrors { OutsideChangeErrors(core: core) }
}

extension RootLens: CustomStringConvertible, CustomDebugStringConvertible {
    /// The root's value type and store; never its value, which may be a secret.
    public var description: String { "RootLens<\(Root.self)>(\(core.storeName))" }
    public var debugDescription: String { description }
}

/// The errors met while applying changes made outside the process, as an `AsyncSequence`: see
/// ``RootLens/errors``. Each iteration sees the errors after it starts; it ends when its task is cancelled.
public struct OutsideChangeErrors: AsyncSequence, Sendable {
    public typealias Element = any Error
    public typealias Failure = Never

    private let subscribe: @Sendable (@escaping @Sendable (any Error) -> Void) -> ObservationToken

    init<Root>(core: GraphCore<Root>) {
        subscribe = { core.observeErrors($0) }
    }

    /// Iterates the errors.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<any Error>.Iterator

        public mutating func next() async -> (any Error)? {
            await base.next()
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> (any Error)? {
            await base.next(isolation: actor)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: subscriptionStream(buffering: .bufferingNewest(100), subscribe))
    }
}

extension RootLens where Root: Equatable {
    /// Creates a root over `store`; see ``init(default:store:version:migrations:storing:watch:logger:)``. An
    /// `Equatable` root is compared with its own `==`, known statically.
    public convenience init(
        default defaultValue: Root, store: some DocumentStore, version: Int = 1,
        migrations: [Int: @Sendable (inout JSONValue) throws -> Void] = [:],
        storing: StoredForm = .differencesFromDefaults, watch: Bool = true,
        logger: Logger = Logger(label: "loupe")
    ) throws {
        try self.init(
            core: GraphCore(
                default: defaultValue, store: store, version: version, migrations: migrations, form: storing,
                watch: watch, equality: RuntimeEquality { $0 == $1 }, logger: logger))
    }

    /// Creates a root with no store; see `init(_:)`.
    public convenience init(_ value: Root) {
        // With no store, loading cannot fail.
        try! self.init(
            core: GraphCore(
                default: value, store: nil, watch: false, equality: RuntimeEquality { $0 == $1 },
                logger: Logger(label: "loupe")))
    }
}
