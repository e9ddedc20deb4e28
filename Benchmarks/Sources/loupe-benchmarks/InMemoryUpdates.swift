import Foundation
import Loupe
import Configuration

/// In-memory updates against the same update by hand, and a watched set against swift-configuration's
/// `MutableInMemoryProvider`.
func measureInMemoryUpdates(_ bench: Bench, _ report: Report) throws {
    let scale = bench.scale
    do {
        report.add(
            "in-memory update of one leaf (1,000-element array + 1,000-entry dictionary, old snapshot held) vs by hand under a pthread_rwlock + withMutation",
            try compareInMemoryUpdates(200_000 / scale), .atMost(3))
    }

    do {
        // A value set and seen by one watcher: a storeless root with one observer, against swift-configuration's
        // MutableInMemoryProvider with one value watcher (an AsyncStream its task drains).
        final class Seen: @unchecked Sendable { var count = 0 }
        let seen = Seen()
        let root = RootLens(Small())
        let counter = root.counter
        let token = counter.observe { _ in seen.count &+= 1 }
        let (provider, watcher, received) = watchedProvider()
        let n = 100_000 / scale
        var next = 0
        let sets = try compare(
            operations: n,
            loupe: { for _ in 0..<n { next += 1; try counter.set(next) } },
            baseline: { for _ in 0..<n { next += 1; provider.setCounter(next) } })
        report.add(
            "peer: set a value one watcher observes, storeless root vs swift-configuration MutableInMemoryProvider",
            sets, .atMost(1),
            baselineNote: " (watcher got \(received.value))")
        report.observedSetByHand = compareObservedSetByHand(with: provider, operations: n)
        watcher.cancel()
        token.cancel()
    }
}
