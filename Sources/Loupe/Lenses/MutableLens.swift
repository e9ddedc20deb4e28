import Logging

/// A view of one part of a settings graph that can also change it, atomically and durably.
///
/// The root lens holds the whole value and its store:
///
/// ```swift
/// let root = try MutableLens(default: Settings(), store: MemoryStore<Settings>())
/// let port: MutableLens<Int> = root.server.port
/// try port.set(9090)
/// try root.update { $0.server.port += 1 }
/// ```
///
/// Derived lenses (`root.server.port`, `root[\.features["beta"]]`) name only their own value type and read
/// the current root lazily. Every update runs under the graph's update lock on a copy of the root, is
/// saved to the store, and only then becomes visible; if the closure or the store throws, nothing changes.
@dynamicMemberLookup
public struct MutableLens<Value: Sendable>: Sendable {
    let node: any LensNode<Value>

    init(node: any LensNode<Value>) {
        self.node = node
    }

    // MARK: Reading

    /// The current value: an immutable snapshot, safe to keep and read on any thread.
    public var value: Value { node.read() }

    /// The path from the root, as it appears in errors and logs (`server.port`; `<root>` for the root).
    public var path: String { node.path }

    /// Whether the store behind this lens keeps secrets (a keyring): tools should mask what they show.
    public var holdsSecrets: Bool { node.storeHoldsSecrets }

    /// The same lens without the ability to write, to hand to components that only read.
    public var readOnly: Lens<Value> { Lens(node: node) }

    // MARK: Deriving

    /// A lens onto a writable part of this lens's value.
    public subscript<Part: Sendable>(
        dynamicMember keyPath: WritableKeyPath<Value, Part> & Sendable
    ) -> MutableLens<Part> {
        self[keyPath]
    }

    /// A read-only lens onto a part that cannot be written (a `let`, a computed property).
    public subscript<Part: Sendable>(dynamicMember keyPath: KeyPath<Value, Part> & Sendable) -> Lens<Part> {
        readOnly[keyPath]
    }

    /// A lens onto a writable part, by an explicit key path: `root[\.server.port]`,
    /// `root[\.features["beta"]]` (an entry that may be absent: reads `nil`, writing `nil` removes it).
    public subscript<Part: Sendable>(_ keyPath: WritableKeyPath<Value, Part> & Sendable) -> MutableLens<Part> {
        let path = joinPath(node.path, keyPathName(keyPath))
        return MutableLens<Part>(node: node.appending(WritableKeyPathStep(keyPath: keyPath), path: path))
    }

    /// A read-only lens, by an explicit key path that cannot write, such as an optional chain:
    /// `root[\Settings.protection?.enabled]` reads `nil` while `protection` is `nil`.
    public subscript<Part: Sendable>(_ keyPath: KeyPath<Value, Part> & Sendable) -> Lens<Part> {
        readOnly[keyPath]
    }

    // MARK: Updating

    /// Replaces this lens's value.
    ///
    /// Returns after the new root is saved and visible. Throws ``LensError`` when the write cannot land
    /// and ``StoreError`` when the store fails; either way nothing changed.
    public func set(_ newValue: Value) throws {
        try node.update { $0 = newValue }
    }

    /// Changes this lens's value in place and returns what `body` returns.
    ///
    /// `body` runs under the graph's update lock, one update at a time, on a copy of the current value, so a
    /// read–modify–write such as `try counter.update { $0 += 1 }` never loses an increment. If `body` throws,
    /// or the store cannot save, memory, store and observers are exactly as before and the error reaches
    /// the caller. If `body` changes nothing, nothing is committed and nobody is notified.
    ///
    /// Keep `body` short and free of side effects: with a store that detects conflicting writers from other
    /// processes (etcd), it may run again on the fresh value.
    @discardableResult
    public func update<Result>(_ body: (inout Value) throws -> Result) throws -> Result {
        try node.update(body)
    }

    // MARK: Defaults

    /// A lens onto this optional part that reads `defaultValue` while the part is `nil`.
    ///
    /// The default is never saved by itself. The first write through this lens (or a lens derived from it)
    /// promotes the default into the graph and then applies the write, so no write is ever dropped.
    /// Where a default is given at several levels for the same part, the one nearer the root wins.
    ///
    /// ```swift
    /// let protection = root.protection.withDefault(Protection())
    /// protection.enabled.value        // false, from the default, while root.protection is nil
    /// try protection.enabled.set(true) // root.protection is now Protection(enabled: true)
    /// ```
    public func withDefault<Wrapped: Sendable>(_ defaultValue: Wrapped) -> MutableLens<Wrapped>
    where Value == Wrapped? {
        MutableLens<Wrapped>(node: node.appending(DefaultStep(defaultValue: defaultValue), path: node.path))
    }

