#if SOPS
import Foundation
import Loupe
import LoupeTestSupport
import LoupeYAML
import Testing
@testable import LoupeSOPS

@Suite("sops files written in place")
struct SOPSWriteTests {
    /// A copy of a fixture and sops's key file in a fresh directory.
    struct Copy {
        let directory: TemporaryDirectory
        let path: String
        let keyFile: String

        init(_ fixture: String) throws {
            directory = try TemporaryDirectory()
            path = directory.file((fixture as NSString).lastPathComponent)
            keyFile = directory.file("keys.txt")
            try Fixture.data(fixture).write(to: URL(fileURLWithPath: path))
            try Fixture.data("sops/keys.txt").write(to: URL(fileURLWithPath: keyFile))
        }

        var text: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
    }

    /// A YAML file holding `text` in a fresh directory, sealed in place for a new age identity, whose key
    /// is in `key.txt` beside it (for the independent reader).
    struct SealedYAML {
        let directory: TemporaryDirectory
        let identity = AgeIdentity.generate()
        let path: String
        var keyFile: String { directory.file("key.txt") }

        init(_ name: String, holding text: String) throws {
            directory = try TemporaryDirectory()
            path = directory.file(name)
            try identity.secretKeyString.write(toFile: directory.file("key.txt"), atomically: true, encoding: .utf8)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            try SOPSFileStore.encrypt(path: path, format: YAMLCodec(), recipients: [identity.recipient])
        }

        /// A store of the file that keeps no history.
        func store() -> SOPSFileStore {
            SOPSFileStore(path: path, format: YAMLCodec(), identities: .identities([identity]), history: .off)
        }

        /// The file opened by the independent reader, which checks the MAC.
        func opened() throws -> [String: Any] {
            try #require(try IndependentReader.open(path, keyFile: keyFile))
        }
    }

    static func lines(_ text: String) -> [Substring] { text.split(separator: "\n", omittingEmptySubsequences: false) }

