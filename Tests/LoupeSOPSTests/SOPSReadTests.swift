#if SOPS
import Foundation
import Loupe
import LoupeTestSupport
import LoupeYAML
import Testing
@testable import LoupeSOPS

@Suite("sops files made by sops")
struct SOPSReadTests {
    @Test("sops's example.yaml, sealed for its test identity, opens: values, types, lists, MAC")
    func exampleYAML() throws {
        let store = SOPSFileStore(
            path: Fixture.path("sops/example.yaml"), format: YAMLCodec(),
            identities: .identities(try Fixture.sopsIdentities()), history: .off)
        let document = try #require(try store.load().document)
        #expect(document[path: "myapp1"] == .string("t00m4nys3cr3tzupdated"))
        #expect(document[path: "app2.db.user"] == .string("eve"))
        #expect(document[path: "app2.db.password"] == .string("c4r1b0u"))
        #expect(document[path: "number"] == .double(1_234_568_000))
        #expect(document[path: "somebooleans[0]"] == .bool(true))
        #expect(document[path: "somebooleans[1]"] == .bool(false))
        #expect(document[path: "somelist_unencrypted[0]"] == .string("all elements of this list"))
        #expect(document[path: "sops"] == nil)
        #expect(store.encryptedPaths.contains("app2.db.password"))
        #expect(!store.encryptedPaths.contains("somelist_unencrypted[0]"))
    }

    @Test("sops's example.json opens, with the other identity of keys.txt alone")
    func exampleJSON() throws {
        let identity = try Fixture.sopsIdentities()[1]
        let store = SOPSFileStore(
            path: Fixture.path("sops/example.json"), identities: .identities([identity]), history: .off)
        let document = try #require(try store.load().document)
        #expect(document[path: "firstName"] == .string("John"))
        #expect(document[path: "address.city"] == .string("New York"))
        #expect(document[path: "phoneNumbers[1].type"] == .string("office"))
        #expect(document[path: "anEmptyValue"] == .string(""))
    }

    @Test("A file no identity opens names the recipients it was sealed for")
    func noIdentity() throws {
        let store = SOPSFileStore(
            path: Fixture.path("sops/example.yaml"), format: YAMLCodec(), identities: .identities([.generate()]),
            history: .off)
        let error = try #require(throws: SettingsError.self) { try store.load() }
        #expect(error.code == .unavailable)
        #expect(error.description.contains("age1yt3tfqlfrwdwx0z0ynwplcr6qxcxfaqycuprpmy89nr83ltx74tqdpszlw"))
        #expect(error.description.contains("age1tmaae3ld5vpevmsh5yacsauzx8jetg300mpvc4ugp5zr5l6ssq9sla97ep"))
    }
}
#endif
