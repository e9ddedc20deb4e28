import Foundation
import Loupe
import Configuration
import MallocInterposerSwift

/// Reads: a lens held and derived inline against the floor and swift-configuration, from two threads,
/// the allocations of a read, and reads over `UserDefaults` (with its update).
func measureReads(_ bench: Bench, _ report: Report) throws {
    let scale = bench.scale
    do {
        let root = RootLens(Deep())
        let port = root.inner.leaf.port
        let bare = RWLocked(Deep())
        let keyPath = \Deep.inner.leaf.port
        let n = 2_000_000 / scale
        // The floor: a bare read that Swift Observation sees, as every lens read must be.
        let observation = ObservationAlone()
        report.add(
            "read a derived lens (depth 3) vs a bare read + ObservationRegistrar.access",
            compare(
                operations: n,
                loupe: { for _ in 0..<n { blackHole(port.value) } },
                baseline: { for _ in 0..<n { observation.access(); blackHole(bare.read { $0[keyPath: keyPath] }) } }),
            .atMost(1.5))

        // Runs of ~50 ms per thread: long enough that starting threads does not count, short enough that
        // neighbouring runs meet the same conditions.
        let perThread = 2_000_000 / scale
        let readers: Comparison
        (readers, report.machine) = compareThreads(operations: perThread) { blackHole(port.value) }
        // The target follows what the machine gives a second thread, measured in runs alternating with these.
        report.add(
            "read from 2 threads at once (throughput; target 0.8× the machine's own 2-thread scaling, \(format(report.machine.ratio))×)",
            readers,
            .atLeast(0.8 * report.machine.ratio), .rates, baselineNote: " (1 thread)")
    }

    do {
        let reader = ConfigReader(provider: InMemoryProvider(values: ["server.port": 8080]))
        let root = RootLens(Deep())
        let port = root.inner.leaf.port
        let n = 500_000 / scale
        report.add(
            "peer: swift-configuration ConfigReader (in-memory) vs lens",
            compare(
                operations: n,
                loupe: { for _ in 0..<n { blackHole(port.value) } },
                baseline: { for _ in 0..<n { blackHole(reader.int(forKey: "server.port", default: 0)) } }), .atLeast(10)
        )

        // Written out the way a handler reads a setting: the lens derived and read in one expression.
        let m = 200_000 / scale
        report.add(
            "a lens derived and read in one expression (root.inner.leaf.port.value) vs ConfigReader's lookup",
            compare(
                operations: m,
                loupe: { for _ in 0..<m { blackHole(root.inner.leaf.port.value) } },
                baseline: { for _ in 0..<m { blackHole(reader.int(forKey: "server.port", default: 0)) } }), .atMost(1.0)
        )
    }

    // Heap allocations, counted by the malloc interposer around a run of each (after one run before it).

    do {
        let reader = ConfigReader(provider: InMemoryProvider(values: ["server.port": 8080]))
        let root = RootLens(Deep())
        let port = root.inner.leaf.port
        let n = 10_000
        func allocations(_ body: () -> Void) -> Double {
            body()
            MallocInterposerSwift.reset()
            MallocInterposerSwift.hook()
            body()
            MallocInterposerSwift.unhook()
            return Double(MallocInterposerSwift.getStatistics().mallocCount) / Double(n)
        }
        let held = allocations { for _ in 0..<n { blackHole(port.value) } }
        let inline = allocations { for _ in 0..<n { blackHole(root.inner.leaf.port.value) } }
        let peer = allocations { for _ in 0..<n { blackHole(reader.int(forKey: "server.port", default: 0)) } }
        report.allocationRows = [
            ("a lens read (port.value, the lens held)", held),
            ("a lens derived and read in one expression (root.inner.leaf.port.value)", inline),
        ]
        printTable(
            "Heap allocations per read (target: none)", ["what", "allocations", "target", "met"],
            report.allocationRows.map { [$0.0, format($0.1), "0", $0.1 == 0 ? "ok" : "MISS"] }
                + [["peer: ConfigReader.int(forKey:) (in-memory)", format(peer), "", ""]])
    }

    do {
        let suite = "org.loupe.bench." + UUID().uuidString
        let store = try DefaultsStore(suite: suite, key: "settings")
        let root = try RootLens(default: Deep(), store: store)
        try root.inner.leaf.port.set(9090)
        let defaults = UserDefaults(suiteName: suite)!
        let port = root.inner.leaf.port
        let n = 200_000 / scale
        let reads = compare(
            operations: n,
            loupe: { for _ in 0..<n { blackHole(port.value) } },
            baseline: {
                for _ in 0..<n {
                    let settings = defaults.dictionary(forKey: "settings")
                    let inner = settings?["inner"] as? [String: Any]
                    blackHole((inner?["leaf"] as? [String: Any])?["port"] as? Int)
                }
            })
        report.add("peer: UserDefaults read vs lens over DefaultsStore", reads, .atLeast(50))

        // MARK: DefaultsStore update
        let m = 300 / scale
        var value = 0
        let updates = try compare(
            operations: m,
            loupe: { for _ in 0..<m { try port.update { $0 += 1 } } },
            baseline: {
                for _ in 0..<m {
                    value += 1
                    var tree = try JSONValue(encoding: Deep())
                    try tree.set(.integer(value), at: "inner.leaf.port")
                    defaults.set(
                        try PropertyListSerialization.propertyList(
                            from: PropertyListEncoder().encode(tree.decode(Deep.self)), format: nil), forKey: "by-hand")
                    defaults.synchronize()
                }
            })
        report.add("DefaultsStore update vs UserDefaults.set + synchronize()", updates, .atMost(1.3))
        if let file = store.suiteFile { try? FileManager.default.removeItem(at: file) }
    }
}
