/// A view of one part of a settings graph that can also change it, atomically and durably.
///
/// ```swift
/// let root = try RootLens(default: Settings(), store: FileStore(path: "settings.json"))
/// let port: MutableLens<Int> = root.server.port
/// try port.set(9090)
/// try await port.async.update { $0 += 1 }    // from async code: the store's I/O runs off the cooperative pool
/// ```
///
/// Part lenses (`root.server.port`, `root[\.features["beta"]]`) name only their own value type and read
/// the current root lazily: a component handed `MutableLens<Credentials>` can read, write and observe its
/// part, and knows nothing else of the graph. Reloading, deleting and flushing belong to the
/// ``RootLens``.
///
/// Every update runs under the graph's update lock on a copy of the root, is saved to the store, and only
/// then becomes visible; if the closure or the store throws, nothing changes. Its reads are
/// ``ReadableLens``'s and its writes ``WritableLens``'s, which ``RootLens`` shares.
@dynamicMemberLookup
public struct MutableLens<Value: Sendable>: WritableLens {
    let node: any LensNode<Value>

    init(node: any LensNode<Value>) {
        self.node = node
    }

    /// The same lens without the ability to write, to hand to components that only read.
    public var readOnly: Lens<Value> { Lens(node: node) }

    /// This lens: what the writes of ``WritableLens`` go through.
    public var lens: MutableLens<Value> { self }

    /// The current value (see ``ReadableLens/value``).
    public var value: Value { node.read() }

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
    ///
    /// A key path through an array's subscript (`\.items[3]`) traps, as Swift's subscript does, once the
    /// array is shorter; use ``subscript(index:)`` for elements.
    public subscript<Part: Sendable>(_ keyPath: WritableKeyPath<Value, Part> & Sendable) -> MutableLens<Part> {
        MutableLens<Part>(
            node: node.child(ChildKey(keyPath: keyPath, kind: .writable)) {
                (
                    WritableKeyPathStep(keyPath: keyPath),
                    node.lensPath.appending(KeyPathNames.segments(of: keyPath, in: node))
                )
            })
    }

    /// A read-only lens, by an explicit key path that cannot write, such as an optional chain:
    /// `root[\Settings.protection?.enabled]` reads `nil` while `protection` is `nil`.
    public subscript<Part: Sendable>(_ keyPath: KeyPath<Value, Part> & Sendable) -> Lens<Part> {
        readOnly[keyPath]
    }

    // MARK: Updating

    /// Replaces this lens's value (see ``WritableLens/set(_:)``).
    public func set(_ newValue: Value) throws {
        try node.update { $0 = newValue }
    }

    /// Changes this lens's value in place and returns what `body` returns (see ``WritableLens/update(_:)``).
    @discardableResult
    public func update<Result>(_ body: (inout Value) throws -> Result) throws -> Result {
        try node.update(body)
    }

    /// The same writes for async code: they suspend the caller while `body` and the store's I/O run off
    /// Swift's cooperative pool, on the graph's own queue.
    ///
    /// ```swift
    /// try await port.async.set(9090)
    /// try await port.async.update { $0 += 1 }
    /// ```
    ///
    /// They have names of their own (rather than `async` overloads of `set(_:)` and `update(_:)`) because
    /// Swift resolves `try await port.set(9090)` in a `main.swift` to the synchronous form. A settings
    /// property named `async` is reached with an explicit key path: `lens[\.async]`.
    ///
    /// Cancelling the task that awaits a write does not cancel the write: once it has started it is applied
    /// and saved, or fails, as a whole, and the `await` returns when it has, with its result. (A write that
    /// stopped halfway would leave the value applied and not saved, or saved and not applied.)
    public var async: Async { Async(node: node) }

    /// The writes of a ``MutableLens`` for async code. See ``MutableLens/async``.
    public struct Async: Sendable {
        let node: any LensNode<Value>

        /// Replaces the lens's value and returns once it is saved and visible, without holding a thread of
        /// Swift's cooperative pool while the store writes. See `MutableLens.set(_:)`.
        public func set(_ newValue: Value) async throws {
            try await node.updateOffPool { $0 = newValue }
        }

        /// Changes the lens's value in place and returns what `body` returns; `body` and the store's I/O
        /// run off Swift's cooperative pool, on the graph's own queue. Same guarantees as the synchronous
        /// `update(_:)`: one update at a time, all or nothing.
        @discardableResult
        public func update<Result: Sendable>(
            _ body: @escaping @Sendable (inout Value) throws -> Result
        ) async throws -> Result {
            try await node.updateOffPool(body)
        }
    }

