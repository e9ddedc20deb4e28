#if Etcd
import AsyncHTTPClient
import Foundation
import Logging
import Loupe
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The event loop that carries every etcd store's HTTP traffic: one thread, separate from the
/// application's event loops, so a store can block its (synchronous) caller on an answer even when the
/// caller is itself running on an event loop. It lives as long as the process, like NIO's singletons.
let etcdEventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

/// A small etcd v3 client over the HTTP/JSON gateway: one POST per call, JSON bodies, and the policies an
/// ``EtcdStore`` needs — fail over to the next endpoint when a member cannot be reached, re-authenticate
/// when a token expires, and never repeat a write whose outcome is unknown.
final class EtcdClient: Sendable {
    /// The endpoints, normalised (`http://127.0.0.1:2379`, no user info, no trailing slash).
    let endpoints: [String]
    let http: HTTPClient
    let credentials: EtcdCredentials?
    let requestTimeout: Duration
    /// The store's description, for errors.
    let storeName: String
    let logger: Logger
    /// What tells this client's cluster and access apart from another's: its endpoints, user (and a
    /// digest of the password) and TLS files. Stores whose clients have one identity may share a watch.
    let identity: String

    private struct State {
        /// The endpoint that answered last; calls start there.
        var preferred = 0
        /// Authentication tokens by endpoint: etcd's simple tokens are only valid on the member that issued them.
        var tokens: [Int: String] = [:]
    }
    private let state = Locked(State())

