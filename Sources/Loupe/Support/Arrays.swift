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

extension [UInt8] {
    /// This text with each range of `edits` replaced by its text, in one pass: `edits` are in the text's
    /// order (by where each starts, then where it ends: an insertion at a place before a replacement from
    /// it), and none overlaps another.
    package func splicing(_ edits: [(range: Range<Int>, text: [UInt8])]) -> [UInt8] {
        var spliced: [UInt8] = []
        spliced.reserveCapacity(edits.reduce(count) { $0 + $1.text.count - $1.range.count })
        var position = 0
        for edit in edits {
            spliced.append(contentsOf: self[position..<edit.range.lowerBound])
            spliced.append(contentsOf: edit.text)
            position = edit.range.upperBound
        }
        spliced.append(contentsOf: self[position...])
        return spliced
    }
}
