#if SOPS
import Foundation
import Loupe
import LoupeTestSupport
import Testing
@testable import LoupeSOPS

/// Files changed behind sops's back: each is refused with an error that names the file and what is wrong,
/// and nothing is written.
@Suite("sops files tampered with")
struct SOPSTamperTests {
    struct Settings: Codable, Equatable, Sendable {
        var firstName = ""
        var lastName = ""
    }

    /// `example.json` changed by `tamper`, opened by a root (which would write its default over a file it
    /// took for empty): the error it throws, and whether the file is still as tampered.
    static func refusal(_ tamper: (String) -> String) throws -> (error: SettingsError, unchanged: Bool) {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let tampered = tamper(try Fixture.text("sops/example.json"))
        try tampered.write(toFile: path, atomically: true, encoding: .utf8)
        let store = SOPSFileStore(path: path, identities: .identities(try Fixture.sopsIdentities()))
        let error = try #require(throws: SettingsError.self) {
            let root = try RootLens(default: Settings(), store: store)
            try root.update { $0.firstName = "Mallory" }
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            !$0.hasPrefix(".loupe") && !$0.hasSuffix(".lock")
        }
        return (error, try String(contentsOfFile: path, encoding: .utf8) == tampered && names == ["settings.json"])
    }

    /// The `ENC[…]` text of `key` in `text`.
    static func value(of key: String, in text: String) -> String {
        let start = text.range(of: "\"\(key)\": \"")!.upperBound
        return String(text[start...].prefix { $0 != "\"" })
    }

    @Test("A truncated ENC[…] value is refused, naming its path")
    func truncated() throws {
        let (error, unchanged) = try Self.refusal { text in
            let value = Self.value(of: "lastName", in: text)
            return text.replacingOccurrences(of: value, with: String(value.prefix(30)))
        }
        #expect(error.code == .corrupt)
        #expect(error.path == "lastName")
        #expect(error.description.contains("settings.json"))
        #expect(unchanged)
    }

    @Test("A wrong tag is refused, naming the path")
    func wrongTag() throws {
        let (error, unchanged) = try Self.refusal { text in
            text.replacingOccurrences(of: "tag:Gd9PMhhJeF/fcnC0WR2g1A==", with: "tag:Hd9PMhhJeF/fcnC0WR2g1A==")
        }
        #expect(error.code == .corrupt)
        #expect(error.path == "lastName")
        #expect(error.description.contains("does not verify"))
        #expect(unchanged)
    }

    @Test("A value moved to another path no longer opens: its additional data is the path")
    func swapped() throws {
        let (error, unchanged) = try Self.refusal { text in
            let first = Self.value(of: "firstName", in: text)
            let last = Self.value(of: "lastName", in: text)
            return text.replacingOccurrences(of: first, with: "@@").replacingOccurrences(of: last, with: first)
                .replacingOccurrences(of: "@@", with: last)
        }
        #expect(error.code == .corrupt)
        #expect(error.path == "firstName" || error.path == "lastName")
        #expect(unchanged)
    }

    @Test("A removed value is a MAC mismatch")
    func removed() throws {
        let (error, unchanged) = try Self.refusal { text in
            let line = "\t\"lastName\": \"\(Self.value(of: "lastName", in: text))\",\n"
            return text.replacingOccurrences(of: line, with: "")
        }
        #expect(error.code == .corrupt)
        #expect(error.description.contains("MAC mismatch"))
        #expect(unchanged)
    }

    @Test("A changed MAC is a MAC mismatch")
    func changedMAC() throws {
        let (error, unchanged) = try Self.refusal { text in
            text.replacingOccurrences(
                of: "\"lastmodified\": \"2022-03-15T22:12:12Z\"", with: "\"lastmodified\": \"2022-03-15T22:12:13Z\"")
        }
        #expect(error.description.contains("MAC mismatch"))
        #expect(unchanged)
    }

    @Test("ENC[…] values without a sops block are refused")
    func missingBlock() throws {
        let (error, unchanged) = try Self.refusal { text in
            let start = text.range(of: ",\n\t\"sops\": {")!.lowerBound
            return String(text[..<start]) + "\n}\n"
        }
        #expect(error.code == .corrupt)
        #expect(error.description.contains("no sops block"))
        #expect(unchanged)
    }

    @Test("A sops block of an unknown version is refused")
    func unknownVersion() throws {
        let (error, unchanged) = try Self.refusal { text in
            text.replacingOccurrences(of: "\"version\": \"3.7.1\"", with: "\"version\": \"4.0.0\"")
        }
        #expect(error.code == .corrupt)
        #expect(error.description.contains("version 4.0.0"))
        #expect(unchanged)
    }

    @Test("No error quotes a plaintext value")
    func errorsQuoteNoPlaintext() throws {
        let (error, _) = try Self.refusal { text in
            text.replacingOccurrences(of: "tag:Gd9PMhhJeF/fcnC0WR2g1A==", with: "tag:Hd9PMhhJeF/fcnC0WR2g1A==")
        }
        for plaintext in ["John", "Smith", "New York"] { #expect(!"\(error)".contains(plaintext)) }
    }
}
#endif
