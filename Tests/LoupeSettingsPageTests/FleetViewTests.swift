#if SettingsPage
import DaemonSettings
import Foundation
import Hummingbird
import HummingbirdTesting
import Loupe
import LoupeEtcd
import LoupeSettingsPage
import LoupeTestSupport
import Testing

/// The page's fleet view over a real etcd key: which reader runs which revision, and who refused it and why.
@Suite("Settings page: the fleet's rollout status over etcd")
struct FleetViewTests {
    /// A reader whose rules refuse a timeout over 10 s, where the daemon's allow it.
    struct Strict: Codable, Sendable, Equatable, Validated {
        struct Upstream: Codable, Sendable, Equatable {
            var timeoutSeconds = 5
        }
        var upstream = Upstream()
        static let rules: [Rule<Strict>] = [Rule(\.upstream.timeoutSeconds, .within(1...10))]
    }

    @Test("an etcd store's page shows each reader's revision, the one behind, and the refusal with its reason")
    func fleetStatus() async throws {
        let etcd = try SharedEtcd()
        let key = "/loupe-tests/page-fleet-\(UUID().uuidString)"
        let writer = try EtcdStore(endpoints: etcd.endpoints, key: key)
        let root = try RootLens(default: DaemonSettings(), store: writer, watch: false)
        try await root.upstream.timeoutSeconds.async.set(8)
        let accepting = try RootLens(
            default: DaemonSettings(),
            store: EtcdStore(
                endpoints: etcd.endpoints, key: key, statusReporting: EtcdStatusReporting(name: "accepting")))
        let refusing = try RootLens(
            default: Strict(),
            store: EtcdStore(
                endpoints: etcd.endpoints, key: key, statusReporting: EtcdStatusReporting(name: "refusing")))

        // The page's root writes a value the strict reader refuses.
        let page = SettingsPage(root, configuration: SettingsPage.Configuration(token: "test-token"))
        let router = Router()
        router.addRoutes(page.routes(), atPath: "/settings")
        try await Application(router: router).test(.router) { client in
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: pageHeaders(),
                body: ByteBuffer(string: #"{"path": "upstream.timeoutSeconds", "value": 30}"#)
            ) { response in
                #expect(response.status == .ok, "\(response.text)")
            }
            let revision = try #require(writer.load().token.number)

            // Each reader publishes its report a moment after it applies (or refuses) the revision.
            var status = JSONValue.null
            var reported = false
            let end = ContinuousClock.now + pageDeadline
            while !reported && ContinuousClock.now < end {
                if !status.isNull { try await Task.sleep(for: .milliseconds(50)) }
                status = try await client.execute(uri: "/settings/api/status?token=test-token", method: .get).json
                reported =
                    status[path: "readers"]?.arrayCount == 2
                    && status.reader("accepting")?[path: "revision"] == .integer(Int(revision))
                    && status.reader("refusing")?[path: "refusal.revision"] == .integer(Int(revision))
            }
            #expect(reported, "\(status)")
            #expect(status[path: "currentRevision"] == .integer(Int(revision)))
            #expect(status.reader("accepting")?[path: "behind"] == .bool(false))
            #expect(status.reader("accepting")?[path: "refusal"] == nil)
            // The strict reader still runs the revision before, and says why it refused this one.
            #expect(status.reader("refusing")?[path: "behind"] == .bool(true))
            guard case .string(let reason)? = status.reader("refusing")?[path: "refusal.reason"] else {
                Issue.record("no reason in \(status)")
                return
            }
            #expect(reason.contains("upstream.timeoutSeconds"), "\(reason)")
        }
        #expect(accepting.upstream.timeoutSeconds.value == 30)
        #expect(refusing.upstream.timeoutSeconds.value == 8)
    }
}

extension JSONValue {
    /// The reader named `name` in a rollout status the page's API answers.
    fileprivate func reader(_ name: String) -> JSONValue? {
        guard case .array(let readers)? = self[path: "readers"] else { return nil }
        return readers.first { $0[path: "name"] == .string(name) }
    }

    fileprivate var arrayCount: Int? {
        if case .array(let items) = self { items.count } else { nil }
    }

    fileprivate var isNull: Bool { self == .null }
}
#endif
