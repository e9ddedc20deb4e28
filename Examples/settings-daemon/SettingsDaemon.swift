import ArgumentParser
import DaemonSettings
import Foundation
import Logging
import Loupe
import LoupeEtcd
import LoupeKeyring
import LoupeServiceLifecycle
import LoupeSettingsPage
import ServiceLifecycle
import UnixSignals

/// A small long-running service whose settings change while it runs.
///
/// The settings file is one `RootLens<DaemonSettings>` over a `FileStore`; each component receives only
/// the lens of its own part and reconfigures itself when that part changes, logging a line for each
/// change. Edit the file with `loupe --schema daemon --file FILE set PATH VALUE` (or any editor): the
/// daemon picks the change up within a second. With `--layer` (and `--locks`), it runs as Linux deploys
/// settings: the vendor's defaults (`Examples/vendor/settings-daemon.json`), the administrator's file and
/// drop-ins, and the settings file on top, where its user's edits go; an edit in any layer reaches it. With `--etcd`, the settings are one etcd key that a whole
/// fleet of daemons shares, edited with `loupe --etcd ENDPOINTS --key KEY`; every daemon picks a change up
/// within milliseconds. A bad edit is logged and ignored. SIGHUP forces a reload;
/// SIGTERM shuts down gracefully and flushes the coalesced state file.
@main
struct SettingsDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings-daemon",
        abstract: "The Loupe example daemon: reconfigures itself live as its settings file changes.")

    @Option(help: "The settings file (JSON); with --layer, the writable top layer.")
    var settings = "settings.json"

    @Option(
        name: .customLong("layer"),
        help: ArgumentHelp(
            "A read-only layer under the settings file: a file, or a drop-in directory of *.json files. Repeat it, lowest first.",
            valueName: "path"))
    var layers: [String] = []

    @Option(
        name: .customLong("locks"),
        help: ArgumentHelp(
            "A lock file, or a directory of them: paths the settings file may not change. Repeatable.",
            valueName: "path"))
    var locks: [String] = []

    @Option(help: "The state file the daemon writes (coalesced, once a second at most).")
    var state: String?

    @Option(help: "The keyring item with the upstream's token, as SERVICE/ACCOUNT.")
    var keyring = "org.loupe.settings-daemon/upstream"

    @Option(help: "Take the settings from etcd instead of the file, shared by a fleet: endpoints, comma-separated.")
    var etcd: String?

    @Option(help: "The etcd key that holds the settings (with --etcd).")
    var etcdKey = "/settings-daemon/settings"

    @Option(
        help:
            "The name this daemon reports which revision it runs under (with --etcd): `loupe --etcd … status` lists it. Default: the host's name."
    )
    var statusName = EtcdStatusReporting.hostName

    @Option(
        name: .customLong("env-prefix"),
        help: ArgumentHelp(
            "Environment variables under this prefix override settings: SETTINGS_DAEMON_UPSTREAM__TIMEOUT_SECONDS=9 sets upstream.timeoutSeconds. Never written.",
            valueName: "prefix"))
    var environmentPrefix = "SETTINGS_DAEMON_"

    @Option(
        name: .customLong("set"),
        help: ArgumentHelp(
            "Override a setting for this run: path=value, such as logLevel=debug. Repeatable; never written.",
            valueName: "path=value"))
    var overrides: [String] = []

    @Option(
        help: ArgumentHelp(
            "A credential directory: each file one secret setting named by its path (upstream.token). Default: $CREDENTIALS_DIRECTORY, as systemd sets it; none when empty.",
            valueName: "dir"))
    var credentials = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"] ?? ""

    @Option(
        help: ArgumentHelp(
            "Serve the settings page on this port of 127.0.0.1 (0: a free one) and log its address with its token. Secrets stay masked.",
            valueName: "port"))
    var serve: Int?

    /// Where the settings live: the file (over its layers), or one etcd key for the whole fleet; under the
    /// environment, the `--set` options and the credentials.
    private func settingsStore() throws -> any DocumentStore {
        var overrideLayers: [LayeredStore.Layer] = [.environment(prefix: environmentPrefix)]
        if !overrides.isEmpty { overrideLayers.append(.arguments(overrides)) }
        if !credentials.isEmpty { overrideLayers.append(.directory(credentials: credentials)) }
        if let etcd {
            let shared = try EtcdStore(
                endpoints: etcd.split(separator: ",").map(String.init), key: etcdKey,
                statusReporting: EtcdStatusReporting(name: statusName))
            return LayeredStore(layers: overrideLayers, top: shared)
        }
        let file = FileStore(path: settings, permissions: 0o644)
        return LayeredStore(layers: layers.map { .fileOrDirectory($0) } + overrideLayers, top: file, locks: locks)
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in DynamicLevelLogHandler(label: label) }
        // `{"$secret": "keyring:SERVICE/ACCOUNT"}` in a settings file reads the login keyring's item.
        SecretReferences.registerKeyring()
        let logger = Logger(label: "settings-daemon")

        let settingsRoot = try RootLens(
            default: DaemonSettings(), store: settingsStore(), logger: Logger(label: "loupe"))
        // Written often, so coalesced; as a Service, the root flushes it on graceful shutdown.
        let stateRoot = try RootLens(
            default: DaemonState(),
            // The daemon's own state, written every second: no one edits it, so it keeps no history.
            store: FileStore(path: state ?? settings + ".state", writePolicy: .coalesced(.seconds(1)), history: .off),
            watch: false)
        let credentials = openCredentials(logger: logger)
        // Registered before anything runs, so that no bad edit, however early, goes unreported.
        let badEdits = settingsRoot.observeErrors { error in
            logger.error("ignored a bad settings edit: \(error)")
        }
        defer { badEdits.cancel() }

        // Shut down in reverse order: the state root last, so it flushes the final tick.
        var services: [any Service] = [
            stateRoot,
            LogLevelComponent(level: settingsRoot.logLevel.readOnly, logger: logger),
            TickerComponent(settings: settingsRoot.ticker.readOnly, ticks: stateRoot.ticks, logger: logger),
            UpstreamComponent(settings: settingsRoot.upstream.readOnly, credentials: credentials, logger: logger),
            ReloadOnHangup(settings: settingsRoot, logger: logger),
        ]
        if let serve {
            // The settings page, edited while the daemon runs. Its token is LOUPE_PAGE_TOKEN's, which the log
            // then leaves out; or a random one, logged in the page's address as Jupyter prints its own.
            let given = ProcessInfo.processInfo.environment["LOUPE_PAGE_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            let page = SettingsPage(settingsRoot, configuration: .init(token: given ?? SettingsPage.randomToken()))
            services.append(
                SettingsPageServer(page: page, address: .loopback(port: serve), logger: Logger(label: "settings-page"))
                { url in
                    let shown = given.map { url.replacingOccurrences(of: $0, with: "$LOUPE_PAGE_TOKEN") } ?? url
                    logger.notice("settings page: \(shown)")
                })
        }
        let group = ServiceGroup(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger)
        logger.notice(
            "settings-daemon started",
            metadata: ["settings": "\(etcd.map { "etcd key \(etcdKey) at \($0)" } ?? settingsRoot.storeDescription)"])
        try await group.run()
        logger.notice("settings-daemon stopped", metadata: ["ticks": "\(stateRoot.ticks.value)"])
    }

    /// The upstream's credentials from the keyring, or empty ones (with a warning) when there is none.
    private func openCredentials(logger: Logger) -> Lens<UpstreamCredentials> {
        let parts = keyring.split(separator: "/", maxSplits: 1).map(String.init)
        do {
            guard parts.count == 2 else { throw ValidationError("--keyring takes SERVICE/ACCOUNT") }
            let store = KeyringStore(service: parts[0], account: parts[1], timeout: .seconds(3))
            return try RootLens(default: UpstreamCredentials(), store: store).readOnly
        } catch {
            logger.warning("running without upstream credentials: \(error)")
            return RootLens(UpstreamCredentials()).readOnly
        }
    }
}

