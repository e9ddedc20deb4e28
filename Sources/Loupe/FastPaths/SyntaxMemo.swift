// Rows it holds (Benchmarks/README.md, "Fast paths"): the one-value updates of a 2,211-line commented TOML
// file and of a 40,000-key JSON object, edited in place, each against its floor (a durable write of the same
// bytes, their read-back and the compare), target ≤ 1.30×. Measured on the 2-core machine in one release
// build, calm (load 1.5–2): 1.28× and 1.31× with it, 1.98× and 1.35× without it (among other builds,
// load 6–12: 1.40× and 1.28× without it).

/// The syntax tree of the text a codec wrote last, as the write's read-back read it, kept for the next edit
/// of that same text.
///
/// Every write reads its text back with the format's reader, and the next edit starts from exactly that
/// text; the TOML and JSON read-backs build the syntax tree in the same pass as the document
/// (`TOMLReader.syntax(of:)`, `JSONSyntax.document(from:comments:)`), and keeping it spares the edit a
/// second read of the whole file. A tree is used only for text byte for byte equal to the text it was read
/// from, so it is never stale.
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
