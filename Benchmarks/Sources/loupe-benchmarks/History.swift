import Foundation
import Loupe

/// The history a file store keeps: a durable update with its journal against the same update without
/// one, and a rollback of one change against a durable update.
func measureHistory(_ bench: Bench, _ report: Report) throws {
    let scratch = bench.scratch
    let n = 200 / bench.scale
    let journaled = try RootLens(default: Small(), store: FileStore(path: scratch + "/journaled.json"), watch: false)
    let plain = try RootLens(default: Small(), store: FileStore(path: scratch + "/plain.json", history: .off), watch: false)
    let journaledCounter = journaled.counter, plainCounter = plain.counter
    report.add("durable update with the history journal vs without it (FileStore JSON, small graph)", try compare(operations: n,
        loupe: { for _ in 0..<n { try journaledCounter.update { $0 += 1 } } },
        baseline: { for _ in 0..<n { try plainCounter.update { $0 += 1 } } }), .atMost(1.1))

    // Each rollback undoes the change before it (itself a change), so every one writes.
    let rolled = try RootLens(default: Small(), store: FileStore(path: scratch + "/rolled.json"), watch: false)
    try rolled.counter.set(1)
    try rolled.counter.set(2)
    report.add("rollback of one change vs a durable update (FileStore JSON, small graph, with the journal both)", try compare(operations: n,
        loupe: {
            for _ in 0..<n {
                let last = try rolled.history().changes.last!.revision
                try rolled.rollback(to: last - 1)
            }
        },
        baseline: { for _ in 0..<n { try journaledCounter.update { $0 += 1 } } }), .atMost(1.2))
}
