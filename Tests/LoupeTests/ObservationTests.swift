import Foundation
import Loupe
import LoupeTestSupport
import Synchronization
import Testing

@Suite("Change notifications")
struct ObservationTests {
    @Test func onlyLensesWhoseValueChangedAreNotified() throws {
        let root = RootLens(Settings())
        let ports = Recorder<Int>()
        let hosts = Recorder<String>()
        let servers = Recorder<Server>()
        let tokens = [
            root.server.port.observe { ports.append($0) },
            root.server.host.observe { hosts.append($0) },
            root.server.observe { servers.append($0) },
        ]
        try root.server.port.set(1)
        try root.server.port.set(2)
        try root.features["beta"].set(true)
        #expect(ports.all == [1, 2])
        #expect(hosts.all.isEmpty)
        #expect(servers.all.map(\.port) == [1, 2])
        tokens.forEach { $0.cancel() }
    }

    @Test func observeChangesGivesOldAndNew() throws {
        let root = RootLens(Settings())
        let changes = Recorder<[Int]>()
        let token = root.server.port.observeChanges { old, new in changes.append([old, new]) }
        try root.server.port.set(1)
        try root.server.port.set(2)
        #expect(changes.all == [[8080, 1], [1, 2]])
        token.cancel()
    }

    @Test func cancelledAndReleasedTokensStopDelivery() throws {
        let root = RootLens(Settings())
        let seen = Recorder<Int>()
        let token = root.server.port.observe { seen.append($0) }
        do {
            let released = root.server.port.observe { seen.append(-$0) }
            _ = released
        }
        try root.server.port.set(1)
        token.cancel()
        #expect(token.isCancelled)
        try root.server.port.set(2)
        #expect(seen.all == [1])
    }

    @Test func dictionaryEntriesAndOptionalPartsFireWhenTheyAppearAndDisappear() throws {
        let root = RootLens(Settings())
        let beta = Recorder<Bool?>()
        let enabled = Recorder<Bool?>()
        let defaulted = Recorder<Bool>()
        let tokens = [
            root.features["beta"].observe { beta.append($0) },
            root[\Settings.protection?.enabled].observe { enabled.append($0) },
            root.protection.withDefault(Protection(enabled: true)).enabled.observe { defaulted.append($0) },
        ]
        try root.features["beta"].set(true)
        try root.features["beta"].set(nil)
        try root.protection.set(Protection(enabled: false))
        try root.protection.set(nil)
        #expect(beta.all == [true, nil])
        #expect(enabled.all == [false, nil])
        #expect(defaulted.all == [false, true], "fires with the default when the part is removed")
        tokens.forEach { $0.cancel() }
    }

    @Test func callbacksMayReadAndUpdateLenses() throws {
        let root = RootLens(Settings())
        let port = root.server.port
        let mirror = root.features["port-is-even"]
        let token = port.observe { value in
            #expect(port.value == value)
            try! mirror.set(value % 2 == 0)
        }
        let mirrored = Recorder<Bool?>()
        let token2 = mirror.observe { mirrored.append($0) }
        try port.set(3)
        try port.set(4)
        #expect(mirror.value == true)
        #expect(mirrored.all == [false, true])
        token.cancel()
        token2.cancel()
    }

    @Test func deliveryFollowsCommitOrderAcrossThreads() throws {
        let root = RootLens(Settings())
        try root.server.port.set(0)
        let seen = Recorder<[Int]>()
        let inCallback = Atomic<Int>(0)
        let token = root.server.port.observeChanges { old, new in
            precondition(inCallback.add(1, ordering: .relaxed).newValue == 1, "callbacks overlapped")
            seen.append([old, new])
            inCallback.subtract(1, ordering: .relaxed)
        }
        concurrently(4) { _ in
            for _ in 0..<250 { try! root.server.port.update { $0 += 1 } }
        }
        let changes = seen.all
        #expect(changes.count == 1_000)
        #expect(changes.map { $0[1] } == Array(1...1_000), "each commit once, in commit order")
        #expect(changes.allSatisfy { $0[1] == $0[0] + 1 })
        token.cancel()
    }

    @Test func aLaterObserverNeverSeesAnOlderValue() async throws {
        let root = RootLens(Settings())
        try await root.server.port.async.set(0)
        let writer = Task.detached {
            for i in 1...2_000 { try root.server.port.set(i) }
        }
        let stale = Atomic<Int>(0)
        var tokens: [ObservationToken] = []
        for _ in 0..<200 {
            let start = root.server.port.value
            let highest = Atomic<Int>(start)
            tokens.append(
                root.server.port.observe { value in
                    if value < highest.load(ordering: .relaxed) { stale.add(1, ordering: .relaxed) }
                    highest.store(value, ordering: .relaxed)
                })
        }
        try await writer.value
        #expect(stale.load(ordering: .relaxed) == 0)
        tokens.forEach { $0.cancel() }
    }

    @Test func valuesStartWithTheCurrentValueThenEachChange() async throws {
        let root = RootLens(Settings())
        var iterator = root.server.port.values.makeAsyncIterator()
        #expect(await iterator.next() == 8080)
        try await root.server.port.async.set(1)
        try await root.server.host.async.set("elsewhere")
        try await root.server.port.async.set(2)
        #expect(await iterator.next() == 1)
        #expect(await iterator.next() == 2)
    }

    @Test func valuesEndWhenTheTaskIsCancelled() async throws {
        let root = RootLens(Settings())
        let started = AsyncStream<Void>.makeStream()
        let consumer = Task {
            var seen: [Int] = []
            for await port in root.server.port.values {
                seen.append(port)
                if seen.count == 1 { started.continuation.yield() }
            }
            return seen
        }
        var signals = started.stream.makeAsyncIterator()
        await signals.next()
        consumer.cancel()
        #expect(await consumer.value == [8080])
    }

    @Test func oneCommitReachesManyObserversOfOneLens() throws {
        let root = RootLens(Settings())
        let port = root.server.port
        let calls = Atomic<Int>(0)
        let tokens = (0..<10_000).map { _ in port.observe { _ in calls.add(1, ordering: .relaxed) } }
        try port.set(1)
        #expect(calls.load(ordering: .relaxed) == 10_000)
        tokens.forEach { $0.cancel() }
        try port.set(2)
        #expect(calls.load(ordering: .relaxed) == 10_000)
    }

    @Test func observersOfOneLensAreCalledInTheOrderTheyWereAddedAndCancelledOnesAreSkipped() throws {
        let root = RootLens(Settings())
        let port = root.server.port
        let order = Recorder<Int>()
        var tokens = (0..<100).map { index in port.observe { _ in order.append(index) } }
        try port.set(1)
        #expect(order.all == Array(0..<100))

        // Cancel every third one, first, last and middle among them, in no particular order.
        let cancelled = Set(stride(from: 0, to: 100, by: 3))
        for index in cancelled.shuffled() { tokens[index].cancel() }
        tokens.append(port.observeChanges { _, _ in order.append(100) })  // one of the other shape, added last
        try port.set(2)
        #expect(order.all == Array(0..<100) + (0..<100).filter { !cancelled.contains($0) } + [100])
        tokens.forEach { $0.cancel() }
    }
}
