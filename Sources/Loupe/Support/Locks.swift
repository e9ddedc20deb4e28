#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// The lock of one lens graph: it serialises updates, and lets many readers read the committed root at
/// once while an update runs.
///
/// - The *update lock* (``withUpdateLock(orThrow:_:)``) is held while an update closure runs and while
///   the store saves, so updates are one at a time and each sees the result of the last. It runs user code
///   and I/O, so it is a blocking mutex. It knows its owner, so an update started from inside another
///   update's closure on the same thread is reported instead of deadlocking.
/// - *Readers* (``withReadLock(_:)``) never wait for a closure or for I/O: they are held back only while
///   the update lock's holder swaps a committed root in (``publishing(_:)``), a few instructions.
///
/// A `pthread_rwlock_t` keeps its readers in one counter, so every read writes the same cache line and two
/// threads reading at once slow each other down. Here each thread counts its reads in a stripe of its own
/// (a counter on its own cache line, assigned on the thread's first read). The publisher raises a flag and
/// waits until every stripe is empty; a reader that sees the flag steps back until the flag is down. They
/// use the classic handshake: the reader increments its stripe, then checks the flag; the publisher sets
/// the flag, then checks the stripes (all sequentially consistent), so at least one of them always sees
/// the other, and a stream of readers cannot starve the publisher.
final class GraphLock: @unchecked Sendable {
    private static let stripeCount = 16
    private static let stripeSize = 128  // two cache lines, against adjacent-line prefetching
    private let stripes: UnsafeMutableRawPointer
    private let publishing: UnsafeMutablePointer<Atomic<Bool>>
    private let mutex = PlainMutex()
    private let owner = Atomic<UInt>(0)
    /// The process-wide key of each thread's stripe, copied here so reads skip the global's lazy check.
    private let stripeKey = readStripeKey

    init() {
        stripes = .allocate(byteCount: Self.stripeCount * Self.stripeSize, alignment: Self.stripeSize)
        for index in 0..<Self.stripeCount {
            stripes.advanced(by: index * Self.stripeSize).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
        }
        publishing = .allocate(capacity: 1)
        publishing.initialize(to: Atomic(false))
    }

    deinit {
        for index in 0..<Self.stripeCount { stripe(index).deinitialize(count: 1) }
        stripes.deallocate()
        publishing.deinitialize(count: 1)
        publishing.deallocate()
    }

    @inline(__always)
    private func stripe(_ index: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        stripes.advanced(by: index * Self.stripeSize).assumingMemoryBound(to: Atomic<Int>.self)
    }

    /// Runs `body` while no root is being swapped in.
    @inline(__always)
    func withReadLock<R>(_ body: () throws -> R) rethrows -> R {
        let counter = stripe(currentStripe(stripeKey) & (Self.stripeCount - 1))
        while true {
            counter.pointee.wrappingAdd(1, ordering: .sequentiallyConsistent)
            if !publishing.pointee.load(ordering: .sequentiallyConsistent) { break }
            // A root is being swapped in: step back, and wait until it is.
            counter.pointee.wrappingSubtract(1, ordering: .releasing)
            waitWhilePublishing()
        }
        defer { counter.pointee.wrappingSubtract(1, ordering: .releasing) }
        return try body()
    }

    @inline(never)
    private func waitWhilePublishing() {
        var spins = 0
        while publishing.pointee.load(ordering: .acquiring) {
            spins += 1
            if spins > 64 { sched_yield() }
        }
    }

    /// Runs `body` holding the update lock; throws `reentrancyError()` without running it if this thread
    /// already holds it.
    func withUpdateLock<R>(orThrow reentrancyError: () -> any Error, _ body: () throws -> R) throws -> R {
        let me = currentThreadID()
        if owner.load(ordering: .relaxed) == me { throw reentrancyError() }
        mutex.lock()
        owner.store(me, ordering: .relaxed)
        defer {
            owner.store(0, ordering: .relaxed)
            mutex.unlock()
        }
        return try body()
    }

    /// Runs `body` with no reader inside: for swapping in a committed root. Must be called holding the
    /// update lock.
    @inline(__always)
    func publishing<R>(_ body: () throws -> R) rethrows -> R {
        publishing.pointee.store(true, ordering: .sequentiallyConsistent)
        // Only stripes handed to a thread can be in use. A thread takes its stripe before its first read
        // (both sequentially consistent), so if that read missed the flag, this load sees the stripe.
        let used = min(nextStripe.load(ordering: .sequentiallyConsistent), Self.stripeCount)
        for index in 0..<used {
            var spins = 0
            while stripe(index).pointee.load(ordering: .sequentiallyConsistent) != 0 {
                spins += 1
                if spins > 64 { sched_yield() }
            }
        }
        defer { publishing.pointee.store(false, ordering: .releasing) }
        return try body()
    }
}

/// The calling thread's read stripe, assigned round-robin on its first read and kept in a thread-specific
/// slot (stored plus one, since an empty slot reads as zero).
@inline(__always)
private func currentStripe(_ key: pthread_key_t) -> Int {
    let stored = Int(bitPattern: pthread_getspecific(key))
    if stored != 0 { return stored - 1 }
    let assigned = nextStripe.add(1, ordering: .sequentiallyConsistent).oldValue
    pthread_setspecific(key, UnsafeRawPointer(bitPattern: assigned + 1))
    return assigned
}

private let readStripeKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()

private let nextStripe = Atomic<Int>(0)

@inline(__always)
func currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}

/// A `pthread_mutex_t` at a stable address: the one mutex every lock in Loupe is built on.
///
/// Loupe uses this rather than `Synchronization.Mutex` because on Linux `Mutex` locks with a futex inside
/// the standard library, which ThreadSanitizer cannot see; the test suite runs under TSan with no report,
/// so every lock in Loupe is one it understands. (`NSLock` is the same mutex behind a dynamically
/// dispatched call.)
final class PlainMutex: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always) func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) func unlock() { pthread_mutex_unlock(mutex) }

    @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// State guarded by a ``PlainMutex``.
final class Locked<State>: @unchecked Sendable {
    private let mutex = PlainMutex()
    /// Only reached under `mutex`, so the run-time exclusivity check is left out.
    @exclusivity(unchecked) private var state: State

    init(_ state: State) {
        self.state = state
    }

    @inline(__always)
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        try mutex.withLock { try body(&state) }
    }
}
