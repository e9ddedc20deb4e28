/// The syntax tree of the text a codec wrote last, as the write's read-back read it, kept for the next edit
/// of that same text.
///
/// It exists for speed, and for one benchmark row: the one-value update of a 2,211-line TOML file, measured
/// against a durable write plus one parse. Every write reads its text back with the format's reader, and
/// the next edit starts from exactly that text; where the reader builds the syntax tree as it reads
/// (TOML's does), keeping it spares the edit a second read of the whole file: without it the row measures
/// 1.36× against its target of 1.3× (Benchmarks/README.md). A tree is used only for text byte for byte equal
/// to the text it was read from, so it is never stale.
package final class SyntaxMemo<Syntax: Sendable>: Sendable {
    private let last = Locked<(text: [UInt8], syntax: Syntax)?>(nil)

    package init() {}

    /// The tree read from `text`, when it is the text read last.
    package func syntax(of text: [UInt8]) -> Syntax? {
        last.withLock { last in
            guard let last, last.text == text else { return nil }
            return last.syntax
        }
    }

    /// Keeps `syntax` as the tree of `text`.
    package func remember(_ syntax: Syntax, of text: [UInt8]) {
        last.withLock { $0 = (text, syntax) }
    }
}
