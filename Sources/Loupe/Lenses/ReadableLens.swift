/// What every lens reads: its value, where it lies in the document, which of its parts are
/// secret, and (see Observation) its changes. ``Lens``, ``MutableLens`` and ``RootLens`` are readable lenses.
///
/// A component that only reads can take any of them:
///
/// ```swift
/// func show(_ port: some ReadableLens<Int>) { print(port.path, port.value) }
/// show(root.server.port)              // a MutableLens<Int>
/// show(root.server.port.readOnly)     // a Lens<Int>
/// ```
///
/// A settings property whose name a lens member takes (`value`, `path`, `values`, …) is reached with an
/// explicit key path: `root[\.path]`.
public protocol ReadableLens<Value>: Sendable {
    /// The type of the value the lens reads.
    associatedtype Value: Sendable

    /// The same lens without the ability to write, to hand to components that only read.
    var readOnly: Lens<Value> { get }

    // A requirement that each lens type meets itself, not an extension's: a read called on a concrete lens
    // from another module is then a direct call, where a protocol extension's generic one costs a held
    // read a third more (the `reads` rows of Benchmarks).

    /// The current value: an immutable snapshot, safe to keep and read on any thread.
    ///
    /// Reading takes a read lock for as long as it takes to project this lens's part; many readers run at
    /// once, and readers never wait for an update's closure or its disk I/O. Inside
    /// `withObservationTracking`, the read is tracked: the next commit of the graph calls its `onChange`.
    var value: Value { get }
}

extension ReadableLens {
    /// The path from the root, as ``ValuePath`` prints it (`server.port`); `<root>` for the root.
    ///
    /// The path is the document's: composed as the lens is derived, each stored property a key path walks
    /// named by the coding key it is encoded under, as the store's coding writes it
    /// (`root.upstream.apiToken` is `up_stream.api_token` where the type's `CodingKeys` say so), the path
    /// errors, provenance, secret paths and string paths use. A key path through a computed property or a
    /// subscript, or a property that is not encoded, is shown as `[…]`, the whole of that key path
    /// (`root.server[\.aliases[0]]` is `server[…]`); the lens subscripts that know their key or index
    /// (`root.features["beta"]`, `root.items[index: 3]`) name it exactly.
    public var path: String { readOnly.node.path }

    /// The path from the root as a ``ValuePath``, the form errors and ``SettingsRoot/provenance(of:)`` take;
    /// `nil` for a lens through a computed property or a subscript, which no path names.
    public var valuePath: ValuePath? { readOnly.node.lensPath.valuePath }

    /// The paths in this lens's value whose values are secrets, from this lens's value (the empty path when
    /// the whole value is one); for a ``RootLens``, from the root.
    ///
    /// They are the root's: every value of a store that keeps secrets (a keyring: the root path), the
    /// values a store keeps secret in a document it otherwise shows (a sops file's encrypted values), those
    /// a credential directory (``LayeredStore/Layer/directory(credentials:)``) sets, those a secret
    /// reference (``SecretReferences``) gives, and the parts the settings type declares secret
    /// (``SecretSettings``) that the value holds, wherever their values come from. Tools mask the values
    /// there, as `loupe` does unless asked with `--reveal`, and a `LoupeProvider` marks them secret for
    /// `ConfigReader`. A lens no path names (through a computed property) counts its whole value secret
    /// when the root has any.
    public var secretPaths: [ValuePath] { readOnly.node.secretPaths.relative(to: valuePath) }
}

/// What every lens that writes does: replace its value, or change it in place.
/// ``MutableLens`` and ``RootLens`` are writable lenses.
public protocol WritableLens<Value>: ReadableLens {
    /// The lens's writes as a ``MutableLens``: the lens itself, or the whole graph for a ``RootLens``.
    var lens: MutableLens<Value> { get }

    // Requirements each lens type meets itself, as `value` is: an update called on a concrete lens from
    // another module is then a direct call (the in-memory update row of Benchmarks).

    /// Replaces this lens's value.
    ///
    /// Returns after the new root is saved and visible. Throws ``SettingsError`` when the write cannot land
    /// or the store fails; either way nothing changed.
    func set(_ newValue: Value) throws

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
    func update<Result>(_ body: (inout Value) throws -> Result) throws -> Result
}

extension WritableLens {
    /// The same lens without the ability to write, to hand to components that only read.
    public var readOnly: Lens<Value> { lens.readOnly }

    /// Replaces this lens's value, off Swift's cooperative pool. Deprecated: `try await lens.set(_:)`
    /// resolves to the synchronous form at top level, `async.set(_:)` everywhere.
    @available(*, deprecated, message: "use 'try await lens.async.set(_:)'")
    public func set(_ newValue: Value) async throws {
        try await lens.node.updateOffPool { $0 = newValue }
    }

    /// Changes this lens's value in place, off Swift's cooperative pool. Deprecated: `try await
    /// lens.update(_:)` resolves to the synchronous form at top level, `async.update(_:)` everywhere.
    @available(*, deprecated, message: "use 'try await lens.async.update(_:)'")
    @discardableResult
    public func update<Result: Sendable>(
        _ body: @escaping @Sendable (inout Value) throws -> Result
    ) async throws -> Result {
        try await lens.node.updateOffPool(body)
    }
}
