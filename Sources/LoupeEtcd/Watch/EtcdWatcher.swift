#if Etcd
import AsyncHTTPClient
import Foundation
import Logging
import Loupe
import NIOCore
import NIOHTTP1

/// Keeps one etcd watch open on a key for as long as a root lens lives, and tells the store what it sees.
///
/// The watch is a streaming `POST /v3/watch` that starts one revision after the last one the store has
/// seen. When the stream breaks (a member died, etcd restarted, the network dropped) it is opened again,
/// on the next endpoint, after a short backoff (50 ms doubling to 1 s), from the store's last seen
/// revision — so no change is missed. When etcd has compacted that revision away, the store reloads the
/// key and the watch starts after the reload.
///
/// Stream callbacks run on the client's event loop and only record what arrived; everything else —
/// telling the lens, reloading, reconnecting — runs on a serial queue of the watch's own, because the lens
/// answers a change by calling back into the store, which blocks on etcd.
final class EtcdWatcher: StoreWatch {
    /// What the watcher needs from its store.
    struct Source: Sendable {
        /// The last revision the store has seen; the watch resumes one after it.
        var lastSeenRevision: @Sendable () -> Int64
        /// Records events; returns whether the key's value changed.
        var apply: @Sendable ([WatchEnvelope.Event]) -> Bool
        /// Reads the key afresh (after a compaction); returns whether its value changed.
        var reload: @Sendable () throws -> Bool
    }

    private let client: EtcdClient
    private let key: GatewayBytes
    private let source: Source
    private let onChange: @Sendable () -> Void
    private let queue: DispatchQueue
    private let logger: Logger

    private struct State {
        var cancelled = false
        var task: HTTPClient.Task<Void>?
        var endpoint: Int
        /// Consecutive failed streams; 0 while the watch is healthy.
        var failures = 0
        /// Why the last stream ended, as the delegate saw it.
        var endReason: String?
        /// The last stream ended because etcd compacted the revision it asked for.
        var needsReload = false
    }
    private let state: Locked<State>

    init(
        client: EtcdClient, key: GatewayBytes, source: Source, logger: Logger, onChange: @escaping @Sendable () -> Void
    ) {
        self.client = client
        self.key = key
        self.source = source
        self.onChange = onChange
        self.logger = logger
        self.queue = DispatchQueue(label: "loupe.etcd.watch")
        self.state = Locked(State(endpoint: client.preferredEndpoint))
    }

    func start() {
        queue.async { self.connect() }
    }

