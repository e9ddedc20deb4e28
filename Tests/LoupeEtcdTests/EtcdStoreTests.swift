import Foundation
import InMemoryLogging
import Logging
import Loupe
import LoupeEtcd
import LoupeTesting
import LoupeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

struct FleetSettings: Codable, Sendable, Equatable {
    struct Server: Codable, Sendable, Equatable {
        var host = "localhost"
        var port = 8080
    }
    var server = Server()
    var features: [String: Bool] = [:]
}

struct Counter: Codable, Sendable, Equatable {
    var count = 0
}

func uniqueKey() -> String { "/loupe-tests/\(UUID().uuidString)" }

/// Decodes what `etcdctl get` printed, as a root over `defaultValue` reads it.
func decoded<T: Codable>(over defaultValue: T, _ text: String?) throws -> T? {
    try text.map { try decodeStored(over: defaultValue, Data($0.utf8)) }
}

@Suite("EtcdStore against a real etcd")
struct EtcdStoreTests {
    @Test func passesTheStoreConformanceSuite() async throws {
        let etcd = try SharedEtcd()
        let key = uniqueKey()
        let endpoints = etcd.endpoints
        try await StoreConformanceTest { try EtcdStore(endpoints: endpoints, key: key) }.run()
    }

    @Test func aFleetsDefaultsInEtcdAreAWatchedLayerUnderAHostsFile() throws {
        let etcd = try SharedEtcd()
        let key = uniqueKey()
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        try etcd.put(key, #"{"server":{"host":"fleet.internal"},"features":{"beta":true}}"#)
        let fleet = try EtcdStore(endpoints: etcd.endpoints, key: key)
        let store = LayeredStore(layers: [.store(fleet)], top: FileStore(path: directory.file("host.json")))
        let root = try RootLens(default: FleetSettings(), store: store)
        #expect(root.value.server.host == "fleet.internal" && root.value.features == ["beta": true])

        // The host's own change goes to its file; etcd is only read.
        try root.server.port.set(9999)
        #expect(try etcd.value(of: key) == #"{"server":{"host":"fleet.internal"},"features":{"beta":true}}"#)
        #expect(try String(contentsOfFile: directory.file("host.json"), encoding: .utf8).contains("9999"))
        // A fleet-wide change reaches the host where the host did not override it.
        try etcd.put(key, #"{"server":{"host":"fleet2.internal","port":1},"features":{}}"#)
        #expect(eventually { root.value.server.host == "fleet2.internal" })
        #expect(root.value.server.port == 9999)
        #expect(try root.provenance(ofPath: "server.host").source == .layer(fleet.description))
        #expect(try root.provenance(ofPath: "server.port").overrides == [.layer(fleet.description), .defaultValue])
    }

    @Test func aValueMakesARoundTrip() throws {
        let etcd = try SharedEtcd()
        let key = uniqueKey()
        let root = try RootLens(default: FleetSettings(), store: EtcdStore(endpoints: etcd.endpoints, key: key))
        #expect(try etcd.value(of: key) == nil)  // the default is not written by itself

        try root.server.port.set(9090)
        try root[\.features["beta"]].set(true)
        let stored = try decoded(over: FleetSettings(), etcd.value(of: key))
        #expect(stored?.server.port == 9090 && stored?.features["beta"] == true)

        let other = try RootLens(default: FleetSettings(), store: EtcdStore(endpoints: etcd.endpoints, key: key))
        #expect(other.value == root.value)

        try root.remove()
        #expect(try etcd.value(of: key) == nil)
        #expect(root.value == FleetSettings())
    }

    @Test func etcdctlReadsWhatLoupeWroteAndItsWritesReachObservers() throws {
        let etcd = try SharedEtcd()
        let key = uniqueKey()
        let root = try RootLens(default: FleetSettings(), store: EtcdStore(endpoints: etcd.endpoints, key: key))
        try root.server.host.set("db.internal")
        // Only what differs from the defaults is stored.
        #expect(try etcd.value(of: key) == #"{"server":{"host":"db.internal"}}"#)

        let ports = Recorder<Int>()
        let token = root.server.port.observe { ports.append($0) }
        defer { token.cancel() }
        try etcd.put(key, #"{"features":{},"server":{"host":"db.internal","port":7070}}"#)
        #expect(eventually { ports.all.last == 7070 })
        #expect(root.server.port.value == 7070)

        // A delete from outside returns the lens to its default.
        try etcd.etcdctl(["del", key])
        #expect(eventually { root.value == FleetSettings() })
    }

    @Test func updatesFromManyThreadsAreNeverLost() throws {
        let etcd = try SharedEtcd()
        let key = uniqueKey()
        let first = try RootLens(default: Counter(), store: EtcdStore(endpoints: etcd.endpoints, key: key))
        let second = try RootLens(default: Counter(), store: EtcdStore(endpoints: etcd.endpoints, key: key))
        concurrently(4) { thread in
            let lens = thread % 2 == 0 ? first : second
            for _ in 0..<25 { try! lens.count.update { $0 += 1 } }
        }
        #expect(try decoded(over: Counter(), etcd.value(of: key))?.count == 100)
        #expect(eventually { first.value.count == 100 && second.value.count == 100 })
    }

    @Test func aCorruptValueIsReportedByKeyAndPathAndNeverOverwritten() throws {
        let etcd = try SharedEtcd()
        let key = uniqueKey()
        let bad = #"{"features":{},"server":{"host":"h","port":"80a"}}"#
        try etcd.put(key, bad)
        #expect {
            try RootLens(default: FleetSettings(), store: EtcdStore(endpoints: etcd.endpoints, key: key))
        } throws: { error in
            let message = "\(error)"
            return (error as? SettingsError)?.code == .corrupt && message.contains("etcd key \(key)")
                && message.contains(#"server.port: expected Int, found String "80a""#)
        }
        #expect(try etcd.value(of: key) == bad)

        // A bad outside edit to a running lens is reported, the good value kept, and nothing overwritten.
        try etcd.put(key, #"{"features":{},"server":{"host":"h","port":1}}"#)
        let root = try RootLens(default: FleetSettings(), store: EtcdStore(endpoints: etcd.endpoints, key: key))
        let errors = Recorder<String>()
        let token = root.observeErrors { errors.append("\($0)") }
        defer { token.cancel() }
        try etcd.put(key, bad)
        #expect(eventually { errors.count > 0 })
        #expect(errors.all.first?.contains("server.port") == true)
        #expect(root.server.port.value == 1)
        #expect(throws: SettingsError.self) { try root.server.port.set(2) }
        #expect(try etcd.value(of: key) == bad)
    }

    @Test func withEtcdUnreachableAStoreFailsAtOnceWithAClearError() throws {
        let endpoint = "http://127.0.0.1:\(freePort())"
        #expect {
            try RootLens(default: Counter(), store: EtcdStore(endpoints: [endpoint], key: "/k"))
        } throws: { error in
            let message = "\(error)"
            return (error as? SettingsError)?.code == .unavailable && message.contains("cannot reach etcd")
                && message.contains(endpoint) && message.contains("connection refused")
        }
    }

    @Test func badEndpointsAreRefusedAndCredentialsInThemNeverShown() throws {
        #expect {
            try EtcdStore(endpoints: ["127.0.0.1:2379"], key: "/k")
        } throws: { "\($0)".contains("expected http://host:port or https://host:port") }
        #expect {
            try EtcdStore(endpoints: ["http://root:hunter2@127.0.0.1:2379"], key: "/k")
        } throws: { "\($0)".contains("pass them as EtcdCredentials") && !"\($0)".contains("hunter2") }
        #expect(throws: SettingsError.self) { try EtcdStore(endpoints: [], key: "/k") }
        #expect(throws: SettingsError.self) { try EtcdStore(endpoints: ["http://127.0.0.1:2379"], key: "") }
    }
}

/// The fault tests: each starts its own cluster, because it kills members.
@Suite("EtcdStore when etcd fails", .serialized)
struct EtcdFaultTests {
    @Test func twoProcessesIncrementingThroughTwoEndpointsLoseNothing() throws {
        let cluster = try EtcdCluster(size: 3)
        defer { cluster.stop() }
        let key = uniqueKey()
        let writers = try [0, 1].map { member in
            try ChildProcess(testHelper, ["etcd-increment", cluster.endpoints[member], key, "500"])
        }
        for writer in writers {
            #expect(writer.wait(limit: .seconds(600)) == 0, "\(writer.errorOutput)")
        }
        #expect(try decoded(over: Counter(), cluster.value(of: key))?.count == 1000)
    }