    // MARK: Defaults

    /// A lens onto this optional part that reads `defaultValue` while the part is `nil`.
    ///
    /// The default is never saved by itself. The first write through this lens (or a lens derived from it)
    /// that changes something promotes the default into the graph and then applies the write, so no write
    /// is ever dropped. Where a default is given at several levels for the same part, the one nearer the
    /// root wins.
    ///
    /// ```swift
    /// let protection = root.protection.withDefault(Protection())
    /// protection.enabled.value        // false, from the default, while root.protection is nil
    /// try protection.enabled.set(true) // root.protection is now Protection(enabled: true)
    /// ```
    public func withDefault<Wrapped: Sendable>(_ defaultValue: Wrapped) -> MutableLens<Wrapped>
    where Value == Wrapped? {
        MutableLens<Wrapped>(node: node.appending(DefaultStep(defaultValue: defaultValue), path: node.lensPath))
    }
}

// MARK: - Optional parts

extension MutableLens {
    /// A lens onto a member of this optional part, `nil` while the part is `nil`.
    ///
    /// Writing a value while the part is `nil` throws ``SettingsError/Code/missingParent``; give the part a
    /// default with ``withDefault(_:)`` to have the write create it instead.
    public subscript<Wrapped, Member: Sendable>(
        dynamicMember keyPath: WritableKeyPath<Wrapped, Member> & Sendable
    ) -> MutableLens<Member?> where Value == Wrapped? {
        MutableLens<Member?>(
            node: node.child(ChildKey(keyPath: keyPath, kind: .optionalMember)) {
                let path = node.lensPath.appending(KeyPathNames.segments(of: keyPath, in: node))
                return (OptionalMemberStep(keyPath: keyPath, path: path, parentPath: node.lensPath), path)
            })
    }

    /// A lens onto an optional member of this optional part, flattened to a single optional.
    public subscript<Wrapped, Member: Sendable>(
        dynamicMember keyPath: WritableKeyPath<Wrapped, Member?> & Sendable
    ) -> MutableLens<Member?> where Value == Wrapped? {
        MutableLens<Member?>(
            node: node.child(ChildKey(keyPath: keyPath, kind: .optionalOptionalMember)) {
                let path = node.lensPath.appending(KeyPathNames.segments(of: keyPath, in: node))
                return (OptionalOptionalMemberStep(keyPath: keyPath, path: path, parentPath: node.lensPath), path)
            })
    }
}

// MARK: - Collections

extension MutableLens {
    /// A lens onto the entry for `key`: `nil` while absent; writing `nil` removes the entry.
    ///
    /// An update through it encodes that entry alone, not the whole dictionary, when the dictionary is a
    /// stored property of the root and held the key at the lens's first update; so does one through a key
    /// path such as `\.features["beta"]`.
    ///
    /// ```swift
    /// let beta = root.features["beta"]   // MutableLens<Bool?>
    /// ```
    public subscript<Key: Hashable & Sendable, Element: Sendable>(key: Key) -> MutableLens<Element?>
    where Value == [Key: Element] {
        let keyPath: WritableKeyPath<[Key: Element], Element?> & Sendable = \.[key]
        return MutableLens<Element?>(
            node: node.appending(WritableKeyPathStep(keyPath: keyPath), path: node.lensPath.appending(.key("\(key)"))))
    }

    /// A lens onto the element at `index`: `nil` while the array has no such element, following the array
    /// as it shrinks and grows. Reading and observing never trap.
    ///
    /// Writing a value replaces the element; where there is no such element it throws
    /// ``SettingsError/Code/outOfRange`` naming the path, and nothing changes. Remove elements through the
    /// array itself: writing `nil` throws ``SettingsError/Code/notOptional``.
    ///
    /// ```swift
    /// let third = root.items[index: 2]     // MutableLens<Item?>
    /// ```
    public subscript<Element: Sendable>(index index: Int) -> MutableLens<Element?> where Value == [Element] {
        let path = node.lensPath.appending(.index(index))
        return MutableLens<Element?>(node: node.appending(IndexStep<Element>(index: index, path: path), path: path))
    }
}

extension MutableLens: CustomStringConvertible, CustomDebugStringConvertible {
    /// The lens's path, value type and store; never its value, which may be a secret.
    public var description: String { "MutableLens(\(node))" }
    public var debugDescription: String { description }
}
