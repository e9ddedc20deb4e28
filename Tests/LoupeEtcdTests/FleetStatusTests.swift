import Foundation
import InMemoryLogging
import Logging
import Loupe
import LoupeEtcd
import LoupeTestSupport
import Testing

/// Roots over a real etcd key report which revision they run, under leases of their own.
@Suite("Fleet status: which revision each root over an etcd key runs")
struct FleetStatusTests {
    struct Strict: Codable, Sendable, Equatable, Validated {
        var port = 80
        static let rules: [Rule<Strict>] = [Rule(\.port, .within(1...1024))]
    }

    /// The status once `condition` holds of it, or as it is after 10 seconds.
    func status(of store: EtcdStore, until condition: (AppliedStatus) -> Bool) throws -> AppliedStatus {
        var status = try store.appliedStatus()
        _ = try eventually {
            status = try store.appliedStatus()
            return condition(status)
        }
        return status
    }

    @Test func rootsReportWhatTheyRunAndWhatTheyRefuseAndLeaveWhenReleased() throws {
        let etcd = try SharedEtcd()
        let key = uniqueKey()
        let writer = try EtcdStore(endpoints: etcd.endpoints, key: key)
        let root = try RootLens(default: Strict(), store: writer, watch: false)
        try root.port.set(8)
        let revision = try #require(writer.load().token.number)
        var readers: [RootLens<Strict>] = try ["a", "b"].map { name in
            try RootLens(
                default: Strict(),
                store: EtcdStore(
                    endpoints: etcd.endpoints, key: key,
                    statusReporting: EtcdStatusReporting(name: name, lease: .seconds(2))))
        }
        var status = try status(of: writer) { $0.readers.count == 2 }
        #expect(status.currentRevision == Int(revision) && status.readers.map(\.name) == ["a", "b"])
        #expect(
            status.readers.allSatisfy {
                $0.revision == Int(revision) && $0.refusal == nil && abs($0.time.timeIntervalSinceNow) < 10
            })
        #expect(status.readers(behind: Int(revision)).isEmpty)

        // A value the readers' rule refuses, written past the type (as etcdctl would).
        try etcd.put(key, #"{"port": 5000}"#)
        let refused = try #require(writer.load().token.number)
        status = try self.status(of: writer) { $0.readers.allSatisfy { $0.refusal != nil } }
        #expect(status.readers(behind: Int(refused)).count == 2)
        #expect(
            status.readers.allSatisfy { $0.revision == Int(revision) && $0.refusal?.revision == Int(refused) },
            "\(status.readers)")
        #expect(
            status.readers.first?.refusal?.reason == "port: must be between 1 and 1024, got 5000", "\(status.readers)")
        try etcd.put(key, #"{"port": 443}"#)
        let fixed = try #require(writer.load().token.number)
        status = try self.status(of: writer) { $0.readers.allSatisfy { $0.revision == Int(fixed) } }
        #expect(status.readers.allSatisfy { $0.revision == Int(fixed) && $0.refusal == nil }, "\(status.readers)")

        // Released: its report goes at once (its lease revoked).
        readers.removeLast()
        status = try self.status(of: writer) { $0.readers.count == 1 }
        #expect(status.readers.map(\.name) == ["a"])
        _ = readers
    }

    /// The reporters of one cluster share a few queues; another cluster's have their own, so a cluster
    /// that hangs holds up only its own roots' reports.
    @Test func aClusterThatHangsHoldsUpOnlyItsOwnRootsReports() throws {
        let hung = try EtcdCluster()
        let hungKey = uniqueKey()
        // More roots than a cluster's shared queues, each renewing a lease of 1 s: once the cluster hangs,
        // every one of its queues waits in a call that only the request timeout (20 s) ends.
        var stuck: [RootLens<Strict>] = try (0..<20).map { index in
            try RootLens(
                default: Strict(),
                store: EtcdStore(
                    endpoints: hung.endpoints, key: hungKey, requestTimeout: .seconds(20),
                    statusReporting: EtcdStatusReporting(name: "stuck-\(index)", lease: .seconds(1))))
        }
        let hungStore = try EtcdStore(endpoints: hung.endpoints, key: hungKey)
        let hungStatus = try status(of: hungStore) { $0.readers.count == stuck.count }
        #expect(hungStatus.readers.count == stuck.count)
        hung.freeze(0)
        // Each shared queue's next lease renewal (every third of a second) goes into a call that waits.
        #expect(eventually(deadline: .seconds(10)) { hungStore.statusCallsWaiting == 16 })

        // A root over another cluster reports a change in well under the hung calls' 20 s.
        let etcd = try SharedEtcd()
        let key = uniqueKey()
        let writer = try EtcdStore(endpoints: etcd.endpoints, key: key)
        let root = try RootLens(default: Strict(), store: writer, watch: false)
        let reader = try RootLens(
            default: Strict(),
            store: EtcdStore(
                endpoints: etcd.endpoints, key: key,
                statusReporting: EtcdStatusReporting(name: "live", lease: .seconds(2))))
        try root.port.set(8)
        let revision = try #require(writer.load().token.number)
        let status = try status(of: writer) { $0.readers.first?.revision == Int(revision) }
        #expect(
            status.readers.map(\.name) == ["live"] && status.readers.first?.revision == Int(revision),
            "\(status.readers)")
        #expect(reader.port.value == 8)

        // Killed, the hung member refuses connections: the stuck roots' calls end, and so do their releases.
        hung.kill(0)
        stuck.removeAll()
    }

    @Test func aStatusKeyWrittenBySomethingElseIsIgnoredWithAWarning() throws {
        let etcd = try SharedEtcd()
        let key = uniqueKey()
        try etcd.put(key + "/.status/intruder", "not a report")
        let logs = InMemoryLogHandler()
        let store = try EtcdStore(endpoints: etcd.endpoints, key: key, logger: Logger(label: "test") { _ in logs })
        let status = try store.appliedStatus()
        #expect(status.readers.isEmpty && status.currentRevision == 0)
        #expect(
            logs.entries.contains {
                "\($0.message)".contains("not a Loupe status report") && "\($0.metadata)".contains("intruder")
            })

        // A root over a key that holds nothing yet runs revision 0, and says so.
        let reader = try RootLens(
            default: Strict(),
            store: EtcdStore(
                endpoints: etcd.endpoints, key: key, statusReporting: EtcdStatusReporting(name: "early")))
        let reported = try self.status(of: store) { !$0.readers.isEmpty }
        #expect(
            reported.readers.map(\.name) == ["early"] && reported.readers.first?.revision == 0
                && reported.readers(behind: 0).isEmpty)
        _ = reader
        #expect(
            try RootLens(default: Strict(), store: FileStore(path: "/tmp/loupe-none-\(UUID()).json")).appliedStatus()
                == nil)
    }
}
