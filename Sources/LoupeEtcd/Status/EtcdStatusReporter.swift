#if Etcd
import Foundation
import Logging
import Loupe

/// Whether and how a root over an ``EtcdStore`` tells the fleet which revision of the key it runs, for
/// `loupe status` and `loupe set … --wait-applied`.
///
/// ```swift
/// let store = try EtcdStore(endpoints: endpoints, key: "/fleet/settings", statusReporting: EtcdStatusReporting())
/// ```
///
/// After each commit (its own, another process's, the first load) and each outside change it refuses, the
/// root puts a small JSON report under `KEY/.status/NAME`: the revision it runs, when it took it, and the
/// newest revision it refused with the reason. The report lives with a lease that the store renews: when
/// the process dies, the report goes when the lease runs out; when the store is released, at once.
public struct EtcdStatusReporting: Sendable, Equatable {
    /// The name the root reports under: the host's by default. Roots that share a host and a key need
    /// names of their own.
    public var name: String
    /// How long a report outlives a process that stopped renewing it: 10 seconds by default.
    public var lease: Duration

    /// Reporting under `name` (the host's name by default), with a lease of `lease`.
    public init(name: String = EtcdStatusReporting.hostName, lease: Duration = .seconds(10)) {
        self.name = name
        self.lease = lease
    }

    /// This host's name.
    public static var hostName: String {
        SettingsChange.Author.thisProcess.host
    }
}

/// A report under the status prefix, as JSON.
struct StatusReport: Codable, Equatable {
    struct Refused: Codable, Equatable {
        var revision: Int64
        var reason: String
    }
    var name: String
    var revision: Int64
    /// Milliseconds since 1970.
    var time: Int64
    var refused: Refused?
}

/// Publishes one root's ``StatusReport`` and keeps its lease alive, on one of the few serial queues that
/// the process's reporters of one cluster share: the root tells it what it applied and returns at once.
///
/// A reporter's calls wait on etcd. On a queue of its own each, a process with many roots (a fleet
/// simulated in one process, a program with a root per tenant) would hold a thread for every reporter
/// whose call is waiting; the shared queues hold a few, and a reporter's own calls still run in turn. The
/// reporters of another cluster have queues of their own, so that a cluster that does not answer holds up
/// only its own reports and lease renewals.
final class EtcdStatusReporter: Sendable {
    private let client: EtcdClient
    private let key: Data
    private let reporting: EtcdStatusReporting
    private let logger: Logger
    private let queue: DispatchQueue
    private let state = Locked(State())

    /// The queues the reporters of each cluster share (by their client's identity), how many have been
    /// handed out (in turn, so that they are shared evenly), and how many of their calls are waiting on etcd.
    private static let sharedQueues = Locked<[String: (queues: [DispatchQueue], handedOut: Int, waiting: Int)]>([:])

    private static func sharedQueue(for client: EtcdClient) -> DispatchQueue {
        sharedQueues.withLock { shared in
            var cluster =
                shared[client.identity] ?? ((0..<16).map { DispatchQueue(label: "loupe.etcd-status.\($0)") }, 0, 0)
            let queue = cluster.queues[cluster.handedOut % cluster.queues.count]
            cluster.handedOut &+= 1
            shared[client.identity] = cluster
            return queue
        }
    }

    /// How many calls of the reporters of `client`'s cluster are waiting on etcd now: at most one a
    /// shared queue. A cluster that hangs holds every one of its queues in a call.
    static func callsWaiting(for client: EtcdClient) -> Int {
        sharedQueues.withLock { $0[client.identity]?.waiting ?? 0 }
    }

    /// Calls etcd, counted in ``callsWaiting(for:)`` while it waits.
    private func call<Request: Encodable, Response: Decodable>(
        _ path: String, _ request: Request, as response: Response.Type, refusal: SettingsError.Code
    ) throws -> Response {
        let identity = client.identity
        Self.sharedQueues.withLock { $0[identity]?.waiting += 1 }
        defer { Self.sharedQueues.withLock { $0[identity]?.waiting -= 1 } }
        return try client.call(path, request, as: response, repetition: .safe, refusal: refusal)
    }

    private struct State {
        var report: StatusReport?
        var published: StatusReport?
        var lease: Int64?
        var scheduled = false
        var cancelled = false
        /// Whether the last failure was logged as a warning (later ones are debug until one succeeds).
        var warned = false
    }

    init(client: EtcdClient, prefix: Data, reporting: EtcdStatusReporting, logger: Logger) {
        self.client = client
        self.key = prefix + Data(reporting.name.utf8)
        self.reporting = reporting
        self.logger = logger
        queue = Self.sharedQueue(for: client)
        scheduleRenewal()
    }

    /// Renews the lease a third of its length from now, and again after that, until cancelled.
    private func scheduleRenewal() {
        let interval = max(reporting.lease / 3, .milliseconds(100))
        queue.asyncAfter(deadline: .now() + interval.timeInterval) { [weak self] in
            guard let self, !self.state.withLock({ $0.cancelled }) else { return }
            keepAlive()
            scheduleRenewal()
        }
    }

