/// The settings of the example `settings-daemon`, shared with `loupe --schema daemon`, which validates
/// every edit against this type.
public struct DaemonSettings: Codable, Sendable, Equatable {
    /// How much the daemon logs.
    public enum LogLevel: String, Codable, Sendable, CaseIterable {
        case trace, debug, info, notice, warning, error, critical
    }

    /// The ticker component: says its greeting every interval.
    public struct Ticker: Codable, Sendable, Equatable {
        public var intervalSeconds: Double = 1
        public var greeting = "hello"
        public init() {}
    }

    /// The upstream component: where it would connect (its token is in the keyring).
    public struct Upstream: Codable, Sendable, Equatable {
        public var url = "http://127.0.0.1:9000"
        public var timeoutSeconds = 5
        public init() {}
    }

    public var logLevel: LogLevel = .info
    public var ticker = Ticker()
    public var upstream = Upstream()

    public init() {}
}

/// The upstream's credentials, kept in the keyring rather than the settings file.
public struct UpstreamCredentials: Codable, Sendable, Equatable {
    public var token = ""
    public init() {}
}

/// What the daemon itself records: written often, so coalesced.
public struct DaemonState: Codable, Sendable, Equatable {
    public var ticks = 0
    public init() {}
}
