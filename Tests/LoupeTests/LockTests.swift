import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// Loupe's one in-process lock and its one rule: a thread never takes a lock it holds; the code that may
/// come back to a lock asks whether it holds it, and decides in one place.
@Suite("Locks: one type, one rule for re-entry")
struct LockTests {
    @Test func aLockKnowsWhetherTheCallingThreadHoldsIt() async throws {
        let lock = Locked(0)
        #expect(!lock.isHeldByCurrentThread)
        lock.withLock { _ in #expect(lock.isHeldByCurrentThread) }
        #expect(!lock.isHeldByCurrentThread)

        // Held by one thread, it is not held by another.
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            lock.withLock { _ in
                entered.signal()
                release.wait()
            }
        }
        holder.start()
        entered.wait()
        let seenElsewhere = lock.isHeldByCurrentThread
        release.signal()
        #expect(!seenElsewhere)
        #expect(lock.withLock { $0 } == 0, "the holder let go")
    }

    @Test func anUpdateInsideAnotherRootsUpdatePassesTheFileLocksItHolds() throws {
        // Two roots whose files share a directory share its directory lock: the inner update takes it on
        // the thread that already holds it, and runs.
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let first = try RootLens(default: Settings(), store: FileStore(path: directory.file("first.json")))
        let second = try RootLens(default: Settings(), store: FileStore(path: directory.file("second.json")))
        try first.update { settings in
            settings.server.port = 1
            try second.server.port.set(2)
        }
        #expect(
            try RootLens(default: Settings(), store: FileStore(path: directory.file("first.json"))).server.port.value
                == 1)
        #expect(
            try RootLens(default: Settings(), store: FileStore(path: directory.file("second.json"))).server.port.value
                == 2)
    }

    @Test func anUpdateInsideAnUpdateOfTheSameRootIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let root = try RootLens(default: Settings(), store: FileStore(path: directory.file("settings.json")))
        let refused = #expect(throws: failure(.reentrantUpdate, at: "server.port")) {
            try root.update { _ in try root.server.port.set(2) }
        }
        #expect(
            refused?.description
                == "cannot update server.port from inside another update of the same settings on this thread")
        #expect(root.server.port.value == Settings().server.port, "neither update landed")
    }
}
