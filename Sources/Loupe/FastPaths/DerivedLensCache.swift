// The lenses a lens derived, kept so that deriving one again (`root.inner.leaf.port.value`, written inline)
// finds it rather than making it.
//
// Row it holds (Benchmarks/README.md, "Fast paths"): "a lens derived and read in one expression
// (root.inner.leaf.port.value) vs ConfigReader's lookup", target ≤ 1.00×, and the allocation table's row for
// the same expression, target 0 allocations. Without a cache every derivation makes a node (three
// allocations a step), which the allocation row forbids. With this plain dictionary and a checked cast,
// measured on the 2-core machine (`--area reads`): 0.76× on a calm machine (0.73× and 0.79× among other
// builds), 0 allocations. A faster cache (key path pointers compared with the last eight found, an unchecked
// downcast: 0.37–0.39×) is not needed for the target, so none is kept.

/// A derived lens's node as its parent keeps it: already a `LensNode` existential, so that finding it
/// again does not look up the node type's conformance (which the runtime does for each generic
/// instantiation, on every conversion).
final class KeptNode<Value: Sendable>: Sendable {
    let node: any LensNode<Value>

    init(_ node: any LensNode<Value>) { self.node = node }
}

/// A lens's derived lenses, found by the key path they were derived by (key paths are compared by `==`,
/// so a key path made anew finds the lens an equal one derived).
struct Children {
    /// The node that `kept`, found under a key, holds. A key names one key path, with its value type, and
    /// how the lens derives: what is kept under it is always a `KeptNode<Part>`.
    static func node<Part: Sendable>(_ kept: AnyObject, as _: Part.Type) -> any LensNode<Part> {
        (kept as! KeptNode<Part>).node
    }

    private static let limit = 1024
    private var kept: [ChildKey: AnyObject] = [:]

    func find(_ key: ChildKey) -> AnyObject? {
        kept[key]
    }

    /// Keeps `node`, the lens `key` derives (so a `KeptNode` of that key path's value type: what
    /// ``node(_:as:)`` relies on). Past `limit` different key paths (a program deriving lenses by key paths
    /// made from data), everything kept is forgotten first: lenses handed out stay valid; a lens derived
    /// again is made again.
    mutating func keep<Part: Sendable>(_ node: KeptNode<Part>, for key: ChildKey) {
        if kept.count >= Self.limit { kept.removeAll(keepingCapacity: true) }
        kept[key] = node
    }
}
