// Loupe's benchmarks: each case measures Loupe and, in the same run, the bare baseline or peer, and
// prints one table (case, Loupe, baseline, ratio, target, ok/MISS), then how cost grows with the work.
// Ratios, not absolute times, are the figures that count. Run with Scripts/bench (release mode).
//
// Each area's rows are in a file of their own (Reads, InMemoryUpdates, DurableUpdates, Loading, Services,
// HandWrittenFiles, Notifications, Growth); Report.swift holds the table, Harness.swift the timing, Models.swift the graphs.
import Foundation
import Logging
import Loupe

// Stores log outside changes at info level; the benchmarks measure Loupe, not writing log lines.
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .warning
    return handler
}

let quick = CommandLine.arguments.contains("--quick")
let bench = Bench(
    scale: quick ? 10 : 1, quick: quick, scratch: NSTemporaryDirectory() + "loupe-bench-" + UUID().uuidString)
try FileManager.default.createDirectory(atPath: bench.scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: bench.scratch) }

/// Ends a run that measured one profile or one area: `exit` runs no `defer`, so the scratch directory goes
/// first.
func finish() -> Never {
    try? FileManager.default.removeItem(atPath: bench.scratch)
    exit(0)
}

// `--profile NAME` loops one operation for a profiler (perf record, callgrind); `runProfile` in Profiles.swift
// names them (read, inline-read, update, load, toml-update, yaml-update, memory-entry-update, coalesced, …).
if let index = CommandLine.arguments.firstIndex(of: "--profile"), CommandLine.arguments.count > index + 1 {
    try runProfile(CommandLine.arguments[index + 1], bench)
    finish()
}

let report = Report()
// `--area NAME` measures one area's rows only (reads, in-memory, durable, loading, hand-written, services,
// notifications, history, fleet, sops, page); the growth table and the machine's figures need every row, and come only without it.
let areas: [(String, (Bench, Report) throws -> Void)] = [
    ("reads", measureReads), ("in-memory", measureInMemoryUpdates), ("durable", measureDurableUpdates),
    ("loading", measureLoadsAndLayers), ("hand-written", measureHandWrittenFiles), ("services", measureServices),
    ("notifications", measureNotifications), ("history", measureHistory), ("fleet", measureFleetFanOut),
    ("sops", measureSOPSFiles),
    ("page", measureSettingsPage),
]
let area = CommandLine.arguments.firstIndex(of: "--area").flatMap { CommandLine.arguments.dropFirst($0 + 1).first }
for (name, measure) in areas where area == nil || area == name { try measure(bench, report) }
if area != nil {
    printTable(
        "Loupe against the bare baseline or peer (\(area!) only)",
        ["case", "Loupe", "baseline", "ratio", "target", ""],
        report.rows.map {
            [$0.name, $0.loupe, $0.baseline, format($0.ratio) + "×", $0.targetText, $0.met ? "ok" : "MISS"]
        })
    finish()
}

// MARK: The table

let table = report.rows.map {
    [$0.name, $0.loupe, $0.baseline, format($0.ratio) + "×", $0.targetText, $0.met ? "ok" : "MISS"]
}
printTable(
    "Loupe against the bare baseline or peer, measured in the same run (medians of alternating runs; ratio: the median of neighbouring runs' ratios)",
    ["case", "Loupe", "baseline", "ratio", "target", ""], table)

let floors = observationFloors(scale: bench.scale)
print(
    """

    The machine's own limit for the 2-thread row: 2 threads of independent work (no shared memory) did \(format(report.machine.ratio))× \
    one thread's, measured in runs alternating with the row's.
    Swift Observation alone, in its cheapest form found: ObservationRegistrar.access cost \(format(floors.access.ratio))× the \
    read row's bare read, and withMutation \(format(floors.mutation.ratio))× the in-memory update row's by-hand update. Every \
    read of a lens calls the first (so that withObservationTracking sees it), every commit the second.
    The peer row's set written by hand (a copy of the root changed and compared under a pthread_rwlock, then Observation \
    told and the one observer called): \(format(report.observedSetByHand.ratio))× MutableInMemoryProvider's set, measured alongside.
    """)

try measureGrowth(bench, report)

let met = report.rows.filter(\.met).count + report.allocationRows.filter { $0.1 == 0 }.count
print("\ntargets: \(met) of \(report.rows.count + report.allocationRows.count) met")
