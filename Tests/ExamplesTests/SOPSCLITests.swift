import Foundation
import LoupeTestSupport
import Testing

/// `loupe` on sops files: the verbs of LoupeSOPS, and the settings verbs over a sealed file.
@Suite("loupe and sops files")
struct SOPSCLITests {
    @Test func loupeSealsAFileMasksItsValuesWritesInPlaceAndRefusesATamperedOneWithExitStatus69() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let keyFile = directory.file("keys.txt")
        #expect(try run("/usr/bin/age-keygen", ["-o", keyFile]).status == 0)
        let keys = try String(contentsOfFile: keyFile, encoding: .utf8)
        let recipient = try #require(keys.split(separator: "\n").first { $0.hasPrefix("# public key: ") }).dropFirst(
            "# public key: ".count)
        let file = directory.file("settings.yaml")
        try "# the service\ntoken: s3cr3t-t0ken  # rotated monthly\nport: 8443\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["SOPS_AGE_KEY_FILE"] = keyFile
        func loupeWithKey(_ arguments: String...) throws -> ProcessOutput {
            try run(loupe, arguments, environment: environment)
        }

        #expect(try loupeWithKey("encrypt", file, "--age", String(recipient)).status == 0)
        var text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(
            !text.contains("s3cr3t-t0ken") && text.contains("# rotated monthly")
                && text.contains("token: ENC[AES256_GCM,"))

        #expect(try loupeWithKey("--file", file, "get", "token").output == "\"********\"\n")
        #expect(try loupeWithKey("--file", file, "get", "token", "--reveal").output == "\"s3cr3t-t0ken\"\n")
        #expect(try loupeWithKey("--file", file, "set", "token", "n3w-t0ken").status == 0)
        text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(!text.contains("n3w-t0ken"))
        let decrypted = try loupeWithKey("decrypt", file)
        #expect(
            decrypted.status == 0 && decrypted.output.contains("token: n3w-t0ken  # rotated monthly"),
            "\(decrypted.output) \(decrypted.error)")

        // No identity for it: exit 69, naming the recipient it was sealed for.
        var withoutKey = environment
        withoutKey["SOPS_AGE_KEY_FILE"] = nil
        withoutKey["XDG_CONFIG_HOME"] = directory.file("nothing")
        let locked = try run(loupe, ["decrypt", file], environment: withoutKey)
        #expect(locked.status == 69 && locked.error.contains(String(recipient)), "\(locked.error)")

        // A changed lastmodified: the MAC does not verify; exit 69, and the file is not written.
        let tampered = text.replacingOccurrences(of: "lastmodified: \"", with: "lastmodified: \"1")
        try tampered.write(toFile: file, atomically: true, encoding: .utf8)
        let refused = try loupeWithKey("--file", file, "set", "port", "9000")
        #expect(refused.status == 69 && refused.error.contains("MAC mismatch"), "\(refused.error)")
        #expect(try loupeWithKey("decrypt", file).status == 69)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == tampered)
    }

    @Test func encryptFollowsTheSOPSYAMLRuleAndUpdatekeysAndRotateKeepTheValues() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        /// A new age key file, and its recipient.
        func newKey(_ name: String) throws -> (file: String, recipient: String) {
            let file = directory.file(name)
            #expect(try run("/usr/bin/age-keygen", ["-o", file]).status == 0)
            let keys = try String(contentsOfFile: file, encoding: .utf8)
            let line = try #require(keys.split(separator: "\n").first { $0.hasPrefix("# public key: ") })
            return (file, String(line.dropFirst("# public key: ".count)))
        }
        let first = try newKey("first.txt"), second = try newKey("second.txt")
        func rules(_ recipients: String...) throws {
            try """
            creation_rules:
              - path_regex: \\.yaml$
                age: \(recipients.joined(separator: ","))
                encrypted_regex: ^(token|password)$

            """.write(toFile: directory.file(".sops.yaml"), atomically: true, encoding: .utf8)
        }
        let file = directory.file("settings.yaml")
        let plaintext = "# the service\ntoken: s3cr3t-t0ken  # rotated monthly\nport: 8443\n"
        try plaintext.write(toFile: file, atomically: true, encoding: .utf8)
        func loupeWith(_ key: String, _ arguments: String...) throws -> ProcessOutput {
            var environment = ProcessInfo.processInfo.environment
            environment["SOPS_AGE_KEY_FILE"] = key
            environment["XDG_CONFIG_HOME"] = directory.file("nothing")
            return try run(loupe, arguments, environment: environment)
        }
        func sealedLines() throws -> Set<Substring> {
            Set(try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").filter { $0.contains("ENC[") })
        }

        // No --age: the .sops.yaml rule for the file gives the recipients and what is encrypted.
        try rules(first.recipient)
        let encrypted = try loupeWith(first.file, "encrypt", file)
        #expect(encrypted.status == 0, "\(encrypted.error)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(
            text.contains("token: ENC[AES256_GCM,") && text.contains("port: 8443") && !text.contains("s3cr3t"),
            "encrypted_regex seals the token alone: \(text)")
        #expect(try loupeWith(second.file, "decrypt", file).status == 69, "not sealed for the second key yet")

        // updatekeys: the recipients the rule names now; the values and their ciphertexts stay.
        try rules(first.recipient, second.recipient)
        let before = try sealedLines()
        let updated = try loupeWith(first.file, "updatekeys", file)
        #expect(updated.status == 0, "\(updated.error)")
        #expect(try sealedLines() == before)
        for key in [first.file, second.file] {
            let opened = try loupeWith(key, "decrypt", file)
            #expect(opened.status == 0 && opened.output == plaintext, "\(opened.output) \(opened.error)")
        }
        // --age wins over the rule: the first key alone again.
        #expect(try loupeWith(second.file, "updatekeys", file, "--age", first.recipient).status == 0)
        let refused = try loupeWith(second.file, "decrypt", file)
        #expect(refused.status == 69 && refused.error.contains(first.recipient), "\(refused.error)")

        // rotate: a new data key, every value sealed again, the values as they were.
        #expect(try loupeWith(first.file, "rotate", file).status == 0)
        #expect(try sealedLines().isDisjoint(with: before))
        #expect(try loupeWith(first.file, "decrypt", file).output == plaintext)
    }
}
