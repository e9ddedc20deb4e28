import Foundation
import Loupe

/// One commit delivered to 10,000 observers.
func measureNotifications(_ bench: Bench, _ report: Report) throws {
    let scale = bench.scale
    do {
        final class Sink: @unchecked Sendable { var count = 0 }
        let sink = Sink()
        let root = RootLens(Deep())
        let port = root.inner.leaf.port
        let tokens = (0..<10_000).map { _ in port.observe { _ in sink.count &+= 1 } }
        let closures: [@Sendable (Int) -> Void] = (0..<10_000).map { _ in { _ in sink.count &+= 1 } }
        let n = 200 / scale
        var next = 0
        let commits = try compare(
            operations: n,
            loupe: { for _ in 0..<n { next += 1; try port.set(next) } },
            baseline: { for _ in 0..<n { next += 1; for closure in closures { closure(next) } } })
        report.add(
            "one commit delivered to 10,000 observers vs a loop calling 10,000 closures", commits, .atMost(5),
            extra: (median(commits.loupe) < 1_000_000, "under 1 ms"))
        blackHole(tokens)
    }
}
