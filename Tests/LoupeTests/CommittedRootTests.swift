import Foundation
import Loupe
import Synchronization
import Testing

/// `CommittedRoot`, the one home of the core's fast paths: a part read in place at its offset is the part
/// the key path reads, and readers on many threads see whole roots while another thread publishes.
@Suite("CommittedRoot: the fast paths, on their own")
struct CommittedRootTests {
    struct Pair: Sendable, Equatable {
        var name: String
        var numbers: [Int]
        var inner: Inner
        struct Inner: Sendable, Equatable {
            var flag: Bool
            var value: Double
        }
    }

    static let first = Pair(name: "first", numbers: [1, 2, 3], inner: .init(flag: true, value: 1.5))
    static let second = Pair(
        name: String(repeating: "second", count: 10), numbers: Array(0..<100), inner: .init(flag: false, value: -2))

    @Test func aPartReadAtItsOffsetIsThePartTheKeyPathReads() throws {
        let committed = CommittedRoot(Self.first)
        for root in [Self.first, Self.second] {
            committed.publish(root)
            let name = try #require(MemoryLayout<Pair>.offset(of: \Pair.name))
            let numbers = try #require(MemoryLayout<Pair>.offset(of: \Pair.numbers))
            let value = try #require(MemoryLayout<Pair>.offset(of: \Pair.inner.value))
            let flag = try #require(MemoryLayout<Pair>.offset(of: \Pair.inner.flag))
            #expect(committed.part(at: name, as: String.self) == root.name)
            #expect(committed.part(at: numbers, as: [Int].self) == root.numbers)
            #expect(committed.part(at: value, as: Double.self) == root.inner.value)
            #expect(committed.part(at: flag, as: Bool.self) == root.inner.flag)
            #expect(committed.part(at: 0, as: Pair.self) == root)
            #expect(committed.read { $0 } == root)
            #expect(committed.rootForUpdate == root)
        }
    }

    @Test func eachPublishGetsTheNextVersionAndASnapshotReadsBothTogether() {
        let committed = CommittedRoot(Self.first)
        #expect(committed.snapshot().version == 0)
        #expect(committed.publish(Self.second) == 1)
        #expect(committed.publish(Self.first) == 2)
        let snapshot = committed.snapshot()
        #expect(snapshot.root == Self.first && snapshot.version == 2)
    }

    @Test func readersOnManyThreadsSeeWholeRootsWhileOneThreadPublishes() {
        // Threads, not tasks: a reader spinning on the cooperative pool would starve the publisher. Under
        // TSan (Scripts/test runs it) this is also the check that the gate orders every access.
        final class Counts: Sendable {
            let stop = Atomic<Bool>(false)
            let started = Atomic<Int>(0)
            let torn = Atomic<Int>(0)
            let reads = Atomic<Int>(0)
        }
        let committed = CommittedRoot(Self.first)
        let counts = Counts()
        let nameOffset = MemoryLayout<Pair>.offset(of: \Pair.name)!
        let readers = DispatchGroup()
        for _ in 0..<3 {
            readers.enter()
            Thread {
                counts.started.add(1, ordering: .relaxed)
                while !counts.stop.load(ordering: .relaxed) {
                    let root = committed.read { $0 }
                    if root != Self.first && root != Self.second { counts.torn.add(1, ordering: .relaxed) }
                    let name = committed.part(at: nameOffset, as: String.self)
                    if name != Self.first.name && name != Self.second.name { counts.torn.add(1, ordering: .relaxed) }
                    counts.reads.add(1, ordering: .relaxed)
                }
                readers.leave()
            }.start()
        }
        while counts.started.load(ordering: .relaxed) < 3 { sched_yield() }  // publish while they read
        for round in 0..<20_000 {
            committed.publish(round.isMultiple(of: 2) ? Self.second : Self.first)
        }
        counts.stop.store(true, ordering: .relaxed)
        readers.wait()
        #expect(counts.torn.load(ordering: .relaxed) == 0, "a reader saw a root that was never published")
        #expect(counts.reads.load(ordering: .relaxed) > 0)
        #expect(committed.snapshot().version == 20_000)
    }
}
