#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// A real etcd cluster on loopback for one test: 1 or 3 members, each with a temporary data directory and
/// free ports, started by `init` and stopped by `stop()` (or when released). Members can be killed and
/// restarted on the same ports and data, as a crash and a reboot would.
public final class EtcdCluster: EtcdControl, @unchecked Sendable {
    public struct Member {
        public let name: String
        public let clientURL: String
        public let peerURL: String
        public let dataDirectory: String
    }

    /// Set once, by `init` (again only when a port it chose was taken meanwhile).
    public private(set) var members: [Member] = []
    private let directory: TemporaryDirectory
    private let extraArguments: [String]
    private let processes = Locked<[Int: ChildProcess]>([:])
    private let clientArguments: Locked<[String]>

    /// Added to every `etcdctl` command line: TLS files, `--user` once authentication is on.
    public var etcdctlArguments: [String] {
        get { clientArguments.withLock { $0 } }
        set { clientArguments.withLock { $0 = newValue } }
    }

    /// The members' client URLs, in order.
    public var endpoints: [String] { members.map(\.clientURL) }

    /// Starts `size` members and waits until the cluster serves (it has a leader).
    ///
    /// - Parameter extraArguments: Added to every member's command line (`--auth-token`, TLS flags, ...).
    /// - Parameter scheme: `http`, or `https` when `extraArguments` set up TLS.
    /// - Parameter etcdctlArguments: Added to every `etcdctl` command line (TLS files).
    public init(
        size: Int = 1, extraArguments: [String] = [], scheme: String = "http", etcdctlArguments: [String] = []
    ) throws {
        directory = try TemporaryDirectory()
        clientArguments = Locked(etcdctlArguments)
        self.extraArguments = extraArguments
        let directory = self.directory
        // A port found free may be taken by another process before etcd binds it: then start again on
        // other ports.
        for attempt in 1...3 {
            // Every port of one cluster is chosen while the others are still held, so no two are the same.
            let ports = freePorts(2 * size)
            members = (0..<size).map { index in
                Member(
                    name: "member\(index)", clientURL: "\(scheme)://127.0.0.1:\(ports[2 * index])",
                    peerURL: "http://127.0.0.1:\(ports[2 * index + 1])",
                    dataDirectory: directory.file("attempt\(attempt)-member\(index)"))
            }
            for index in members.indices { try start(index) }
            do {
                try waitUntilServing()
                return
            } catch let error as EtcdTestError where attempt < 3 && error.message.contains("address already in use") {
                for index in members.indices { kill(index) }
            } catch {
                stop()
                throw error
            }
        }
    }

    deinit { stop() }

    /// Starts member `index` (again), on its ports and data directory.
    public func start(_ index: Int) throws {
        let member = members[index]
        let cluster = members.map { "\($0.name)=\($0.peerURL)" }.joined(separator: ",")
        let process = try ChildProcess(
            "/usr/bin/env",
            [
                "etcd", "--name", member.name, "--data-dir", member.dataDirectory,
                "--listen-client-urls", member.clientURL, "--advertise-client-urls", member.clientURL,
                "--listen-peer-urls", member.peerURL, "--initial-advertise-peer-urls", member.peerURL,
                "--initial-cluster", cluster, "--initial-cluster-token",
                "loupe-tests-\(ObjectIdentifier(self).hashValue)",
                "--logger", "zap", "--log-level", "error",
            ] + extraArguments)
        processes.withLock { $0[index] = process }
    }

    /// Kills member `index` with SIGKILL, as a crash would, and waits for it to be gone.
    public func kill(_ index: Int) {
        guard let process = processes.withLock({ $0.removeValue(forKey: index) }) else { return }
        process.kill(SIGKILL)
        _ = process.wait(limit: .seconds(10))
    }

    /// Stops member `index` with SIGSTOP, as a machine that hangs would: it keeps its connections and its
    /// port, and answers nothing, until ``kill(_:)``.
    public func freeze(_ index: Int) {
        processes.withLock { $0[index] }?.kill(SIGSTOP)
    }

    /// Restarts member `index` after ``kill(_:)`` and waits until it serves.
    public func restart(_ index: Int) throws {
        try start(index)
        try waitUntilServing(members: [index])
    }

    /// Stops every member.
    public func stop() {
        for index in members.indices { kill(index) }
        directory.cleanUp()
    }

    /// Waits (at most 30 s) until `members` (all by default) answer a linearizable read.
    public func waitUntilServing(members indices: [Int]? = nil) throws {
        for index in indices ?? Array(members.indices) {
            var failedToBind = false
            let served = eventually(deadline: .seconds(30)) {
                guard let process = processes.withLock({ $0[index] }) else { return false }
                // A member that could not bind its port has exited: no use waiting for it.
                if process.errorOutput.contains("address already in use") {
                    failedToBind = true
                    return true
                }
                let result = try? etcdctl(["get", "/loupe-tests/ready"], endpoint: index)
                return result?.status == 0
            }
            if !served || failedToBind {
                let log = processes.withLock { $0[index]?.errorOutput } ?? ""
                throw EtcdTestError(message: "etcd \(members[index].name) did not start serving:\n\(log.suffix(2000))")
            }
        }
    }

