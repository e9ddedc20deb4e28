#if SettingsPage
import Foundation
import Hummingbird
import Loupe

/// A settings page in the browser for any root: every setting with its description, type, default,
/// allowed values, current value and where that value comes from; editing that writes through the root
/// (in place, comments kept); live updates; the history with rollback; an etcd fleet's rollout status.
/// The settings and their editors come from the settings type's JSON Schema; a root whose type describes
/// nothing (`JSONValue`) shows the values its document holds, each edited as its value's type.
///
/// Mount its routes in any Hummingbird application:
///
/// ```swift
/// let page = SettingsPage(root)                         // a RootLens or an AnyRootLens
/// let router = Router()
/// router.addRoutes(page.routes(), atPath: "/settings")
/// print("open http://127.0.0.1:8080/settings?token=\(page.configuration.token)")
/// ```
///
/// or start one of its own with ``SettingsPageServer``.
///
/// Safe by default: every request carries the page's token (a random one unless given, printed at
/// start as Jupyter prints its own) or passes the application's ``Configuration/authenticator``; writes
/// carry it in a header, never in the address, and must come from the page's own origin (no cross-site
/// request forgery); secrets are masked, and revealed only when ``Configuration/revealsSecrets``; request
/// bodies are bounded; every failure is an HTTP status with the message `loupe` prints for it.
public struct SettingsPage: Sendable {
    /// Decides whether a request may use the page, instead of the token: the application's own login.
    public typealias Authenticator = @Sendable (_ request: Request) async -> Bool

    /// What the page allows.
    public struct Configuration: Sendable {
        /// The secret every request carries (header `X-Loupe-Token`, `Authorization: Bearer`, or, for
        /// reads, the `token` query parameter); ignored when ``authenticator`` is given.
        public var token: String
        /// Decides instead of the token whether a request may use the page.
        public var authenticator: Authenticator?
        /// Whether the page only shows the settings: every write is refused with 403.
        public var readOnly: Bool
        /// Whether the page reveals a secret's value when a person asks for it (one at a time, through the
        /// reveal button); otherwise secrets are only ever masked.
        public var revealsSecrets: Bool
        /// The largest request body taken, in bytes; a larger one is refused with 413.
        public var maxBodyBytes: Int

        /// A page that edits, masks secrets without revealing them, and takes bodies of up to 64 KiB.
        public init(
            token: String = SettingsPage.randomToken(), authenticator: Authenticator? = nil, readOnly: Bool = false,
            revealsSecrets: Bool = false, maxBodyBytes: Int = 64 * 1024
        ) {
            self.token = token
            self.authenticator = authenticator
            self.readOnly = readOnly
            self.revealsSecrets = revealsSecrets
            self.maxBodyBytes = maxBodyBytes
        }
    }

    /// The settings shown.
    public let root: AnyRootLens
    /// What the page allows.
    public let configuration: Configuration
    /// The open pages' event streams, fed by the root's observer.
    let feed: ChangeFeed

    /// A page for `root`.
    public init(_ root: AnyRootLens, configuration: Configuration = Configuration()) {
        self.root = root
        self.configuration = configuration
        feed = ChangeFeed(model: PageModel(root: root, configuration: configuration))
    }

    /// A page for `root`.
    public init<Root: Codable & Sendable>(_ root: RootLens<Root>, configuration: Configuration = Configuration()) {
        self.init(root.erased, configuration: configuration)
    }

    /// 32 random bytes, hexadecimal: a token no one guesses.
    public static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }

    /// Ends every open page's event stream, so that a server shutting down is not held open by them.
    public func closeEventStreams() {
        feed.finishAll()
    }

    /// The number of pages now receiving live updates.
    public var openEventStreams: Int { feed.count }
}
#endif
