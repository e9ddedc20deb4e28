#if Etcd
import Foundation
import Logging
import Loupe

/// One etcd watch per key and cluster in a process, shared by every store over that key: a thousand
/// roots of one key (a test fleet, a process serving many tenants' views of one setting) cost etcd one
/// watcher and the process one stream to parse, not a thousand.
///
/// Each store still keeps what it has seen of the key; the shared watch hands every store each batch of
/// events (on the stream's event loop, as a store's own watch would), then tells those whose value
/// changed, each on a thread of the global queue, so that the roots take the change in parallel. The
/// stream resumes from the oldest revision any of its stores has seen, so none misses an event; a store
/// that joins after the stream saw a newer revision than it did reads the key again at once.
final class SharedWatches: Sendable {
    static let process = SharedWatches()

    private let watches = Locked<[String: SharedWatch]>([:])

    /// What a store gives the shared watch: its ``EtcdWatcher/Source`` and what to call when its value
    /// changed.
    struct Subscriber: Sendable {
        var source: EtcdWatcher.Source
        var onChange: @Sendable () -> Void
    }

    /// Starts watching `key` for `subscriber`, sharing the stream with the stores over the same key and
    /// cluster (`client.identity`); the watch ends when the last of them cancels.
    func watch(_ key: GatewayBytes, client: EtcdClient, logger: Logger, _ subscriber: Subscriber) -> any StoreWatch {
        let identity = client.identity + "\u{0}" + key.data.base64EncodedString()
        let (watch, id, start) = watches.withLock { watches -> (SharedWatch, Int, Bool) in
            let watch = watches[identity] ?? SharedWatch(identity: identity)
            watches[identity] = watch
            let (id, first) = watch.add(subscriber)
            return (watch, id, first)
        }
        if start {
            watch.start(client: client, key: key, logger: logger)
        } else if watch.streamRevision() > subscriber.source.lastSeenRevision() {
            // The stream is past what this store read: read the key again rather than miss what lies between.
            DispatchQueue.global().async {
                if (try? subscriber.source.reload()) == true { subscriber.onChange() }
            }
        }
        return Subscription { [weak self] in self?.remove(id, from: watch) }
    }

    private func remove(_ id: Int, from watch: SharedWatch) {
        let last = watches.withLock { watches -> Bool in
            guard watch.remove(id) else { return false }
            if watches[watch.identity] === watch { watches[watch.identity] = nil }
            return true
        }
        if last { watch.stop() }
    }

    /// One store's part in a shared watch.
    private final class Subscription: StoreWatch {
        private let end: Locked<(@Sendable () -> Void)?>

        init(_ end: @escaping @Sendable () -> Void) {
            self.end = Locked(end)
        }

        func cancel() {
            let end = self.end.withLock { end in
                defer { end = nil }
                return end
            }
            end?()
        }
    }
}

/// The stream of one key and cluster, and the stores it serves.
private final class SharedWatch: Sendable {
    let identity: String
    private let state = Locked(State())

    private struct State {
        var subscribers: [Int: SharedWatches.Subscriber] = [:]
        var nextID = 0
        var watcher: EtcdWatcher?
        /// The newest revision the stream delivered.
        var revision: Int64 = 0
    }

    init(identity: String) {
        self.identity = identity
    }

    /// Adds `subscriber`; returns its id, and whether it is the first (the stream is to start).
    func add(_ subscriber: SharedWatches.Subscriber) -> (id: Int, first: Bool) {
        state.withLock { state in
            defer { state.nextID += 1 }
            state.subscribers[state.nextID] = subscriber
            return (state.nextID, state.subscribers.count == 1 && state.watcher == nil)
        }
    }

    /// Removes a subscriber; says whether it was the last.
    func remove(_ id: Int) -> Bool {
        state.withLock { state in
            state.subscribers[id] = nil
            return state.subscribers.isEmpty
        }
    }

    func streamRevision() -> Int64 {
        state.withLock { $0.revision }
    }

    func start(client: EtcdClient, key: GatewayBytes, logger: Logger) {
        let source = EtcdWatcher.Source(
            lastSeenRevision: { [weak self] in
                // The oldest any store has seen: resuming there, none misses an event.
                self?.subscribers().map { $0.source.lastSeenRevision() }.min() ?? 0
            },
            apply: { [weak self] events in
                guard let self else { return false }
                let newest = events.compactMap { $0.kv?.mod_revision?.value }.max() ?? 0
                state.withLock { $0.revision = max($0.revision, newest) }
                for subscriber in subscribers() where subscriber.source.apply(events) {
                    DispatchQueue.global().async { subscriber.onChange() }
                }
                return false  // each store was told already
            },
            reload: { [weak self] in
                for subscriber in self?.subscribers() ?? [] where (try? subscriber.source.reload()) == true {
                    DispatchQueue.global().async { subscriber.onChange() }
                }
                return false
            })
        let watcher = EtcdWatcher(client: client, key: key, source: source, logger: logger, onChange: {})
        state.withLock { $0.watcher = watcher }
        watcher.start()
    }

    func stop() {
        state.withLock { state in
            defer { state.watcher = nil }
            return state.watcher
        }?.cancel()
    }

    private func subscribers() -> [SharedWatches.Subscriber] {
        state.withLock { Array($0.subscribers.values) }
    }
}
#endif
