#if SOPS
import Foundation
import Loupe
import LoupeTestSupport
import LoupeYAML
import Testing
@testable import LoupeSOPS

@Suite("sops rules and age identities")
struct SOPSRulesAndIdentitiesTests {
    static let document: JSONValue = .object([
        "password": .string("pw-s3cret"), "token_enc": .string("tok-s3cret"), "host": .string("example.org"),
        "note_unencrypted": .string("in clear"),
        "nested": .object(["api_key": .string("k3y-s3cret"), "port": .integer(8443)]),
    ])

    @Test(
        "Each rule sops writes is honoured, and sops's own format reader and sops itself agree",
        arguments: [
            ("encrypted_suffix", "_enc"), ("encrypted_regex", "^(password|api_key)$"),
            ("unencrypted_regex", "^(host|port)$"), ("mac_only_encrypted", "_enc"),
        ])
    func rules(rule: String, value: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let identity = AgeIdentity.generate()
        let keyFile = directory.file("key.txt")
        try identity.secretKeyString.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let rules =
            switch rule {
            case "encrypted_suffix": try SOPSRules(encryptedSuffix: value)
            case "encrypted_regex": try SOPSRules(encryptedRegex: value)
            case "unencrypted_regex": try SOPSRules(unencryptedRegex: value)
            default: try SOPSRules(encryptedSuffix: value, macOnlyEncrypted: true)
            }
        let path = directory.file("settings.yaml")
        let store = SOPSFileStore(
            path: path, format: YAMLCodec(), identities: .identities([identity]), recipients: [identity.recipient],
            rules: rules, history: .off)
        _ = try store.save(Self.document, replacing: .absent)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let clear = ["example.org", "in clear"].filter { text.contains($0) }
        switch rule {
        case "encrypted_suffix", "mac_only_encrypted":
            #expect(!text.contains("tok-s3cret") && text.contains("pw-s3cret") && clear.count == 2)
        case "encrypted_regex":
            #expect(!text.contains("pw-s3cret") && !text.contains("k3y-s3cret") && text.contains("tok-s3cret"))
        default:
            #expect(!text.contains("pw-s3cret") && text.contains("example.org") && text.contains("8443"))
        }
        #expect(try store.load().document == Self.document)
        #expect(try IndependentReader.open(path, keyFile: keyFile) != nil)
        var environment = ProcessInfo.processInfo.environment
        environment["SOPS_AGE_KEY_FILE"] = keyFile
        let opened = try run("/usr/bin/env", ["sops", "-d", path], environment: environment)
        #expect(opened.status == 0, "\(opened.error)")
        // A plaintext value the MAC covers, changed behind Loupe's back, is a MAC mismatch; where only the
        // encrypted values are in the MAC (mac_only_encrypted), it is not.
        let inClear = rule == "unencrypted_regex" ? "example.org" : "in clear"
        #expect(text.contains(inClear))
        try text.replacingOccurrences(of: inClear, with: "changed").write(
            toFile: path, atomically: true, encoding: .utf8)
        let reopened = SOPSFileStore(
            path: path, format: YAMLCodec(), identities: .identities([identity]), history: .off)
        if rule == "mac_only_encrypted" {
            #expect(try reopened.load().document?[path: "note_unencrypted"] == .string("changed"))
        } else {
            let error = try #require(throws: SettingsError.self) { try reopened.load() }
            #expect(error.description.contains("MAC mismatch"))
        }
    }

    @Test("Identities come from SOPS_AGE_KEY, SOPS_AGE_KEY_FILE, XDG_CONFIG_HOME, a systemd credential and a provider")
    func identitySources() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let identities = (0..<4).map { _ in AgeIdentity.generate() }
        try FileManager.default.createDirectory(
            atPath: directory.file("config/sops/age"), withIntermediateDirectories: true)
        try "# created by a test\n\(identities[2].secretKeyString)\n".write(
            toFile: directory.file("config/sops/age/keys.txt"), atomically: true, encoding: .utf8)
        try identities[1].secretKeyString.write(toFile: directory.file("file.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(
            atPath: directory.file("credentials"), withIntermediateDirectories: true)
        try identities[3].secretKeyString.write(
            toFile: directory.file("credentials/age"), atomically: true, encoding: .utf8)
        let environment = [
            "SOPS_AGE_KEY": identities[0].secretKeyString, "SOPS_AGE_KEY_FILE": directory.file("file.txt"),
            "XDG_CONFIG_HOME": directory.file("config"), "CREDENTIALS_DIRECTORY": directory.file("credentials"),
        ]
        let found = try AgeIdentities.sopsDefaults(environment: environment).identities().map(\.recipient)
        #expect(found == identities[0..<3].map(\.recipient))
        #expect(
            try AgeIdentities.systemdCredential("age", environment: environment).identities().map(\.recipient) == [
                identities[3].recipient
            ])
        let secret = identities[3].secretKeyString
        #expect(
            try AgeIdentities.provider(named: "a keyring item") { secret }.identities().map(\.recipient) == [
                identities[3].recipient
            ])
        let missing = try #require(throws: SettingsError.self) {
            try AgeIdentities.systemdCredential("age", environment: [:]).identities()
        }
        #expect(missing.description.contains("CREDENTIALS_DIRECTORY"))
        // A key file that does not read names its line, never its text.
        try "AGE-SECRET-KEY-1NOTAKEY\n".write(toFile: directory.file("bad.txt"), atomically: true, encoding: .utf8)
        let bad = try #require(throws: SettingsError.self) {
            try AgeIdentities.file(directory.file("bad.txt")).identities()
        }
        #expect(bad.description.contains("line 1") && !bad.description.contains("NOTAKEY"))
    }
}
#endif
