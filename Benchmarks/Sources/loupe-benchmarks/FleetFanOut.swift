import Foundation
import Logging
import Loupe
import LoupeEtcd
import Synchronization

/// Many roots watching one etcd key, in this process, each reporting its status as a fleet's hosts do:
/// from a put to every root's observer (p50 and p99 over every root and put), none missed, and how soon
/// the status shows every root on the new revision.
struct FanOut {
    var p50: Double
    var p99: Double
    var missed: Int
    /// From the put until `appliedStatus()` showed every root on it, the slowest of the puts.
    var statusLatency: Double
    var threads: Int
    var residentBytes: Int
}

func measureFanOut(roots count: Int, puts: Int, endpoints: [String]) throws -> FanOut {
    struct Fleet: Codable, Sendable, Equatable { var generation = 0 }
    let key = "/loupe-bench/fan-out-\(UUID().uuidString)"
    // Quiet: 1,000 roots each saying "picked up an outside change" is a log, not a measurement.
    var logger = Logger(label: "loupe.bench.fan-out")
    logger.logLevel = .warning
    let writer = try RootLens(
        default: Fleet(), store: EtcdStore(endpoints: endpoints, key: key, logger: logger), watch: false)
    let writerStore = try EtcdStore(endpoints: endpoints, key: key, logger: logger)
    let seen = Mutex<[Int: [ContinuousClock.Instant]]>([:])
    let clock = ContinuousClock()
    var tokens: [ObservationToken] = []
    let roots = try (0..<count).map { index in
        let root = try RootLens(
            default: Fleet(),
            store: EtcdStore(
                endpoints: endpoints, key: key,
                statusReporting: EtcdStatusReporting(name: "root-\(index)", lease: .seconds(30)), logger: logger),
            logger: logger)
        tokens.append(
            root.generation.observe { generation in
                let now = clock.now
                seen.withLock { $0[generation, default: []].append(now) }
            })
        return root
    }
    var latencies: [Double] = []
    var missed = 0
    var statusLatency = 0.0
    for generation in 1...puts {
        let start = clock.now
        try writer.generation.set(generation)
        // Every root's observer, or 5 seconds.
        while seen.withLock({ $0[generation]?.count ?? 0 }) < count, clock.now - start < .seconds(5) { usleep(1_000) }
        let revision = try writerStore.load().token.number.map(Int.init) ?? 0
        while clock.now - start < .seconds(5) {
            if let status = try writerStore.appliedStatus(), status.readers.count >= count,
                status.readers(behind: revision).isEmpty
            {
                break
            }
            usleep(5_000)
        }
        statusLatency = max(statusLatency, nanoseconds(clock.now - start))
        let arrivals = seen.withLock { $0[generation] ?? [] }
        missed += count - arrivals.count
        latencies += arrivals.map { nanoseconds($0 - start) }
    }
    latencies.sort()
    func percentile(_ p: Double) -> Double {
        latencies.isEmpty ? .infinity : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
    }
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    let resident =
        (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8))?
        .split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }.map { $0 * 1024 } ?? 0
    tokens.forEach { $0.cancel() }
    withExtendedLifetime(roots) {}
    return FanOut(
        p50: percentile(0.5), p99: percentile(0.99), missed: missed, statusLatency: statusLatency, threads: threads,
        residentBytes: resident)
}

private func nanoseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
}

/// The fan-out rows: 1,000 roots against the 50 ms allowed for p99 and the 1 s allowed for the status; and
/// 10,000 roots, none missed.
func measureFleetFanOut(_ bench: Bench, _ report: Report) throws {
    guard let endpoints = bench.etcdEndpoints else {
        FileHandle.standardError.write(
            Data("skipped: the fan-out rows (run through Scripts/bench, which starts etcd)\n".utf8))
        return
    }
    let fanOut = try measureFanOut(roots: 1_000, puts: 10, endpoints: endpoints)
    report.rows.append(
        Row(
            name:
                "1,000 roots watching one etcd key: from a put to every root's observer, p99 (ratio: of the 50 ms allowed)",
            loupe: duration(fanOut.p99),
            baseline:
                "p50 \(duration(fanOut.p50)), \(fanOut.missed) missed, \(fanOut.threads) threads, process \(fanOut.residentBytes >> 20) MB",
            ratio: fanOut.missed > 0 ? .infinity : fanOut.p99 / 50_000_000, target: .atMost(1)))
    report.rows.append(
        Row(
            name:
                "1,000 roots: from a put until their status shows all on the new revision, slowest of 10 (ratio: of the 1 s allowed)",
            loupe: duration(fanOut.statusLatency), baseline: "1 s", ratio: fanOut.statusLatency / 1_000_000_000,
            target: .atMost(1)))
    let large = try measureFanOut(roots: 10_000, puts: 3, endpoints: endpoints)
    report.rows.append(
        Row(
            name: "10,000 roots watching one etcd key: observers that missed a put (of 3; ratio: the missed)",
            loupe: "\(large.missed) missed",
            baseline:
                "p50 \(duration(large.p50)), p99 \(duration(large.p99)), \(large.threads) threads, process \(large.residentBytes >> 20) MB",
            ratio: Double(large.missed), target: .atMost(0)))
}
