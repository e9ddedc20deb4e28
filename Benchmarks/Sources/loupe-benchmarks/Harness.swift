import Foundation
import Observation
#if canImport(Glibc)
import Glibc
#endif

/// Keeps a value alive and opaque to the optimiser, so measured work is not optimised away.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// Nanoseconds per operation of `body`, which performs `operations` operations.
@inline(never)
func timeOnce(_ operations: Int, _ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    let (seconds, attoseconds) = elapsed.components
    return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(operations)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Loupe's and the baseline's figures from runs that alternate between the two.
struct Comparison {
    /// Each run's figure (time per operation, or a rate), in the order run.
    var loupe: [Double] = []
    var baseline: [Double] = []

    /// The median of each pair of neighbouring runs' `loupe / baseline`. This machine's speed drifts
    /// over seconds (its cores are a virtual machine's, shared with other guests: a thread alone reads a
    /// lens at 22 M/s in one second and 38 M/s a few seconds later); neighbours meet the same conditions,
    /// so the ratio of each pair cancels the drift that a ratio of two medians keeps.
    var ratio: Double { median(zip(loupe, baseline).map { $0 / $1 }) }
}

/// The cost per operation of `loupe` and `baseline` over `repetitions` interleaved runs of `operations`
/// operations each.
func compare(
    repetitions: Int = 9, operations: Int,
    loupe: () throws -> Void, baseline: () throws -> Void
) rethrows -> Comparison {
    try loupe()  // warm up
    try baseline()
    var comparison = Comparison()
    for _ in 0..<repetitions {
        comparison.loupe.append(try timeOnce(operations, loupe))
        comparison.baseline.append(try timeOnce(operations, baseline))
    }
    return comparison
}

/// One row of the results table.
struct Row {
    enum Target {
        /// Loupe may cost at most this many times the baseline.
        case atMost(Double)
        /// Loupe must be at least this many times faster (or do this many times more) than the baseline.
        case atLeast(Double)
    }

    let name: String
    let loupe: String
    let baseline: String
    /// Loupe's cost over the baseline's, or for `atLeast` targets the baseline's over Loupe's.
    let ratio: Double
    let target: Target
    var extraCondition: (holds: Bool, text: String)? = nil

    var met: Bool {
        let ratioMet: Bool
        switch target {
        case .atMost(let limit): ratioMet = ratio <= limit
        case .atLeast(let limit): ratioMet = ratio >= limit
        }
        return ratioMet && (extraCondition?.holds ?? true)
    }

    var targetText: String {
        let base: String
        switch target {
        case .atMost(let limit): base = "≤ \(format(limit))×"
        case .atLeast(let limit): base = "≥ \(format(limit))×"
        }
        return extraCondition.map { base + ", " + $0.text } ?? base
    }
}

func format(_ value: Double) -> String {
    if value >= 100 { return String(format: "%.0f", value) }
    if value >= 10 { return String(format: "%.1f", value) }
    return String(format: "%.2f", value)
}

/// `12.3 ns`, `4.56 µs`, `1.23 ms` for a cost per operation in nanoseconds.
func duration(_ nanoseconds: Double) -> String {
    if nanoseconds >= 1e6 { return format(nanoseconds / 1e6) + " ms" }
    if nanoseconds >= 1e3 { return format(nanoseconds / 1e3) + " µs" }
    return format(nanoseconds) + " ns"
}

/// `1.23 M/s` for operations per second.
func rate(_ perSecond: Double) -> String {
    if perSecond >= 1e6 { return format(perSecond / 1e6) + " M/s" }
    if perSecond >= 1e3 { return format(perSecond / 1e3) + " k/s" }
    return format(perSecond) + " /s"
}

func printTable(_ title: String, _ header: [String], _ rows: [[String]]) {
    print("\n" + title)
    let widths = header.indices.map { column in ([header[column]] + rows.map { $0[column] }).map(\.count).max()! }
    func line(_ cells: [String]) -> String {
        "| "
            + cells.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(
                separator: " | ") + " |"
    }
    print(line(header))
    print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
    rows.forEach { print(line($0)) }
}

/// The process's resident memory, in bytes.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Runs `body` on `threads` threads at once, each `operations` times; returns the total operations per second.
func throughput(threads: Int, operations: Int, _ body: @escaping @Sendable () -> Void) -> Double {
    let start = ContinuousClock.now
    DispatchQueue.concurrentPerform(iterations: threads) { _ in
        for _ in 0..<operations { body() }
    }
    let (seconds, attoseconds) = (ContinuousClock.now - start).components
    return Double(threads * operations) / (Double(seconds) + Double(attoseconds) / 1e18)
}

/// Throughput of `body` on 2 threads at once (as `loupe`) and on 1 (as `baseline`), in alternating runs
/// of `operations` operations per thread; and, each run followed by its like, how much more work 2 threads
/// do than 1 when they share nothing (a loop over a register): the machine's own limit for the row in the
/// same moments, which a virtual machine's cores (hyperthreads of one core, or cores lent to other guests)
/// can put well below 2.
func compareThreads(
    repetitions: Int = 15, operations: Int, _ body: @escaping @Sendable () -> Void
) -> (comparison: Comparison, machine: Comparison) {
    let independentWork: @Sendable () -> Void = {
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<100 { x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
        blackHole(x)
    }
    _ = throughput(threads: 2, operations: operations / 10, body)  // warm up
    var comparison = Comparison()
    var machine = Comparison()
    for _ in 0..<repetitions {
        comparison.baseline.append(throughput(threads: 1, operations: operations, body))
        comparison.loupe.append(throughput(threads: 2, operations: operations, body))
        machine.baseline.append(throughput(threads: 1, operations: operations / 4, independentWork))
        machine.loupe.append(throughput(threads: 2, operations: operations / 4, independentWork))
    }
    return (comparison, machine)
}

/// A readers–writer lock held by a class, with a struct inside: the bare baseline for reads.
final class RWLocked<Value>: @unchecked Sendable {
    private var lock = pthread_rwlock_t()
    var value: Value

    init(_ value: Value) {
        self.value = value
        pthread_rwlock_init(&lock, nil)
    }

    @inline(__always)
    func read<T>(_ body: (Value) -> T) -> T {
        pthread_rwlock_rdlock(&lock)
        defer { pthread_rwlock_unlock(&lock) }
        return body(value)
    }

    @inline(__always)
    func write(_ body: (inout Value) -> Void) {
        pthread_rwlock_wrlock(&lock)
        defer { pthread_rwlock_unlock(&lock) }
        body(&value)
    }
}

/// What Swift Observation alone costs against the bare baselines of the read and update rows: a read that
/// `withObservationTracking` sees calls `ObservationRegistrar.access`, and a commit it hears calls
/// `withMutation`.
func observationFloors(scale: Int) -> (access: Comparison, mutation: Comparison) {
    let observation = ObservationAlone()
    let bare = RWLocked(Deep())
    let keyPath = \Deep.inner.leaf.port
    let n = 2_000_000 / scale
    let access = compare(
        operations: n,
        loupe: { for _ in 0..<n { observation.access() } },
        baseline: { for _ in 0..<n { blackHole(bare.read { $0[keyPath: keyPath] }) } })
    let updates = InMemoryUpdates()
    let m = 200_000 / scale
    let mutation = compare(
        operations: m,
        loupe: { for _ in 0..<m { observation.mutated() } },
        baseline: { updates.byHand(m) })
    blackHole(updates.held)
    return (access, mutation)
}

/// Swift Observation alone, for measuring its cost: in the cheapest form found (an empty subject, the key
/// path made once, not inlined into the loop), as Loupe's graphs use it.
struct ObservationAlone: Sendable {
    struct Subject: Observable {
        var commits: Void { () }
    }

    private let registrar = ObservationRegistrar()
    private let keyPath: KeyPath<Subject, Void> & Sendable = \.commits

    @inline(never)
    func access() { registrar.access(Subject(), keyPath: keyPath) }

    @inline(never)
    func mutated() { registrar.withMutation(of: Subject(), keyPath: keyPath) {} }
}

/// A root's counter set by hand, specialized, as a copy-on-write root with one observer does it: a copy of
/// the root changed and compared under the write lock, then, if it changed, Swift Observation told (as
/// every commit of a lens's graph must) and the observer called with the new value, after the lock. The
/// least such a set costs, for comparing with the peer row.
final class ObservedByHand: @unchecked Sendable {  // used from one thread
    private let state = RWLocked(Small())
    private let observation = ObservationAlone()
    private var last = 0
    private let observer: (Int) -> Void

    init(observer: @escaping (Int) -> Void) {
        self.observer = observer
    }

    func set(_ counter: Int) {
        var changed = false
        state.write { value in
            var copy = value
            copy.counter = counter
            if copy != value {
                value = copy
                changed = true
            }
        }
        guard changed else { return }
        observation.mutated()
        let new = state.read { $0.counter }
        if new != last {
            last = new
            observer(new)
        }
    }
}
