import Configuration
import ConfigurationTesting
import Foundation
import Loupe
import LoupeConfiguration
import LoupeTestSupport
import Testing

struct ServiceSettings: Codable, Sendable, Equatable {
    struct Server: Codable, Sendable, Equatable {
        var host = "localhost"
        var port = 8080
        var timeout = 2.5
        var tls = false
    }
    struct Item: Codable, Sendable, Equatable { var name: String }
    var server = Server()
    var origins = ["https://a.example", "https://b.example"]
    var weights = [1, 2, 3]
    var items = [Item(name: "first"), Item(name: "second")]
    var missing: String? = nil
}

/// A store that keeps secrets, as the keyring does, without needing one.
final class SecretMemoryStore: DocumentStore {
    private let inner = MemoryStore()
    func load() throws -> StoredDocument { try inner.load() }
    func save(_ document: JSONValue, replacing token: ChangeToken) throws -> ChangeToken {
        try inner.save(document, replacing: token)
    }
    func remove(replacing token: ChangeToken) throws -> ChangeToken { try inner.remove(replacing: token) }
    var secretPaths: [ValuePath] { [.root] }
    var description: String { "secret memory store" }
}

/// What swift-configuration's `ProviderCompatTest` expects a provider to hold.
struct CompatSettings: Codable, Sendable, Equatable {
    struct Strings: Codable, Sendable, Equatable { var array: [String] }
    struct Ints: Codable, Sendable, Equatable { var array: [Int] }
    struct Doubles: Codable, Sendable, Equatable { var array: [Double] }
    struct Bools: Codable, Sendable, Equatable { var array: [Bool] }
    struct Chunks: Codable, Sendable, Equatable { var array: [Data] }
    struct Other: Codable, Sendable, Equatable {
        var string = "Other Hello"
        var int = 24
        var double = 2.72
        var bool = false
        var bytes = Data("magic2".utf8)
        var stringy = Strings(array: ["Hello", "Swift"])
        var inty = Ints(array: [16, 32])
        var doubly = Doubles(array: [0.9, 1.8])
        var booly = Bools(array: [false, true, true])
        var byteChunky = Chunks(array: [Data("magic".utf8), Data("magic2".utf8), Data("magic".utf8)])
    }
    var string = "Hello"
    var int = 42
    var double = 3.14
    var bool = true
    var bytes = Data("magic".utf8)
    var stringy = Strings(array: ["Hello", "World"])
    var inty = Ints(array: [42, 24])
    var doubly = Doubles(array: [3.14, 2.72])
    var booly = Bools(array: [true, false])
    var byteChunky = Chunks(array: [Data("magic".utf8), Data("magic2".utf8)])
    var other = Other()
}

