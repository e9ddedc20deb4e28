import Foundation
import Loupe
import LoupeEtcd

/// How cost grows with the graph, outside edits' latency, reads during updates, and memory: printed
/// after the table, without targets.
func measureGrowth(_ bench: Bench, _ report: Report) throws {
    let scale = bench.scale
    let quick = bench.quick
    let scratch = bench.scratch
    do {
        var growth: [[String]] = []
        for count in [10, 1_000, 100_000] {
            let path = scratch + "/sized-\(count).json"
            // The entries differ from the (empty) default, so the file holds them all.
            let root = try RootLens(default: Sized(count: 0), store: FileStore(path: path), watch: false)
            try root.entries.set(Sized(count: count).entries)
            let counter = root.counter
            let updates = count >= 100_000 ? 5 : 50 / (quick ? 5 : 1)
            let update = median(
                (0..<3).map { _ in try! timeOnce(updates) { for _ in 0..<updates { try counter.update { $0 += 1 } } } })
            let load = median(
                (0..<3).map { _ in
                    try! timeOnce(3) {
                        for _ in 0..<3 {
                            blackHole(
                                try RootLens(default: Sized(count: 0), store: FileStore(path: path), watch: false))
                        }
                    }
                })
            let memoryCounter = RootLens(Sized(count: count)).counter
            let inMemoryOps = 20_000 / scale
            let inMemory = median(
                (0..<5).map { _ in
                    try! timeOnce(inMemoryOps) { for _ in 0..<inMemoryOps { try memoryCounter.update { $0 += 1 } } }
                })
            growth.append(["\(count)", duration(inMemory), duration(update), duration(load)])
        }
        printTable(
            "Update and load cost by graph size (entries in a dictionary)",
            ["entries", "in-memory update", "durable update (FileStore JSON)", "load (FileStore JSON)"], growth)
    }

    do {
        // How long an edit made outside the process (written and renamed over the file, as editors and other
        // processes do) takes to reach an observer through the FileStore's watch.
        let path = scratch + "/watched.json"
        let root = try RootLens(default: Small(), store: FileStore(path: path))
        try root.counter.set(1)
        let arrived = DispatchSemaphore(value: 0)
        let token = root.counter.observe { _ in arrived.signal() }
        let latencies = try renameLatencies(path, arrived: arrived, edits: 2...(quick ? 6 : 31)) { edit in
            var next = Small()
            next.counter = edit
            return try prettyEncoder().encode(next)
        }
        token.cancel()
        let sorted = latencies.sorted()
        printTable(
            "An outside edit (rename over the file) reaching an observer, FileStore watch (\(latencies.count) edits)",
            ["median", "90th percentile", "slowest", "target"],
            [
                [
                    duration(median(latencies)), duration(sorted[Int(Double(sorted.count - 1) * 0.9)]),
                    duration(sorted.last!), "under 100 ms",
                ]
            ])
    }

    if let etcdEndpoints = bench.etcdEndpoints {
        // How long a commit made elsewhere (a raw put on another connection, as another host would make it)
        // takes to reach an observer through the EtcdStore's watch.
        struct Flags: Codable, Sendable, Equatable { var generation = 0 }
        let key = "/loupe-bench/\(UUID().uuidString)"
        let root = try RootLens(default: Flags(), store: EtcdStore(endpoints: etcdEndpoints, key: key))
        let raw = try RawEtcd(endpoint: etcdEndpoints[0], key: key)
        let arrived = DispatchSemaphore(value: 0)
        let token = root.generation.observe { _ in arrived.signal() }
        var latencies: [Double] = []
        for generation in 1...(quick ? 5 : 30) {
            let start = ContinuousClock.now
            try raw.put(JSONEncoder().encode(Flags(generation: generation)))
            guard arrived.wait(timeout: .now() + 2) == .success else { latencies.append(.infinity); continue }
            let (seconds, attoseconds) = (ContinuousClock.now - start).components
            latencies.append(Double(seconds) * 1e9 + Double(attoseconds) / 1e9)
            usleep(20_000)
        }
        token.cancel()
        let sorted = latencies.sorted()
        printTable(
            "A commit from another etcd client reaching an observer, EtcdStore watch (\(latencies.count) commits)",
            ["median", "90th percentile", "slowest", "target"],
            [
                [
                    duration(median(latencies)), duration(sorted[Int(Double(sorted.count - 1) * 0.9)]),
                    duration(sorted.last!), "under 100 ms",
                ]
            ])
    }

    printTable(
        "Reads per second during a steady stream of updates, as fast as one writer thread can make them (2 cores)",
        ["reader threads", "reads/s in all", "per thread", "updates/s meanwhile"],
        readsDuringUpdates(operations: 500_000 / scale))

    do {
        let root = RootLens(Deep())
        let count = 100_000
        // Resident memory before and after making 100,000 of each; the allocator's own slack is included.
        let residentBefore = residentBytes()
        let lenses = (0..<count).map { _ in root.inner.leaf.port }
        let resident = residentBytes() - residentBefore
        let perLens = Double(resident) / Double(count)
        let beforeObservers = residentBytes()
        let port = lenses[0]
        let tokens = (0..<count).map { _ in port.observe { _ in } }
        let perObserver = Double(residentBytes() - beforeObservers) / Double(count)
        printTable(
            "Memory", ["what", "measured"],
            [
                ["per derived lens (root.inner.leaf.port)", "\(Int(perLens.rounded())) bytes"],
                ["per observer (observe on one lens)", "\(Int(perObserver.rounded())) bytes"],
                ["resident memory added by 100,000 live lenses", format(Double(resident) / 1_048_576) + " MiB"],
            ])
        blackHole(lenses)
        blackHole(tokens)
    }
}