    @Test func whileEtcdIsDownReadsServeTheLastValueAndUpdatesFailFastAndChangeNothing() throws {
        let cluster = try EtcdCluster()
        defer { cluster.stop() }
        let key = uniqueKey()
        // Timeouts longer than any test: an update that waited for one would not fail as the test expects.
        let store = try EtcdStore(
            endpoints: cluster.endpoints, key: key, connectTimeout: .seconds(120), requestTimeout: .seconds(120))
        let root = try RootLens(default: Counter(), store: store)
        try root.count.set(5)
        let seen = Recorder<Int>()
        let token = root.count.observe { seen.append($0) }
        defer { token.cancel() }

        cluster.kill(0)
        // Fail fast: a refused connection is an answer, not a timeout; the error says which.
        #expect {
            try root.count.update { $0 += 1 }
        } throws: { error in
            let message = "\(error)"
            return (error as? SettingsError)?.code == .unavailable && message.contains(cluster.endpoints[0])
                && message.contains("refused") && !message.contains("within") && !message.contains("timed out")
        }
        #expect(root.count.value == 5)
        #expect(seen.all.isEmpty)

        try cluster.restart(0)
        #expect(eventually(deadline: .seconds(20)) { (try? root.count.update { $0 += 1 }) != nil })
        #expect(root.count.value == 6)
        #expect(try decoded(over: Counter(), cluster.value(of: key))?.count == 6)
    }

