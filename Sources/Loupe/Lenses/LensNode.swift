import Synchronization

/// What a lens does, with the root type hidden: the public `Lens<Value>` and `MutableLens<Value>` hold one.
protocol LensNode<Value>: AnyObject, Sendable, CustomStringConvertible {
    associatedtype Value: Sendable

    /// The path from the root, as people write it (`server.port`); `<root>` for the root.
    var path: String { get }
    var isRoot: Bool { get }
    /// The store behind the graph, as it describes itself.
    var storeDescription: String { get }
    /// Whether the store behind the graph keeps secrets.
    var storeHoldsSecrets: Bool { get }

    func read() -> Value
    func update<R>(_ body: (inout Value) throws -> R) throws -> R
    func appending<Part: Sendable>(_ step: any Step<Value, Part>, path: String) -> any LensNode<Part>

    func subscribe(
        initial: ((Value) -> Void)?, _ handler: ObserverHandler<Value>
    ) -> ObservationToken
    func observeErrors(_ handler: @escaping @Sendable (any Error) -> Void) -> ObservationToken

    func reload() throws
    func removeStored() throws
    func flush() throws
}

/// A lens's node: the graph it belongs to and the step from that graph's root to its value.
final class Focus<Root: Codable & Sendable, Value: Sendable>: LensNode {
    let core: LensCore<Root>
    let step: any Step<Root, Value>
    let path: String
    /// Where the value lies inside the root, when the path is stored properties only (see
    /// `MemoryLayout.offset(of:)`); reads then copy it out in place, and updates modify it there.
    private let offset: Int?
    private let channel = Locked<Channel<Root, Value>?>(nil)

    init(core: LensCore<Root>, step: any Step<Root, Value>, path: String) {
        self.core = core
        self.step = step
        self.path = path
        if step is IdentityStep<Root> {
            offset = 0
        } else if let keyPath = (step as? WritableKeyPathStep<Root, Value>)?.keyPath {
            offset = MemoryLayout<Root>.offset(of: keyPath)
        } else if let keyPath = (step as? KeyPathStep<Root, Value>)?.keyPath {
            offset = MemoryLayout<Root>.offset(of: keyPath)
        } else {
            offset = nil
        }
    }

    var isRoot: Bool { step is IdentityStep<Root> }
    var storeDescription: String { core.store.description }
    var storeHoldsSecrets: Bool { core.store.holdsSecrets }

    @inline(__always)
    func read() -> Value {
        if let offset { return core.read(at: offset, as: Value.self) }
        return core.read { step.get($0) }
    }

    func update<R>(_ body: (inout Value) throws -> R) throws -> R {
        if let offset {
            // A stored-property path: the part lies inline in the root, so it is modified in place there.
            return try core.update(path: path) { root in
                try body(&UnsafeMutableRawPointer(root).advanced(by: offset).assumingMemoryBound(to: Value.self).pointee)
            }
        }
        return try core.update(path: path) { root in try step.modify(&root.pointee, body) }
    }

    func appending<Part: Sendable>(_ next: any Step<Value, Part>, path: String) -> any LensNode<Part> {
        Focus<Root, Part>(core: core, step: compose(step, next), path: path)
    }

    func subscribe(
        initial: ((Value) -> Void)?, _ handler: ObserverHandler<Value>
    ) -> ObservationToken {
        let channel = channel.withLock { channel in
            if let channel { return channel }
            let made = Channel<Root, Value>(step: step)
            channel = made
            return made
        }
        let notifier = core.notifier
        let core = core
        let id = notifier.add(
            to: channel, snapshot: { core.versionedSnapshot() }, initial: initial, handler: handler)
        return ObservationToken { [weak notifier] in notifier?.remove(id, from: channel) }
    }

    func observeErrors(_ handler: @escaping @Sendable (any Error) -> Void) -> ObservationToken {
        core.observeErrors(handler)
    }

    func reload() throws { try core.reload() }

    func removeStored() throws {
        guard isRoot else { throw LensError.notRoot(path: path, operation: "remove()") }
        try core.removeStored()
    }

    func flush() throws { try core.flush() }

    var description: String { "\(path): \(Value.self) in \(core.store)" }
}