    init(
        endpoints: [String], tls: EtcdTLS?, credentials: EtcdCredentials?, connectTimeout: Duration,
        requestTimeout: Duration, storeName: String, logger: Logger
    ) throws {
        self.endpoints = endpoints
        self.credentials = credentials
        self.requestTimeout = requestTimeout
        self.storeName = storeName
        self.logger = logger
        let user = credentials.map { "\($0.username):\(String(StableDigest.fnv1a($0.password), radix: 16))" } ?? ""
        identity = [endpoints.joined(separator: ","), user, tls.map { "\($0)" } ?? ""].joined(separator: "\u{0}")

        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: TimeAmount(connectTimeout), read: nil)
        // Fail a call at once when a member refuses connections, so the call can move to the next member
        // (the default keeps retrying the same member until the deadline).
        configuration.connectionPool.retryConnectionEstablishment = false
        // etcd serves gRPC and the gateway on one port and tells them apart by protocol: HTTP/2 would reach gRPC.
        configuration.httpVersion = .http1Only
        configuration.redirectConfiguration = .disallow
        if endpoints.contains(where: { $0.hasPrefix("https://") }) {
            configuration.tlsConfiguration = try Self.tlsConfiguration(tls, storeName: storeName)
        }
        http = HTTPClient(eventLoopGroup: etcdEventLoopGroup, configuration: configuration)
    }

    deinit {
        http.shutdown(queue: .global()) { _ in }
    }

    /// Checks and normalises endpoint strings: `http` or `https`, a host, a port; user info is refused
    /// (credentials belong in ``EtcdCredentials``, where they are never logged).
    static func normalize(_ endpoints: [String], storeName: String) throws -> [String] {
        guard !endpoints.isEmpty else {
            throw StoreErrorFactory.configuration(
                storeName, "no endpoints given (expected at least one, like http://127.0.0.1:2379)")
        }
        return try endpoints.map { text in
            var trimmed = text.trimmingCharacters(in: .whitespaces)
            while trimmed.hasSuffix("/") { trimmed.removeLast() }
            guard let components = URLComponents(string: trimmed),
                let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
                let host = components.host, !host.isEmpty, components.path.isEmpty
            else {
                throw StoreErrorFactory.configuration(
                    storeName,
                    "invalid endpoint \"\(Self.redactUserInfo(text))\" (expected http://host:port or https://host:port)"
                )
            }
            guard components.user == nil, components.password == nil else {
                throw StoreErrorFactory.configuration(
                    storeName,
                    "endpoint \(Self.redactUserInfo(text)) carries credentials; pass them as EtcdCredentials instead")
            }
            return trimmed
        }
    }

    private static func redactUserInfo(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.user != nil || components.password != nil else {
            return text
        }
        components.user = nil
        components.password = nil
        return components.string ?? "<endpoint>"
    }

    private static func tlsConfiguration(_ tls: EtcdTLS?, storeName: String) throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        guard let tls else { return configuration }
        func load<T>(_ what: String, _ path: String, _ body: () throws -> T) throws -> T {
            do {
                return try body()
            } catch {
                throw StoreErrorFactory.configuration(storeName, "cannot read the \(what) \(path): \(error)")
            }
        }
        if let path = tls.certificateAuthorityFile {
            let certificates = try load("CA certificate", path) { try NIOSSLCertificate.fromPEMFile(path) }
            configuration.trustRoots = .certificates(certificates)
        }
        switch (tls.certificateFile, tls.privateKeyFile) {
        case (let certificate?, let key?):
            let chain = try load("client certificate", certificate) { try NIOSSLCertificate.fromPEMFile(certificate) }
            configuration.certificateChain = chain.map { .certificate($0) }
            let privateKey = try load("private key", key) { try NIOSSLPrivateKey(file: key, format: .pem) }
            configuration.privateKey = .privateKey(privateKey)
        case (nil, nil):
            break
        default:
            throw StoreErrorFactory.configuration(
                storeName, "a client certificate needs both certificateFile and privateKeyFile")
        }
        return configuration
    }

    // MARK: Calls

    /// Whether a call may be sent again (to another member) when its outcome is unknown.
    enum Repetition {
        /// Reads, deletes: repeating them changes nothing.
        case safe
        /// A compare-and-swap: if the first attempt landed, a second would fail its comparison, and the
        /// lens would re-run the update on its own result — applying it twice.
        case once
    }

    /// POSTs `body` to `path` (`/v3/kv/range`) and decodes the answer, trying each endpoint in turn from
    /// the one that answered last.
    ///
    /// - Parameter refusal: The error code when etcd refuses the call (permission denied, too large).
    func call<Body: Encodable, Response: Decodable>(
        _ path: String, _ body: Body, as: Response.Type, repetition: Repetition, refusal: SettingsError.Code
    ) throws -> Response {
        let payload = try JSONEncoder().encode(body)
        let first = state.withLock { $0.preferred }
        var unreachable: [String] = []
        for offset in endpoints.indices {
            let index = (first + offset) % endpoints.count
            switch attempt(path, payload, endpoint: index, refusal: refusal) {
            case .answered(let data):
                if offset > 0 {
                    logger.notice(
                        "moved to another etcd member",
                        metadata: ["store": "\(storeName)", "endpoint": "\(endpoints[index])"])
                }
                state.withLock { $0.preferred = index }
                do {
                    return try JSONDecoder().decode(Response.self, from: data)
                } catch {
                    throw SettingsError(
                        .unavailable, store: storeName,
                        reason:
                            "etcd at \(endpoints[index]) gave an answer to \(path) that is not what the v3 API describes"
                    )
                }
            case .notDelivered(let reason):
                unreachable.append("\(endpoints[index]): \(reason)")
            case .outcomeUnknown(let reason):
                guard repetition == .safe else {
                    throw SettingsError(
                        .unavailable, store: storeName,
                        reason:
                            "lost etcd at \(endpoints[index]) after sending the update (\(reason)); it may or may not have been applied, and the watch will show which"
                    )
                }
                unreachable.append("\(endpoints[index]): \(reason)")
            case .refused(let error):
                throw error
            }
        }
        throw SettingsError(
            .unavailable, store: storeName, reason: "cannot reach etcd (\(unreachable.joined(separator: "; ")))")
    }

    enum Outcome: Error {
        /// A 200 answer, with its body.
        case answered(Data)
        /// The request never reached etcd (no connection), or etcd did not act on it (no leader): it is
        /// safe to try another member.
        case notDelivered(String)
        /// The request was sent but no answer came: etcd may have acted on it.
        case outcomeUnknown(String)
        /// etcd answered with an error that another member would give too.
        case refused(SettingsError)

        /// Why the call failed, in a few words (for logs: never a value or a credential).
        var reason: String {
            switch self {
            case .answered: "answered"
            case .notDelivered(let reason), .outcomeUnknown(let reason): reason
            case .refused(let error): error.reason
            }
        }
    }

    private func attempt(
        _ path: String, _ payload: Data, endpoint index: Int, refusal: SettingsError.Code, isRetry: Bool = false
    ) -> Outcome {
        var token: String?
        if credentials != nil {
            switch self.token(for: index) {
            case .success(let value): token = value
            case .failure(let outcome): return outcome
            }
        }
        let reply: Reply
        switch send(path, payload, endpoint: index, token: token, timeout: requestTimeout) {
        case .success(let value): reply = value
        case .failure(let failure):
            return failure.sent ? .outcomeUnknown(failure.reason) : .notDelivered(failure.reason)
        }
        if reply.status == .ok { return .answered(reply.body) }

        let error = try? JSONDecoder().decode(GatewayError.self, from: reply.body)
        let message = error?.text ?? "HTTP \(reply.status.code)"
        switch GRPCStatus(rawValue: error?.status ?? -1) {
        case .unauthenticated? where credentials != nil && !isRetry:
            // The token expired (or the member restarted and forgot it): get a new one, once.
            state.withLock { _ = $0.tokens.removeValue(forKey: index) }
            logger.debug(
                "etcd token no longer valid, authenticating again",
                metadata: ["store": "\(storeName)", "endpoint": "\(endpoints[index])"])
            return attempt(path, payload, endpoint: index, refusal: refusal, isRetry: true)
        case .unauthenticated?, .permissionDenied?,
            .invalidArgument? where message.contains("user name is empty"):
            let user = credentials.map { " as \($0)" } ?? " without credentials"
            return .refused(
                SettingsError(
                    refusal, store: storeName, reason: "etcd at \(endpoints[index]) refused access\(user): \(message)"))
        case .unavailable? where message.contains("no leader") || message.contains("not capable"):
            // The member could not even propose the request: nothing happened, another member may serve it.
            return .notDelivered(message)
        case .unavailable?, .deadlineExceeded?:
            return .outcomeUnknown(message)
        default:
            return .refused(
                SettingsError(refusal, store: storeName, reason: "etcd at \(endpoints[index]) refused: \(message)"))
        }
    }

    /// The gRPC status codes the gateway reports in `code`.
    private enum GRPCStatus: Int {
        case invalidArgument = 3, deadlineExceeded = 4, permissionDenied = 7, unavailable = 14, unauthenticated = 16
    }

    /// The token for `endpoint`, authenticating there first if there is none.
    func token(for index: Int) -> Result<String, Outcome> {
        guard let credentials else {
            return .failure(.refused(StoreErrorFactory.configuration(storeName, "no credentials")))
        }
        if let token = state.withLock({ $0.tokens[index] }) { return .success(token) }
        let payload: Data
        do {
            payload = try JSONEncoder().encode(
                AuthenticateRequest(name: credentials.username, password: credentials.password))
        } catch {
            return .failure(.refused(StoreErrorFactory.configuration(storeName, "cannot encode the credentials")))
        }
        switch send("/v3/auth/authenticate", payload, endpoint: index, token: nil, timeout: requestTimeout) {
        case .failure(let failure):
            return .failure(.notDelivered(failure.reason))
        case .success(let reply):
            if reply.status == .ok,
                let token = (try? JSONDecoder().decode(AuthenticateResponse.self, from: reply.body))?.token
            {
                state.withLock { $0.tokens[index] = token }
                logger.debug(
                    "authenticated to etcd",
                    metadata: [
                        "store": "\(storeName)", "endpoint": "\(endpoints[index])", "user": "\(credentials.username)",
                    ])
                return .success(token)
            }
            let message =
                (try? JSONDecoder().decode(GatewayError.self, from: reply.body))?.text ?? "HTTP \(reply.status.code)"
            if message.contains("no leader") { return .failure(.notDelivered(message)) }
            return .failure(
                .refused(
                    SettingsError(
                        .unavailable, store: storeName,
                        reason:
                            "etcd at \(endpoints[index]) did not accept the credentials of \(credentials): \(message)"))
            )
        }
    }

    /// Forgets the token for `endpoint`, so the next call authenticates again.
    func invalidateToken(for index: Int) {
        state.withLock { _ = $0.tokens.removeValue(forKey: index) }
    }

    /// The endpoint calls start with.
    var preferredEndpoint: Int { state.withLock { $0.preferred } }

    // MARK: Transport

    struct Reply: Sendable {
        var status: HTTPResponseStatus
        var body: Data
    }

    struct SendFailure: Error {
        /// Whether the request had been sent when it failed: then etcd may have acted on it.
        var sent: Bool
        var reason: String
    }

    /// A POST to one endpoint, waited for on the caller's thread, bounded by `timeout`.
    private func send(
        _ path: String, _ payload: Data, endpoint index: Int, token: String?, timeout: Duration
    ) -> Result<Reply, SendFailure> {
        let request: HTTPClient.Request
        do {
            request = try makeRequest(path, payload, endpoint: index, token: token)
        } catch {
            return .failure(SendFailure(sent: false, reason: "invalid URL"))
        }
        let delegate = CollectingDelegate()
        let task = http.execute(
            request: request, delegate: delegate, eventLoop: .indifferent, deadline: .now() + TimeAmount(timeout))
        let outcome = Locked<Result<Reply, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        task.futureResult.whenComplete { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        // The deadline above ends the request; this bound only guards against a lost completion.
        if done.wait(timeout: .now() + .nanoseconds(Int(TimeAmount(timeout).nanoseconds)) + .seconds(1)) == .timedOut {
            task.cancel()
            return .failure(SendFailure(sent: delegate.sent, reason: "no answer within \(timeout)"))
        }
        switch outcome.withLock({ $0 })! {
        case .success(let reply): return .success(reply)
        case .failure(let error):
            return .failure(SendFailure(sent: delegate.sent, reason: describe(error, timeout: timeout)))
        }
    }

    func makeRequest(_ path: String, _ payload: Data, endpoint index: Int, token: String?) throws -> HTTPClient.Request
    {
        var request = try HTTPClient.Request(url: endpoints[index] + path, method: .POST)
        request.headers.add(name: "Content-Type", value: "application/json")
        if let token { request.headers.add(name: "Authorization", value: token) }
        request.body = .bytes(payload)
        return request
    }
}