    @Test func etcdKilledAndRestartedDuringAStreamOfUpdatesLosesNothingCommitted() throws {
        let cluster = try EtcdCluster()
        defer { cluster.stop() }
        let key = uniqueKey()
        let root = try RootLens(default: Counter(), store: EtcdStore(endpoints: cluster.endpoints, key: key))

        struct Tally { var succeeded = 0, unknown = 0, failed = 0, stop = false }
        let tally = Locked(Tally())
        let writer = Thread {
            while !tally.withLock({ $0.stop }) {
                do {
                    try root.count.update { $0 += 1 }
                    tally.withLock { $0.succeeded += 1 }
                } catch let error as SettingsError where "\(error)".contains("may or may not have been applied") {
                    tally.withLock { $0.unknown += 1 }
                } catch {
                    tally.withLock { $0.failed += 1 }
                    usleep(20_000)
                }
            }
        }
        writer.start()
        #expect(eventually(deadline: .seconds(30)) { tally.withLock { $0.succeeded } >= 50 })
        cluster.kill(0)
        #expect(eventually(deadline: .seconds(30)) { tally.withLock { $0.failed } >= 5 })
        let whileDown = tally.withLock { $0.succeeded }
        try cluster.restart(0)
        #expect(eventually(deadline: .seconds(30)) { tally.withLock { $0.succeeded } >= whileDown + 50 })
        tally.withLock { $0.stop = true }
        #expect(eventually(deadline: .seconds(30)) { writer.isFinished })

        let final = tally.withLock { $0 }
        let stored = try #require(try decoded(over: Counter(), cluster.value(of: key)))
        // Every acknowledged update is there; an update whose answer was lost in the crash may be too.
        #expect(stored.count >= final.succeeded && stored.count <= final.succeeded + final.unknown)
        #expect(eventually { root.count.value == stored.count })
    }

