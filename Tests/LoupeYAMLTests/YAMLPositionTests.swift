#if YAML
import Foundation
import Loupe
import LoupeYAML
import Testing

/// `YAMLCodec.position(of:in:)` and the positions of YAML syntax errors: what `check` points at.
@Suite("YAML: where a path is written, and where the text goes wrong")
struct YAMLPositionTests {
    @Test("block and flow collections, compact sequences, the nearest part above a path not written")
    func positions() throws {
        let text = Data(
            """
            # settings
            server:
              host: "é.example"
              port: 80
            names:
            - a
            -   b
            flow: {depth: 3, widths: [1, 2]}
            """.utf8)
        let codec = YAMLCodec()
        #expect(codec.position(of: "server.port", in: text) == TextPosition(line: 4, column: 9))
        #expect(codec.position(of: "server.host", in: text) == TextPosition(line: 3, column: 9))
        #expect(codec.position(of: "names[1]", in: text) == TextPosition(line: 7, column: 5))
        #expect(codec.position(of: "flow.widths[1]", in: text) == TextPosition(line: 8, column: 30))
        #expect(
            codec.position(of: "server.missing", in: text) == TextPosition(line: 3, column: 3),
            "not written: its mapping")
    }

    @Test("a syntax error says its line and column apart from what is wrong")
    func syntaxErrorPosition() throws {
        do {
            _ = try YAMLCodec().parse(Data("server:\n  port: [1,\n  host: x\n".utf8))
            Issue.record("not YAML, yet read")
        } catch let error as DocumentSyntaxError {
            #expect(error.position == TextPosition(line: 4, column: 1), "\(error)")
            #expect(
                error.problem
                    == "did not find expected ',' or ']', while parsing a flow sequence from line 2, column 9",
                "\(error)")
            #expect(error.reason.hasPrefix("line 4, column 1: "))
        }
    }
}
#endif
