/// What a lens does, with the root type hidden: the public `Lens<Value>` and `MutableLens<Value>` hold one.
protocol LensNode<Value>: AnyObject, Sendable, CustomStringConvertible {
    associatedtype Value: Sendable

    /// The path from the root, composed from the lens's steps.
    var lensPath: LensPath { get }
    /// The path from the root, as ``ValuePath`` prints it (`server.port`); `<root>` for the root.
    var path: String { get }
    /// The store behind the graph, as it describes itself.
    var storeDescription: String { get }
    /// The root's paths whose values are secrets (see ``ReadableLens/secretPaths``).
    var secretPaths: [ValuePath] { get }
    /// Whether an error may quote the value at `path`, a path from the root (see
    /// ``GraphCore/quotesValue(at:)``).
    func quotesValue(at path: ValuePath) -> Bool
    /// How the graph's values map to documents.
    var coding: DocumentCoding { get }

    func read() -> Value
    /// The current value without an access noted for Swift's Observation: Loupe's own look at it (naming
    /// a lens's path from its value), which no view depends on.
    func readUntracked() -> Value
    func update<R>(_ body: (inout Value) throws -> R) throws -> R
    func updateOffPool<R: Sendable>(_ body: @escaping @Sendable (inout Value) throws -> R) async throws -> R
    /// A node for the part `step` reaches, at `path`.
    func appending<Part: Sendable>(_ step: any Step<Value, Part>, path: LensPath) -> any LensNode<Part>
    /// The node for the part `key` names, made by `make` the first time and kept: deriving the same lens
    /// again (`root.server.port.value`, written inline) finds it without allocating.
    func child<Part: Sendable>(
        _ key: ChildKey, _ make: () -> (step: any Step<Value, Part>, path: LensPath)
    ) -> any LensNode<Part>

    func subscribe(initial: ((Value) -> Void)?, _ handler: ObserverHandler<Value>) -> ObservationToken
}

/// A lens's node: the graph it belongs to and the step from that graph's root to its value.
final class Focus<Root: Codable & Sendable, Value: Sendable>: LensNode {
    let core: GraphCore<Root>
    let step: any Step<Root, Value>
    let lensPath: LensPath
    let path: String
    /// For a path of stored properties only (the common case): where the value lies in the root
    /// (`MemoryLayout.offset(of:)`), so that a read copies the part out in place.
    private let offset: Int?
    private let channel = Locked<Channel<Root, Value>?>(nil)
    /// The lenses derived from this one by key path, each a `Focus<Root, Part>`.
    private let children = Locked<Children>(Children())
    /// The graph's, copied: read in place (see ``GraphObservation``).
    private let observation: GraphObservation

    init(core: GraphCore<Root>, step: any Step<Root, Value>, path: LensPath) {
        self.core = core
        self.step = step
        lensPath = path
        self.path = path.description
        observation = core.observation
        if step is IdentityStep<Root> {
            offset = 0
        } else if let keyPathStep = step as? WritableKeyPathStep<Root, Value> {
            offset = MemoryLayout<Root>.offset(of: keyPathStep.keyPath)
        } else if let keyPathStep = step as? KeyPathStep<Root, Value> {
            offset = MemoryLayout<Root>.offset(of: keyPathStep.keyPath)
        } else {
            offset = nil
        }
    }

    var storeDescription: String { core.storeName }
    var secretPaths: [ValuePath] { core.secretPaths }
    func quotesValue(at path: ValuePath) -> Bool { core.quotesValue(at: path) }
    var coding: DocumentCoding { core.pipeline.coding }

    @inline(__always)
    func read() -> Value {
        observation.access()
        return readUntracked()
    }

    @inline(__always)
    func readUntracked() -> Value {
        if let offset { return core.read(at: offset, as: Value.self) }
        return core.read { step.get($0) }
    }

    func update<R>(_ body: (inout Value) throws -> R) throws -> R {
        try core.update(path: lensPath) { root in try step.modify(&root, body) }
    }

    func updateOffPool<R: Sendable>(_ body: @escaping @Sendable (inout Value) throws -> R) async throws -> R {
        try await core.offPool { try self.update(body) }
    }

    func appending<Part: Sendable>(_ next: any Step<Value, Part>, path: LensPath) -> any LensNode<Part> {
        Focus<Root, Part>(core: core, step: compose(step, next), path: path)
    }

    func child<Part: Sendable>(
        _ key: ChildKey, _ make: () -> (step: any Step<Value, Part>, path: LensPath)
    ) -> any LensNode<Part> {
        if let known = children.withLock({ $0.find(key) }) { return Children.node(known, as: Part.self) }
        let (next, path) = make()
        let made = KeptNode<Part>(Focus<Root, Part>(core: core, step: compose(step, next), path: path))
        // Two threads deriving the same lens at once both make one; the first kept is the one handed out.
        return children.withLock { children in
            if let known = children.find(key) { return Children.node(known, as: Part.self) }
            children.keep(made, for: key)
            return made.node
        }
    }

    func subscribe(initial: ((Value) -> Void)?, _ handler: ObserverHandler<Value>) -> ObservationToken {
        let core = core
        let channel = channel.withLock { channel in
            if let channel { return channel }
            let made = Channel<Root, Value>(step: step, current: core.read { step.get($0) })
            channel = made
            return made
        }
        let notifier = core.notifier
        let id = notifier.add(to: channel, snapshot: { core.versionedSnapshot() }, initial: initial, handler: handler)
        return ObservationToken { [weak notifier] in notifier?.remove(id, from: channel) }
    }

    var description: String { "\(path): \(Value.self) in \(core.storeName)" }
}

/// What a derived lens is kept under in its parent: the key path it was derived by, and how.
struct ChildKey: Hashable, @unchecked Sendable {  // key paths are immutable; the API takes Sendable ones
    enum Kind: Hashable {
        case writable, readOnly, optionalMember, optionalOptionalMember
    }

    let keyPath: AnyKeyPath
    let kind: Kind
}
