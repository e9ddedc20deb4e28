#if YAML
import Foundation
import Loupe
@testable import LoupeYAML
import Testing
import Yams

/// `ScalarTags` against Yams's own resolver: it skips Yams's regular expressions only where they cannot
/// match, so every scalar gets the tag Yams gives it.
@Suite("YAML scalar tags, against Yams's resolver")
struct ScalarTagsTests {
    /// Texts every pattern of the default resolver is about, and texts near them.
    static let known = [
        "", "~", "null", "Null", "NULL", "nul", "yes", "Yes", "YES", "no", "No", "NO", "y", "n", "true", "True",
        "TRUE", "false", "on", "On", "ON", "off", "Off", "OFF", "onward", "0", "-0", "+1", "007", "0o17", "0b101",
        "0x1F", "0xZZ", "1_000", "190:20:30", "3.14", ".5", "1e5", "-1.5e-3", ".inf", "-.inf", ".NaN", ".nan", "<<",
        "<", "=", "==", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
        "ENC[AES256_GCM,data:abc=,iv:def=,tag:ghi==,type:str]", "hello", "Über", "日本", "#x", "@x", "[a]", "{a: 1}",
        "*alias", "&anchor", "!tag", "%x", "'q'", "\"q\"", "|", ">", "?", ":", "-", "- x", "http://example.com",
    ]

    @Test("every text gets Yams's tag, as a value and as the writer asks of it")
    func everyTextGetsYamsTag() throws {
        var texts = Self.known
        // Every first character, ASCII and beyond, with a few tails.
        for scalar in (0x20...0x7E).compactMap(Unicode.Scalar.init) + ["é", "ß", "漢", "🙂"] {
            for tail in ["", "0", "rue", "ull", "x1", "_0", ".5", "-01-01", "ENC[AES256_GCM]"] {
                texts.append(String(scalar) + tail)
            }
        }
        for text in texts {
            let yams = Tag.Name(rawValue: Node(text).tag.description)
            #expect(ScalarTags.tag(of: Node(text)) == yams, "\(String(reflecting: text))")
            #expect(ScalarTags.readsAsString(text) == (yams == .str), "\(String(reflecting: text))")
        }
    }

    @Test("a parsed file's scalars get the types Yams gives them: plain, quoted and tagged")
    func parsedScalarsGetYamsTypes() throws {
        let text = """
            plain: word
            sealed: ENC[AES256_GCM,data:abc=,iv:def=,tag:ghi==,type:str]
            number: 8080
            float: 2.5
            flag: yes
            nothing: ~
            quoted: "8080"
            single: 'yes'
            tagged: !!str 42
            when: 2001-12-14
            """
        let document = try YAMLCodec().parse(Data(text.utf8))
        #expect(
            document
                == .object([
                    "plain": .string("word"), "sealed": .string("ENC[AES256_GCM,data:abc=,iv:def=,tag:ghi==,type:str]"),
                    "number": .integer(8080), "float": .double(2.5), "flag": .bool(true), "nothing": .null,
                    "quoted": .string("8080"), "single": .string("yes"), "tagged": .string("42"),
                    "when": .string("2001-12-14"),
                ]))
    }
}
#endif