/// Sets the process-wide log level from its lens.
struct LogLevelComponent: Service {
    let level: Lens<DaemonSettings.LogLevel>
    let logger: Logger

    func run() async {
        for await level in level.values.cancelOnGracefulShutdown() {
            try? await DynamicLevelLogHandler.level.async.set(Logger.Level(rawValue: level.rawValue) ?? .info)
            logger.notice("log level is now \(level.rawValue)")
        }
    }
}

/// Says its greeting every interval, and counts its ticks in the state file.
struct TickerComponent: Service {
    let settings: Lens<DaemonSettings.Ticker>
    /// The settings when the daemon started, which its first report of a change is measured against: a
    /// change made before this service's task runs is reported too.
    private let initial: DaemonSettings.Ticker
    @Lensed var ticks: Int
    let logger: Logger

    init(settings: Lens<DaemonSettings.Ticker>, ticks: MutableLens<Int>, logger: Logger) {
        self.settings = settings
        initial = settings.value
        _ticks = Lensed(ticks)
        self.logger = logger
    }

    func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var previous = initial
                for await ticker in settings.values.cancelOnGracefulShutdown() {
                    if ticker.greeting != previous.greeting { logger.notice("greeting is now \(ticker.greeting)") }
                    if ticker.intervalSeconds != previous.intervalSeconds {
                        logger.notice("tick interval is now \(ticker.intervalSeconds) s")
                    }
                    previous = ticker
                }
            }
            group.addTask {
                try await cancelWhenGracefulShutdown {
                    while true {
                        let ticker = settings.value
                        // Cancellation (a graceful shutdown) ends the loop; it is not a failure.
                        do { try await Task.sleep(for: .seconds(max(ticker.intervalSeconds, 0.01))) } catch { return }
                        let count = try await $ticks.async.update { ticks -> Int in
                            ticks += 1
                            return ticks
                        }
                        logger.info("tick \(count): \(settings.value.greeting)")
                    }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }
}