    /// Records that the root runs `revision`, or refused `refused`, and publishes it soon: after a pause
    /// of 50 to 250 ms, so that a fleet's reports do not compete with the change itself reaching the rest
    /// of the fleet's roots (and do not all reach etcd at once), and so that changes meanwhile make one
    /// report.
    func applied(_ revision: Int64, refused: StatusReport.Refused?) {
        let schedule = state.withLock { state -> Bool in
            guard !state.cancelled else { return false }
            var report = state.report ?? StatusReport(name: reporting.name, revision: 0, time: 0)
            if let refused {
                report.refused = refused
            } else {
                report.revision = revision
                report.time = Int64((Date().timeIntervalSince1970 * 1000).rounded())
                if let old = report.refused, old.revision <= revision { report.refused = nil }
            }
            state.report = report
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if schedule {
            queue.asyncAfter(deadline: .now() + .milliseconds(Int.random(in: 50...250))) { [weak self] in
                self?.publish()
            }
        }
    }

    /// Puts the latest report, under a lease (granted first if there is none).
    private func publish() {
        guard
            let report = state.withLock({ state -> StatusReport? in
                state.scheduled = false
                return state.cancelled ? nil : state.report
            })
        else { return }
        do {
            try put(report)
        } catch let error as SettingsError where error.reason.contains("lease not found") {
            // The lease ran out (the process was stopped longer than it lasts): a new one.
            state.withLock { $0.lease = nil }
            do { try put(report) } catch { failed(error) }
        } catch {
            failed(error)
        }
    }

    private func put(_ report: StatusReport) throws {
        let lease = try currentLease()
        let value = try JSONEncoder().encode(report)
        _ = try call(
            "/v3/kv/put", PutRequest(key: GatewayBytes(key), value: GatewayBytes(value), lease: GatewayInt(lease)),
            as: PutResponse.self, refusal: .unwritable)
        state.withLock {
            $0.published = report
            $0.warned = false
        }
    }

    /// The lease the report lives with, granted now if there is none.
    private func currentLease() throws -> Int64 {
        if let lease = state.withLock({ $0.lease }) { return lease }
        let seconds = max(Int64(reporting.lease.components.seconds), 1)
        let response = try call(
            "/v3/lease/grant", LeaseGrantRequest(TTL: GatewayInt(seconds)), as: LeaseGrantResponse.self,
            refusal: .unwritable)
        guard let lease = response.ID?.value else {
            throw SettingsError(
                .unavailable, store: client.storeName, reason: "etcd granted no lease for the status report")
        }
        state.withLock { $0.lease = lease }
        return lease
    }

    /// Renews the lease; when it is gone, publishes the report again under a new one.
    private func keepAlive() {
        guard let lease = state.withLock({ $0.cancelled ? nil : $0.lease }) else { return }
        do {
            let response = try call(
                "/v3/lease/keepalive", LeaseRequest(ID: GatewayInt(lease)), as: LeaseKeepAliveResponse.self,
                refusal: .unwritable)
            if (response.result?.TTL?.value ?? 0) <= 0 {
                state.withLock { $0.lease = nil }
                publish()
            }
        } catch {
            failed(error)
        }
    }

    private func failed(_ error: any Error) {
        let first = state.withLock { state in
            defer { state.warned = true }
            return !state.warned
        }
        let metadata: Logger.Metadata = [
            "store": "\(client.storeName)", "status": "\(reporting.name)", "error": "\(logDescription(of: error))",
        ]
        if first {
            logger.warning(
                "cannot publish which revision this root runs; trying again with the next change or renewal",
                metadata: metadata)
        } else {
            logger.debug("cannot publish which revision this root runs", metadata: metadata)
        }
    }

    /// Stops renewing and takes the report away (its lease revoked), waiting at most a request's timeout.
    func cancel() {
        let lease = state.withLock { state -> Int64? in
            state.cancelled = true
            return state.lease
        }
        guard let lease else { return }
        _ = try? client.call(
            "/v3/lease/revoke", LeaseRequest(ID: GatewayInt(lease)), as: PutResponse.self, repetition: .safe,
            refusal: .unwritable)
    }

    // MARK: Reading the reports

    /// The reports under `prefix`; a value that is not a report is left out with a warning naming its key.
    static func reports(client: EtcdClient, prefix: Data, logger: Logger) throws -> [StatusReport] {
        let response = try client.call(
            "/v3/kv/range", RangeRequest(prefix: prefix), as: RangeResponse.self, repetition: .safe,
            refusal: .unreadable)
        var reports: [StatusReport] = []
        for keyValue in response.kvs ?? [] {
            let name = String(decoding: (keyValue.key?.data ?? Data()).dropFirst(prefix.count), as: UTF8.self)
            guard let report = try? JSONDecoder().decode(StatusReport.self, from: keyValue.value?.data ?? Data()),
                report.name == name
            else {
                logger.warning(
                    "ignored a status key that is not a Loupe status report",
                    metadata: [
                        "store": "\(client.storeName)",
                        "key": "\(String(decoding: keyValue.key?.data ?? Data(), as: UTF8.self))",
                    ])
                continue
            }
            reports.append(report)
        }
        return reports.sorted { $0.name < $1.name }
    }
}

extension Duration {
    /// In seconds, for Dispatch.
    fileprivate var timeInterval: DispatchTimeInterval {
        .nanoseconds(
            Int(min(components.seconds, Int64(Int.max / 1_000_000_000))) * 1_000_000_000
                + Int(components.attoseconds / 1_000_000_000))
    }
}
#endif
