#if SOPS
import Foundation
import Loupe
import LoupeTestSupport
import LoupeYAML
import Testing
@testable import LoupeSOPS

@Suite("encrypt, decrypt, rotate, updatekeys")
struct SOPSOperationsTests {
    static let plaintextYAML = """
        # The service's settings.
        server:
          host: example.org   # where it listens
          port: 8443
        database:
          password: hunter2-s3cret
        debug_unencrypted: true

        """

    /// A directory with an identity's key file, and `settings.yaml` holding ``plaintextYAML``.
    struct Setup {
        let directory: TemporaryDirectory
        let identity = AgeIdentity.generate()
        var path: String { directory.file("settings.yaml") }
        var keyFile: String { directory.file("key.txt") }

        init() throws {
            directory = try TemporaryDirectory()
            try identity.secretKeyString.write(toFile: keyFile, atomically: true, encoding: .utf8)
            try SOPSOperationsTests.plaintextYAML.write(toFile: path, atomically: true, encoding: .utf8)
        }

        var text: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

        func store(_ identities: [AgeIdentity]? = nil) -> SOPSFileStore {
            SOPSFileStore(
                path: path, format: YAMLCodec(), identities: .identities(identities ?? [identity]), history: .off)
        }
    }

    @Test("encrypt seals a plaintext YAML file in place, comments kept; decrypt prints it back as it was")
    func encryptDecrypt() throws {
        let setup = try Setup()
        defer { setup.directory.cleanUp() }
        try SOPSFileStore.encrypt(path: setup.path, format: YAMLCodec(), recipients: [setup.identity.recipient])
        let sealed = setup.text
        for secret in ["hunter2-s3cret", "example.org", "8443"] { #expect(!sealed.contains(secret)) }
        #expect(sealed.contains("# The service's settings."))
        #expect(sealed.contains("# where it listens"))
        #expect(sealed.contains("debug_unencrypted: true"))
        let independent = try #require(try IndependentReader.open(setup.path, keyFile: setup.keyFile))
        #expect((independent["database"] as? [String: Any])?["password"] as? String == "hunter2-s3cret")
        let decrypted = String(decoding: try setup.store().decryptedText(), as: UTF8.self)
        #expect(decrypted == Self.plaintextYAML)
        #expect(throws: SettingsError.self) {
            try SOPSFileStore.encrypt(path: setup.path, format: YAMLCodec(), recipients: [setup.identity.recipient])
        }
    }

    @Test("rotate seals every value again under a new data key; the values stay")
    func rotate() throws {
        let setup = try Setup()
        defer { setup.directory.cleanUp() }
        try SOPSFileStore.encrypt(path: setup.path, format: YAMLCodec(), recipients: [setup.identity.recipient])
        let before = setup.text
        let values = try setup.store().load().document
        try setup.store().rotate()
        let after = setup.text
        let old = Set(before.split(separator: "\n").filter { $0.contains("ENC[") })
        #expect(after.split(separator: "\n").filter { $0.contains("ENC[") }.allSatisfy { !old.contains($0) })
        #expect(try setup.store().load().document == values)
        #expect(try IndependentReader.open(setup.path, keyFile: setup.keyFile) != nil)
    }

    @Test("updatekeys wraps the data key for the recipients .sops.yaml names now; values and MAC stay")
    func updateKeys() throws {
        let setup = try Setup()
        defer { setup.directory.cleanUp() }
        let newcomer = AgeIdentity.generate()
        try """
        creation_rules:
          - path_regex: \\.yaml$
            age: >-
              \(setup.identity.recipient),
              \(newcomer.recipient)
            encrypted_regex: ^(password|host)$
        """.write(toFile: setup.directory.file(".sops.yaml"), atomically: true, encoding: .utf8)
        let rule = try #require(try SOPSConfiguration.nearest(to: setup.path)?.rule(for: setup.path))
        #expect(rule.recipients == [setup.identity.recipient, newcomer.recipient])
        try SOPSFileStore.encrypt(
            path: setup.path, format: YAMLCodec(), recipients: [setup.identity.recipient], rules: rule.rules)
        #expect(setup.text.contains("port: 8443"))  // encrypted_regex: only password and host
        #expect(!setup.text.contains("hunter2"))
        #expect(throws: SettingsError.self) { try setup.store([newcomer]).load() }
        try setup.store().updateRecipients(rule.recipients)
        #expect(try setup.store([newcomer]).load().document?[path: "database.password"] == .string("hunter2-s3cret"))
        try setup.store().updateRecipients([newcomer.recipient])
        let error = try #require(throws: SettingsError.self) { try setup.store([setup.identity]).load() }
        #expect(error.description.contains(newcomer.recipient.description))
        try newcomer.secretKeyString.write(
            toFile: setup.directory.file("newcomer.txt"), atomically: true, encoding: .utf8)
        let independent = try #require(
            try IndependentReader.open(setup.path, keyFile: setup.directory.file("newcomer.txt")))
        #expect((independent["server"] as? [String: Any])?["port"] as? Int == 8443)
    }

    @Test("A root over a sops file names its encrypted paths secret, so tools mask them")
    func masking() throws {
        let setup = try Setup()
        defer { setup.directory.cleanUp() }
        try SOPSFileStore.encrypt(path: setup.path, format: YAMLCodec(), recipients: [setup.identity.recipient])
        let root = try RootLens(default: JSONValue.object([:]), store: setup.store())
        #expect(root.secretPaths.contains("database.password"))
        #expect(root.secretPaths.contains("server.port"))
        #expect(!root.secretPaths.contains("debug_unencrypted"))
    }
}
#endif
