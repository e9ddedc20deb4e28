#if SOPS
import Foundation
import Loupe
import LoupeTestSupport
import Testing
@testable import LoupeSOPS

/// TOML and JSONC take sops's scheme as Loupe's extension: a `sops` table or member.
@Suite("sops in TOML and JSONC")
struct SOPSFormatsTests {
    @Test("A TOML file is sealed in place, comments kept, and opens and updates", arguments: [false, true])
    func toml(jsonc: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let identity = AgeIdentity.generate()
        let path = directory.file(jsonc ? "settings.jsonc" : "settings.toml")
        let format: any DocumentCodec = jsonc ? JSONCCodec() : TOMLCodec()
        let text =
            jsonc
            ? "{\n  // where it listens\n  \"server\": {\"host\": \"example.org\", \"port\": 8443},\n  \"password\": \"hunter2-s3cret\", // the database's\n}\n"
            : "# where it listens\n[server]\nhost = \"example.org\"\nport = 8443\n\n[database]\npassword = \"hunter2-s3cret\"  # the database's\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try SOPSFileStore.encrypt(path: path, format: format, recipients: [identity.recipient])
        let sealed = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!sealed.contains("hunter2-s3cret") && !sealed.contains("example.org"))
        #expect(sealed.contains(jsonc ? "// where it listens" : "# where it listens"))
        #expect(sealed.contains("# the database's") || sealed.contains("// the database's"))
        let store = SOPSFileStore(path: path, format: format, identities: .identities([identity]), history: .off)
        let stored = try store.load()
        var document = try #require(stored.document)
        #expect(document[path: "server.port"] == .integer(8443))
        let passwordPath: ValuePath = jsonc ? "password" : "database.password"
        #expect(document[path: passwordPath] == .string("hunter2-s3cret"))
        try document.set(.string("n3w"), at: passwordPath)
        _ = try store.save(document, replacing: stored.token)
        #expect(
            try SOPSFileStore(path: path, format: format, identities: .identities([identity]), history: .off).load()
                .document == document)
    }
}
#endif
