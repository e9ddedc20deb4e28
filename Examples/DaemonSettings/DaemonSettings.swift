import Loupe

/// The settings of the example `settings-daemon`, shared with `loupe --schema daemon`, which validates
/// every edit against this type.
public struct DaemonSettings: Codable, Sendable, Equatable {
    /// How much the daemon logs.
    public enum LogLevel: String, Codable, Sendable, CaseIterable {
        case trace, debug, info, notice, warning, error, critical
    }

    /// The ticker component: says its greeting every interval.
    public struct Ticker: Codable, Sendable, Equatable {
        /// Seconds between two greetings.
        public var intervalSeconds: Double = 1
        /// What the ticker says.
        public var greeting = "hello"
        /// The defaults.
        public init() {}
    }

    /// The upstream component: where it would connect (its token is in the keyring).
    public struct Upstream: Codable, Sendable, Equatable {
        /// The upstream's address.
        public var url = "http://127.0.0.1:9000"
        /// How long a request to the upstream may take.
        public var timeoutSeconds = 5
        /// The bearer token, when a credential gives it (`--credentials DIR` holding a file named
        /// `upstream.token`); empty: the keyring's. Never logged.
        public var token = ""
        /// The defaults.
        public init() {}
    }

    /// How much the daemon logs.
    public var logLevel: LogLevel = .info
    /// The ticker component's settings.
    public var ticker = Ticker()
    /// The upstream component's settings.
    public var upstream = Upstream()

    /// The defaults.
    public init() {}
}

extension DaemonSettings: Validated {
    /// The daemon's rules, checked on every commit: by code, by `loupe`, by an outside edit, at load.
    public static let rules: [Rule<DaemonSettings>] = [
        Rule(\.ticker.intervalSeconds, .greaterThan(0)),
        // A day at most: a tick interval beyond that is a typo (`1e300` would overflow the sleep).
        Rule(\.ticker.intervalSeconds, .atMost(86_400)),
        Rule(\.upstream.timeoutSeconds, .within(1...300)),
        Rule(\.upstream.url, .matching("^https?://", "an http or https URL")),
    ]
}

extension DaemonSettings: DescribedSettings {
    /// What each part means: in the JSON Schema (`loupe --schema daemon schema`) and `loupe describe`.
    public static let descriptions: [ValuePath: String] = [
        "": "The settings of the example settings-daemon.",
        "logLevel": "How much the daemon logs.",
        "ticker": "The ticker component: says its greeting every interval.",
        "ticker.intervalSeconds": "Seconds between two greetings.",
        "ticker.greeting": "What the ticker says.",
        "upstream": "The upstream component: where it would connect (its token is in the keyring).",
        "upstream.url": "The upstream's address: an http or https URL.",
        "upstream.timeoutSeconds": "How long a request to the upstream may take, in seconds.",
        "upstream.token":
            "The bearer token, from a credential file (--credentials DIR, file upstream.token); empty: the keyring's. Keep it out of settings files.",
    ]
}

/// The upstream's credentials, kept in the keyring rather than the settings file.
public struct UpstreamCredentials: Codable, Sendable, Equatable {
    /// The bearer token.
    public var token = ""
    /// The defaults.
    public init() {}
}

/// What the daemon itself records: written often, so coalesced.
public struct DaemonState: Codable, Sendable, Equatable {
    /// How many times the ticker has ticked, over every run.
    public var ticks = 0
    /// The defaults.
    public init() {}
}
