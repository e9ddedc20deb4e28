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
/// - a graph's update lock (in `GraphCore`) refuses: an update inside another update of the same graph
///   would be overwritten by the outer one, so it throws ``SettingsError/Code/reentrantUpdate``.
/// Every other lock guards a few lines of state that call nothing that could come back.
///
/// Built on `NSLock` (a `pthread_mutex_t`) rather than `Synchronization.Mutex`, because on Linux `Mutex`
/// waits on a futex inside the standard library that ThreadSanitizer cannot see, and the test suite runs
/// under TSan with no report. `package` access: the store modules share it, users never see it.
package final class Locked<State>: @unchecked Sendable {  // every access to `state` holds `lock`
    private let lock = NSLock()
    private let holder = Atomic<UInt>(0)
    /// The state, with a byte beside it so that it always has bytes of its own: a state of no size
    /// (`Locked(())`) shares its address with the next field, and ThreadSanitizer then takes the holder's
    /// access to the state and another thread's read of that field for one racing access.
    private var state: (value: State, ownBytes: UInt8)

    package init(_ state: State) {
        self.state = (state, 0)
    }

    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        holder.store(currentThreadID(), ordering: .relaxed)
        defer {
            holder.store(0, ordering: .relaxed)
            lock.unlock()
        }
        return try body(&state.value)
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

/// The calling thread's identity, as a number.
@inline(__always)
func currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}
