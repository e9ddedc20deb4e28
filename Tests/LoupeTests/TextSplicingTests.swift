@testable import Loupe
import Testing

/// The one-pass splice the TOML and YAML editors write their edits with, against the same edits applied
/// one by one from the end of the text back.
@Suite("Splicing edits into a text")
struct TextSplicingTests {
    /// `edits` applied one by one, from the last in the text to the first.
    static func replacedOneByOne(_ text: [UInt8], _ edits: [(range: Range<Int>, text: [UInt8])]) -> [UInt8] {
        var output = text
        for edit in edits.reversed() { output.replaceSubrange(edit.range, with: edit.text) }
        return output
    }

    @Test("replacements, removals and insertions, an insertion where a replacement starts, at both ends")
    func spliceAsReplacedOneByOne() {
        let text = Array("alpha = 1\nbeta = 22\ngamma = 333\n".utf8)
        let cases: [[(range: Range<Int>, text: [UInt8])]] = [
            [],
            [(8..<9, Array("7".utf8))],
            [(8..<9, Array("1_000".utf8)), (17..<19, [])],
            [(0..<0, Array("# head\n".utf8)), (10..<20, []), (31..<31, Array("delta = 4\n".utf8))],
            // An insertion at the place a replacement starts comes before the replacement's text.
            [(10..<10, Array("new = 0\n".utf8)), (10..<20, Array("beta = 23\n".utf8))],
            [(0..<31, Array("all = 0\n".utf8))],
        ]
        for edits in cases {
            #expect(text.splicing(edits) == Self.replacedOneByOne(text, edits), "\(edits.map(\.range))")
        }
        #expect(String(decoding: text.splicing(cases[4]), as: UTF8.self) == "alpha = 1\nnew = 0\nbeta = 23\ngamma = 333\n")
    }

    @Test("an element appended to a path, the path itself unchanged")
    func appendingLeavesThePath() {
        let path: [ValuePath.Component] = [.key("groups")]
        #expect(path.appending(.key("a")) == [.key("groups"), .key("a")])
        #expect(path == [.key("groups")])
        #expect([Int]().appending(3) == [3])
    }
}
