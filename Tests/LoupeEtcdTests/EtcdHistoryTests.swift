import Foundation
import Loupe
import LoupeEtcd
import LoupeTestSupport
import Testing

/// An etcd key's own revisions as a root's history, and a rollback to one of them.
@Suite("History over etcd: the key's revisions")
struct EtcdHistoryTests {
    @Test func theKeysRevisionsAreItsHistoryAndARollbackWritesOneAgain() throws {
        let etcd = try SharedEtcd()
        let key = uniqueKey()
        let root = try RootLens(
            default: FleetSettings(), store: EtcdStore(endpoints: etcd.endpoints, key: key), watch: false)
        try root.server.port.set(9000)
        try root.server.host.set("example.org")
        try etcd.put(key, #"{"server": {"port": 9001, "host": "example.org"}}"#)
        try root.reload()

        let history = try root.history()
        #expect(!history.recordsAuthors && history.base == nil)
        #expect(history.changes.count == 3 && history.changes.allSatisfy { $0.time == nil && $0.author == nil })
        #expect(history.changes.map(\.changedPaths) == [["server.port"], ["server.host"], ["server.port"]])
        let first = try #require(history.changes.first?.revision)
        #expect(history.baseRevision == first - 1)
        #expect(try history.document(after: first) == JSONValue(parsing: #"{"server": {"port": 9000}}"#))

        try root.rollback(to: first)
        #expect(root.value.server == FleetSettings.Server(host: "localhost", port: 9000))
        #expect(try root.history().changes.count == 4)
        #expect(
            try etcd.value(of: key).map { try JSONValue(parsing: $0) }
                == JSONValue(parsing: #"{"server": {"port": 9000}}"#))
        let missing = #expect(throws: SettingsError.self) { try root.rollback(to: first - 5) }
        #expect(missing?.code == .notFound, "\(String(describing: missing))")
    }
}
