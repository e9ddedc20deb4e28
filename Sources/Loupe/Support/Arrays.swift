extension Array {
    /// This array with `element` after its last: one allocation, where `self + [element]` makes the
    /// one-element array first. For paths extended at each level of a walk.
    @inlinable
    package func appending(_ element: Element) -> [Element] {
        var extended: [Element] = []
        extended.reserveCapacity(count + 1)
        extended.append(contentsOf: self)
        extended.append(element)
        return extended
    }
}
