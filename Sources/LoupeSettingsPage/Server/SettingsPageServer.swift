#if SettingsPage
import Foundation
import Hummingbird
import Logging
import Loupe
import NIOCore
import ServiceLifecycle

/// A server of its own for a ``SettingsPage``: what `loupe serve` and `settings-daemon --serve` start.
///
/// ```swift
/// let server = SettingsPageServer(page: SettingsPage(root), address: .loopback(port: 8123)) { url in
///     print("Settings page: \(url)")                                // http://127.0.0.1:8123/?token=…
/// }
/// try await server.run()
/// ```
///
/// It binds the loopback address unless told otherwise (or a Unix socket, which file permissions guard).
/// It is a `Service`: in a `ServiceGroup`, a graceful shutdown ends the open pages' event streams and
/// stops it.
public struct SettingsPageServer: Service {
    /// Where the server listens.
    public enum Address: Sendable {
        /// A host and port; port 0 takes a free one, which the address given to `onReady` names.
        case host(String, port: Int)
        /// A Unix domain socket at this path.
        case unixSocket(String)

        /// `127.0.0.1`, reachable from this machine only.
        public static func loopback(port: Int) -> Address { .host("127.0.0.1", port: port) }
    }

    /// The page served.
    public let page: SettingsPage
    /// Where it listens.
    public let address: Address
    private let logger: Logger
    private let onReady: @Sendable (String) async -> Void

    /// A server of `page` at `address`; `onReady` is called with the page's address once it listens
    /// (`http://127.0.0.1:8123/?token=…`, or the socket's path).
    public init(
        page: SettingsPage, address: Address = .loopback(port: 8123),
        logger: Logger = Logger(label: "LoupeSettingsPage"),
        onReady: @escaping @Sendable (_ url: String) async -> Void = { _ in }
    ) {
        self.page = page
        self.address = address
        self.logger = logger
        self.onReady = onReady
    }

    /// Serves until cancelled or shut down gracefully; either way it stops as a graceful shutdown has it
    /// (the open pages' event streams end, the connections close) and returns.
    public func run() async throws {
        let router = Router()
        router.addRoutes(page.routes(), atPath: "/")
        let bind: BindAddress
        switch address {
        case .host(let host, let port): bind = .hostname(host, port: port)
        case .unixSocket(let path): bind = .unixDomainSocket(path: path)
        }
        let page = self.page, address = self.address, onReady = self.onReady
        let application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: bind, serverName: nil),
            onServerRunning: { channel in
                await onReady(Self.url(of: page, at: address, port: channel.localAddress?.port))
            },
            logger: logger)
        // The application runs in a group of its own, which a cancellation of this task shuts down
        // gracefully: cancelled outright, the server would log each open connection's cancellation as an
        // error. The group's task is not this one's child, so that the cancellation reaches it only so.
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [application], logger: logger))
        let serving = Task { try await group.run() }
        let stop: @Sendable () -> Void = {
            page.closeEventStreams()
            Task { await group.triggerGracefulShutdown() }
        }
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await serving.value
            } onGracefulShutdown: {
                stop()
            }
        } onCancel: {
            stop()
        }
        page.closeEventStreams()
    }

    /// The address a person opens: with the token, unless an authenticator decides instead.
    static func url(of page: SettingsPage, at address: Address, port: Int?) -> String {
        let query = page.configuration.authenticator == nil ? "?token=\(page.configuration.token)" : ""
        switch address {
        case .host(let host, let configured):
            let shownHost = host.contains(":") ? "[\(host)]" : host
            return "http://\(shownHost):\(port ?? configured)/\(query)"
        case .unixSocket(let path):
            return "unix:\(path) /\(query)"
        }
    }
}
#endif
