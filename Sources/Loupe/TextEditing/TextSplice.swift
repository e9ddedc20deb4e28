/// A range of a text replaced by new bytes: what every format's editor makes of an edit. Printing an edited
/// file is splicing: the bytes outside every splice are copied as they are, never printed again.
package struct TextSplice: Sendable, Equatable {
    /// The bytes replaced, in the text as it stands (empty: an insertion at that place).
    package var range: Range<Int>
    /// What stands there instead.
    package var replacement: [UInt8]

    package init(_ range: Range<Int>, _ replacement: [UInt8]) {
        self.range = range
        self.replacement = replacement
    }

    package init(_ range: Range<Int>, _ replacement: String) {
        self.init(range, Array(replacement.utf8))
    }

    /// An insertion of `text` at `offset`.
    package static func insert(_ text: [UInt8], at offset: Int) -> TextSplice {
        TextSplice(offset..<offset, text)
    }

    /// A removal of `range`.
    package static func remove(_ range: Range<Int>) -> TextSplice {
        TextSplice(range, [])
    }
}

extension [UInt8] {
    /// This text with every splice made, in one pass. Splices may come in any order; insertions at one place
    /// keep their order, and come before a splice that replaces bytes from that place.
    ///
    /// - Throws: ``TextEditRefusal`` when two splices replace overlapping bytes: an editor's mistake, which
    ///   must not reach a file.
    package func applying(_ splices: [TextSplice]) throws -> [UInt8] {
        let ordered = splices.enumerated().sorted { a, b in
            (a.element.range.lowerBound, a.element.range.upperBound, a.offset)
                < (b.element.range.lowerBound, b.element.range.upperBound, b.offset)
        }.map(\.element)
        var spliced: [UInt8] = []
        spliced.reserveCapacity(ordered.reduce(count) { $0 + $1.replacement.count - $1.range.count })
        var position = 0
        for splice in ordered {
            guard splice.range.lowerBound >= position, splice.range.upperBound <= count else {
                throw TextEditRefusal(
                    path: [], reason: "two edits of the text overlap (at byte \(splice.range.lowerBound))")
            }
            spliced.append(contentsOf: self[position..<splice.range.lowerBound])
            spliced.append(contentsOf: splice.replacement)
            position = splice.range.upperBound
        }
        spliced.append(contentsOf: self[position...])
        return spliced
    }
}

/// An edit a format's editor will not make in place, with where and why: the write fails as a
/// ``SettingsError`` naming the file and the path, and the file is left as it is.
package struct TextEditRefusal: Error, Sendable, CustomStringConvertible {
    /// Where in the document (the old one's paths).
    package var path: [ValuePath.Component]
    /// Why, in words a person can act on.
    package var reason: String

    package init(path: [ValuePath.Component], reason: String) {
        self.path = path
        self.reason = reason
    }

    package var description: String {
        path.isEmpty ? reason : "\(ValuePath(path)): \(reason)"
    }
}
