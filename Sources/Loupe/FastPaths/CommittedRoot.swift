// Fast paths of the read (Benchmarks/README.md, "Fast paths"). Measured on the 2-core machine with other
// builds running (load 3–11), `--area reads`, each turned off in turn in one build:
// - reads in place, row "read a derived lens (depth 3) vs a bare read + ObservationRegistrar.access",
//   target ≤ 1.50×: 0.85–0.91× with it, 2.12–2.13× without it (the part read through the key path under
//   the gate).
// - the striped read gate, row "read from 2 threads at once", target 0.8× of what two threads of
//   independent work gain at that moment: 2.00× one thread's reads with it (the machine's own gain 1.81×,
//   so a target of 1.45×), and 0.57× with a `pthread_rwlock_t` instead, whose one reader count the two
//   threads' cache lines fight over (the machine's gain 1.69×, target 1.35×: missed). Runs in which the
//   loaded machine gave the second thread no core (its gain 0.26–0.98×) met the target either way.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The committed root of a graph, its version, and what makes reading it fast.
///
/// - **Reads in place.** The root lives at a stable address of its own, so a lens whose path is stored
///   properties only copies its part out where it lies, at the offset `MemoryLayout.offset(of:)` gives,
///   instead of reading through the step's key path. This is the core's one unsafe place: the pointer is
///   allocated and initialized once, assigned only while no reader is inside, and destroyed with the box.
///   The tests run under ASan and TSan.
/// - **Readers that do not share a cache line** (``ReadGate``): many threads read at once, and are held back
///   only while a new root is assigned.
///
/// Only the graph's update lock holder publishes, and reads ``rootForUpdate`` without the read gate: nobody
/// else assigns it.
package final class CommittedRoot<Root: Sendable>: @unchecked Sendable {  // see above: the gate guards `storage`
    private let storage: UnsafeMutablePointer<Root>
    private var version: UInt64 = 0
    private let gate = ReadGate()

    package init(_ root: Root) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: root)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Runs `body` on the root where it lies, without copying it, with no root being swapped in.
    @inline(__always)
    package func read<R>(_ body: (Root) throws -> R) rethrows -> R {
        try gate.withReadLock { try body(storage.pointee) }
    }

    /// The stored property at byte `offset` in the root (from `MemoryLayout<Root>.offset(of:)`), copied
    /// out where it lies.
    @inline(__always)
    package func part<Part>(at offset: Int, as _: Part.Type) -> Part {
        gate.withReadLock {
            UnsafeRawPointer(storage).advanced(by: offset).assumingMemoryBound(to: Part.self).pointee
        }
    }

    /// The root and its version, read together.
    package func snapshot() -> (root: Root, version: UInt64) {
        gate.withReadLock { (storage.pointee, version) }
    }

    /// The root, for the one thread that may publish (the update lock's holder), which needs no gate.
    package var rootForUpdate: Root { storage.pointee }

    /// Makes `root` the committed root, waiting for the readers inside to leave, and returns its version.
    /// Call it from the one thread that may publish.
    @discardableResult
    package func publish(_ root: Root) -> UInt64 {
        gate.publishing {
            storage.pointee = root
            version &+= 1
            return version
        }
    }
}

/// The read side of a committed root: it lets many readers in at once, and holds them back only while a
/// new root is assigned.
///
/// Why not `pthread_rwlock_t`: it counts readers in one word, so two threads reading at once write the
/// same cache line and slow each other down. Here each thread counts its reads in a stripe of its own, an
/// atomic counter in an object of its own, padded to two cache lines. The publisher raises a flag and waits
/// until every stripe is empty; a reader that sees the flag steps back until the flag is down. The classic
/// handshake, all sequentially consistent: the reader increments its stripe, then checks the flag; the
/// publisher sets the flag, then checks the stripes; at least one sees the other. Only atomics and a
/// thread-specific number are used: no unsafe memory.
final class ReadGate: Sendable {
    private static let stripeCount = 16

    /// One reader counter, alone on its cache lines. A reader writes its stripe's counter and (retaining
    /// it) its header; the padding keeps both more than 128 bytes from anything another thread reads, past
    /// the pair of lines a processor's adjacent-line prefetcher fetches together.
    private final class Stripe: Sendable {
        private let leading = InlineArray<16, Int>(repeating: 0)
        let readers = Atomic<Int>(0)
        private let trailing = InlineArray<16, Int>(repeating: 0)
    }

    /// Keeps what every reader reads (the stripes, the publishing flag) off the lines of whatever object was
    /// allocated just before this one.
    private let leading = InlineArray<16, Int>(repeating: 0)

    private let stripes: [Stripe] = (0..<ReadGate.stripeCount).map { _ in Stripe() }
    private let isPublishing = Atomic<Bool>(false)
    /// The process-wide key of each thread's stripe number, copied here: reaching the global on every read
    /// cost a check that it was initialized.
    private let stripeKey = readStripeKey.key

    /// Runs `body` while no root is being swapped in.
    @inline(__always)
    func withReadLock<R>(_ body: () throws -> R) rethrows -> R {
        // The stripe is reached by index on each use, a borrow: held in a local, it was retained and
        // released on every read.
        let index = currentStripe(stripeKey) & (Self.stripeCount - 1)
        while true {
            stripes[index].readers.wrappingAdd(1, ordering: .sequentiallyConsistent)
            if !isPublishing.load(ordering: .sequentiallyConsistent) { break }
            // A root is being swapped in: step back, and wait until it is.
            stripes[index].readers.wrappingSubtract(1, ordering: .releasing)
            waitWhilePublishing()
        }
        defer { stripes[index].readers.wrappingSubtract(1, ordering: .releasing) }
        return try body()
    }

    private func waitWhilePublishing() {
        var spins = 0
        while isPublishing.load(ordering: .acquiring) {
            spins += 1
            if spins > 64 { sched_yield() }
        }
    }

    /// Runs `body` with no reader inside: for swapping in a committed root. One publisher at a time (the
    /// graph's update lock sees to it).
    func publishing<R>(_ body: () throws -> R) rethrows -> R {
        isPublishing.store(true, ordering: .sequentiallyConsistent)
        // Only stripes handed to a thread can be in use. A thread takes its stripe before its first read
        // (both sequentially consistent), so if that read missed the flag, this load sees the stripe.
        let used = min(nextStripe.load(ordering: .sequentiallyConsistent), Self.stripeCount)
        for stripe in stripes.prefix(used) {
            var spins = 0
            while stripe.readers.load(ordering: .sequentiallyConsistent) != 0 {
                spins += 1
                if spins > 64 { sched_yield() }
            }
        }
        defer { isPublishing.store(false, ordering: .releasing) }
        return try body()
    }
}

/// The calling thread's read stripe, assigned round-robin on its first read and kept in a thread-specific
/// slot as a number (stored plus one, since an empty slot reads as zero). No memory is reached through it.
@inline(__always)
private func currentStripe(_ key: pthread_key_t) -> Int {
    let stored = Int(bitPattern: pthread_getspecific(key))
    if stored != 0 { return stored - 1 }
    let assigned = nextStripe.add(1, ordering: .sequentiallyConsistent).oldValue
    pthread_setspecific(key, UnsafeRawPointer(bitPattern: assigned + 1))
    return assigned
}

/// A process-wide thread-specific key, made once.
private struct ThreadKey: Sendable {
    let key: pthread_key_t
    init() {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        self.key = key
    }
}

private let readStripeKey = ThreadKey()
private let nextStripe = Atomic<Int>(0)
