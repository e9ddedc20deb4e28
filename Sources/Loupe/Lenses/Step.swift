/// One way of reaching a part from a whole: read it, and modify it in place.
///
/// A lens's whole path from the root is a single `Step<Root, Value>`; deriving a lens composes steps.
/// Consecutive key-path steps merge into one key path, so `root.server.port` reads as fast as
/// `root[\.server.port]`.
protocol Step<Whole, Part>: Sendable {
    associatedtype Whole
    associatedtype Part

    func get(_ whole: Whole) -> Part

    /// Runs `body` on the part, in place where possible; throws ``SettingsError`` where the write cannot land.
    func modify<R>(_ whole: inout Whole, _ body: (inout Part) throws -> R) throws -> R
}

/// The root itself.
struct IdentityStep<Whole>: Step {
    func get(_ whole: Whole) -> Whole { whole }
    func modify<R>(_ whole: inout Whole, _ body: (inout Whole) throws -> R) throws -> R {
        try body(&whole)
    }
}

/// A writable key path. Key paths are immutable; the public API only accepts `Sendable` ones.
struct WritableKeyPathStep<Whole, Part>: Step, @unchecked Sendable {
    let keyPath: WritableKeyPath<Whole, Part>

    func get(_ whole: Whole) -> Part { whole[keyPath: keyPath] }
    func modify<R>(_ whole: inout Whole, _ body: (inout Part) throws -> R) throws -> R {
        try body(&whole[keyPath: keyPath])
    }
}

/// A read-only key path; `Lens` never writes through it.
struct KeyPathStep<Whole, Part>: Step, @unchecked Sendable {
    let keyPath: KeyPath<Whole, Part>
    let path: LensPath

    func get(_ whole: Whole) -> Part { whole[keyPath: keyPath] }
    func modify<R>(_ whole: inout Whole, _ body: (inout Part) throws -> R) throws -> R {
        // Unreachable through the public API: only `Lens`, which cannot write, is built over this step.
        throw SettingsError(.readOnly, path: path.valuePath, reason: "cannot write \(path): it is read-only")
    }
}

/// An optional part read through its default while it is `nil`; writing promotes the default into the graph.
///
/// A default nearer the root wins over one further down, because the outer default is what the inner step
/// reads from.
struct DefaultStep<Wrapped: Sendable>: Step {
    let defaultValue: Wrapped
    /// `==` on the part's type, when it has one: a write that leaves the default as it is changes nothing.
    let isDefault: RuntimeEquality<Wrapped>?

    init(defaultValue: Wrapped) {
        self.defaultValue = defaultValue
        isDefault = RuntimeEquality(Wrapped.self)
    }

    func get(_ whole: Wrapped?) -> Wrapped { whole ?? defaultValue }
    func modify<R>(_ whole: inout Wrapped?, _ body: (inout Wrapped) throws -> R) throws -> R {
        guard whole == nil else { return try body(&whole!) }
        var value = defaultValue
        let result = try body(&value)
        // The default is promoted only by a write that changes it (a type that cannot be compared always
        // promotes it): a part left at its default stays nil, so a later version's default reaches it.
        if let isDefault, isDefault(value, defaultValue) { return result }
        whole = value
        return result
    }
}

/// A member of an optional part (`protection.enabled` while `protection` may be nil), as an optional.
///
/// Reads `nil` while the parent is nil. Writing a value while the parent is nil throws
/// ``SettingsError/missingParent(path:parent:)``: the write would otherwise be silently dropped.
struct OptionalMemberStep<Parent, Member>: Step, @unchecked Sendable {
    let keyPath: WritableKeyPath<Parent, Member>
    let path: LensPath
    let parentPath: LensPath

    func get(_ whole: Parent?) -> Member? { whole?[keyPath: keyPath] }
    func modify<R>(_ whole: inout Parent?, _ body: (inout Member?) throws -> R) throws -> R {
        var member = whole?[keyPath: keyPath]
        let result = try body(&member)
        if let member {
            guard whole != nil else { throw SettingsError.missingParent(path, parent: parentPath) }
            whole![keyPath: keyPath] = member
        } else if whole != nil {
            throw SettingsError.notOptional(path)
        }
        // (Writing nil into a missing parent: already so.)
        return result
    }
}

/// An optional member of an optional part (`protection.passcode`), flattened to one level of optional.
struct OptionalOptionalMemberStep<Parent, Member>: Step, @unchecked Sendable {
    let keyPath: WritableKeyPath<Parent, Member?>
    let path: LensPath
    let parentPath: LensPath

    func get(_ whole: Parent?) -> Member? { whole?[keyPath: keyPath] ?? nil }
    func modify<R>(_ whole: inout Parent?, _ body: (inout Member?) throws -> R) throws -> R {
        if whole != nil { return try body(&whole![keyPath: keyPath]) }
        var member: Member? = nil
        let result = try body(&member)
        if member != nil { throw SettingsError.missingParent(path, parent: parentPath) }
        return result
    }
}

/// Two steps one after the other.
struct ComposedStep<Whole, Middle, Part>: Step {
    let first: any Step<Whole, Middle>
    let second: any Step<Middle, Part>

    func get(_ whole: Whole) -> Part { second.get(first.get(whole)) }
    func modify<R>(_ whole: inout Whole, _ body: (inout Part) throws -> R) throws -> R {
        try first.modify(&whole) { middle in try second.modify(&middle, body) }
    }
}

/// `first` then `second`, merging key paths where both are key paths.
func compose<Whole, Middle, Part>(
    _ first: any Step<Whole, Middle>, _ second: any Step<Middle, Part>
) -> any Step<Whole, Part> {
    if first is IdentityStep<Whole> {
        return second as! any Step<Whole, Part>  // Middle == Whole
    }
    if let first = first as? WritableKeyPathStep<Whole, Middle>,
        let second = second as? WritableKeyPathStep<Middle, Part>
    {
        return WritableKeyPathStep(keyPath: first.keyPath.appending(path: second.keyPath))
    }
    return ComposedStep(first: first, second: second)
}

/// An element of an array by its index: `nil` while the index is out of range, following the array as it
/// shrinks and grows. Reading never traps.
///
/// Writing a value in range replaces the element; out of range, it throws ``SettingsError/Code/outOfRange``.
/// Writing `nil` throws ``SettingsError/Code/notOptional``: an element is removed through the array, not its
/// index lens (the elements after it would move).
struct IndexStep<Element>: Step, @unchecked Sendable {  // immutable: an index and two strings
    let index: Int
    let path: LensPath

    func get(_ whole: [Element]) -> Element? {
        whole.indices.contains(index) ? whole[index] : nil
    }

    func modify<R>(_ whole: inout [Element], _ body: (inout Element?) throws -> R) throws -> R {
        var element = get(whole)
        let result = try body(&element)
        switch (whole.indices.contains(index), element) {
        case (true, .some(let element)): whole[index] = element
        case (false, .some): throw SettingsError.outOfRange(path, index: index, count: whole.count)
        case (true, nil):
            throw SettingsError.notOptional(
                path, reason: "cannot remove \(path) through its index lens: remove it from the array instead")
        case (false, nil): break  // writing nil where there is nothing: already so
        }
        return result
    }
}
