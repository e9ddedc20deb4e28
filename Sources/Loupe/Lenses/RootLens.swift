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
public final class RootLens<Root: Codable & Sendable>: WritableLens, SettingsRoot {
    let core: GraphCore<Root>

    /// The value the root reads: the settings.
    public typealias Value = Root

    /// The whole graph as a lens, to hand to code that takes a `MutableLens<Root>`.
    public let lens: MutableLens<Root>

    /// The current value (see ``ReadableLens/value``).
    public var value: Root { lens.value }

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

    // MARK: Updating

    /// Replaces the whole value (see ``WritableLens/set(_:)``).
    public func set(_ newValue: Root) throws { try lens.set(newValue) }

    /// Changes the value in place and returns what `body` returns (see ``WritableLens/update(_:)``).
    @discardableResult
    public func update<Result>(_ body: (inout Root) throws -> Result) throws -> Result { try lens.update(body) }

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

    // MARK: The store

    /// Deletes the stored document (the file, the keyring item, …) and returns the graph to its default.
    public func remove() throws {
        try core.removeStored()
    }

    // The store's operations off Swift's cooperative pool are `async`'s. These overloads exist to be
    // caught: in async code they would be chosen over the synchronous forms, which block the pool.

    /// Re-reads the store, off Swift's cooperative pool. Deprecated: `try await root.reload()` resolves to
    /// the synchronous form at top level, `async.reload()` everywhere.
    @available(*, deprecated, message: "use 'try await root.async.reload()'")
    public func reload() async throws { try await self.async.reload() }

    /// Deletes the stored document, off Swift's cooperative pool. Deprecated as `reload()` is.
    @available(*, deprecated, message: "use 'try await root.async.remove()'")
    public func remove() async throws { try await self.async.remove() }

    /// Makes every saved change durable now, off Swift's cooperative pool. Deprecated as `reload()` is.
    @available(*, deprecated, message: "use 'try await root.async.flush()'")
    public func flush() async throws { try await self.async.flush() }

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
