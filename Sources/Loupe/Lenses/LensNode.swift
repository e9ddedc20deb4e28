/// What a lens does, with the root type hidden: the public `Lens<Value>` and `MutableLens<Value>` hold one.
protocol LensNode<Value>: AnyObject, Sendable, CustomStringConvertible {
    associatedtype Value: Sendable

    /// The path from the root, composed from the lens's steps.
    var lensPath: LensPath { get }
    /// The path from the root, as ``ValuePath`` prints it (`server.port`); `<root>` for the root.
    var path: String { get }
    /// The store behind the graph, as it describes itself.
    var storeDescription: String { get }
    /// Whether the store behind the graph keeps secrets.
    var storeHoldsSecrets: Bool { get }
    /// The root's paths whose values are secrets (see ``RootLens/secretPaths``).
    var rootSecretPaths: [ValuePath] { get }
    /// How the graph's values map to documents.
    var coding: DocumentCoding { get }

    func read() -> Value
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
    var storeHoldsSecrets: Bool { core.holdsSecrets }
    var rootSecretPaths: [ValuePath] { core.secretPaths }
    var coding: DocumentCoding { core.pipeline.coding }

    @inline(__always)
    func read() -> Value {
        observation.access()
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
        if let known = children.withLock({ $0.find(key) }) { return Self.node(known, as: Part.self) }
        let (next, path) = make()
        let made = KeptNode<Part>(Focus<Root, Part>(core: core, step: compose(step, next), path: path))
        // Two threads deriving the same lens at once both make one; the first kept is the one handed out.
        return children.withLock { children in
            if let known = children.find(key) { return Self.node(known, as: Part.self) }
            children.keep(made, for: key)
            return made.node
        }
    }

    /// The node a child kept under a key holds. A key names one key path with its value type and how it
    /// derives, so what it holds is always a `KeptNode<Part>`: the cast is not checked in release builds
    /// (`unsafeDowncast`), since a checked one looks up `KeptNode<Part>`'s metadata on each derivation,
    /// the largest part of a lens derived inline (`Benchmarks/README.md`, the reads area). Debug builds,
    /// which the tests run, check it.
    private static func node<Part: Sendable>(_ kept: AnyObject, as _: Part.Type) -> any LensNode<Part> {
        unsafeDowncast(kept, to: KeptNode<Part>.self).node
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

/// A derived lens's node as its parent keeps it: already a `LensNode` existential, so that finding it
/// again does not look up the node type's conformance (which the runtime does for each generic
/// instantiation, on every conversion).
final class KeptNode<Value: Sendable>: Sendable {
    let node: any LensNode<Value>

    init(_ node: any LensNode<Value>) { self.node = node }
}

/// What a derived lens is kept under in its parent: the key path it was derived by, and how.
struct ChildKey: Hashable, @unchecked Sendable {  // key paths are immutable; the API takes Sendable ones
    enum Kind: Hashable {
        case writable, readOnly, optionalMember, optionalOptionalMember
    }

    let keyPath: AnyKeyPath
    let kind: Kind
}

/// A lens's derived lenses, found by the key path they were derived by.
///
/// A key path literal (`\.server`, as `root.server` passes it) is one object, made once by the runtime,
/// so the lookup first tries the key path's identity, which hashes a pointer; an equal key path made
/// elsewhere is found by `==` and then remembered by its identity too. Every key path remembered is held,
/// so no identity is ever reused for another.
struct Children {
    private struct Identity: Hashable {
        let object: ObjectIdentifier
        let kind: ChildKey.Kind
    }

    private static let limit = 1024
    /// How many identities found last are compared one by one before hashing.
    private static let recentCount = 8
    private var byIdentity: [Identity: (keyPath: AnyKeyPath, node: AnyObject)] = [:]
    private var byValue: [ChildKey: AnyObject] = [:]
    /// The identities found last, newest first; each is in `byIdentity`, which holds its key path.
    private var recent: [(identity: Identity, node: AnyObject)] = []

    mutating func find(_ key: ChildKey) -> AnyObject? {
        let identity = Identity(object: ObjectIdentifier(key.keyPath), kind: key.kind)
        // A lens derives few children, and a program derives the same ones again and again (`root.a.b`
        // inline): comparing a handful of pointers costs less than hashing one.
        for entry in recent where entry.identity == identity { return entry.node }
        if let known = byIdentity[identity] {
            remember(identity, known.node)
            return known.node
        }
        guard let node = byValue[key] else { return nil }
        // Key paths made anew at each derivation (`root[\.features[name]]`) are equal objects, not one:
        // past a bound, the identities are forgotten and learned again.
        if byIdentity.count >= 4 * byValue.count + 64 { forgetIdentities() }
        byIdentity[identity] = (key.keyPath, node)
        remember(identity, node)
        return node
    }

    private mutating func remember(_ identity: Identity, _ node: AnyObject) {
        if recent.count == Self.recentCount { recent.removeLast() }
        recent.insert((identity, node), at: 0)
    }

    private mutating func forgetIdentities() {
        byIdentity.removeAll(keepingCapacity: true)
        recent.removeAll(keepingCapacity: true)
    }

    /// Keeps `node`. Past `limit` different key paths (a program deriving lenses by key paths made from
    /// data), everything kept is forgotten first: lenses handed out stay valid; a lens derived again is
    /// made again.
    mutating func keep(_ node: AnyObject, for key: ChildKey) {
        if byValue.count >= Self.limit {
            byValue.removeAll(keepingCapacity: true)
            forgetIdentities()
        }
        let identity = Identity(object: ObjectIdentifier(key.keyPath), kind: key.kind)
        byValue[key] = node
        byIdentity[identity] = (key.keyPath, node)
        remember(identity, node)
    }
}