    // MARK: The store

    /// Re-reads the store and commits what it holds now (the default, if it holds nothing), notifying the
    /// lenses whose values changed. Acts on the whole graph, whichever lens it is called on.
    public func reload() throws {
        try node.reload()
    }

    /// Deletes the stored value (the file, the keyring item, …) and returns the graph to its default.
    ///
    /// - Throws: ``LensError/notRoot(path:operation:)`` on a derived lens: a component handed one part of
    ///   the graph cannot delete the whole.
    public func remove() throws {
        try node.removeStored()
    }

    /// Makes every saved change durable now, for stores that defer writes (a coalescing file store).
    public func flush() throws {
        try node.flush()
    }

    /// Calls `handler` with each error met while applying a change made outside this process (a corrupt
    /// edit of the settings file, for example). The in-memory value is kept; the next good change is
    /// picked up as usual.
    public func observeErrors(_ handler: @escaping @Sendable (any Error) -> Void) -> ObservationToken {
        node.observeErrors(handler)
    }
}

// MARK: - Optional parts

extension MutableLens {
    /// A lens onto a member of this optional part, `nil` while the part is `nil`.
    ///
    /// Writing a value while the part is `nil` throws ``LensError/missingParent(path:parent:)``; give the
    /// part a default with ``withDefault(_:)`` to have the write create it instead.
    public subscript<Wrapped, Member: Sendable>(
        dynamicMember keyPath: WritableKeyPath<Wrapped, Member> & Sendable
    ) -> MutableLens<Member?> where Value == Wrapped? {
        let path = joinPath(node.path, keyPathName(keyPath))
        let step = OptionalMemberStep(keyPath: keyPath, path: path, parentPath: node.path)
        return MutableLens<Member?>(node: node.appending(step, path: path))
    }

    /// A lens onto an optional member of this optional part, flattened to a single optional.
    public subscript<Wrapped, Member: Sendable>(
        dynamicMember keyPath: WritableKeyPath<Wrapped, Member?> & Sendable
    ) -> MutableLens<Member?> where Value == Wrapped? {
        let path = joinPath(node.path, keyPathName(keyPath))
        let step = OptionalOptionalMemberStep(keyPath: keyPath, path: path, parentPath: node.path)
        return MutableLens<Member?>(node: node.appending(step, path: path))
    }
}

// MARK: - Dictionaries

extension MutableLens {
    /// A lens onto the entry for `key`: `nil` while absent; writing `nil` removes the entry.
    ///
    /// ```swift
    /// let beta = root.features["beta"]   // MutableLens<Bool?>
    /// ```
    public subscript<Key: Hashable & Sendable, Element: Sendable>(key: Key) -> MutableLens<Element?>
    where Value == [Key: Element] {
        let path = node.path + "[\(String(reflecting: key))]"
        let keyPath: WritableKeyPath<[Key: Element], Element?> & Sendable = \.[key]
        return MutableLens<Element?>(node: node.appending(WritableKeyPathStep(keyPath: keyPath), path: path))
    }
}

// MARK: - Root lenses

extension MutableLens where Value: Codable {
    /// Creates a root lens over `store`: it starts from the stored value if the store holds one, else from
    /// `defaultValue`, which is not written until an update.
    ///
    /// - Parameters:
    ///   - defaultValue: The value while the store holds nothing; never saved by itself.
    ///   - store: Where the value is kept. One store instance serves one root lens.
    ///   - watch: Whether to pick up changes that other processes make to the store, for stores that can
    ///     see them (files, etcd). On by default.
    ///   - logger: Where loads, outside changes and recoveries are logged. Values are never logged.
    /// - Throws: ``StoreError`` when the store holds something that cannot be read or decoded; the stored
    ///   data is left as it is.
    public init(
        default defaultValue: Value,
        store: some ValueStore<Value>,
        watch: Bool = true,
        logger: Logger = Logger(label: "loupe")
    ) throws {
        let core = try LensCore(default: defaultValue, store: store, watch: watch, logger: logger)
        self.init(node: Focus<Value, Value>(core: core, step: IdentityStep(), path: rootPathName))
    }

    /// Creates a root lens over a new ``MemoryStore`` that starts from `value`.
    public init(_ value: Value) {
        // A memory store cannot fail to load.
        try! self.init(default: value, store: MemoryStore<Value>(), watch: false)
    }
}

extension MutableLens: CustomStringConvertible, CustomDebugStringConvertible {
    /// The lens's path, value type and store; never its value, which may be a secret.
    public var description: String { "MutableLens(\(node))" }
    public var debugDescription: String { description }
}
