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
/// Lenses are cheap to create and `Sendable`; read them from any thread.
@dynamicMemberLookup
public struct Lens<Value: Sendable>: Sendable {
    let node: any LensNode<Value>

    init(node: any LensNode<Value>) {
        self.node = node
    }

    /// The current value: an immutable snapshot, safe to keep and read on any thread.
    ///
    /// Reading takes a read lock for as long as it takes to project this lens's part; many readers run at
    /// once, and readers never wait for an update's closure or its disk I/O. Inside
    /// `withObservationTracking`, the read is tracked: the next commit of the graph calls its `onChange`.
    public var value: Value { node.read() }

    /// The path from the root, as ``ValuePath`` prints it (`server.port`); `<root>` for the root.
    ///
    /// The path is the document's: composed as the lens is derived, each stored property a key path walks
    /// named by the coding key it is encoded under, as the store's coding writes it
    /// (`root.upstream.apiToken` is `up_stream.api_token` where the type's `CodingKeys` say so), the path
    /// errors, provenance, secret paths and string paths use. A key path through a computed property or a
    /// subscript, or a property that is not encoded, is shown as `[…]`, the whole of that key path
    /// (`root.server[\.aliases[0]]` is `server[…]`); the lens subscripts that know their key or index
    /// (`root.features["beta"]`, `root.items[index: 3]`) name it exactly.
    public var path: String { node.path }

    /// The path from the root as a ``ValuePath``, the form errors and ``RootLens/provenance(of:)`` take;
    /// `nil` for a lens through a computed property or a subscript, which no path names.
    public var valuePath: ValuePath? { node.lensPath.valuePath }

    /// Whether the store behind this lens keeps secrets (a keyring): tools should mask what they show.
    public var holdsSecrets: Bool { node.storeHoldsSecrets }

    /// The paths in this lens's value whose values are secrets although its store is not a secret store
    /// (those a credential directory or a secret reference gives, and the parts the settings type declares
    /// secret; see ``RootLens/secretPaths``), from
    /// this lens's value: the empty path when the whole value is one. A lens no path names (through a
    /// computed property) counts its whole value secret when the root has any.
    public var secretPaths: [ValuePath] { node.rootSecretPaths.relative(to: valuePath) }

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
