import Configuration
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
final class SecretMemoryStore<Value: Sendable>: ValueStore {
    private let inner = MemoryStore<Value>()
    func load() throws -> Value? { try inner.load() }
    func save(_ value: Value) throws { try inner.save(value) }
    func remove() throws { try inner.remove() }
    var holdsSecrets: Bool { true }
    var description: String { "secret memory store" }
}

@Suite("LoupeProvider through swift-configuration's ConfigReader")
struct LoupeProviderTests {
    @Test func readsNestedKeysOfEveryType() throws {
        let root = MutableLens(ServiceSettings())
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

    @Test func environmentVariablesOverrideLoupe() throws {
        let root = MutableLens(ServiceSettings())
        let config = ConfigReader(providers: [
            EnvironmentVariablesProvider(environmentVariables: ["SERVER_PORT": "9999"]),
            LoupeProvider(root),
        ])
        #expect(config.int(forKey: "server.port") == 9999)
        #expect(config.string(forKey: "server.host") == "localhost")
    }

    @Test func aWrongTypeIsAnError() throws {
        let provider = LoupeProvider(MutableLens(ServiceSettings()))
        #expect(throws: LoupeProviderError.self) {
            try provider.value(forKey: AbsoluteConfigKey(["server", "host"]), type: .int)
        }
        let config = ConfigReader(provider: provider)
        #expect(config.int(forKey: "server.host") == nil)
    }

    @Test func readsSeeEveryCommitAtOnce() throws {
        let root = MutableLens(ServiceSettings())
        let config = ConfigReader(provider: LoupeProvider(root))
        try root.server.port.set(1234)
        #expect(config.int(forKey: "server.port") == 1234)
    }

    @Test func watchIntSeesEveryCommit() async throws {
        let root = MutableLens(ServiceSettings())
        let config = ConfigReader(provider: LoupeProvider(root))
        let seen = try await config.watchInt(forKey: "server.port") { updates in
            var values: [Int?] = []
            for await port in updates {
                values.append(port)
                if values.count == 1 {
                    // The current value came first: now commit, including a commit that does not touch the port.
                    try root.server.port.set(1)
                    try root.server.host.set("elsewhere")
                    try root.server.port.set(2)
                    try root.server.port.set(3)
                }
                if port == 3 { break }
            }
            return values
        }
        #expect(seen == [8080, 1, 2, 3])
    }

    @Test func snapshotsAndWatchedSnapshots() async throws {
        let root = MutableLens(ServiceSettings())
        let config = ConfigReader(provider: LoupeProvider(root))
        let before = config.snapshot()
        #expect(before.int(forKey: "server.port") == 8080)
        try root.server.port.set(81)
        #expect(before.int(forKey: "server.port") == 8080, "a snapshot does not change")
        let ports = try await config.watchSnapshot { snapshots in
            var ports: [Int?] = []
            for await snapshot in snapshots {
                ports.append(snapshot.int(forKey: "server.port"))
                if ports.count == 1 { try root.server.port.set(82) }
                if ports.count == 2 { break }
            }
            return ports
        }
        #expect(ports == [81, 82])
    }

    @Test func valuesFromAStoreThatKeepsSecretsAreMarkedSecret() throws {
        let secret = try MutableLens(default: ServiceSettings(), store: SecretMemoryStore<ServiceSettings>())
        let plain = MutableLens(ServiceSettings())
        #expect(secret.holdsSecrets)
        let secretValue = try LoupeProvider(secret).value(forKey: AbsoluteConfigKey(["server", "host"]), type: .string)
        let plainValue = try LoupeProvider(plain).value(forKey: AbsoluteConfigKey(["server", "host"]), type: .string)
        #expect(secretValue.value?.isSecret == true)
        #expect(plainValue.value?.isSecret == false)
        #expect(!"\(LoupeProvider(secret))".contains("localhost"))
    }
}
