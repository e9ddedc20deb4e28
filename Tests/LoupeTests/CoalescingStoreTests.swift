import Foundation
import Loupe
import LoupeTestSupport
import LoupeTesting
import Testing

/// `CoalescingStore`'s logic on a clock the test moves: what is written when, with no sleeping. The real
/// file under it is `FileStoreTests`' and `RootServiceTests`' business. The write after the clock moves runs
/// from a task, which a cooperative pool kept busy by the rest of the suite may start late: the waits for
/// it are long, and end as soon as it has run.
@Suite("CoalescingStore: at most one write per interval, on a clock the test moves", .serialized)
struct CoalescingStoreTests {
    struct Counter: Codable, Sendable, Equatable {
        var count = 0
        var label = "start"
    }

    @Test func savesWithinAnIntervalAreWrittenOnceWhenItEnds() async throws {
        let clock = ManualClock()
        let base = RecordingStore()
        let root = try RootLens(default: Counter(), store: CoalescingStore(base, interval: .seconds(10), clock: clock))
        for value in 1...50 { try await root.count.async.set(value) }
        #expect(root.count.value == 50, "a save is answered at once")
        #expect(base.saves == 0, "nothing is written before the interval ends")

        clock.advance(by: .seconds(9))
        #expect(base.saves == 0, "nor a second before it ends: the clock has not reached it, so nothing ran")

        clock.advance(by: .seconds(1))
        #expect(await eventually(deadline: .seconds(120)) { base.saves == 1 }, "the interval ended: one write")
        #expect(try base.load(over: Counter()) == Counter(count: 50), "the last value")

        // The next save starts the next interval.
        try await root.label.async.set("next")
        #expect(base.saves == 1)
        clock.advance(by: .seconds(10))
        #expect(await eventually(deadline: .seconds(120)) { base.saves == 2 })
        #expect(try base.load(over: Counter()) == Counter(count: 50, label: "next"))
    }

    @Test func flushWritesAtOnceAndTheNextSaveWaitsForTheInterval() async throws {
        let clock = ManualClock()
        let base = RecordingStore()
        let root = try RootLens(default: Counter(), store: CoalescingStore(base, interval: .seconds(10), clock: clock))
        try await root.count.async.set(1)
        try await root.async.flush()
        #expect(base.saves == 1)
        #expect(try base.load(over: Counter()) == Counter(count: 1))
        #expect(
            await eventually(deadline: .seconds(120)) { clock.waitingSleeps == 1 },
            "the interval's write is still scheduled")
        try await root.count.async.set(2)
        #expect(base.saves == 1, "a save after the flush waits for the interval again")
        clock.advance(by: .seconds(10))
        #expect(await eventually(deadline: .seconds(120)) { base.saves == 2 })
        #expect(try base.load(over: Counter()) == Counter(count: 2))
    }

    @Test func anotherWritersChangeMeanwhileIsKeptAndOursGoOverIt() async throws {
        let clock = ManualClock()
        let base = RecordingStore()
        let store = CoalescingStore(base, interval: .seconds(10), clock: clock)
        let root = try RootLens(default: Counter(), store: store, watch: false)
        try await root.count.async.set(5)
        // Another writer writes the label underneath, before our interval ends.
        _ = try base.save(.object(["label": .string("theirs")]), replacing: base.load().token)
        clock.advance(by: .seconds(10))
        #expect(
            await eventually(deadline: .seconds(120)) {
                (try? base.load(over: Counter())) == Counter(count: 5, label: "theirs")
            },
            "our pending change went over theirs, and theirs stayed")
    }

    @Test func aSleepIsWokenOnlyByTheClockReachingItsDeadline() async throws {
        let clock = ManualClock()
        let woke = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(5))) }
        #expect(await eventually(deadline: .seconds(120)) { clock.waitingSleeps == 1 })
        clock.advance(by: .seconds(4))
        #expect(clock.waitingSleeps == 1, "4 s of 5: still asleep")
        clock.advance(by: .seconds(1))
        try await woke.value
        #expect(clock.waitingSleeps == 0)

        let cancelled = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(5))) }
        #expect(await eventually(deadline: .seconds(120)) { clock.waitingSleeps == 1 })
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(clock.waitingSleeps == 0)

        // A deadline already reached returns at once.
        try await clock.sleep(until: clock.now)
    }
}
