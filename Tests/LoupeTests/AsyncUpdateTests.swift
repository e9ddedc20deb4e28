import Foundation
import Loupe
import LoupeTestSupport
import Synchronization
import Testing

/// A real file store whose saves are slowed down, standing in for a slow disk or server: every save
/// sleeps its thread, as a blocking call to a keyring or etcd would. It records whether each call ran
/// inside a Swift task (on the cooperative pool) or on a thread of its own.
final class SlowStore: DocumentStore {
    private let inner: FileStore
    let delay: Duration
    let callsInsideATask = Locked(0)
    let calls = Locked(0)
    init(path: String, delay: Duration) {
        inner = FileStore(path: path)
        self.delay = delay
    }
    private func record() {
        calls.withLock { $0 += 1 }
        if withUnsafeCurrentTask(body: { $0 != nil }) { callsInsideATask.withLock { $0 += 1 } }
    }
    func load() throws -> StoredDocument { try inner.load() }
    func save(_ document: JSONValue, replacing token: ChangeToken) throws -> ChangeToken {
        record()
        Thread.sleep(forTimeInterval: Double(delay.components.attoseconds) / 1e18 + Double(delay.components.seconds))
        return try inner.save(document, replacing: token)
    }
    func remove(replacing token: ChangeToken) throws -> ChangeToken {
        record()
        return try inner.remove(replacing: token)
    }
    var description: String { "slow \(inner)" }
}

@Suite("Async writes never hold the cooperative pool")
struct AsyncUpdateTests {
    @Test func asyncFormsSaveThenPublish() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path))
        try await root.server.port.async.set(1)
        let result = try await root.server.port.async.update { port -> Int in
            port += 1
            return port
        }
        #expect(result == 2)
        try await root.async.update { $0.features["beta"] = true }
        let reopened = try RootLens(default: Settings(), store: FileStore(path: path))
        #expect(reopened.value.server.port == 2 && reopened.value.features["beta"] == true)
        try Data(#"{"server": {"host": "h", "port": 5}, "features": {}}"#.utf8).write(to: URL(fileURLWithPath: path))
        try await root.async.reload()
        #expect(root.server.port.value == 5)
        try await root.async.flush()
        try await root.async.remove()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(root.value == Settings())
    }

    @Test func asyncErrorsChangeNothing() async throws {
        let root = try RootLens(default: Settings(), store: RecordingStore())
        await #expect(throws: Boom.self) {
            try await root.server.port.async.update { _ in throw Boom() }
        }
        #expect(root.value == Settings())
    }

    /// The async forms run the store's I/O on the graph's own queue, never inside the calling task: many
    /// more blocked writers than the pool has threads finish together, and none of the store's calls ran
    /// inside a task. (How late a ticking task gets meanwhile is a benchmark row, not a test: timing
    /// depends on what else the machine runs.)
    @Test func storeCallsRunOffTheCooperativePool() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let writers = ProcessInfo.processInfo.activeProcessorCount * 4
        let stores = (0..<writers).map { SlowStore(path: directory.file("\($0).json"), delay: .milliseconds(100)) }
        let roots = try stores.map { try RootLens(default: Settings(), store: $0) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for root in roots {
                group.addTask {
                    try await root.server.port.async.set(1)
                    try await root.async.update { $0.features["beta"] = true }
                    try await root.async.remove()
                }
            }
            try await group.waitForAll()
        }
        #expect(stores.allSatisfy { $0.calls.withLock { $0 } == 3 })
        #expect(stores.allSatisfy { $0.callsInsideATask.withLock { $0 } == 0 }, "no store call ran inside a task")
        // The synchronous forms run where they are called, as synchronous code expects.
        let store = SlowStore(path: directory.file("sync.json"), delay: .zero)
        let root = try RootLens(default: Settings(), store: store)
        try await Task.detached { try root.server.port.set(2) as Void }.value
        #expect(store.callsInsideATask.withLock { $0 } == 1)
    }
}
