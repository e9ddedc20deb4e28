import Foundation
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
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// The median cost per operation of `loupe` and `baseline` over `repetitions` interleaved runs, so that
/// noise on the machine hits both alike.
func compare(
    repetitions: Int = 7, operations: Int,
    loupe: () throws -> Void, baseline: () throws -> Void
) rethrows -> (loupe: Double, baseline: Double) {
    try loupe()  // warm up
    try baseline()
    var loupeTimes: [Double] = []
    var baselineTimes: [Double] = []
    for _ in 0..<repetitions {
        loupeTimes.append(try timeOnce(operations, loupe))
        baselineTimes.append(try timeOnce(operations, baseline))
    }
    return (median(loupeTimes), median(baselineTimes))
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
        "| " + cells.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: " | ") + " |"
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
