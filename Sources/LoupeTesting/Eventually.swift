#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Waits until `condition` holds, checking every 10 ms, for at most `deadline`; returns whether it held.
///
/// The one way Loupe's tests wait for something another thread or process does: a bound on waiting, never
/// a timing assertion, so that a test does not fail because a machine is slow. A test that needs N events
/// waits for N events this way, not for a time in which N usually happen.
public func eventually(deadline: Duration = .seconds(10), _ condition: () throws -> Bool) rethrows -> Bool {
    let end = ContinuousClock.now + deadline
    while ContinuousClock.now < end {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}

/// Waits until `condition` holds, as the synchronous `eventually(deadline:_:)` does, without holding a thread of
/// the cooperative pool while it waits: for async tests whose condition waits on a task.
public func eventually(deadline: Duration = .seconds(10), _ condition: () throws -> Bool) async rethrows -> Bool {
    let end = ContinuousClock.now + deadline
    while ContinuousClock.now < end {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try condition()
}
