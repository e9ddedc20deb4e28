#if Etcd
import Foundation
import Logging
import Loupe

/// A store that keeps the document in etcd, so that daemons on many hosts share one live settings graph.
///
/// ```swift
/// import LoupeEtcd
/// let settings = try RootLens(
///     default: FleetSettings(),
///     store: EtcdStore(
///         endpoints: ["http://10.0.0.1:2379", "http://10.0.0.2:2379", "http://10.0.0.3:2379"],
///         key: "/fleet/settings"))
/// ```
///
/// The whole document is one etcd key, as compact JSON with sorted keys, so `etcdctl get /fleet/settings`
/// shows it and `etcdctl put` changes it.
///
/// - **Updates** are compare-and-swap transactions on the key's `mod_revision` (the store's change token):
///   the put happens only if nobody wrote the key since the root read it. If somebody did, the same transaction returns the
///   current value, and the lens re-runs the update closure on it and tries again (256 times at most, then
///   a `SettingsError` with code `conflict`). Concurrent updates from any number of processes are never lost.
/// - **Watching**: a root lens watches the key, so a commit from any process reaches its observers in
///   milliseconds. The roots of one key in a process share one watch stream. A broken watch reopens from the last revision the store saw, so no change is missed;
///   if etcd compacted that revision, the store reloads the key.
/// - **Faults**: while etcd cannot be reached, lenses keep serving the last value they saw, and updates
///   fail at once with `SettingsError.Code.unavailable` and change nothing. A call that cannot reach one
///   endpoint moves to the next. An update whose connection broke after it was sent is not repeated (it
///   may have landed): it fails, and the watch brings in whatever etcd holds.
///
/// A store's calls are synchronous: an update waits for etcd's answer (bounded by ``requestTimeout``) on
/// the thread that runs it. The `async` forms of the root's updates run them on the graph's own queue, so
/// async code never holds a thread of Swift's cooperative pool for a round trip. The HTTP traffic runs
/// on an event loop of its own, so no caller's event loop is ever blocked.
///
/// - **History**: ``history()`` is the key's own revisions, back to its creation or to what etcd has
///   compacted (the newest 100), so `RootLens.rollback(to:)` takes the key back to one; etcd records no
///   author or time.
/// - **Fleet status**: with ``EtcdStatusReporting``, each root reports which revision of the key it runs
///   (and which it refused, and why) under `KEY/.status/NAME`, with a lease; ``appliedStatus()`` reads the
///   reports, for `loupe status` and `loupe set … --wait-applied`.
///
/// Neither values nor credentials ever appear in a log, an error or the description.
public final class EtcdStore: DocumentStore, StoreHistory, StoreFleetReport {
    /// The etcd key that holds the value.
    public let key: String
    /// The endpoints, in the order they are tried.
    public var endpoints: [String] { client.endpoints }
    /// The longest one call to etcd may take.
    public var requestTimeout: Duration { client.requestTimeout }

    private let client: EtcdClient
    private let keyBytes: GatewayBytes
    private let codec = JSONCodec(prettyPrinted: false)
    private let logger: Logger
    /// The key as this store's watch last saw it, to resume the watch from there.
    private let state = Locked(State())
    /// Publishes which revision the root runs, when it reports.
    private let reporter: EtcdStatusReporter?

    private struct State {
        /// The cluster revision at which the key was last observed (by a read, a write or the watch).
        var revision: Int64 = 0
        /// The key's `mod_revision` then; 0 when it did not exist.
        var modRevision: Int64 = 0
        /// The key's value then; nil when it did not exist.
        var value: Data?
        /// The `mod_revision` of what the store last handed its root (a load's, a save's; 0: nothing).
        var handedOut: Int64 = 0
        /// Whether the watch brought a value the root has not loaded yet: the load it answers with takes
        /// that value rather than asking etcd again.
        var watchDelivered = false
    }