/// Collects a whole answer, and remembers whether the request went out.
private final class CollectingDelegate: HTTPClientResponseDelegate {
    typealias Response = EtcdClient.Reply

    // Touched only on the request's event loop, one callback at a time.
    nonisolated(unsafe) private var status: HTTPResponseStatus = .ok
    nonisolated(unsafe) private var body = ByteBuffer()
    private let requestSent = Locked(false)

    var sent: Bool { requestSent.withLock { $0 } }

    func didSendRequestHead(task: HTTPClient.Task<Response>, _ head: HTTPRequestHead) {
        requestSent.withLock { $0 = true }
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        status = head.status
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        var buffer = buffer
        body.writeBuffer(&buffer)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        EtcdClient.Reply(status: status, body: Data(body.readableBytesView))
    }
}

/// Why a request failed, in a few words.
func describe(_ error: any Error, timeout: Duration) -> String {
    switch error {
    case let error as HTTPClientError:
        switch error {
        case .deadlineExceeded, .readTimeout: return "no answer within \(timeout)"
        case .connectTimeout: return "connection timed out"
        case .remoteConnectionClosed: return "the connection closed"
        case .cancelled: return "cancelled"
        default: return "\(error)"
        }
    case let error as NIOConnectionError:
        if let first = error.connectionErrors.first { return describe(first.error, timeout: timeout) }
        return error.dnsAAAAError.map { "cannot resolve the host: \($0)" } ?? "cannot connect"
    case let error as IOError:
        return String(cString: strerror(error.errnoCode)).lowercased()
    case let error as NIOSSLError:
        return "TLS failed: \(error)"
    case let error as BoringSSLError:
        return "TLS failed: \(error)"
    case let error as ChannelError:
        if case .connectTimeout = error { return "connection timed out" }
        return "\(error)"
    default:
        return "\(error)"
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// Errors about how a store was set up.
enum StoreErrorFactory {
    static func configuration(_ store: String, _ reason: String) -> SettingsError {
        SettingsError(.unavailable, store: store, reason: reason)
    }
}
#endif