    func cancel() {
        let task = state.withLock { state -> HTTPClient.Task<Void>? in
            state.cancelled = true
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
    }

    private var storeName: String { client.storeName }

    /// Opens a stream. Runs on `queue`.
    private func connect() {
        let index = state.withLock { $0.endpoint }
        var token: String?
        if client.credentials != nil {
            switch client.token(for: index) {
            case .success(let value): token = value
            case .failure(let outcome):
                streamEnded(endpoint: index, reason: outcome.reason)
                return
            }
        }
        let from = source.lastSeenRevision() + 1
        let request: HTTPClient.Request
        do {
            let body = WatchRequest(create_request: .init(key: key, start_revision: GatewayInt(from)))
            request = try client.makeRequest("/v3/watch", try JSONEncoder().encode(body), endpoint: index, token: token)
        } catch {
            logger.error(
                "cannot start the etcd watch",
                metadata: ["store": "\(storeName)", "error": "\(logDescription(of: error))"])
            return
        }
        let delegate = WatchStreamDelegate { [weak self] message in self?.receive(message, endpoint: index) ?? false }
        let task = client.http.execute(request: request, delegate: delegate, eventLoop: .indifferent, deadline: nil)
        let cancelled = state.withLock { state -> Bool in
            if !state.cancelled { state.task = task }
            return state.cancelled
        }
        if cancelled {
            task.cancel()
            return
        }
        task.futureResult.whenComplete { [weak self] result in
            guard let self else { return }
            let reason: String
            switch result {
            case .success: reason = "etcd closed the stream"
            case .failure(let error): reason = describe(error, timeout: .zero)
            }
            self.queue.async { self.streamEnded(endpoint: index, reason: reason) }
        }
        logger.trace(
            "opening etcd watch",
            metadata: ["store": "\(storeName)", "endpoint": "\(client.endpoints[index])", "from": "\(from)"])
    }

    /// Handles one message of the stream; returns false to end the stream. Runs on the event loop.
    private func receive(_ message: WatchStreamDelegate.Message, endpoint index: Int) -> Bool {
        switch message {
        case .error(let error):
            if error.status == 16 { client.invalidateToken(for: index) }
            state.withLock { $0.endReason = "etcd at \(client.endpoints[index]) ended the watch: \(error.text)" }
            return false
        case .response(let result):
            if result.created == true {
                let failures = state.withLock { state -> Int in
                    defer { state.failures = 0 }
                    return state.failures
                }
                if failures > 0 {
                    logger.notice(
                        "etcd watch resumed",
                        metadata: ["store": "\(storeName)", "endpoint": "\(client.endpoints[index])"])
                }
            }
            if let compacted = result.compact_revision?.value, compacted > 0 {
                logger.notice(
                    "etcd compacted the watched revisions; reloading the key",
                    metadata: ["store": "\(storeName)", "compacted": "\(compacted)"])
                state.withLock {
                    $0.needsReload = true
                    $0.endReason = "compacted"
                }
                return false
            }
            if result.canceled == true {
                let reason = result.cancel_reason ?? "no reason given"
                state.withLock { $0.endReason = "etcd cancelled the watch: \(reason)" }
                return false
            }
            if let events = result.events, !events.isEmpty, source.apply(events) {
                queue.async { self.onChange() }
            }
            return true
        }
    }

    /// Reopens the watch after its stream ended. Runs on `queue`.
    private func streamEnded(endpoint index: Int, reason transportReason: String) {
        let (cancelled, needsReload, reason, failures) = state.withLock { state in
            defer {
                state.task = nil
                state.endReason = nil
                state.needsReload = false
            }
            return (state.cancelled, state.needsReload, state.endReason ?? transportReason, state.failures)
        }
        guard !cancelled else { return }
        if needsReload {
            do {
                if try source.reload() { onChange() }
                connect()
                return
            } catch {
                logger.warning(
                    "cannot reload the etcd key after a compaction",
                    metadata: ["store": "\(storeName)", "error": "\(logDescription(of: error))"])
            }
        }
        let delay = min(50 << min(failures, 5), 1000)
        state.withLock {
            $0.failures += 1
            $0.endpoint = (index + 1) % client.endpoints.count
        }
        if failures == 0 {
            logger.warning(
                "etcd watch lost, reconnecting",
                metadata: ["store": "\(storeName)", "endpoint": "\(client.endpoints[index])", "reason": "\(reason)"])
        } else {
            logger.debug(
                "etcd watch still down",
                metadata: ["store": "\(storeName)", "endpoint": "\(client.endpoints[index])", "reason": "\(reason)"])
        }
        queue.asyncAfter(deadline: .now() + .milliseconds(delay)) { [weak self] in self?.connect() }
    }
}

/// Splits a watch stream into its messages (the gateway writes one JSON object per line) and hands each
/// to `onMessage`, which returns false to end the stream.
private final class WatchStreamDelegate: HTTPClientResponseDelegate {
    typealias Response = Void

    enum Message {
        case response(WatchEnvelope.Result)
        case error(GatewayError)
    }

    private struct Stop: Error {}

    private let onMessage: @Sendable (Message) -> Bool
    // Touched only on the request's event loop, one callback at a time.
    nonisolated(unsafe) private var pending = [UInt8]()
    nonisolated(unsafe) private var status: HTTPResponseStatus = .ok

    init(onMessage: @escaping @Sendable (Message) -> Bool) {
        self.onMessage = onMessage
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        status = head.status
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        pending.append(contentsOf: buffer.readableBytesView)
        // An error document: read it whole.
        guard status == .ok else { return task.eventLoop.makeSucceededVoidFuture() }
        while let newline = pending.firstIndex(of: 0x0A) {
            let line = pending[..<newline]
            defer { pending.removeSubrange(...newline) }
            guard !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) else { continue }
            let message: Message
            if let envelope = try? JSONDecoder().decode(WatchEnvelope.self, from: Data(line)) {
                if let error = envelope.error {
                    message = .error(error)
                } else if let result = envelope.result {
                    message = .response(result)
                } else {
                    continue
                }
            } else if let error = try? JSONDecoder().decode(GatewayError.self, from: Data(line)) {
                message = .error(error)
            } else {
                message = .error(GatewayError(text: "an unreadable watch message"))
            }
            if !onMessage(message) { return task.eventLoop.makeFailedFuture(Stop()) }
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        if status != .ok {
            let error =
                (try? JSONDecoder().decode(GatewayError.self, from: Data(pending)))
                ?? GatewayError(text: "HTTP \(status.code)")
            _ = onMessage(.error(error))
        }
    }
}
#endif