    @Test func whenAMemberDiesTheStoreMovesToTheNext() throws {
        let cluster = try EtcdCluster(size: 3)
        defer { cluster.stop() }
        let key = uniqueKey()
        let root = try RootLens(default: Counter(), store: EtcdStore(endpoints: cluster.endpoints, key: key))
        try root.count.set(1)
        let seen = Recorder<Int>()
        let token = root.count.observe { seen.append($0) }
        defer { token.cancel() }

        cluster.kill(0)
        #expect(eventually(deadline: .seconds(20)) { (try? root.count.update { $0 += 1 }) != nil })
        #expect(root.count.value == 2)
        // The watch moved too: a write through the third member reaches the observer.
        try cluster.put(key, #"{"count":40}"#, endpoint: 2)
        #expect(eventually(deadline: .seconds(20)) { seen.all.last == 40 })
    }

    @Test func aWatchResumesFromTheLastSeenRevisionAfterARestart() throws {
        let cluster = try EtcdCluster(size: 3)
        defer { cluster.stop() }
        let key = uniqueKey()
        // The lens talks to member 0 only; the changes are made through member 1 while member 0 is down.
        let logs = InMemoryLogHandler()
        var logger = Logger(label: "test") { _ in logs }
        logger.logLevel = .debug
        let root = try RootLens(
            default: Counter(), store: EtcdStore(endpoints: [cluster.endpoints[0]], key: key, logger: logger))
        let seen = Recorder<Int>()
        let token = root.count.observe { seen.append($0) }
        defer { token.cancel() }

        cluster.kill(0)
        try cluster.waitUntilServing(members: [1])  // member 0 may have been the leader
        try cluster.put(key, #"{"count":1}"#, endpoint: 1)
        try cluster.put(key, #"{"count":2}"#, endpoint: 1)
        try cluster.restart(0)
        #expect(eventually(deadline: .seconds(20)) { root.count.value == 2 })
        // The value is visible once committed; the watch thread calls observers just after.
        #expect(eventually { seen.all.last == 2 })
        #expect(logs.entries.contains { "\($0.message)".contains("etcd watch lost") })
        #expect(logs.entries.contains { "\($0.message)".contains("etcd watch resumed") })
        #expect(!logs.entries.contains { "\($0.message)".contains("compacted") })
    }

    @Test func aWatchWhoseRevisionWasCompactedReloadsTheKey() throws {
        let cluster = try EtcdCluster(size: 3)
        defer { cluster.stop() }
        let key = uniqueKey()
        let logs = InMemoryLogHandler()
        let root = try RootLens(
            default: Counter(),
            store: EtcdStore(endpoints: [cluster.endpoints[0]], key: key, logger: Logger(label: "test") { _ in logs }))
        let seen = Recorder<Int>()
        let token = root.count.observe { seen.append($0) }
        defer { token.cancel() }

        cluster.kill(0)
        try cluster.waitUntilServing(members: [1])  // member 0 may have been the leader
        try cluster.put(key, #"{"count":1}"#, endpoint: 1)
        try cluster.put(key, #"{"count":2}"#, endpoint: 1)
        try cluster.put("/loupe-tests/other", "x", endpoint: 1)
        let compact = try cluster.etcdctl(["compact", "\(try cluster.revision())", "--physical"], endpoint: 1)
        #expect(compact.status == 0, "\(compact.error)")
        try cluster.restart(0)
        #expect(eventually(deadline: .seconds(20)) { root.count.value == 2 })
        // The value is visible once committed; the watch thread calls observers just after.
        #expect(eventually { seen.all.last == 2 })
        #expect(logs.entries.contains { "\($0.message)".contains("compacted") })
    }
}

/// Authentication and TLS, each against a cluster set up for it.
@Suite("EtcdStore with authentication and TLS")
struct EtcdSecurityTests {
    @Test func anAuthenticatedClusterNeedsTheRightCredentialsWhichAreNeverShown() throws {
        // Tokens expire after a second, so the store has to authenticate again.
        let cluster = try EtcdCluster(extraArguments: ["--auth-token", "simple", "--auth-token-ttl", "1"])
        defer { cluster.stop() }
        let password = "s3cret-Pa55"
        #expect(try cluster.etcdctl(["user", "add", "root:\(password)"]).status == 0)
        #expect(try cluster.etcdctl(["auth", "enable"]).status == 0)
        cluster.etcdctlArguments = ["--user", "root:\(password)"]
        let key = uniqueKey()

        let logs = InMemoryLogHandler()
        var logger = Logger(label: "test") { _ in logs }
        logger.logLevel = .trace
        let credentials = EtcdCredentials(username: "root", password: password)
        let store = try EtcdStore(endpoints: cluster.endpoints, key: key, credentials: credentials, logger: logger)
        let root = try RootLens(default: Counter(), store: store, logger: logger)
        try root.count.set(1)
        #expect(try cluster.value(of: key) == #"{"count":1}"#)
        let seen = Recorder<Int>()
        let token = root.count.observe { seen.append($0) }
        defer { token.cancel() }
        try cluster.put(key, #"{"count":7}"#)
        #expect(eventually { seen.all.last == 7 })

        sleep(3)  // the token has expired
        try root.count.update { $0 += 1 }
        #expect(try cluster.value(of: key) == #"{"count":8}"#)

        #expect {
            try RootLens(
                default: Counter(),
                store: EtcdStore(
                    endpoints: cluster.endpoints, key: key,
                    credentials: EtcdCredentials(username: "root", password: "wrong-\(password)")))
        } throws: { error in
            "\(error)".contains("did not accept the credentials of user root") && !"\(error)".contains(password)
        }
        #expect {
            try RootLens(default: Counter(), store: EtcdStore(endpoints: cluster.endpoints, key: key))
        } throws: { "\($0)".contains("refused access without credentials") }

        for text in ["\(store)", String(reflecting: store), "\(credentials)", String(reflecting: credentials)] {
            #expect(!text.contains(password))
        }
        #expect(!logs.entries.isEmpty)
        for entry in logs.entries {
            #expect(!"\(entry.message) \(entry.metadata)".contains(password))
        }
    }

    @Test func tlsWithAClientCertificate() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let pki = try TestPKI(in: directory)
        let cluster = try EtcdCluster(
            extraArguments: [
                "--cert-file", pki.serverCertificate, "--key-file", pki.serverKey, "--client-cert-auth",
                "--trusted-ca-file", pki.authority,
            ],
            scheme: "https",
            etcdctlArguments: ["--cacert", pki.authority, "--cert", pki.clientCertificate, "--key", pki.clientKey])
        defer { cluster.stop() }
        let key = uniqueKey()

        let tls = EtcdTLS(
            certificateAuthorityFile: pki.authority, certificateFile: pki.clientCertificate,
            privateKeyFile: pki.clientKey)
        let root = try RootLens(default: Counter(), store: EtcdStore(endpoints: cluster.endpoints, key: key, tls: tls))
        try root.count.set(3)
        #expect(try cluster.value(of: key) == #"{"count":3}"#)
        let seen = Recorder<Int>()
        let token = root.count.observe { seen.append($0) }
        defer { token.cancel() }
        try cluster.put(key, #"{"count":4}"#)
        #expect(eventually { seen.all.last == 4 })

        // Without a client certificate, or trusting the wrong authority, the handshake fails, clearly.
        let withoutCertificate = EtcdTLS(certificateAuthorityFile: pki.authority)
        #expect {
            try RootLens(
                default: Counter(), store: EtcdStore(endpoints: cluster.endpoints, key: key, tls: withoutCertificate))
        } throws: { ($0 as? SettingsError)?.code == .unavailable && "\($0)".contains("cannot reach etcd") }
        #expect {
            try RootLens(default: Counter(), store: EtcdStore(endpoints: cluster.endpoints, key: key))
        } throws: { "\($0)".contains("TLS") || "\($0)".contains("certificate") }
        #expect {
            try EtcdStore(
                endpoints: cluster.endpoints, key: key,
                tls: EtcdTLS(certificateAuthorityFile: directory.file("missing.pem")))
        } throws: { "\($0)".contains("cannot read the CA certificate \(directory.file("missing.pem"))") }
    }
}

/// A certificate authority, a server certificate for 127.0.0.1 and a client certificate, made with openssl.
struct TestPKI {
    let authority: String
    let serverCertificate: String
    let serverKey: String
    let clientCertificate: String
    let clientKey: String

