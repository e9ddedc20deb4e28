#if SOPS
import Crypto
import Foundation
import Testing
@testable import LoupeSOPS

/// C2SP's age test vectors: each file decrypts, or fails, as its `expect` says.
@Suite("age test vectors (C2SP CCTV)")
struct CCTVTests {
    struct Vector {
        var name: String
        var expect: String
        var payload: String?
        var identities: [String]
        var armored: Bool
        var file: Data
    }

    static func vectors() throws -> [Vector] {
        let directory = Fixture.path("cctv")
        return try FileManager.default.contentsOfDirectory(atPath: directory).sorted().map { name in
            let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
            let split = data.firstRange(of: Data("\n\n".utf8))!
            var vector = Vector(
                name: name, expect: "", payload: nil, identities: [], armored: false, file: data[split.upperBound...])
            for line in String(decoding: data[..<split.lowerBound], as: UTF8.self).split(separator: "\n") {
                guard let colon = line.range(of: ": ") else { continue }
                let value = String(line[colon.upperBound...])
                switch line[..<colon.lowerBound] {
                case "expect": vector.expect = value
                case "payload": vector.payload = value
                case "identity": vector.identities.append(value)
                case "armored": vector.armored = value == "yes"
                default: break
                }
            }
            return vector
        }
    }

    @Test("Every vector decrypts to its payload, or fails, as it expects")
    func vectors() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count > 60)
        for vector in vectors {
            let identities = try vector.identities.map(AgeIdentity.init)
            let result = Result { try AgeFile.decrypt(Data(vector.file), with: identities) }
            switch (vector.expect, result) {
            case ("success", .success(let plaintext)):
                let digest = SHA256.hash(data: plaintext).map { String(format: "%02x", $0) }.joined()
                #expect(digest == vector.payload, "\(vector.name): another payload")
            case ("success", .failure(let error)):
                Issue.record("\(vector.name): expected success, got \(error)")
            case (_, .success):
                Issue.record("\(vector.name): expected \(vector.expect), but it decrypted")
            case ("no match", .failure(let error)):
                #expect("\(error)".contains("no identity"), "\(vector.name): expected no match, got \(error)")
            case (_, .failure(let error)):
                #expect(!"\(error)".contains("no identity"), "\(vector.name): expected \(vector.expect), got \(error)")
            }
        }
    }
}
#endif