/// Knows where the upstream is, and whether it has a token; never logs the token.
struct UpstreamComponent: Service {
    let settings: Lens<DaemonSettings.Upstream>
    let credentials: Lens<UpstreamCredentials>
    let logger: Logger

    func run() async {
        let tokenChanges = credentials.token.observe { token in
            logger.notice("upstream token changed (\(token.count) characters)")
        }
        defer { tokenChanges.cancel() }
        for await upstream in settings.values.cancelOnGracefulShutdown() {
            let token =
                !upstream.token.isEmpty
                ? "from a credential" : credentials.token.value.isEmpty ? "missing" : "from the keyring"
            logger.notice("upstream is now \(upstream.url) (timeout \(upstream.timeoutSeconds) s, token \(token))")
        }
    }
}

/// Re-reads the settings file on SIGHUP.
struct ReloadOnHangup: Service {
    let settings: RootLens<DaemonSettings>
    let logger: Logger

    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            do {
                try await settings.async.reload()
                logger.notice("reloaded settings on SIGHUP")
            } catch {
                logger.error("could not reload settings on SIGHUP: \(error)")
            }
        }
    }
}

// The service group logs each service by its description: a name, not a dump of its fields (a logger's
// storage, a lens's internals).
extension LogLevelComponent: CustomStringConvertible {
    var description: String { "LogLevelComponent" }
}

extension TickerComponent: CustomStringConvertible {
    var description: String { "TickerComponent" }
}

extension UpstreamComponent: CustomStringConvertible {
    var description: String { "UpstreamComponent" }
}

extension ReloadOnHangup: CustomStringConvertible {
    var description: String { "ReloadOnHangup" }
}
