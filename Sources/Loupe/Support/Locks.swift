#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// A readers–writer lock whose readers do not contend with each other: many readers at once, one writer.
///
/// A `pthread_rwlock_t` keeps its readers in one counter, so every read writes the same cache line and two
/// threads reading at once slow each other down. Here each thread counts its reads in a stripe of its own
/// (a counter on its own cache line, assigned on the thread's first read). A writer raises a flag and
/// waits until every stripe is empty; a reader that sees the flag steps back and waits for the writer.
/// Writers take a mutex among themselves and are preferred, so a stream of readers cannot starve one.
///
/// Reader and writer use the classic handshake: the reader increments its stripe, then checks the flag;
/// the writer sets the flag, then checks the stripes (all sequentially consistent), so at least one of
/// them always sees the other.
final class ReadWriteLock: @unchecked Sendable {
    private static let stripeCount = 16
    private static let stripeSize = 128  // two cache lines, against adjacent-line prefetching
    private let stripes: UnsafeMutableRawPointer
    private let writerActive: UnsafeMutablePointer<Atomic<Bool>>
    private let writers: UnsafeMutablePointer<pthread_mutex_t>
    /// The process-wide key of each thread's stripe, copied here so reads skip the global's lazy check.
    private let stripeKey = readStripeKey

    init() {
        stripes = .allocate(byteCount: Self.stripeCount * Self.stripeSize, alignment: Self.stripeSize)
        for index in 0..<Self.stripeCount {
            stripes.advanced(by: index * Self.stripeSize).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
        }
        writerActive = .allocate(capacity: 1)
        writerActive.initialize(to: Atomic(false))
        writers = .allocate(capacity: 1)
        writers.initialize(to: pthread_mutex_t())
        pthread_mutex_init(writers, nil)
    }

    deinit {
        for index in 0..<Self.stripeCount { stripe(index).deinitialize(count: 1) }
        stripes.deallocate()
        writerActive.deinitialize(count: 1)
        writerActive.deallocate()
        pthread_mutex_destroy(writers)
        writers.deallocate()
    }

    @inline(__always)
    private func stripe(_ index: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        stripes.advanced(by: index * Self.stripeSize).assumingMemoryBound(to: Atomic<Int>.self)
    }

    @inline(__always)
    func withReadLock<R>(_ body: () throws -> R) rethrows -> R {
        let counter = stripe(currentStripe(stripeKey) & (Self.stripeCount - 1))
        while true {
            counter.pointee.wrappingAdd(1, ordering: .sequentiallyConsistent)
            if !writerActive.pointee.load(ordering: .sequentiallyConsistent) { break }
            // A writer is in, or waiting: step back, and wait for it by passing through its mutex.
            counter.pointee.wrappingSubtract(1, ordering: .releasing)
            pthread_mutex_lock(writers)
            pthread_mutex_unlock(writers)
        }
        defer { counter.pointee.wrappingSubtract(1, ordering: .releasing) }
        return try body()
    }

    func withWriteLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(writers)
        writerActive.pointee.store(true, ordering: .sequentiallyConsistent)
        for index in 0..<Self.stripeCount {
            var spins = 0
            while stripe(index).pointee.load(ordering: .sequentiallyConsistent) != 0 {
                spins += 1
                if spins > 64 { sched_yield() }
            }
        }
        defer {
            writerActive.pointee.store(false, ordering: .releasing)
            pthread_mutex_unlock(writers)
        }
        return try body()
    }
}

/// The calling thread's read stripe, assigned round-robin on its first read and kept in a thread-specific
/// slot (stored plus one, since an empty slot reads as zero).
@inline(__always)
private func currentStripe(_ key: pthread_key_t) -> Int {
    let stored = Int(bitPattern: pthread_getspecific(key))
    if stored != 0 { return stored - 1 }
    let assigned = nextStripe.add(1, ordering: .relaxed).oldValue
    pthread_setspecific(key, UnsafeRawPointer(bitPattern: assigned + 1))
    return assigned
}

private let readStripeKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()

private let nextStripe = Atomic<Int>(0)

/// The lock that serialises updates of one lens graph.
///
/// It is held across the update closure and the store's save, which run user code and I/O, so it is a
/// blocking mutex rather than a spin lock. It knows its owner, so an update started from inside another
/// update's closure on the same thread is reported instead of deadlocking.
final class UpdateLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let owner = Atomic<UInt>(0)

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` holding the lock; throws `reentrancyError()` without running it if this thread already
    /// holds the lock.
    func withLock<R>(orThrow reentrancyError: () -> any Error, _ body: () throws -> R) throws -> R {
        let me = currentThreadID()
        if owner.load(ordering: .relaxed) == me { throw reentrancyError() }
        pthread_mutex_lock(mutex)
        owner.store(me, ordering: .relaxed)
        defer {
            owner.store(0, ordering: .relaxed)
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }
}

@inline(__always)
func currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}

/// State guarded by a mutex.
///
/// Loupe uses this rather than `Synchronization.Mutex` because on Linux `Mutex` locks with a futex inside
/// the standard library, which ThreadSanitizer cannot see; the test suite runs under TSan with no report,
/// so every lock in Loupe is one it understands. `NSLock` is a `pthread_mutex_t` on Linux.
final class Locked<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    init(_ state: State) {
        self.state = state
    }

    @inline(__always)
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