    init(in directory: TemporaryDirectory) throws {
        func openssl(_ arguments: [String]) throws {
            let result = try run("/usr/bin/env", ["openssl"] + arguments)
            guard result.status == 0 else {
                throw EtcdTestError(message: "openssl \(arguments.first ?? ""): \(result.error)")
            }
        }
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let authority = directory.file("ca.pem")
        self.authority = authority
        try openssl(
            ["req", "-x509"] + key + [
                "-keyout", directory.file("ca.key"), "-out", authority, "-days", "2", "-subj", "/CN=Loupe test CA",
            ])
        func issue(_ name: String, extensions: String) throws -> (String, String) {
            let certificate = directory.file("\(name).pem")
            let privateKey = directory.file("\(name).key")
            try extensions.write(toFile: directory.file("\(name).ext"), atomically: true, encoding: .utf8)
            try openssl(
                ["req"] + key + ["-keyout", privateKey, "-out", directory.file("\(name).csr"), "-subj", "/CN=\(name)"])
            try openssl([
                "x509", "-req", "-in", directory.file("\(name).csr"), "-CA", authority, "-CAkey",
                directory.file("ca.key"),
                "-CAcreateserial", "-out", certificate, "-days", "2", "-extfile", directory.file("\(name).ext"),
            ])
            return (certificate, privateKey)
        }
        // etcd's gateway calls its own gRPC server with the server certificate, so that one needs clientAuth too.
        let server = try issue(
            "server", extensions: "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n")
        let client = try issue("root", extensions: "extendedKeyUsage=clientAuth\n")
        serverCertificate = server.0
        serverKey = server.1
        clientCertificate = client.0
        clientKey = client.1
    }
}