    /// Runs `etcdctl` against member `endpoint` (all members by default).
    @discardableResult
    public func etcdctl(_ arguments: [String], endpoint: Int? = nil, input: String? = nil) throws -> ProcessOutput {
        let endpoints = endpoint.map { [members[$0].clientURL] } ?? self.endpoints
        return try LoupeTestSupport.etcdctl(endpoints: endpoints, etcdctlArguments + arguments, input: input)
    }
}

/// The etcd the tests share for cases that do not stop it: the one `Scripts/with-services` started
/// (`LOUPE_ETCD_ENDPOINTS`), or else a private single member for this test, started now.
public struct SharedEtcd: EtcdControl {
    public let endpoints: [String]
    /// The private member, when there was no shared one; kept alive as long as this value.
    public let cluster: EtcdCluster?

    public init() throws {
        if let shared = ProcessInfo.processInfo.environment["LOUPE_ETCD_ENDPOINTS"], !shared.isEmpty {
            endpoints = shared.split(separator: ",").map(String.init)
            cluster = nil
        } else {
            let cluster = try EtcdCluster()
            self.cluster = cluster
            endpoints = cluster.endpoints
        }
    }

    /// Runs `etcdctl` against the shared etcd (all its endpoints).
    @discardableResult
    public func etcdctl(_ arguments: [String], endpoint: Int? = nil, input: String? = nil) throws -> ProcessOutput {
        try LoupeTestSupport.etcdctl(endpoints: endpoints, arguments, input: input)
    }
}

/// Runs `etcdctl` (API v3) against `endpoints`.
@discardableResult
public func etcdctl(endpoints: [String], _ arguments: [String], input: String? = nil) throws -> ProcessOutput {
    try run(
        "/usr/bin/env",
        ["etcdctl", "--endpoints=\(endpoints.joined(separator: ","))", "--command-timeout=5s"] + arguments,
        environment: ["ETCDCTL_API": "3"], input: input, limit: .seconds(30))
}

/// What tests do with `etcdctl`, on a cluster of their own or the shared etcd.
public protocol EtcdControl {
    /// Runs `etcdctl` against member `endpoint`, or all of them.
    @discardableResult
    func etcdctl(_ arguments: [String], endpoint: Int?, input: String?) throws -> ProcessOutput
}

extension EtcdControl {
    /// The value of `key` as `etcdctl get --print-value-only` prints it, or nil if it does not exist.
    public func value(of key: String) throws -> String? {
        let result = try etcdctl(["get", key, "--print-value-only"], endpoint: nil, input: nil)
        guard result.status == 0 else { throw EtcdTestError(message: "etcdctl get failed: \(result.error)") }
        let text = result.output.hasSuffix("\n") ? String(result.output.dropLast()) : result.output
        return text.isEmpty ? nil : text
    }

    /// Stores `value` at `key` with `etcdctl put`, through member `endpoint` or any.
    public func put(_ key: String, _ value: String, endpoint: Int? = nil) throws {
        // The value goes through standard input, so that one starting with "-" is not taken for an option.
        let result = try etcdctl(["put", key], endpoint: endpoint, input: value)
        guard result.status == 0 else { throw EtcdTestError(message: "etcdctl put failed: \(result.error)") }
    }

    /// The cluster's current revision.
    public func revision() throws -> Int {
        let result = try etcdctl(["get", "/loupe-tests/revision", "-w", "json"], endpoint: nil, input: nil)
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        return ((object?["header"] as? [String: Any])?["revision"] as? NSNumber)?.intValue ?? 0
    }
}

public struct EtcdTestError: Error, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// A TCP port on 127.0.0.1 that nothing listens on right now.
public func freePort() -> Int { freePorts(1)[0] }

/// `count` different TCP ports on 127.0.0.1 that nothing listens on right now.
///
/// Each port is bound until all are chosen (a port closed at once may be handed out again by the next
/// bind), and a port handed out earlier in this process is not handed out again while others are left.
public func freePorts(_ count: Int) -> [Int] {
    var sockets: [Int32] = []
    defer { sockets.forEach { close($0) } }
    var ports: [Int] = []
    while ports.count < count {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        sockets.append(socket)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { continue }
        let port = Int(UInt16(bigEndian: address.sin_port))
        // Tries at most a few thousand sockets, then takes a port used before rather than none.
        let fresh = handedOutPorts.withLock { $0.insert(port).inserted } || sockets.count > 4096
        if fresh { ports.append(port) }
    }
    return ports
}

private let handedOutPorts = Locked<Set<Int>>([])
