import Foundation
import Loupe
import LoupeTestSupport
import LoupeTesting
import Testing

/// Every store the core ships passes LoupeTesting's conformance suite, in every format and write policy.
@Suite("Store conformance: the core's stores")
struct CoreStoreConformanceTests {
    @Test func memoryStore() async throws {
        let store = MemoryStore()
        try await StoreConformanceTest { store }.run()
    }

    @Test(arguments: ["json", "compact-json", "plist", "binary-plist"])
    func fileStore(format: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let codec: any DocumentCodec =
            switch format {
            case "json": JSONCodec()
            case "compact-json": JSONCodec(prettyPrinted: false)
            case "plist": PropertyListCodec()
            default: PropertyListCodec(format: .binary)
            }
        let path = directory.file("settings.\(format)")
        try await StoreConformanceTest { FileStore(path: path, format: codec) }.run()
    }

    @Test func coalescingFileStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        try await StoreConformanceTest { FileStore(path: path, writePolicy: .coalesced(.seconds(60))) }.run()
    }

    @Test func defaultsStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let suite = "org.loupe.conformance.\(UUID().uuidString)"
        try await StoreConformanceTest { try DefaultsStore(suite: suite, key: "settings") }.run()
    }
}
