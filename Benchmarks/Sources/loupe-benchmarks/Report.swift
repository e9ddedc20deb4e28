import Configuration
import Foundation
import Loupe
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How this run measures: `--quick` divides the operations by `scale`; `scratch` is a directory of its
/// own; the keyring and etcd rows run when `Scripts/bench` started them.
struct Bench {
    let scale: Int
    let quick: Bool
    let scratch: String
    let keyring = ProcessInfo.processInfo.environment["LOUPE_KEYRING"] == "1"
    let etcdEndpoints = ProcessInfo.processInfo.environment["LOUPE_ETCD_ENDPOINTS"].map {
        $0.split(separator: ",").map(String.init)
    }
}

/// What the run measured: the table's rows, the allocation rows, and the figures printed under the table.
final class Report {
    var rows: [Row] = []
    /// Heap allocations per operation of the rows that promise none.
    var allocationRows: [(String, Double)] = []
    /// 2 threads of independent work against 1, measured next to the 2-reader row.
    var machine = Comparison()
    /// A by-hand copy-on-write set with one observer against the provider's, measured next to the peer row.
    var observedSetByHand = Comparison()

    /// Adds a row for `comparison`: its medians, and the median ratio of its neighbouring runs, in the
    /// sense of `target` (for `atMost`, Loupe's cost over the baseline's; for `atLeast`, how many times
    /// better).
    func add(
        _ name: String, _ comparison: Comparison, _ target: Row.Target, _ figures: Figures = .times,
        baselineNote: String = "", extra: (Bool, String)? = nil
    ) {
        let ratio: Double
        switch (target, figures) {
        case (.atMost, .times), (.atLeast, .rates): ratio = comparison.ratio
        // The median of an odd count of reciprocals.
        case (.atLeast, .times), (.atMost, .rates): ratio = 1 / comparison.ratio
        }
        let unit = figures == .times ? duration : rate
        var row = Row(
            name: name, loupe: unit(median(comparison.loupe)),
            baseline: unit(median(comparison.baseline)) + baselineNote,
            ratio: ratio, target: target)
        row.extraCondition = extra.map { (holds: $0.0, text: $0.1) }
        rows.append(row)
        FileHandle.standardError.write(Data("measured: \(name)\n".utf8))
    }
}

/// Runs `body` on the cooperative pool and waits for it on this (main) thread, which is not one of the
/// pool's: for rows that measure async code from this synchronous program.
func waitFor<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) throws -> R {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<Result<R, any Error>?>(nil)
    Task {
        let outcome: Result<R, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

/// What a comparison's figures are: times per operation (lower is better) or rates (higher is better).
enum Figures {
    case times, rates
}

/// For each edit, writes `contents(edit)` beside `path` and renames it over `path`, as editors and tools do,
/// and measures how long until `arrived` is signalled (infinity after 2 s).
func renameLatencies(
    _ path: String, arrived: DispatchSemaphore, edits: ClosedRange<Int>, _ contents: (Int) throws -> Data
) throws -> [Double] {
    var latencies: [Double] = []
    for edit in edits {
        try contents(edit).write(to: URL(fileURLWithPath: path + ".edit"))
        let start = ContinuousClock.now
        rename(path + ".edit", path)
        guard arrived.wait(timeout: .now() + 2) == .success else { latencies.append(.infinity); continue }
        let (seconds, attoseconds) = (ContinuousClock.now - start).components
        latencies.append(Double(seconds) * 1e9 + Double(attoseconds) / 1e9)
        usleep(20_000)
    }
    return latencies
}
/// swift-configuration's `MutableInMemoryProvider` holding `counter`, with one value watcher: an
/// `AsyncStream` its task drains, counting what it receives. Returns once the watcher is registered;
/// cancel the task when done.
///
/// The task is detached: made from `main.swift`'s top-level code, a `Task` would run on the main actor,
/// which this program's main thread never lets run, so no watcher would ever register (the peer row measured an
/// unwatched provider that way until it counted what its watcher received).
func watchedProvider() -> (provider: MutableInMemoryProvider, watcher: Task<Void, any Error>, received: Counter) {
    let provider = MutableInMemoryProvider(initialValues: ["counter": ConfigValue(.int(0), isSecret: false)])
    let received = Counter()
    let watcher = Task.detached {
        try await provider.watchValue(forKey: ["counter"], type: .int) { updates in
            for await _ in updates { received.add() }
        }
    }
    // The watcher's stream yields the current value first.
    var waited = 0
    while received.value == 0, waited < 10_000 {
        usleep(1_000)
        waited += 1
    }
    if received.value == 0 { print("warning: the provider's watcher did not register within 10 s") }
    return (provider, watcher, received)
}

/// A count shared between threads.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func add() { count.add(1, ordering: .relaxed) }
}

/// The peer row's set written by hand, specialized (``ObservedByHand``), against `provider`'s watched set:
/// the least a copy-on-write root with one observer, which tells Swift Observation of its commits, costs.
func compareObservedSetByHand(with provider: MutableInMemoryProvider, operations n: Int) -> Comparison {
    let seen = Counter()
    let byHand = ObservedByHand { _ in seen.add() }
    var next = 0
    return compare(
        operations: n,
        loupe: { for _ in 0..<n { next += 1; byHand.set(next) } },
        baseline: { for _ in 0..<n { next += 1; provider.setCounter(next) } })
}

extension MutableInMemoryProvider {
    /// Sets `counter`, as the peer row does.
    func setCounter(_ value: Int) {
        setValue(ConfigValue(.int(value), isSecret: false), forKey: ["counter"])
    }
}