@Suite("LoupeProvider through swift-configuration's ConfigReader")
struct LoupeProviderTests {
    @Test func passesSwiftConfigurationsProviderCompatTest() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        // Through a real file, so the values have been through the document pipeline both ways.
        let writer = try RootLens(
            default: CompatSettings(), store: FileStore(path: directory.file("compat.json")), watch: false)
        try await writer.async.set(CompatSettings())
        let root = try RootLens(default: CompatSettings(), store: FileStore(path: directory.file("compat.json")))
        try await ProviderCompatTest(provider: LoupeProvider(root)).runTest()
    }

    @Test func readsNestedKeysOfEveryType() throws {
        let root = RootLens(ServiceSettings())
        let config = ConfigReader(provider: LoupeProvider(root))
        #expect(config.string(forKey: "server.host") == "localhost")
        #expect(config.int(forKey: "server.port") == 8080)
        #expect(config.double(forKey: "server.timeout") == 2.5)
        #expect(config.bool(forKey: "server.tls") == false)
        #expect(config.stringArray(forKey: "origins") == ["https://a.example", "https://b.example"])
        #expect(config.intArray(forKey: "weights") == [1, 2, 3])
        #expect(config.string(forKey: "items.1.name") == "second")
        #expect(config.string(forKey: "missing") == nil)
        #expect(config.int(forKey: "server.nothing", default: 7) == 7)
        #expect(config.double(forKey: "server.port") == 8080, "an integer reads as a double")
    }

    @Test func aNumberNoIntHoldsIsNeverReadAsAWrappedInt() throws {
        let root = RootLens(try JSONValue(parsing: #"{"id": 18446744073709551615, "price": 12345678901234567.89}"#))
        let config = ConfigReader(provider: LoupeProvider(root))
        #expect(config.int(forKey: "id") == nil, "not -1")
        #expect(config.string(forKey: "id") == "18446744073709551615")
        #expect(config.double(forKey: "price") == 12345678901234567.89)
    }

    @Test func environmentVariablesOverrideLoupe() throws {
        let root = RootLens(ServiceSettings())
        let config = ConfigReader(providers: [
            EnvironmentVariablesProvider(environmentVariables: ["SERVER_PORT": "9999"]),
            LoupeProvider(root),
        ])
        #expect(config.int(forKey: "server.port") == 9999)
        #expect(config.string(forKey: "server.host") == "localhost")
    }

    @Test func aWrongTypeIsAnError() throws {
        let provider = LoupeProvider(RootLens(ServiceSettings()))
        #expect(throws: LoupeProviderError.self) {
            try provider.value(forKey: AbsoluteConfigKey(["server", "host"]), type: .int)
        }
        let config = ConfigReader(provider: provider)
        #expect(config.int(forKey: "server.host") == nil)
    }

    @Test func readsSeeEveryCommitAtOnce() throws {
        let root = RootLens(ServiceSettings())
        let config = ConfigReader(provider: LoupeProvider(root))
        try root.server.port.set(1234)
        #expect(config.int(forKey: "server.port") == 1234)
    }

    @Test func watchIntSeesEveryCommit() async throws {
        let root = RootLens(ServiceSettings())
        let config = ConfigReader(provider: LoupeProvider(root))
        let seen = try await config.watchInt(forKey: "server.port") { updates in
            var values: [Int?] = []
            for await port in updates {
                values.append(port)
                if values.count == 1 {
                    // The current value came first: now commit, including a commit that does not touch the port.
                    try await root.server.port.async.set(1)
                    try await root.server.host.async.set("elsewhere")
                    try await root.server.port.async.set(2)
                    try await root.server.port.async.set(3)
                }
                if port == 3 { break }
            }
            return values
        }
        #expect(seen == [8080, 1, 2, 3])
    }

    @Test func snapshotsAndWatchedSnapshots() async throws {
        let root = RootLens(ServiceSettings())
        let config = ConfigReader(provider: LoupeProvider(root))
        let before = config.snapshot()
        #expect(before.int(forKey: "server.port") == 8080)
        try await root.server.port.async.set(81)
        #expect(before.int(forKey: "server.port") == 8080, "a snapshot does not change")
        let ports = try await config.watchSnapshot { snapshots in
            var ports: [Int?] = []
            for await snapshot in snapshots {
                ports.append(snapshot.int(forKey: "server.port"))
                if ports.count == 1 { try await root.server.port.async.set(82) }
                if ports.count == 2 { break }
            }
            return ports
        }
        #expect(ports == [81, 82])
    }

    @Test func valuesFromAStoreThatKeepsSecretsAreMarkedSecret() throws {
        let secret = try RootLens(default: ServiceSettings(), store: SecretMemoryStore())
        let plain = RootLens(ServiceSettings())
        #expect(secret.secretPaths == [.root])
        let secretValue = try LoupeProvider(secret).value(forKey: AbsoluteConfigKey(["server", "host"]), type: .string)
        let plainValue = try LoupeProvider(plain).value(forKey: AbsoluteConfigKey(["server", "host"]), type: .string)
        #expect(secretValue.value?.isSecret == true)
        #expect(plainValue.value?.isSecret == false)
        #expect(!"\(LoupeProvider(secret))".contains("localhost"))
    }

    /// A credential directory's values (real files) are secret in a store that is not; the others are not,
    /// through the root and through a part lens alike.
    @Test func valuesFromCredentialsAreMarkedSecretAndTheOthersAreNot() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(
            atPath: directory.file("credentials"), withIntermediateDirectories: true)
        try replaceFile(directory.file("credentials/server.host"), with: "secret-host\n")
        let root = try RootLens(
            default: ServiceSettings(),
            store: LayeredStore(
                layers: [.directory(credentials: directory.file("credentials"))],
                top: FileStore(path: directory.file("settings.json"))))
        #expect(root.secretPaths == ["server.host"])
        for provider in [LoupeProvider(root), LoupeProvider(root.server.readOnly, name: "server")] {
            let prefix = provider.providerName == "server" ? [String]() : ["server"]
            let host = try provider.value(forKey: AbsoluteConfigKey(prefix + ["host"]), type: .string)
            let port = try provider.value(forKey: AbsoluteConfigKey(prefix + ["port"]), type: .int)
            #expect(host.value?.content == .string("secret-host") && host.value?.isSecret == true)
            #expect(port.value?.isSecret == false)
        }
        #expect(root.server.readOnly.secretPaths == ["host"] && root.server.host.readOnly.secretPaths == [""])
    }

    /// Keys are the document's: with `CodingKeys` in snake_case, a part lens's provider serves
    /// `api_token`, and marks it secret when a credential file `up_stream.api_token` gives it.
    @Test func aPartLensOfSnakeCaseCodingKeysMarksItsCredentialSecret() throws {
        struct Upstream: Codable, Sendable, Equatable {
            var apiToken = ""
            var timeoutSeconds = 30
            enum CodingKeys: String, CodingKey { case apiToken = "api_token", timeoutSeconds = "timeout_seconds" }
        }
        struct Settings: Codable, Sendable, Equatable {
            var upstream = Upstream()
            enum CodingKeys: String, CodingKey { case upstream = "up_stream" }
        }
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(
            atPath: directory.file("credentials"), withIntermediateDirectories: true)
        try replaceFile(directory.file("credentials/up_stream.api_token"), with: "s3cret\n")
        let root = try RootLens(
            default: Settings(),
            store: LayeredStore(
                layers: [.directory(credentials: directory.file("credentials"))],
                top: FileStore(path: directory.file("settings.json"))))
        #expect(root.upstream.secretPaths == ["api_token"])
        let provider = LoupeProvider(root.upstream, name: "upstream")
        let token = try provider.value(forKey: AbsoluteConfigKey(["api_token"]), type: .string)
        let timeout = try provider.value(forKey: AbsoluteConfigKey(["timeout_seconds"]), type: .int)
        #expect(token.value?.content == .string("s3cret") && token.value?.isSecret == true)
        #expect(timeout.value?.content == .int(30) && timeout.value?.isSecret == false)
    }

    /// The parts a settings type declares secret are marked secret wherever their values come from (the
    /// file here, the environment), and only they: through the root, a part lens, and after a commit.
    @Test func declaredSecretsAreMarkedSecretWhereverTheirValuesComeFrom() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        try replaceFile(directory.file("settings.json"), with: #"{"database": {"password": "file-secret"}}"#)
        let root = try RootLens(
            default: VaultSettings(),
            store: LayeredStore(
                layers: [.environment(prefix: "VAULT_", variables: { ["VAULT_API_KEY": "env-secret"] })],
                top: FileStore(path: directory.file("settings.json"))))
        #expect(Set(root.secretPaths) == ["apiKey", "database.password"])
        let provider = LoupeProvider(root)
        for (key, expected) in [(["apiKey"], "env-secret"), (["database", "password"], "file-secret")] {
            let value = try provider.value(forKey: AbsoluteConfigKey(key), type: .string)
            #expect(value.value?.content == .string(expected) && value.value?.isSecret == true, "\(key)")
        }
        #expect(
            try provider.value(forKey: AbsoluteConfigKey(["database", "user"]), type: .string).value?.isSecret == false)
        let database = LoupeProvider(root.database.readOnly, name: "database")
        #expect(try database.value(forKey: AbsoluteConfigKey(["password"]), type: .string).value?.isSecret == true)
        #expect(try database.value(forKey: AbsoluteConfigKey(["user"]), type: .string).value?.isSecret == false)
        #expect(!"\(provider)".contains("secret"), "\(provider)")
    }
}

/// Settings with parts they declare secret, the nested type its own.
struct VaultSettings: Codable, Sendable, Equatable, SecretSettings {
    struct Database: Codable, Sendable, Equatable, SecretSettings {
        var user = "app"
        var password = ""
        static let secretPaths: [ValuePath] = ["password"]
    }
    var apiKey = ""
    var database = Database()
    static let secretPaths: [ValuePath] = ["apiKey"]
}
