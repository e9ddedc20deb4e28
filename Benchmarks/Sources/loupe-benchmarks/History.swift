import Foundation
import Loupe
#if canImport(Glibc)
import Glibc
#endif

/// The history a file store keeps: a durable update with its journal against the same update without
/// one, and a rollback of one change against a durable update.
func measureHistory(_ bench: Bench, _ report: Report) throws {
    let scratch = bench.scratch
    let n = 200 / bench.scale
    let journaled = try RootLens(default: Small(), store: FileStore(path: scratch + "/journaled.json"), watch: false)
    let plain = try RootLens(
        default: Small(), store: FileStore(path: scratch + "/plain.json", history: .off), watch: false)
    let journaledCounter = journaled.counter, plainCounter = plain.counter
    let floor = journalFloor(scratch: scratch, operations: n)
    // The row is what the journal adds over what any journal must: the update with it against the update
    // without it times the machine's floor (a record flushed alongside the same bytes written by hand).
    var journal = try compare(
        operations: n,
        loupe: { for _ in 0..<n { try journaledCounter.update { $0 += 1 } } },
        baseline: { for _ in 0..<n { try plainCounter.update { $0 += 1 } } })
    let withoutFloor = journal.ratio
    journal.baseline = journal.baseline.map { $0 * floor.ratio }
    report.add(
        "durable update with the history journal vs without it times the machine's floor (FileStore JSON, small graph; the floor, the same bytes written by hand with a record flushed alongside: \(format(floor.ratio))×; the journal against no journal: \(format(withoutFloor))×)",
        journal, .atMost(1.1))

    // Each rollback undoes the change before it (itself a change), so every one writes.
    let rolled = try RootLens(default: Small(), store: FileStore(path: scratch + "/rolled.json"), watch: false)
    try rolled.counter.set(1)
    try rolled.counter.set(2)
    report.add(
        "rollback of one change vs a durable update (FileStore JSON, small graph, with the journal both)",
        try compare(
            operations: n,
            loupe: {
                for _ in 0..<n {
                    let last = try rolled.history().changes.last!.revision
                    try rolled.rollback(to: last - 1)
                }
            },
            baseline: { for _ in 0..<n { try journaledCounter.update { $0 += 1 } } }), .atMost(1.2))
}

/// What a record made durable with each update costs this machine at the least: a small settings file
/// written by hand (``writeByHand(_:to:)``) with a 200-byte record appended to a second file and flushed
/// on another thread meanwhile, as the file store's journal is, against the same write alone. No journal
/// that flushes its record before the update returns costs less than this over an update without one.
func journalFloor(scratch: String, operations n: Int) -> Comparison {
    let journal = open(scratch + "/.by-hand.json.history", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
    precondition(journal >= 0)
    defer { close(journal) }
    let record = Data(repeating: UInt8(ascii: "x"), count: 199) + Data("\n".utf8)
    var counter = 0
    func bytes() -> Data {
        counter += 1
        return Data("{\n  \"counter\" : \(counter)\n}\n".utf8)
    }
    return compare(
        operations: n,
        loupe: {
            for _ in 0..<n {
                record.withUnsafeBytes { precondition(write(journal, $0.baseAddress!, $0.count) == $0.count) }
                let flushed = DispatchSemaphore(value: 0)
                DispatchQueue.global(qos: .userInitiated).async {
                    fdatasync(journal)
                    flushed.signal()
                }
                writeByHand(bytes(), to: scratch + "/by-hand.json")
                flushed.wait()
            }
        },
        baseline: { for _ in 0..<n { writeByHand(bytes(), to: scratch + "/by-hand.json") } })
}
