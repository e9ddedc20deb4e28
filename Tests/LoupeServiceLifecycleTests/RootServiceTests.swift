import Foundation
import Logging
import Loupe
import LoupeServiceLifecycle
import LoupeTestSupport
import ServiceLifecycle
import Testing

struct Counter: Codable, Sendable, Equatable {
    var count = 0
}

@Suite("RootLens as a Service")
struct RootServiceTests {
    @Test func gracefulShutdownFlushesDeferredWrites() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.path + "/state.json"
        let root = try RootLens(
            default: Counter(),
            store: FileStore(path: path, writePolicy: .coalesced(.seconds(3600))), watch: false)
        try await root.count.async.set(7)
        #expect(!FileManager.default.fileExists(atPath: path), "a coalesced write waits for its interval")

        let group = ServiceGroup(
            services: [root], gracefulShutdownSignals: [], cancellationSignals: [], logger: Logger(label: "test"))
        async let running: Void = group.run()
        // At once: whether the root is already waiting or not yet started, the shutdown reaches it.
        await group.triggerGracefulShutdown()
        try await running

        let written =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        #expect(written?["count"] as? Int == 7, "graceful shutdown flushed the pending write")
    }

    @Test func cancellationFlushesToo() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.path + "/state.json"
        let root = try RootLens(
            default: Counter(),
            store: FileStore(path: path, writePolicy: .coalesced(.seconds(3600))), watch: false)
        try await root.count.async.set(3)
        let task = Task { try await root.run() }
        // At once: a root cancelled before it waits flushes all the same.
        task.cancel()
        try await task.value
        #expect(FileManager.default.fileExists(atPath: path))
    }
}
