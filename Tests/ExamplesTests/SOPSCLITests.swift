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
}