    /// Creates a store for `key` on the etcd cluster at `endpoints`.
    ///
    /// - Parameters:
    ///   - endpoints: Client URLs of the cluster's members (`http://host:2379` or `https://host:2379`), in
    ///     the order they are tried. Any member serves any call; list several so that one can fail.
    ///   - key: The etcd key that holds the whole value, such as `/app/settings`.
    ///   - tls: Certificate authority and client certificate for `https` endpoints.
    ///   - credentials: User name and password, for clusters with authentication enabled.
    ///   - connectTimeout: The longest a connection attempt to one member may take (2 seconds by default).
    ///   - requestTimeout: The longest one call may take (5 seconds by default).
    ///   - statusReporting: Whether (and under which name) the root reports which revision it runs, under
    ///     `KEY/.status/NAME`; nil (the default): it does not.
    ///   - logger: Where loads, saves, fail-overs and watch interruptions are logged. Values and
    ///     credentials never are.
    /// - Throws: `SettingsError` when an endpoint is not an `http`/`https` URL or a TLS file cannot be read.
    public init(
        endpoints: [String],
        key: String,
        tls: EtcdTLS? = nil,
        credentials: EtcdCredentials? = nil,
        connectTimeout: Duration = .seconds(2),
        requestTimeout: Duration = .seconds(5),
        statusReporting: EtcdStatusReporting? = nil,
        logger: Logger = Logger(label: "loupe.etcd")
    ) throws {
        let provisionalName = "etcd key \(key)"
        guard !key.isEmpty else {
            throw SettingsError(.unavailable, store: provisionalName, reason: "the key is empty")
        }
        let normalized = try EtcdClient.normalize(endpoints, storeName: provisionalName)
        let name = Self.describe(key: key, endpoints: normalized)
        self.key = key
        self.keyBytes = GatewayBytes(key)
        self.logger = logger
        let client = try EtcdClient(
            endpoints: normalized, tls: tls, credentials: credentials, connectTimeout: connectTimeout,
            requestTimeout: requestTimeout, storeName: name, logger: logger)
        self.client = client
        reporter = statusReporting.map {
            EtcdStatusReporter(client: client, prefix: Self.statusPrefix(of: key), reporting: $0, logger: logger)
        }
    }

    deinit {
        reporter?.cancel()
    }

    /// Where the roots over `key` report which revision they run: `KEY/.status/`.
    static func statusPrefix(of key: String) -> Data {
        Data((key + "/.status/").utf8)
    }

    private static func describe(key: String, endpoints: [String]) -> String {
        "etcd key \(key) at \(endpoints.joined(separator: ", "))"
    }

    /// Names the key and the endpoints; never the value or the credentials.
    public var description: String { client.storeName }

    // MARK: DocumentStore

    /// Reads the key; its token is the key's `mod_revision`. The load that answers a change the watch
    /// reported takes the value the watch brought (etcd's at that revision), so that a fleet of roots
    /// picking up one change does not ask etcd once each.
    public func load() throws -> StoredDocument {
        if let delivered = state.withLock({ state -> (revision: Int64, value: Data?)? in
            guard state.watchDelivered else { return nil }
            state.watchDelivered = false
            state.handedOut = state.modRevision
            return (state.modRevision, state.value)
        }) {
            guard let value = delivered.value else { return .empty }
            return StoredDocument(
                try codec.parseDocument(value, store: description), token: ChangeToken(delivered.revision))
        }
        let response = try client.call(
            "/v3/kv/range", RangeRequest(key: keyBytes), as: RangeResponse.self, repetition: .safe, refusal: .unreadable
        )
        let keyValue = response.kvs?.first
        _ = observe(revision: response.header?.revision?.value ?? 0, keyValue: keyValue)
        state.withLock { $0.handedOut = keyValue?.mod_revision?.value ?? 0 }
        guard let keyValue, let modRevision = keyValue.mod_revision?.value else {
            logger.debug("etcd key does not exist yet", metadata: ["store": "\(description)"])
            return .empty
        }
        let document = try codec.parseDocument(keyValue.value?.data ?? Data(), store: description)
        logger.debug("loaded etcd key", metadata: ["store": "\(description)", "revision": "\(modRevision)"])
        return StoredDocument(document, token: ChangeToken(modRevision))
    }

    /// Puts the document if the key's `mod_revision` is still the token's, in one transaction.
    public func save(_ document: JSONValue, replacing token: ChangeToken) throws -> ChangeToken {
        let data = try codec.serializeDocument(document, store: description)
        let revision = try transaction(
            replacing: token, RequestOp(request_put: PutRequest(key: keyBytes, value: GatewayBytes(data))))
        _ = observe(revision: revision, modRevision: revision, value: data)
        state.withLock { $0.handedOut = revision }
        logger.debug("saved etcd key", metadata: ["store": "\(description)", "revision": "\(revision)"])
        return ChangeToken(revision)
    }

    /// Deletes the key if its `mod_revision` is still the token's, in one transaction.
    public func remove(replacing token: ChangeToken) throws -> ChangeToken {
        let revision = try transaction(
            replacing: token, RequestOp(request_delete_range: DeleteRangeRequest(key: keyBytes)))
        _ = observe(revision: revision, modRevision: 0, value: nil)
        state.withLock { $0.handedOut = 0 }
        logger.debug("deleted etcd key", metadata: ["store": "\(description)"])
        return .absent
    }

