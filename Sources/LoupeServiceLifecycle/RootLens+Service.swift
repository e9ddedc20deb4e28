#if ServiceLifecycle
import Loupe
import ServiceLifecycle

/// A root is a `Service`: run it in a `ServiceGroup`, and on graceful shutdown it makes every deferred
/// write durable before the group ends.
///
/// ```swift
/// import LoupeServiceLifecycle
/// let settings = try RootLens(default: Settings(), store: FileStore(path: "settings.json"))
/// let state = try RootLens(default: State(), store: FileStore(path: "state.json", writePolicy: .coalesced(.seconds(1))))
/// let group = ServiceGroup(services: [settings, state, server], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()      // SIGTERM: the state file is flushed before run() returns
/// ```
///
/// The root watches its store from the moment it is made; running it adds the lifecycle: it waits for
/// graceful shutdown (or cancellation), then flushes, off Swift's cooperative pool. A flush that fails
/// ends `run()` with that error, so the group reports it.
extension RootLens: Service {
    public func run() async throws {
        // Cancellation ends the wait as graceful shutdown does: either way, what is pending is written.
        try? await gracefulShutdown()
        try await self.async.flush()
    }
}
#endif
