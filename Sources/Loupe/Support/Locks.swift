#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// State behind a mutex: the one in-process lock of every Loupe module.
///
/// **The rule for re-entry.** A thread never waits for a lock it holds, and never takes it twice: the lock
/// knows the thread that holds it (``isHeldByCurrentThread``). Where Loupe's own code can come back to a
/// lock on the thread that holds it, that code asks first and decides, in one place each:
/// - a store's file lock (``FileLock``, ``DirectoryLock``) is already held, so the body just runs (a load
///   inside a reload, one root's update writing another root's file in the same directory);
/// - the graph's update lock (``GraphLock``) refuses: an update inside another update of the same graph
///   would be overwritten by the outer one, so it throws ``SettingsError/Code/reentrantUpdate``.
/// Every other lock guards a few lines of state that call nothing that could come back.
///
/// Built on `NSLock` (a `pthread_mutex_t`) rather than `Synchronization.Mutex`, because on Linux `Mutex`
/// waits on a futex inside the standard library that ThreadSanitizer cannot see, and the test suite runs
/// under TSan with no report. `package` access: the store modules share it, users never see it.
package final class Locked<State>: @unchecked Sendable {  // every access to `state` holds `lock`
    private let lock = NSLock()
    private let holder = Atomic<UInt>(0)
    private var state: State

    package init(_ state: State) {
        self.state = state
    }

    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        holder.store(currentThreadID(), ordering: .relaxed)
        defer {
            holder.store(0, ordering: .relaxed)
            lock.unlock()
        }
        return try body(&state)
    }

    /// Whether the calling thread holds the lock (inside ``withLock(_:)``'s body). Only the holder stores
    /// its own identity, so the answer about the calling thread is always right.
    package var isHeldByCurrentThread: Bool {
        holder.load(ordering: .relaxed) == currentThreadID()
    }
}
extension Locked where State: Sendable {
    /// A copy of the state.
    package var value: State { withLock { $0 } }
}

/// The lock of one settings graph: it serialises updates, and lets many readers read the committed root
/// at once while an update runs.
///
/// - The *update lock* (``withUpdateLock(orThrow:_:)``) is held while an update closure runs and while
///   the store saves, so updates are one at a time and each sees the result of the last. It runs user code
///   and I/O, so it is a blocking mutex, a ``Locked``: by its rule, an update started from inside another
///   update's closure on the same thread is reported instead of deadlocking.
/// - *Readers* (``withReadLock(_:)``) never wait for a closure or for I/O: they are held back only while
///   the update lock's holder swaps a committed root in (``publishing(_:)``), an assignment.
///
/// Why not `pthread_rwlock_t`: it counts readers in one word, so two threads reading at once write the
/// same cache line and slow each other down (the benchmark's two-reader row). Here each thread counts its
/// reads in a stripe of its own, an atomic counter in an object of its own, padded to two cache lines. The
/// publisher raises a flag and waits until every stripe is empty; a reader that sees the flag steps back
/// until the flag is down. The classic handshake, all sequentially consistent: the reader increments its
/// stripe, then checks the flag; the publisher sets the flag, then checks the stripes; at least one sees
/// the other. Only atomics and a thread-specific number are used: no unsafe memory.
final class GraphLock: Sendable {
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

    private let stripes: [Stripe] = (0..<GraphLock.stripeCount).map { _ in Stripe() }
    private let isPublishing = Atomic<Bool>(false)
    /// The process-wide key of each thread's stripe number, copied here: reaching the global on every read
    /// cost a check that it was initialized.
    private let stripeKey = readStripeKey.key
    /// The update lock: held by one update at a time, for its closure and its save.
    private let updates = Locked(())

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

    /// Runs `body` holding the update lock; throws `reentrancyError()` without running it if this thread
    /// already holds it.
    func withUpdateLock<R>(orThrow reentrancyError: () -> any Error, _ body: () throws -> R) throws -> R {
        if updates.isHeldByCurrentThread { throw reentrancyError() }
        return try updates.withLock { _ in try body() }
    }

    /// Runs `body` with no reader inside: for swapping in a committed root. Call it holding the update lock.
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

/// The calling thread's identity, as a number.
@inline(__always)
func currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}