    /// Runs `operation` if the key's `mod_revision` is the one `token` names (0: the key does not exist);
    /// returns the cluster's revision after it.
    private func transaction(replacing token: ChangeToken, _ operation: RequestOp) throws -> Int64 {
        let expected = token.number ?? 0
        let transaction = TxnRequest(
            compare: [Compare(key: keyBytes, mod_revision: GatewayInt(expected))],
            success: [operation],
            failure: [RequestOp(request_range: RangeRequest(key: keyBytes))])
        let response = try client.call(
            "/v3/kv/txn", transaction, as: TxnResponse.self, repetition: .once, refusal: .unwritable)
        let revision = response.header?.revision?.value ?? 0
        guard response.succeeded == true else {
            _ = observe(revision: revision, keyValue: response.responses?.first?.response_range?.kvs?.first)
            logger.debug(
                "etcd key changed since it was read", metadata: ["store": "\(description)", "expected": "\(expected)"])
            throw SettingsError(
                .conflict, store: description, reason: "another writer changed the key after revision \(expected)")
        }
        return revision
    }

    public func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        let source = EtcdWatcher.Source(
            lastSeenRevision: { [weak self] in self?.state.withLock { $0.revision } ?? 0 },
            apply: { [weak self] events in self?.apply(events) ?? false },
            reload: { [weak self] in try self?.fetch() ?? false })
        return SharedWatches.process.watch(
            keyBytes, client: client, logger: logger, .init(source: source, onChange: onChange))
    }

    // MARK: History

    /// The key's revisions as its history, and the readers' reports of what they run.
    public var capabilities: StoreCapabilities { StoreCapabilities(history: self, fleetReport: self) }

    /// The most revisions ``history()`` reads, newest first.
    static let maximumHistory = 100

    /// The key's revisions, read back from the newest until the key's creation, a revision etcd has
    /// compacted, or the newest 100; the document of each is its value then. A deletion is where the
    /// history begins (etcd keeps no revision of a key that does not exist).
    public func history() throws -> SettingsHistory {
        var versions: [(revision: Int64, created: Bool, document: JSONValue)] = []
        var at: Int64? = nil
        while versions.count < Self.maximumHistory {
            let response: RangeResponse
            do {
                response = try client.call(
                    "/v3/kv/range", RangeRequest(key: keyBytes, revision: at.map(GatewayInt.init)),
                    as: RangeResponse.self,
                    repetition: .safe, refusal: .unreadable)
            } catch let error as SettingsError where at != nil && error.reason.contains("compacted") {
                break  // etcd keeps nothing older
            }
            guard let keyValue = response.kvs?.first, let revision = keyValue.mod_revision?.value else { break }
            let document = try codec.parseDocument(keyValue.value?.data ?? Data(), store: description)
            versions.append((revision, keyValue.create_revision?.value == revision, document))
            guard revision > 1 else { break }
            at = revision - 1
        }
        versions.reverse()
        guard let oldest = versions.first else {
            return SettingsHistory(recordsAuthors: false)
        }
        // Before its creation there was no document; else the oldest revision read is the base.
        let base: (revision: Int, document: JSONValue?) =
            oldest.created ? (Int(oldest.revision) - 1, nil) : (Int(oldest.revision), oldest.document)
        if !oldest.created { versions.removeFirst() }
        var changes: [SettingsChange] = []
        var previous = base.document
        for version in versions {
            changes.append(
                SettingsChange(
                    revision: Int(version.revision), time: nil, author: nil,
                    patch: SettingsHistory.patch(from: previous, to: version.document),
                    reversePatch: SettingsHistory.patch(from: version.document, to: previous)))
            previous = version.document
        }
        return SettingsHistory(
            baseRevision: base.revision, base: base.document, changes: changes, recordsAuthors: false)
    }

    /// Refuses: the history is the key's own revisions, which etcd keeps and only etcd removes. Compact
    /// them with `etcdctl compact REVISION` (which drops every key's revisions before REVISION, the
    /// value an `unset` removed among them once REVISION is after it), then `etcdctl defrag` to free
    /// their space on disk.
    ///
    /// - Throws: a `SettingsError` with code `.unavailable`, naming the store and `etcdctl compact`.
    public func purgeHistory(of path: ValuePath) throws -> Int {
        throw SettingsError(
            .unavailable, path: path, store: description,
            reason:
                "its history is the key's own etcd revisions, which Loupe cannot rewrite: `etcdctl compact REVISION` drops every key's revisions before REVISION (then `etcdctl defrag` frees their space)"
        )
    }

    // MARK: Fleet status

    /// Reports the revision the root now runs, or refused, when the store reports (see
    /// ``EtcdStatusReporting``).
    public func rootDidApply(_ token: ChangeToken, refusal: SettingsError?) {
        guard let reporter else { return }
        // The key's `mod_revision` (a layered store passes its top's part); else the revision last loaded.
        let revision = token.number ?? state.withLock { $0.handedOut }
        reporter.applied(
            revision, refused: refusal.map { StatusReport.Refused(revision: revision, reason: Self.reason(of: $0)) })
    }

    /// Why a root refused a revision, for its report: the path and what is wrong there, without the store's
    /// name (every reader's is the same key).
    private static func reason(of error: SettingsError) -> String {
        guard let path = error.path, !error.reason.hasPrefix("\(path)") else { return error.reason }
        return "\(path): \(error.reason)"
    }

    /// How many status-report calls of this process's roots over this store's cluster are waiting on etcd
    /// now (at most one for each of the cluster's shared reporting queues): what a test of a hung cluster
    /// waits for.
    package var statusCallsWaiting: Int { EtcdStatusReporter.callsWaiting(for: client) }

    /// The key's revision now and what each reporting root runs.
    public func appliedStatus() throws -> AppliedStatus {
        let current = try client.call(
            "/v3/kv/range", RangeRequest(key: keyBytes), as: RangeResponse.self, repetition: .safe, refusal: .unreadable
        )
        let reports = try EtcdStatusReporter.reports(client: client, prefix: Self.statusPrefix(of: key), logger: logger)
        return AppliedStatus(
            currentRevision: Int(current.kvs?.first?.mod_revision?.value ?? 0),
            readers: reports.map { report in
                AppliedStatus.Reader(
                    name: report.name, revision: Int(report.revision),
                    time: Date(timeIntervalSince1970: Double(report.time) / 1000),
                    refusal: report.refused.map { AppliedStatus.Refusal(revision: Int($0.revision), reason: $0.reason) }
                )
            })
    }

    // MARK: What the store has seen

    /// Reads the key and records it, for the watch; returns whether its value changed.
    private func fetch() throws -> Bool {
        let response = try client.call(
            "/v3/kv/range", RangeRequest(key: keyBytes), as: RangeResponse.self, repetition: .safe, refusal: .unreadable
        )
        return delivered(observe(revision: response.header?.revision?.value ?? 0, keyValue: response.kvs?.first))
    }

    /// Notes that the watch brought a new value, when `changed`, for the load that answers it.
    private func delivered(_ changed: Bool) -> Bool {
        if changed { state.withLock { $0.watchDelivered = true } }
        return changed
    }

    private func apply(_ events: [WatchEnvelope.Event]) -> Bool {
        var changed = false
        for event in events {
            guard let keyValue = event.kv, let revision = keyValue.mod_revision?.value else { continue }
            if event.type == "DELETE" {
                changed = observe(revision: revision, modRevision: 0, value: nil) || changed
            } else {
                changed = observe(revision: revision, keyValue: keyValue) || changed
            }
        }
        return delivered(changed)
    }

    private func observe(revision: Int64, keyValue: KeyValue?) -> Bool {
        guard let keyValue else { return observe(revision: revision, modRevision: 0, value: nil) }
        return observe(
            revision: revision, modRevision: keyValue.mod_revision?.value ?? revision,
            value: keyValue.value?.data ?? Data())
    }

    /// Records the key as seen at cluster `revision`, unless the store has already seen a later one
    /// (answers and watch events can arrive out of order). Returns whether the key's value changed.
    private func observe(revision: Int64, modRevision: Int64, value: Data?) -> Bool {
        state.withLock { state in
            guard revision >= state.revision else { return false }
            let changed = state.modRevision != modRevision
            state.revision = revision
            state.modRevision = modRevision
            state.value = value
            return changed
        }
    }
}

extension EtcdStore: CustomDebugStringConvertible {
    /// The store's type, key, endpoints and timeouts, for a debugger; never its value or credentials.
    public var debugDescription: String {
        var options = ["key: \(key)", "endpoints: \(endpoints)", "requestTimeout: \(requestTimeout)"]
        if let credentials = client.credentials { options.append("credentials: \(credentials)") }
        return "EtcdStore(\(options.joined(separator: ", ")))"
    }
}
#endif