    /// `lastmodified` is written as sops writes it (Go's RFC 3339: UTC, whole seconds, `Z`), the same text
    /// as `ISO8601DateFormatter`'s internet date-time, across years, a leap day, midnight and fractions of a
    /// second (dropped).
    @Test("lastmodified is written in RFC 3339, UTC, whole seconds: as ISO8601DateFormatter writes it")
    func lastModifiedIsRFC3339() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        let dates = [0, 951_782_400, 1_647_382_332, 1_709_164_799.999, 1_709_164_800, 4_102_444_800.5].map {
            Date(timeIntervalSince1970: $0)
        }
        for date in dates + [Date()] {
            #expect(SOPSMetadata.timestamp(date) == formatter.string(from: date))
        }
        #expect(SOPSMetadata.timestamp(Date(timeIntervalSince1970: 1_647_382_332)) == "2022-03-15T22:12:12Z")
    }

    @Test(
        "A changed sealed value in sops's example.yaml rewrites its line, lastmodified and mac, and nothing else; sops's format reader opens it"
    )
    func oneValueInPlace() throws {
        let copy = try Copy("sops/example.yaml")
        defer { copy.directory.cleanUp() }
        let before = copy.text
        let store = SOPSFileStore(path: copy.path, format: YAMLCodec(), identities: .file(copy.keyFile))
        let stored = try store.load()
        var document = try #require(stored.document)
        try document.set(.string("n3w-p4ss"), at: "app2.db.password")
        _ = try store.save(document, replacing: stored.token)

        let after = copy.text
        #expect(!after.contains("n3w-p4ss"))
        let changed = zip(Self.lines(before), Self.lines(after)).filter { $0 != $1 }.map { String($0.1) }
        #expect(Self.lines(before).count == Self.lines(after).count)
        #expect(changed.count == 3, "\(changed)")
        #expect(changed.contains { $0.hasPrefix("        password: ENC[AES256_GCM,") })
        #expect(changed.contains { $0.hasPrefix("    lastmodified: ") })
        #expect(changed.contains { $0.hasPrefix("    mac: ENC[AES256_GCM,") })

        let reopened = try SOPSFileStore(
            path: copy.path, format: YAMLCodec(), identities: .file(copy.keyFile), history: .off
        ).load()
        #expect(reopened.document?[path: "app2.db.password"] == .string("n3w-p4ss"))
        #expect(reopened.document?[path: "myapp1"] == document[path: "myapp1"])
        let independent = try #require(try IndependentReader.open(copy.path, keyFile: copy.keyFile))
        #expect(
            (independent["app2"] as? [String: Any]).flatMap { $0["db"] as? [String: String] }?["password"] == "n3w-p4ss"
        )
        let bySOPS = try SOPSInteropTests.sops(["-d", copy.path], keyFile: copy.keyFile)
        #expect(bySOPS.status == 0 && bySOPS.output.contains("password: n3w-p4ss"), "\(bySOPS.error)")

        // The journal beside the file holds ciphertext only, and no temporary file is left.
        let names = try FileManager.default.contentsOfDirectory(atPath: copy.directory.path)
        for name in names where name != "keys.txt" {
            // A lock directory.
            guard let bytes = try? Data(contentsOf: URL(fileURLWithPath: copy.directory.file(name))) else { continue }
            #expect(!String(decoding: bytes, as: UTF8.self).contains("n3w-p4ss"), "\(name) holds the plaintext")
            #expect(!String(decoding: bytes, as: UTF8.self).contains("c4r1b0u"), "\(name) holds the old plaintext")
        }
    }

    @Test(
        "A new value at a path the rules encrypt is written encrypted, one under *_unencrypted in clear; the MAC takes the file's new order"
    )
    func newValues() throws {
        let copy = try Copy("sops/example.json")
        defer { copy.directory.cleanUp() }
        let store = SOPSFileStore(path: copy.path, identities: .file(copy.keyFile))
        let stored = try store.load()
        var document = try #require(stored.document)
        try document.set(.string("db.internal"), at: "address.host")
        try document.set(.string("in the clear"), at: "note_unencrypted")
        try document.set(.integer(42), at: "answer")
        _ = try store.save(document, replacing: stored.token)

        #expect(!copy.text.contains("db.internal"))
        #expect(copy.text.contains("\"in the clear\""))
        let reopened = try SOPSFileStore(path: copy.path, identities: .file(copy.keyFile), history: .off).load()
        #expect(reopened.document == document)
        let independent = try #require(try IndependentReader.open(copy.path, keyFile: copy.keyFile))
        #expect((independent["address"] as? [String: Any])?["host"] as? String == "db.internal")
        #expect(independent["answer"] as? Int == 42)
    }

    @Test("A file created by the store is sealed for its recipients, every type, and opens in the independent reader")
    func newFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let identity = AgeIdentity.generate()
        try identity.secretKeyString.write(toFile: directory.file("key.txt"), atomically: true, encoding: .utf8)
        for name in ["settings.json", "settings.yaml"] {
            let format: any DocumentCodec = name.hasSuffix("yaml") ? YAMLCodec() : JSONCodec()
            let store = SOPSFileStore(
                path: directory.file(name), format: format, identities: .identities([identity]),
                recipients: [identity.recipient])
            let document: JSONValue = .object([
                "token": .string("s3cr3t-t0k3n"), "port": .integer(8080), "debug": .bool(true), "ratio": .double(0.25),
                "empty": .string(""),
                "name_unencrypted": .string("visible"),
                "servers": .array([.string("alpha-host"), .string("beta-host")]),
                "nested": .object(["deep": .object(["key": .string("v4lue")])]),
            ])
            _ = try store.save(document, replacing: .absent)
            let text = try String(contentsOfFile: directory.file(name), encoding: .utf8)
            for secret in ["s3cr3t-t0k3n", "alpha-host", "v4lue", "8080"] {
                #expect(!text.contains(secret), "\(name) shows \(secret)")
            }
            #expect(text.contains("visible"))
            #expect(try store.load().document == document)
            let independent = try #require(
                try IndependentReader.open(directory.file(name), keyFile: directory.file("key.txt")))
            #expect(independent["token"] as? String == "s3cr3t-t0k3n")
            #expect(independent["port"] as? Int == 8080)
            #expect(independent["debug"] as? Bool == true)
            #expect(independent["ratio"] as? Double == 0.25)
            #expect(independent["servers"] as? [String] == ["alpha-host", "beta-host"])
        }
    }

    struct Settings: Codable, Equatable, Sendable {
        var token = ""
        var port = 80
    }

    struct Ordered: Codable, Equatable, Sendable {
        var zeta = "last-by-name"
        var alpha = 1
        var middle: [String: String] = [:]
    }

    /// The store keeps the order of the keys in the text it last read or wrote, and takes the next write's
    /// MAC in it without reading the text again: in an order that is not sorted, a value changed, a key
    /// added (the order read from the new text), a value changed again, and an edit by another writer in
    /// between, each opened by the independent reader, which checks the MAC.
    @Test("Successive writes take the MAC in the text's order, kept from the last read or write")
    func successiveWritesKeepTheTextsOrder() throws {
        let file = try SealedYAML(
            "ordered.yaml", holding: "zeta: last-by-name\nmiddle:\n  yy: one\n  bb: two\nalpha: 1\n")
        defer { file.directory.cleanUp() }
        let path = file.path
        let store = file.store
        let independent = file.opened
        let root = try RootLens(default: Ordered(), store: store(), watch: false)
        try root.update { $0.middle["bb"] = "changed" }
        #expect((try independent()["middle"] as? [String: String])?["bb"] == "changed")
        try root.update { $0.middle["aa"] = "added" }
        #expect((try independent()["middle"] as? [String: String])?["aa"] == "added")
        try root.update { $0.zeta = "again" }
        #expect(try independent()["zeta"] as? String == "again")

        // Another writer edits the file; the root reads it, and its next write is in the new text's order.
        let other = try RootLens(default: Ordered(), store: store(), watch: false)
        try other.update { $0.middle["cc"] = "from another writer" }
        try root.reload()
        try root.update { $0.alpha = 2 }
        let opened = try independent()
        #expect(opened["alpha"] as? Int == 2)
        #expect((opened["middle"] as? [String: String])?["cc"] == "from another writer")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.range(of: "zeta:")!.lowerBound < text.range(of: "alpha:")!.lowerBound, "the keys kept their order")
    }

    @Test(
        "A root over the store reads the sealed token and updates it; the journal's history opens, and a rollback seals again"
    )
    func rootLens() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let identity = AgeIdentity.generate()
        let path = directory.file("app.yaml")
        // Keys in another order than sorted, which the journal's documents do not keep.
        try "token: initial\nport: 80\n".write(toFile: path, atomically: true, encoding: .utf8)
        try SOPSFileStore.encrypt(path: path, format: YAMLCodec(), recipients: [identity.recipient])
        let store = SOPSFileStore(path: path, format: YAMLCodec(), identities: .identities([identity]))
        let root = try RootLens(default: Settings(), store: store)
        try root.update { $0.port = 8080 }
        try root.update { $0.token = "first-t0ken" }
        try root.update { $0.token = "second-t0ken" }
        #expect(root.value.token == "second-t0ken")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!text.contains("t0ken"))
        let history = try root.history()
        #expect(history.changes.count >= 2)
        let first = try #require(history.changes.first { $0.patch[path: "token"] == .string("first-t0ken") })
        // A new data key since: the revision, sealed under the old one, is sealed again under the new.
        func stanza(_ text: String) -> Substring { text.components(separatedBy: "enc: ")[1].prefix { $0 != "\n" } }
        let stanzaBefore = stanza(try String(contentsOfFile: path, encoding: .utf8))
        try store.rotate()
        let rotated = try String(contentsOfFile: path, encoding: .utf8)
        #expect(stanza(rotated) != stanzaBefore)
        try root.reload()
        try root.rollback(to: first.revision)
        #expect(root.value.token == "first-t0ken")
        let again = try SOPSFileStore(
            path: path, format: YAMLCodec(), identities: .identities([identity]), history: .off
        ).load()
        #expect(again.document?[path: "token"] == .string("first-t0ken"))
        let rolledBack = try String(contentsOfFile: path, encoding: .utf8)
        #expect(stanza(rolledBack) == stanza(rotated))
        let journal = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".history")
        }
        #expect(!journal.isEmpty)
        for name in journal {
            #expect(!(try String(contentsOfFile: directory.file(name), encoding: .utf8)).contains("t0ken"))
        }
    }

    /// A store read on one thread (a root's watch) while it writes and rotates on another: every write takes
    /// the MAC in the order of the text it edits, whatever the other thread last read, and every load checks
    /// the MAC against the text it read. The file's keys are not sorted, so a MAC taken in any other order
    /// would not verify.
    @Test("Loads on one thread while another writes and rotates: every text written verifies, every load opens")
    func loadsDuringWritesAndRotations() throws {
        let file = try SealedYAML("app.yaml", holding: "token: initial\nport: 80\nzone: b\nalpha: a\n")
        defer { file.directory.cleanUp() }
        let path = file.path
        let store = file.store()
        let stop = Locked(false)
        let failures = Locked<[String]>([])
        let reader = Thread {
            while !stop.withLock({ $0 }) {
                do { _ = try store.load() } catch { failures.withLock { $0.append("\(error)") } }
            }
        }
        reader.start()
        defer { stop.withLock { $0 = true } }
        for round in 0..<40 {
            let stored = try store.load()
            var document = try #require(stored.document)
            try document.set(.string("t0ken-\(round)"), at: "token")
            if round % 3 == 0 { try document.set(.integer(round), at: ValuePath([.key("count\(round)")])) }
            do {
                _ = try store.save(document, replacing: stored.token)
            } catch let error as SettingsError where error.code == .conflict {
                continue
            }
            if round % 5 == 4 { try store.rotate() }
            #expect(try file.opened()["token"] as? String == "t0ken-\(round)")
        }
        stop.withLock { $0 = true }
        #expect(failures.withLock { $0 }.isEmpty)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(
            text.range(of: "token:")!.lowerBound < text.range(of: "alpha:")!.lowerBound, "the keys kept their order")
    }
}
#endif
