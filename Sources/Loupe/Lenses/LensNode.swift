/// What a lens does, with the root type hidden: the public `Lens<Value>` and `MutableLens<Value>` hold one.
protocol LensNode<Value>: AnyObject, Sendable, CustomStringConvertible {
    associatedtype Value: Sendable

    /// The path from the root, as ``ValuePath`` prints it (`server.port`); `<root>` for the root.
    var path: String { get }
    /// The store behind the graph, as it describes itself.
    var storeDescription: String { get }
    /// Whether the store behind the graph keeps secrets.
    var storeHoldsSecrets: Bool { get }
    /// How the graph's values map to documents.
    var coding: DocumentCoding { get }

    func read() -> Value
    func update<R>(_ body: (inout Value) throws -> R) throws -> R
    func updateOffPool<R: Sendable>(_ body: @escaping @Sendable (inout Value) throws -> R) async throws -> R
    func appending<Part: Sendable>(_ step: any Step<Value, Part>, path: String) -> any LensNode<Part>

    func subscribe(initial: ((Value) -> Void)?, _ handler: ObserverHandler<Value>) -> ObservationToken
}

/// A lens's node: the graph it belongs to and the step from that graph's root to its value.
final class Focus<Root: Codable & Sendable, Value: Sendable>: LensNode {
    let core: GraphCore<Root>
    let step: any Step<Root, Value>
    let path: String
    /// For a path of key paths only (the common case): the same path rooted at the committed-root box, so
    /// a read projects the part in place instead of copying the root.
    private let boxKeyPath: BoxKeyPath?
    /// Key paths are immutable, so sharing one between threads is safe.
    private struct BoxKeyPath: @unchecked Sendable {
        let keyPath: KeyPath<CommittedRoot<Root>, Value>
    }
    private let channel = Locked<Channel<Root, Value>?>(nil)

    init(core: GraphCore<Root>, step: any Step<Root, Value>, path: String) {
        self.core = core
        self.step = step
        self.path = path
        let box: KeyPath<CommittedRoot<Root>, Root> = \CommittedRoot<Root>.root
        if step is IdentityStep<Root> {
            boxKeyPath = (box as? KeyPath<CommittedRoot<Root>, Value>).map(BoxKeyPath.init)
        } else if let keyPath = (step as? WritableKeyPathStep<Root, Value>)?.keyPath {
            boxKeyPath = BoxKeyPath(keyPath: box.appending(path: keyPath))
        } else if let keyPath = (step as? KeyPathStep<Root, Value>)?.keyPath {
            boxKeyPath = BoxKeyPath(keyPath: box.appending(path: keyPath))
        } else {
            boxKeyPath = nil
        }
    }

    var storeDescription: String { core.storeName }
    var storeHoldsSecrets: Bool { core.holdsSecrets }
    var coding: DocumentCoding { core.pipeline.coding }

    @inline(__always)
    func read() -> Value {
        core.observation.access()
        if let boxKeyPath { return core.read(boxKeyPath.keyPath) }
        return core.read { step.get($0) }
    }

    func update<R>(_ body: (inout Value) throws -> R) throws -> R {
        try core.update(path: path) { root in try step.modify(&root, body) }
    }

    func updateOffPool<R: Sendable>(_ body: @escaping @Sendable (inout Value) throws -> R) async throws -> R {
        try await core.offPool { try self.update(body) }
    }

    func appending<Part: Sendable>(_ next: any Step<Value, Part>, path: String) -> any LensNode<Part> {
        Focus<Root, Part>(core: core, step: compose(step, next), path: path)
    }

    func subscribe(initial: ((Value) -> Void)?, _ handler: ObserverHandler<Value>) -> ObservationToken {
        let channel = channel.withLock { channel in
            if let channel { return channel }
            let made = Channel<Root, Value>(step: step)
            channel = made
            return made
        }
        let notifier = core.notifier
        let core = core
        let id = notifier.add(to: channel, snapshot: { core.versionedSnapshot() }, initial: initial, handler: handler)
        return ObservationToken { [weak notifier] in notifier?.remove(id, from: channel) }
    }

    var description: String { "\(path): \(Value.self) in \(core.storeName)" }
}
