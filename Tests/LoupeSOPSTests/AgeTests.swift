#if SOPS
import Foundation
import LoupeTestSupport
import Testing
@testable import LoupeSOPS

@Suite("age")
struct AgeTests {
    @Test("Bech32 keys read as age-keygen writes them, and the recipient derived from an identity is the one it prints")
    func keysRead() throws {
        let identities = try Fixture.sopsIdentities()
        #expect(identities.count == 2)
        #expect(identities[0].recipient.description == "age1yt3tfqlfrwdwx0z0ynwplcr6qxcxfaqycuprpmy89nr83ltx74tqdpszlw")
        #expect(identities[1].recipient.description == "age1tmaae3ld5vpevmsh5yacsauzx8jetg300mpvc4ugp5zr5l6ssq9sla97ep")
        let generated = AgeIdentity.generate()
        #expect(try AgeIdentity(generated.secretKeyString).recipient == generated.recipient)
        #expect(try AgeRecipient(generated.recipient.description) == generated.recipient)
        #expect(!"\(generated)".contains("AGE-SECRET-KEY"))
        // Kinds Loupe does not open are passed over (sops's own test key of the post-quantum kind).
        let mixed =
            "AGE-SECRET-KEY-PQ-1JPDDEMSK6G9MG0VNJRSA0QKZ05CF4H6TK50YZGDKZKTRGC5Z7KEQUDUPG6\n\(generated.secretKeyString)\n"
        #expect(try AgeIdentity.parseIdentities(mixed).map(\.recipient) == [generated.recipient])
        // A checksum that does not match, mixed case, the wrong prefix.
        var broken = Array(identities[0].secretKeyString)
        broken[20] = broken[20] == "Q" ? "P" : "Q"
        #expect(throws: AgeError.self) { try AgeIdentity(String(broken)) }
        #expect(throws: AgeError.self) {
            try AgeRecipient("Age1yt3tfqlfrwdwx0z0ynwplcr6qxcxfaqycuprpmy89nr83ltx74tqdpszlw")
        }
        #expect(throws: AgeError.self) { try AgeRecipient(identities[0].secretKeyString) }
    }

    @Test("What Loupe seals opens again, armored or not, across chunk boundaries; another identity does not open it")
    func roundTrip() throws {
        let identity = AgeIdentity.generate()
        for size in [0, 1, 32, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 2 * 64 * 1024] {
            let plaintext = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let sealed = try AgeFile.encrypt(plaintext, to: [AgeIdentity.generate().recipient, identity.recipient])
            #expect(try AgeFile.decrypt(sealed, with: [identity]) == plaintext)
            let armored = try AgeFile.encryptArmored(plaintext, to: [identity.recipient])
            #expect(try AgeFile.decrypt(Data(armored.utf8), with: [identity]) == plaintext)
        }
        let sealed = try AgeFile.encrypt(Data("x".utf8), to: [identity.recipient])
        #expect(throws: AgeError.self) { try AgeFile.decrypt(sealed, with: [AgeIdentity.generate()]) }
        // A flipped bit in the payload, in the header MAC, and a payload cut short.
        var payload = sealed
        payload[payload.count - 1] ^= 1
        #expect(throws: AgeError.self) { try AgeFile.decrypt(payload, with: [identity]) }
        var text = String(decoding: sealed, as: UTF8.self)
        if let range = text.range(of: "--- ") {
            let index = text.index(range.upperBound, offsetBy: 3)
            text.replaceSubrange(index...index, with: text[index] == "A" ? "B" : "A")
        }
        #expect(throws: AgeError.self) { try AgeFile.decrypt(Data(text.utf8), with: [identity]) }
        #expect(throws: AgeError.self) { try AgeFile.decrypt(sealed.dropLast(17), with: [identity]) }
    }

    @Test("A file key sealed by the age CLI (age -r) opens in Loupe, and one Loupe seals opens with age -d")
    func ageCLI() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let identity = AgeIdentity.generate()
        try identity.secretKeyString.write(toFile: directory.file("key.txt"), atomically: true, encoding: .utf8)
        let secret = "the data key, 32 bytes: 0123456"
        for armored in [false, true] {
            let sealed = try run(
                "/usr/bin/age",
                ["-r", identity.recipient.description] + (armored ? ["-a"] : []) + [
                    "-o", directory.file("sealed.age"),
                ], input: secret)
            #expect(sealed.status == 0, "\(sealed.error)")
            let opened = try AgeFile.decrypt(Fixture.dataAt(directory.file("sealed.age")), with: [identity])
            #expect(String(decoding: opened, as: UTF8.self) == secret)
        }
        for armored in [false, true] {
            let data =
                armored
                ? Data(try AgeFile.encryptArmored(Data(secret.utf8), to: [identity.recipient]).utf8)
                : try AgeFile.encrypt(Data(secret.utf8), to: [identity.recipient])
            try data.write(to: URL(fileURLWithPath: directory.file("loupe.age")))
            let opened = try run("/usr/bin/age", ["-d", "-i", directory.file("key.txt"), directory.file("loupe.age")])
            #expect(opened.status == 0, "\(opened.error)")
            #expect(opened.output == secret)
        }
    }
}

extension Fixture {
    static func dataAt(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }
}
#endif
