/// A read-only view of one part of a settings graph: read it, derive lenses onto its parts, observe it.
///
/// A `Lens` names only its own value type, so a component can be handed `Lens<Credentials>` and know
/// nothing of the rest of the graph. It holds no copy of the value: every read takes the current one.
///
/// ```swift
/// let port: Lens<Int> = root.server.port.readOnly
/// print(port.value)
/// let token = port.observe { print("port changed to", $0) }
/// ```
///
/// Lenses are cheap to create and `Sendable`; read them from any thread. Its reads (``ReadableLens/value``,
/// ``ReadableLens/path``, ``ReadableLens/secretPaths``, ``ReadableLens/observe(_:)``) are those every lens shares.
@dynamicMemberLookup
public struct Lens<Value: Sendable>: ReadableLens {
    let node: any LensNode<Value>

    init(node: any LensNode<Value>) {
        self.node = node
    }

    /// This lens: it cannot write already.
    public var readOnly: Lens<Value> { self }

    /// The current value (see ``ReadableLens/value``).
    public var value: Value { node.read() }

    /// A lens onto a part of this lens's value.
    public subscript<Part: Sendable>(dynamicMember keyPath: KeyPath<Value, Part> & Sendable) -> Lens<Part> {
        self[keyPath]
    }

    /// A lens onto a part of this lens's value, by an explicit key path (`lens[\.features["beta"]]`).
    ///
    /// A key path through an array's subscript (`\.items[3]`) traps, as Swift's subscript does, once the
    /// array is shorter; use ``subscript(index:)`` for elements.
    public subscript<Part: Sendable>(_ keyPath: KeyPath<Value, Part> & Sendable) -> Lens<Part> {
        Lens<Part>(
            node: node.child(ChildKey(keyPath: keyPath, kind: .readOnly)) {
                let path = node.lensPath.appending(KeyPathNames.segments(of: keyPath, in: node))
                return (KeyPathStep(keyPath: keyPath, path: path), path)
            })
    }

    /// A lens that reads `defaultValue` while this optional part is `nil`.
    public func withDefault<Wrapped: Sendable>(_ defaultValue: Wrapped) -> Lens<Wrapped> where Value == Wrapped? {
        Lens<Wrapped>(node: node.appending(DefaultStep(defaultValue: defaultValue), path: node.lensPath))
    }

    /// A lens onto the element at `index`: `nil` while the array has no such element, following the array
    /// as it shrinks and grows. Never traps.
    public subscript<Element: Sendable>(index index: Int) -> Lens<Element?> where Value == [Element] {
        let path = node.lensPath.appending(.index(index))
        return Lens<Element?>(node: node.appending(IndexStep<Element>(index: index, path: path), path: path))
    }

    /// A lens onto the entry for `key`: `nil` while absent.
    public subscript<Key: Hashable & Sendable, Element: Sendable>(key: Key) -> Lens<Element?>
    where Value == [Key: Element] {
        let path = node.lensPath.appending(.key("\(key)"))
        let keyPath: KeyPath<[Key: Element], Element?> & Sendable = \.[key]
        return Lens<Element?>(node: node.appending(KeyPathStep(keyPath: keyPath, path: path), path: path))
    }
}

extension Lens: CustomStringConvertible, CustomDebugStringConvertible {
    /// The lens's path, value type and store; never its value, which may be a secret.
    public var description: String { "Lens(\(node))" }
    public var debugDescription: String { description }
}
