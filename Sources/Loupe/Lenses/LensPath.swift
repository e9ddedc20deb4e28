/// A lens's path from the root, in the document's keys, composed from its steps as the lens is derived:
/// each step adds the ``ValuePath`` components it walks (see ``KeyPathNames``). Nothing is ever parsed
/// from a key path's printed form.
///
/// A key path through a computed property or a subscript (`root[\.features["beta"]]`) walks parts that no
/// coding key names; from there the path is *unnamed* and prints as `[…]`. The lens subscripts that
/// know their key or index (`root.features["beta"]`, `root.items[index: 3]`) name it exactly.
struct LensPath: Sendable, Hashable, CustomStringConvertible {
    enum Segment: Sendable, Hashable {
        case component(ValuePath.Component)
        /// Parts a key path walks that no coding key names.
        case unnamed
    }

    let segments: [Segment]

    static let root = LensPath(segments: [])

    func appending(_ component: ValuePath.Component) -> LensPath {
        LensPath(segments: segments + [.component(component)])
    }

    func appending(_ more: [Segment]) -> LensPath {
        LensPath(segments: segments + more)
    }

    /// The path as a ``ValuePath``; `nil` where part of it is unnamed.
    var valuePath: ValuePath? {
        var components: [ValuePath.Component] = []
        for segment in segments {
            guard case .component(let component) = segment else { return nil }
            components.append(component)
        }
        return ValuePath(components)
    }

    /// As ``ValuePath`` prints it (`server.port`, `items[3].name`); `[…]` for an unnamed part; `<root>`
    /// for the root.
    var description: String {
        if let valuePath { return valuePath.description }
        var text = ""
        var run: [ValuePath.Component] = []
        func flush() {
            guard !run.isEmpty else { return }
            let shown = ValuePath(run).description
            text += text.isEmpty || shown.hasPrefix("[") ? shown : "." + shown
            run = []
        }
        for segment in segments {
            switch segment {
            case .component(let component): run.append(component)
            case .unnamed:
                flush()
                text += "[…]"
            }
        }
        flush()
        return text
    }
}
