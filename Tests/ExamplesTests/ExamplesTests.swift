import Foundation
import Loupe
import LoupeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The built example programs.
let loupe = buildProductsDirectory + "/loupe"
let settingsDaemon = buildProductsDirectory + "/settings-daemon"
let keyringAvailable = ProcessInfo.processInfo.environment["LOUPE_KEYRING"] == "1"

/// Runs `loupe` with `arguments`.
@discardableResult
func loupe(_ arguments: String..., environment: [String: String]? = nil) throws -> ProcessOutput {
    try run(loupe, arguments, environment: environment)
}

/// A temporary directory holding `settings.json`, the daemon's settings with `ticker.greeting` set to
/// "hi" by `loupe`: where the tests of `edit` start.
func daemonSettingsSayingHi() throws -> (directory: TemporaryDirectory, file: String) {
    let directory = try TemporaryDirectory()
    let file = directory.file("settings.json")
    try loupe("--file", file, "--schema", "daemon", "set", "ticker.greeting", "hi")
    return (directory, file)
}

/// A running settings-daemon on a settings file of the test's own, stopped when released.
final class Daemon {
    let directory: TemporaryDirectory
    let process: ChildProcess
    var settings: String { directory.file("settings.json") }
    var state: String { directory.file("state.json") }
    var log: String { process.errorOutput }

    init(
        settings initial: String? = nil, keyring: String = "org.loupe.tests.\(UUID().uuidString)/upstream",
        extraArguments: [String] = [],
        environment: [String: String]? = nil
    ) throws {
        directory = try TemporaryDirectory()
        if let initial { try Data(initial.utf8).write(to: URL(fileURLWithPath: directory.file("settings.json"))) }
        process = try ChildProcess(
            settingsDaemon,
            [
                "--settings", directory.file("settings.json"), "--state", directory.file("state.json"), "--keyring",
                keyring,
            ] + extraArguments, environment: environment)
        #expect(waitFor("settings-daemon started"), "\(log)")
    }

    deinit {
        process.kill(SIGKILL)
        _ = process.wait(limit: .seconds(10))
        directory.cleanUp()
    }

    /// Waits until the log contains `text` (at most 15 seconds).
    @discardableResult
    func waitFor(_ text: String) -> Bool {
        eventually(deadline: .seconds(15)) { log.contains(text) }
    }

    func set(_ path: String, _ value: String) throws -> ProcessOutput {
        try loupe("--file", settings, "--schema", "daemon", "set", path, value)
    }
}

@Suite("The example daemon, driven by the example CLI")
struct DaemonTests {
    @Test func theDaemonReconfiguresItselfWhenLoupeSetsAValue() throws {
        let daemon = try Daemon()
        #expect(try daemon.set("ticker.greeting", "bonjour").status == 0)
        #expect(daemon.waitFor("greeting is now bonjour"), "\(daemon.log)")
        #expect(try daemon.set("ticker.intervalSeconds", "0.2").status == 0)
        #expect(daemon.waitFor("tick interval is now 0.2 s"))
        #expect(daemon.waitFor(": bonjour"), "a tick with the new greeting")
        #expect(try daemon.set("upstream.url", "http://example.org:8080").status == 0)
        #expect(daemon.waitFor("upstream is now http://example.org:8080"))
        #expect(try daemon.set("logLevel", "debug").status == 0)
        #expect(daemon.waitFor("log level is now debug"))
    }

    @Test func aFleetOfDaemonsSharesSettingsInEtcd() throws {
        let etcd = try SharedEtcd()
        let key = "/loupe-tests/\(UUID().uuidString)"
        let endpoints = etcd.endpoints.joined(separator: ",")
        let fleet = try (0..<2).map { _ in try Daemon(extraArguments: ["--etcd", endpoints, "--etcd-key", key]) }
        let set = try loupe("--etcd", endpoints, "--key", key, "--schema", "daemon", "set", "ticker.greeting", "hej")
        #expect(set.status == 0, "\(set.error)")
        for daemon in fleet {
            #expect(daemon.waitFor("greeting is now hej"), "\(daemon.log)")
        }
        #expect(try loupe("--etcd", endpoints, "--key", key, "get", "ticker.greeting").output == "\"hej\"\n")
        #expect(try etcd.value(of: key)?.contains(#""greeting":"hej""#) == true)
    }

    /// A rollout: every daemon reports the revision it runs; `set --wait-applied` waits for all of them, and
    /// names those that refused a value (exit 75); `status` lists them; a daemon that stops leaves the list.
    @Test func aFleetReportsWhichRevisionEachDaemonRuns() throws {
        let etcd = try SharedEtcd()
        let key = "/loupe-tests/\(UUID().uuidString)"
        let endpoints = etcd.endpoints.joined(separator: ",")
        var fleet = try ["web-1", "web-2"].map { name in
            try Daemon(extraArguments: ["--etcd", endpoints, "--etcd-key", key, "--status-name", name])
        }
        func loupeOver(_ arguments: String...) throws -> ProcessOutput {
            try run(loupe, ["--etcd", endpoints, "--key", key] + arguments)
        }
        // Both report once they have read the key.
        #expect(
            try eventually(deadline: .seconds(20)) { try loupeOver("status").output.split(separator: "\n").count == 2 })
        let set = try loupeOver("--schema", "daemon", "set", "ticker.greeting", "hej", "--wait-applied", "20")
        #expect(set.status == 0 && set.error.contains("is applied by all 2 readers"), "\(set.status) \(set.error)")
        let revision = try #require(Int(etcdRevision(of: key, etcd)))
        let status = try loupeOver("status")
        let lines = status.output.split(separator: "\n")
        #expect(
            status.status == 0 && lines.count == 2
                && status.error.contains("the store is at revision \(revision); 2 readers report"))
        #expect(lines.first?.hasPrefix("web-1  revision \(revision)  current  since ") == true, "\(status.output)")
        #expect(lines.last?.hasPrefix("web-2  revision \(revision)  current  since ") == true, "\(status.output)")

        // Without the type, loupe writes what the daemons' rules refuse: both keep the revision before.
        let refused = try loupeOver("set", "ticker.intervalSeconds", "0", "--wait-applied", "20")
        #expect(refused.status == 75, "\(refused.status) \(refused.error)")
        #expect(
            refused.error.contains("not applied by 2 of 2 readers")
                && refused.error.contains("web-1  revision \(revision)")
                && refused.error.contains("must be greater than 0"), "\(refused.error)")
        let refusedRevision = try etcdRevision(of: key, etcd)
        #expect(try loupeOver("status").output.contains("2 behind") == false)
        let afterRefusal = try loupeOver("status").output
        #expect(
            afterRefusal.contains("refused \(refusedRevision): ")
                && afterRefusal.contains("ticker.intervalSeconds: must be greater than 0"), "\(afterRefusal)")
        let repaired = try loupeOver("set", "ticker.intervalSeconds", "2", "--wait-applied")
        #expect(repaired.status == 0, "\(repaired.status) \(repaired.error)")

        // The key's revisions are its history: etcd records no time or author.
        let history = try loupeOver("history").output.split(separator: "\n")
        #expect(history.count == 3 && history[1] == "\(refusedRevision)  -  -  ticker.intervalSeconds", "\(history)")

        // A daemon that stops takes its report with it.
        fleet.removeLast()
        var listed = ""
        _ = try eventually(deadline: .seconds(20)) {
            listed = try loupeOver("status").output
            return !listed.contains("web-2")
        }
        #expect(!listed.contains("web-2") && listed.contains("web-1"), "\(listed)")
        #expect(try loupe("--file", "/dev/null/none.json", "status").status == 69)
    }

    /// The key's `mod_revision`, as etcdctl prints it.
    func etcdRevision(of key: String, _ etcd: SharedEtcd) throws -> String {
        let output = try etcd.etcdctl(["get", key, "-w", "fields"]).output
        return output.split(separator: "\n").first { $0.hasPrefix("\"ModRevision\"") }.map {
            String($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces))
        } ?? ""
    }

    @Test func aBadSetLeavesTheFileAndTheDaemonUntouched() throws {
        let daemon = try Daemon()
        #expect(try daemon.set("ticker.greeting", "hi").status == 0)
        #expect(daemon.waitFor("greeting is now hi"))
        let before = try Data(contentsOf: URL(fileURLWithPath: daemon.settings))
        let bad = try daemon.set("ticker.intervalSeconds", "abc")
        #expect(bad.status == 65)
        #expect(bad.error == "loupe: ticker.intervalSeconds: expected a number, found String \"abc\"\n")
        let unknown = try daemon.set("ticker.colour", "red")
        #expect(unknown.status == 66)
        #expect(unknown.error == "loupe: no ticker.colour: ticker has greeting, intervalSeconds\n")
        #expect(try daemon.set("logLevel", "loud").status == 65)
        #expect(try Data(contentsOf: URL(fileURLWithPath: daemon.settings)) == before)
        // A good change after the bad ones: once the daemon has taken it, it has seen everything before it.
        #expect(try daemon.set("ticker.greeting", "after").status == 0)
        #expect(daemon.waitFor("greeting is now after"), "\(daemon.log)")
        #expect(!daemon.log.contains("tick interval is now"))
        #expect(!daemon.log.contains("log level is now loud"))
    }

    @Test func aBadEditIsLoggedAndIgnoredAndTheNextGoodOneApplies() throws {
        let daemon = try Daemon()
        try Data(
            #"{"logLevel": "info", "ticker": {"greeting": 5, "intervalSeconds": 1}, "upstream": {"url": "http://u", "timeoutSeconds": 1}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: daemon.settings))
        #expect(daemon.waitFor("ignored a bad settings edit"), "\(daemon.log)")
        #expect(daemon.log.contains("ticker.greeting: expected String"))
        let good =
            #"{"logLevel": "info", "ticker": {"greeting": "fixed", "intervalSeconds": 1}, "upstream": {"url": "http://u", "timeoutSeconds": 1}}"#
        try Data(good.utf8).write(to: URL(fileURLWithPath: daemon.settings))
        #expect(daemon.waitFor("greeting is now fixed"))
        #expect(daemon.process.wait(limit: .zero) == nil, "still running")
    }

    @Test func aHugeTickIntervalIsRefusedByARuleAndTheDaemonRunsOn() throws {
        let daemon = try Daemon()
        #expect(try daemon.set("ticker.intervalSeconds", "1e300").status == 65)
        try replaceFile(daemon.settings, with: #"{"ticker": {"intervalSeconds": 1e300}}"#)
        #expect(daemon.waitFor("ticker.intervalSeconds: must be at most 86400"), "\(daemon.log)")
        try replaceFile(daemon.settings, with: #"{"ticker": {"greeting": "after"}}"#)
        #expect(daemon.waitFor("greeting is now after"), "\(daemon.log)")
        #expect(daemon.process.wait(limit: .zero) == nil, "still running")
    }

    @Test func sighupReloadsAndSigtermStopsGracefullyAndFlushes() throws {
        let daemon = try Daemon(
            settings:
                #"{"logLevel": "info", "ticker": {"greeting": "g", "intervalSeconds": 0.05}, "upstream": {"url": "http://u", "timeoutSeconds": 1}}"#
        )
        #expect(daemon.waitFor("tick 3: g"))
        daemon.process.kill(SIGHUP)
        #expect(daemon.waitFor("reloaded settings on SIGHUP"))
        daemon.process.kill(SIGTERM)
        #expect(daemon.process.wait(limit: .seconds(15)) == 0, "\(daemon.log)")
        #expect(daemon.log.contains("settings-daemon stopped"))
        // The coalesced state file holds the last tick.
        let lastTick = daemon.log.components(separatedBy: "\n").last { $0.contains("] tick ") }
        let logged = lastTick.flatMap { $0.split(separator: " ").drop { $0 != "tick" }.dropFirst().first }.map {
            String($0.dropLast())
        }
        let state =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: daemon.state)))
            as? [String: Any]
        #expect(logged != nil)
        #expect((state?["ticks"] as? Int).map(String.init) == logged)
    }

    @Test func theServicesDescribeThemselvesByNameInTheLifecyclesLogLines() throws {
        let daemon = try Daemon(settings: #"{"logLevel": "debug"}"#)
        // Once the services run (the group has its signal handlers), a SIGTERM is a graceful shutdown.
        #expect(daemon.waitFor("log level is now debug"), "\(daemon.log)")
        daemon.process.kill(SIGTERM)
        #expect(daemon.process.wait(limit: .seconds(15)) == 0, "\(daemon.log)")
        for name in ["LogLevelComponent", "TickerComponent", "UpstreamComponent", "ReloadOnHangup"] {
            #expect(daemon.log.contains(name), "the lifecycle's debug lines name each service: \(daemon.log)")
        }
        #expect(!daemon.log.contains("_storage") && !daemon.log.contains("Logger("), "\(daemon.log)")
    }

    @Test(.enabled(if: keyringAvailable, "run Scripts/test, which starts a keyring"))
    func theUpstreamTokenComesFromTheKeyringAndIsNeverLogged() throws {
        let item = "org.loupe.tests.\(UUID().uuidString)/upstream"
        #expect(try loupe("--keyring", item, "set", "token", "hunter2-daemon-token").status == 0)
        let daemon = try Daemon(keyring: item)
        #expect(daemon.waitFor("token from the keyring"), "\(daemon.log)")
        #expect(!daemon.log.contains("hunter2"))
        let parts = item.split(separator: "/").map(String.init)
        _ = try run("/usr/bin/env", ["secret-tool", "clear", "service", parts[0], "account", parts[1]])
    }
}

@Suite("Overrides from the environment, --set and credentials, in the example daemon and CLI")
struct OverrideExampleTests {
    /// A settings file, a credential directory holding the upstream's token, and `loupe` over both.
    struct Site {
        let directory: TemporaryDirectory
        var file: String { directory.file("settings.json") }
        var credentials: String { directory.file("credentials") }

        init() throws {
            directory = try TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
            try replaceFile(file, with: #"{"logLevel": "notice"}"#)
            try replaceFile(credentials + "/upstream.token", with: "hunter2-credential\n")
        }

        /// `loupe --file FILE --schema daemon --env-prefix SETTINGS_DAEMON_ --credentials DIR ARGUMENTS`
        /// with `environment` added to its own.
        func loupe(_ arguments: String..., environment: [String: String] = [:]) throws -> ProcessOutput {
            try run(
                ExamplesTests.loupe,
                [
                    "--file", file, "--schema", "daemon", "--env-prefix", "SETTINGS_DAEMON_", "--credentials",
                    credentials,
                ] + arguments,
                environment: environment)
        }
    }

    @Test func loupeExplainsWhatTheDaemonSeesAndNeverWritesTheOverrides() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let environment = ["SETTINGS_DAEMON_UPSTREAM__TIMEOUT_SECONDS": "9"]
        let explained = try site.loupe("--set", "ticker.greeting=hi", "explain", environment: environment)
        #expect(explained.status == 0, "\(explained.error)")
        #expect(
            explained.output.contains(
                "upstream.timeoutSeconds = 9 from environment variable SETTINGS_DAEMON_UPSTREAM__TIMEOUT_SECONDS (overrides default)"
            ), "\(explained.output)")
        #expect(explained.output.contains("ticker.greeting = \"hi\" from --set ticker.greeting (overrides default)"))
        #expect(
            explained.output.contains(
                "upstream.token = \"********\" from credential upstream.token (overrides default)"))
        #expect(explained.output.contains("logLevel = \"notice\" from \(site.file) line 1 (overrides default)"))
        // Masked in every verb that prints values, unless --reveal.
        for verb in [
            ["get", "upstream.token"], ["get", "upstream"], ["show"], ["show", "--layers"], ["list"],
            ["describe", "upstream.token"], ["explain", "upstream"],
        ] {
            let printed = try run(
                ExamplesTests.loupe,
                ["--file", site.file, "--schema", "daemon", "--credentials", site.credentials] + verb,
                environment: environment)
            #expect(
                printed.status == 0 && !printed.output.contains("hunter2") && printed.output.contains("********"),
                "\(verb): \(printed.output) \(printed.error)")
        }
        #expect(try site.loupe("--reveal", "get", "upstream.token").output == "\"hunter2-credential\"\n")
        // watch masks it too, and shows a rotated credential as a change, masked.
        let watcher = try ChildProcess(
            ExamplesTests.loupe,
            ["--file", site.file, "--schema", "daemon", "--credentials", site.credentials, "watch", "upstream"])
        #expect(eventually { watcher.output.contains("\"token\":\"********\"") }, "\(watcher.output)")
        try replaceFile(site.credentials + "/upstream.token", with: "hunter2-rotated\n")
        try replaceFile(site.file, with: #"{"logLevel": "notice", "upstream": {"timeoutSeconds": 6}}"#)
        #expect(eventually { watcher.output.contains("\"timeoutSeconds\":6") }, "\(watcher.output)")
        watcher.kill(SIGINT)
        _ = watcher.wait(limit: .seconds(10))
        #expect(!watcher.output.contains("hunter2"), "\(watcher.output)")
        try replaceFile(site.file, with: #"{"logLevel": "notice"}"#)
        // edit would put the credential in a temporary file: refused, naming what.
        let edit = try run(
            ExamplesTests.loupe,
            ["--file", site.file, "--schema", "daemon", "--credentials", site.credentials, "edit"],
            environment: ["EDITOR": "true"])
        #expect(
            edit.status == 64
                && edit.error.contains("edit does not work while the settings hold secrets (upstream.token)"),
            "\(edit.error)")
        // A write where an override wins is stored, says so, and exits 0; nothing an override gives is written.
        let set = try site.loupe("set", "upstream.timeoutSeconds", "12", environment: environment)
        #expect(set.status == 0, "\(set.error)")
        #expect(
            set.error.contains(
                "stored, but environment variable SETTINGS_DAEMON_UPSTREAM__TIMEOUT_SECONDS still overrides upstream.timeoutSeconds"
            ), "\(set.error)")
        #expect(try site.loupe("get", "upstream.timeoutSeconds", environment: environment).output == "9\n")
        #expect(
            try site.loupe("get", "upstream.timeoutSeconds").output == "12\n", "without the variable, the stored value")
        let stored = try String(contentsOfFile: site.file, encoding: .utf8)
        #expect(!stored.contains("hunter2") && !stored.contains("hi") && !stored.contains("9"), "\(stored)")
    }

    @Test func badOverridesAreErrorsNamingTheirOriginAndNothingIsWritten() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let before = try String(contentsOfFile: site.file, encoding: .utf8)
        let variable = try site.loupe(
            "set", "logLevel", "debug", environment: ["SETTINGS_DAEMON_TICKER__INTERVAL_SECONDS": "soon"])
        #expect(variable.status == 65)
        #expect(
            variable.error.contains(
                "environment variable SETTINGS_DAEMON_TICKER__INTERVAL_SECONDS: ticker.intervalSeconds: expected a number"
            ), "\(variable.error)")
        let rule = try site.loupe("get", "logLevel", environment: ["SETTINGS_DAEMON_TICKER__INTERVAL_SECONDS": "0"])
        #expect(
            rule.status == 65
                && rule.error.contains(
                    "environment variable SETTINGS_DAEMON_TICKER__INTERVAL_SECONDS: ticker.intervalSeconds: must be greater than 0"
                ), "\(rule.error)")
        let argument = try site.loupe("--set", "logLevel=shouting", "get", "logLevel")
        #expect(
            argument.status == 65 && argument.error.contains("--set logLevel: logLevel: expected one of"),
            "\(argument.error)")
        try replaceFile(site.credentials + "/upstream.timeoutSeconds", with: "hunter2")
        let credential = try site.loupe("get", "logLevel")
        #expect(
            credential.status == 65
                && credential.error.contains(
                    "credential upstream.timeoutSeconds: upstream.timeoutSeconds: expected a whole number"),
            "\(credential.error)")
        #expect(!credential.error.contains("hunter2"), "a credential's text is never quoted: \(credential.error)")
        try FileManager.default.removeItem(atPath: site.credentials + "/upstream.timeoutSeconds")
        let missing = try run(
            ExamplesTests.loupe,
            ["--file", site.file, "--credentials", site.directory.file("nowhere"), "get", "logLevel"])
        #expect(
            missing.status == 69 && missing.error.contains("credential directory \(site.directory.file("nowhere"))"),
            "\(missing.error)")
        let unknown = try site.loupe("get", "logLevel", environment: ["SETTINGS_DAEMON_UPSTREAM__TIMEOUT": "3"])
        #expect(
            unknown.status == 0 && unknown.error.contains("SETTINGS_DAEMON_UPSTREAM__TIMEOUT")
                && unknown.error.contains("closest=upstream"), "\(unknown.error)")
        #expect(try String(contentsOfFile: site.file, encoding: .utf8) == before)
    }

    @Test(.enabled(if: keyringAvailable, "run Scripts/test, which starts a keyring"))
    func secretReferencesToTheEnvironmentCredentialsAndTheKeyringAreReadAndNeverWritten() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let item = (service: "org.loupe.tests.\(UUID().uuidString)", account: "upstream")
        let stored = try run(
            "/usr/bin/env",
            ["secret-tool", "store", "--label", "test", "service", item.service, "account", item.account],
            input: "https://hunter2-keyring@u.example")
        #expect(stored.status == 0, "\(stored.error)")
        defer {
            _ = try? run("/usr/bin/env", ["secret-tool", "clear", "service", item.service, "account", item.account])
        }
        try replaceFile(site.credentials + "/timeout", with: "42\n")
        let file = #"""
            {"logLevel": "notice", "ticker": {"greeting": {"$secret": "env:LOUPE_TEST_GREETING"}},
             "upstream": {"timeoutSeconds": {"$secret": "credential:timeout"}, "url": {"$secret": "keyring:\#(item.service)/\#(item.account)"}}}
            """#
        try replaceFile(site.file, with: file)
        let environment = ["LOUPE_TEST_GREETING": "hunter2-greeting", "CREDENTIALS_DIRECTORY": site.credentials]
        func loupe(_ arguments: String...) throws -> ProcessOutput {
            try run(
                ExamplesTests.loupe, ["--file", site.file, "--schema", "daemon"] + arguments, environment: environment)
        }
        let revealed = try loupe("--reveal", "show")
        #expect(revealed.status == 0, "\(revealed.error)")
        let value = try JSONValue(parsing: revealed.output)
        #expect(
            value[path: "ticker.greeting"] == .string("hunter2-greeting")
                && value[path: "upstream.timeoutSeconds"] == .integer(42)
                && value[path: "upstream.url"] == .string("https://hunter2-keyring@u.example"), "\(revealed.output)")
        let shown = try loupe("show")
        let masked = try JSONValue(parsing: shown.output)
        #expect(shown.status == 0 && !shown.output.contains("hunter2"), "\(shown.output)")
        #expect(
            ["ticker.greeting", "upstream.timeoutSeconds", "upstream.url"].allSatisfy {
                masked[path: ValuePath(stringLiteral: $0)] == .string("********")
            }, "\(shown.output)")
        let explained = try loupe("explain", "upstream.url")
        #expect(
            explained.output.contains("upstream.url = \"********\" from keyring:\(item.service)/\(item.account)"),
            "\(explained.output)")
        // Other writes keep the references; a write of a referenced value is refused with 65.
        #expect(try loupe("set", "logLevel", "debug").status == 0)
        #expect(
            try String(contentsOfFile: site.file, encoding: .utf8).contains(
                #""$secret": "keyring:\#(item.service)/\#(item.account)""#))
        let refused = try loupe("set", "ticker.greeting", "bonjour")
        #expect(
            refused.status == 65
                && refused.error.contains("ticker.greeting is the secret reference env:LOUPE_TEST_GREETING"),
            "\(refused.error)")
        let text = try String(contentsOfFile: site.file, encoding: .utf8)
        let kept = try JSONValue(parsing: text)
        #expect(!text.contains("hunter2"), "\(text)")
        #expect(
            kept[path: "ticker.greeting"] == .object(["$secret": .string("env:LOUPE_TEST_GREETING")])
                && kept[path: "upstream.timeoutSeconds"] == .object(["$secret": .string("credential:timeout")]),
            "\(text)")
        // A missing variable or item: an error naming the reference.
        let missing = try run(
            ExamplesTests.loupe, ["--file", site.file, "--schema", "daemon", "get", "logLevel"],
            environment: ["CREDENTIALS_DIRECTORY": site.credentials])
        #expect(
            missing.status != 0 && missing.error.contains("secret reference env:LOUPE_TEST_GREETING")
                && missing.error.contains("no such environment variable"), "\(missing.error)")
        _ = try run("/usr/bin/env", ["secret-tool", "clear", "service", item.service, "account", item.account])
        let gone = try loupe("get", "logLevel")
        #expect(
            gone.status != 0 && gone.error.contains("secret reference keyring:\(item.service)/\(item.account)")
                && gone.error.contains("no such keyring item"), "\(gone.error)")
        #expect(!gone.error.contains("hunter2") && !missing.error.contains("hunter2"))
    }

    @Test func theDaemonTakesItsEnvironmentItsSetOptionsAndItsCredentials() throws {
        let credentials = try TemporaryDirectory()
        defer { credentials.cleanUp() }
        try replaceFile(credentials.file("upstream.token"), with: "hunter2-daemon-credential\n")
        let daemon = try Daemon(
            extraArguments: ["--set", "ticker.greeting=from-set"],
            environment: ["SETTINGS_DAEMON_UPSTREAM__TIMEOUT_SECONDS": "9", "CREDENTIALS_DIRECTORY": credentials.path])
        #expect(daemon.waitFor("timeout 9 s, token from a credential"), "\(daemon.log)")
        #expect(daemon.waitFor("from-set"), "\(daemon.log)")
        // A credential changed while it runs reaches it; the token never reaches its log or its file.
        try replaceFile(credentials.file("upstream.token"), with: "hunter2-rotated\n")
        try loupe("--file", daemon.settings, "--schema", "daemon", "set", "upstream.url", "https://b.example")
        #expect(
            daemon.waitFor("upstream is now https://b.example (timeout 9 s, token from a credential)"), "\(daemon.log)")
        #expect(!daemon.log.contains("hunter2"))
        #expect(try !String(contentsOfFile: daemon.settings, encoding: .utf8).contains("hunter2"))
    }
}

@Suite("The example CLI")
struct CLITests {
    @Test func getSetUnsetShowOnAnyDocument() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("doc.json")
        #expect(try loupe("--file", file, "set", "server.port", "8080").status == 0)
        #expect(try loupe("--file", file, "set", "server.host", "example.org").status == 0, "a bare word is a string")
        #expect(
            try loupe("set", "--file", file, #"labels."app.kubernetes.io/name""#, #""loupe demo""#).status == 0,
            "options after the command")
        #expect(try loupe("--file", file, "get", "server.port").output == "8080\n")
        #expect(try loupe("--file", file, "get", "server.host").output == "\"example.org\"\n")
        #expect(try loupe("--file", file, "get", #"labels["app.kubernetes.io/name"]"#).output == "\"loupe demo\"\n")
        #expect(try loupe("--file", file, "unset", "labels").status == 0)
        let shown = try loupe("--file", file, "show")
        #expect(
            try JSONSerialization.jsonObject(with: Data(shown.output.utf8)) as? NSDictionary
                == ["server": ["host": "example.org", "port": 8080]] as NSDictionary)
        let fromPython = try python("import json,sys; print(json.load(open(sys.argv[1]))['server']['port'])", [file])
        #expect(fromPython == "8080")
    }

    @Test func errorsAreOneLineWithDocumentedExitCodes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("doc.json")
        try loupe("--file", file, "set", "a", "1")
        let notFound = try loupe("--file", file, "get", "b")
        #expect(notFound.status == 66)
        #expect(notFound.error == "loupe: no b: <root> has a\n")
        let badPath = try loupe("--file", file, "get", "a..b")
        #expect(badPath.status == 64)
        let notJSON = try loupe("--file", file, "set", "a", "two words")
        #expect(notJSON.status == 65)
        #expect(notJSON.error.hasPrefix("loupe: \"two words\" is not JSON"))
        let noStore = try loupe("get", "a")
        #expect(noStore.status == 64)
        try Data("{ broken".utf8).write(to: URL(fileURLWithPath: file))
        let corrupt = try loupe("--file", file, "get", "a")
        #expect(corrupt.status == 69)
        #expect(corrupt.error.contains("invalid data in JSON file \(file)"))
        #expect(corrupt.error.components(separatedBy: "\n").count == 2, "one line")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "{ broken")
    }

    @Test func numbersAreStoredExactlyAndUntouchedOnesKeepTheirSpelling() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("doc.json")
        try replaceFile(file, with: #"{"price": 12345678901234567.89, "tiny": 1e-400}"#)
        #expect(try loupe("--file", file, "set", "id", "18446744073709551615").status == 0)
        #expect(try loupe("--file", file, "get", "id").output == "18446744073709551615\n")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains("12345678901234567.89") && text.contains("1e-400"), "\(text)")
        // A typed field that cannot hold it refuses it (exit 65) rather than storing -1.
        let daemonFile = directory.file("daemon.json")
        let refused = try loupe(
            "--file", daemonFile, "--schema", "daemon", "set", "upstream.timeoutSeconds", "18446744073709551615")
        #expect(
            refused.status == 65 && refused.error.contains("upstream.timeoutSeconds: expected Int"), "\(refused.error)")
    }

    @Test func eachVerbHasItsOwnHelpWithoutAStore() throws {
        for arguments in [["set", "--help"], ["help", "set"]] {
            let help = try run(loupe, arguments)
            #expect(
                help.status == 0 && help.output.hasPrefix("OVERVIEW: Sets the value at a path."),
                "\(arguments): \(help.output)")
        }
        let top = try loupe("--help")
        #expect(top.output.contains("--schema <schema>") && top.output.contains("describe"), "\(top.output)")
    }

    @Test func negativeNumbersAndStandardInputAsValuesAndShowDefaultsBesideTheDefaultsSuite() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("doc.json")
        #expect(try loupe("--file", file, "set", "offset", "-5").status == 0)
        #expect(try loupe("--file", file, "get", "offset").output == "-5\n")
        // A script that still ends options with `--` is understood too.
        #expect(try loupe("--file", file, "set", "offset", "--", "-6").status == 0)
        #expect(try loupe("--file", file, "get", "offset").output == "-6\n")
        #expect(try run(loupe, ["--file", file, "set", "name", "-"], input: #""two words""#).status == 0)
        #expect(try loupe("--file", file, "get", "name").output == "\"two words\"\n")
        let daemonFile = directory.file("daemon.json")
        let defaults = try JSONValue(
            parsing: try loupe("--file", daemonFile, "--schema", "daemon", "show", "--defaults").output)
        #expect(try defaults.value(at: "ticker.greeting") == .string("hello"))
        // loupe's own --defaults (a UserDefaults suite) and show's --defaults in one line.
        let suite = "org.loupe.tests.\(UUID().uuidString)"
        #expect(try loupe("--defaults", suite, "--key", "settings", "set", "a", "1").status == 0)
        let suiteDefaults = try loupe("--defaults", suite, "--key", "settings", "show", "--defaults")
        #expect(suiteDefaults.status == 0 && suiteDefaults.output == "{}\n", "\(suiteDefaults.error)")
        #expect(
            try JSONValue(parsing: try loupe("--defaults", suite, "--key", "settings", "show").output)
                == JSONValue(parsing: #"{"a": 1}"#))
    }

    @Test func aFIFOADeviceAFileSizeLimitAClosedOutputAndASuitePathAreReportedNotFatal() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let fifo = directory.file("fifo.json")
        #expect(mkfifo(fifo, 0o644) == 0)
        let fromFIFO = try run(loupe, ["--file", fifo, "get", "a"], limit: .seconds(20))
        #expect(
            fromFIFO.status == 69 && fromFIFO.error.contains("it is a FIFO (named pipe), not a regular file"),
            "\(fromFIFO.status) \(fromFIFO.error)")
        let fromDevice = try loupe("--file", "/dev/zero", "get", "a")
        #expect(
            fromDevice.status == 69 && fromDevice.error.contains("it is a character device, not a regular file"),
            "\(fromDevice.error)")

        // ulimit -f: the write fails with a message, not SIGXFSZ; the file is left as it was. (A sanitizer's
        // runtime cannot start under a file-size limit itself, so sanitized builds skip this part.)
        let file = directory.file("settings.json")
        #expect(try loupe("--file", file, "set", "a", "1").status == 0)
        let sanitized = buildProductsDirectory.contains(".build-tsan") || buildProductsDirectory.contains(".build-asan")
        if !sanitized {
            let limited = try run(
                "/bin/sh",
                [
                    "-c", "ulimit -f 1; exec \"$0\" --file \"$1\" set big \"\"$2\"\"", loupe, file,
                    String(repeating: "x", count: 4_000),
                ])
            #expect(
                limited.status == 69 && limited.error.contains("File too large"), "\(limited.status) \(limited.error)")
            #expect(try loupe("--file", file, "get", "a").output == "1\n")
        }

        // Standard output closed, or full: reported, exit 74.
        for redirect in [">&-", ">/dev/full"] {
            let result = try run("/bin/sh", ["-c", "exec \"$0\" --file \"$1\" get a \(redirect)", loupe, file])
            #expect(
                result.status == 74 && result.error.hasPrefix("loupe: cannot write to standard output"),
                "\(redirect): \(result.status) \(result.error)")
        }

        // A suite is a name, not a path.
        let escape = try loupe("--defaults", "../../../\(directory.path)/x", "--key", "k", "set", "a", "1")
        #expect(escape.status == 69 && escape.error.contains("is not a suite name"), "\(escape.error)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("x.plist")))
    }

    @Test func aSecretServiceThatNeverAnswersIsUnavailableNotAConflict() throws {
        // A private bus whose Secret Service is activatable but never starts answering.
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(atPath: directory.file("services"), withIntermediateDirectories: false)
        try replaceFile(
            directory.file("services/org.freedesktop.secrets.service"),
            with: """
                [D-BUS Service]
                Name=org.freedesktop.secrets
                Exec=/bin/sleep 15
                """)
        try replaceFile(
            directory.file("bus.conf"),
            with: """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>session</type>
                  <listen>unix:path=\(directory.file("bus"))</listen>
                  <servicedir>\(directory.file("services"))</servicedir>
                  <policy context="default"><allow send_destination="*"/><allow own="*"/></policy>
                </busconfig>
                """)
        let bus = try ChildProcess(
            "/usr/bin/dbus-daemon", ["--config-file=\(directory.file("bus.conf"))", "--nofork", "--nopidfile"])
        defer {
            bus.kill(SIGTERM)
            _ = bus.wait(limit: .seconds(10))
        }
        #expect(eventually { FileManager.default.fileExists(atPath: directory.file("bus")) }, "\(bus.errorOutput)")
        let result = try loupe(
            "--keyring", "org.loupe.tests/silent", "get", "token",
            environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(directory.file("bus"))"])
        #expect(result.status == 69, "\(result.status) \(result.error)")
        #expect(result.error.contains("Secret Service"), "\(result.error)")
    }

    @Test func watchAndSetPrintNoLogLinesOnlyValues() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("settings.json")
        let watcher = try ChildProcess(loupe, ["--file", file, "watch", "a"])
        #expect(eventually { watcher.output == "null\n" })
        let set = try loupe("--file", file, "set", "a", "1")
        #expect(set.status == 0 && set.error.isEmpty, "\(set.error)")
        #expect(eventually { watcher.output == "null\n1\n" })
        watcher.kill(SIGINT)
        #expect(watcher.wait(limit: .seconds(10)) == 0)
        #expect(watcher.errorOutput.isEmpty, "\(watcher.errorOutput)")
    }

    @Test func propertyListsYAMLAndDefaults() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        try loupe("--file", directory.file("s.plist"), "set", "name", "x")
        #expect(
            try python(
                "import plistlib,sys; print(plistlib.load(open(sys.argv[1],'rb'))['name'])", [directory.file("s.plist")]
            ) == "x")
        try loupe("--file", directory.file("s.yaml"), "set", "replicas", "3")
        #expect(try String(contentsOfFile: directory.file("s.yaml"), encoding: .utf8) == "replicas: 3\n")
        let suite = "org.loupe.tests.\(UUID().uuidString)"
        #expect(try loupe("--defaults", suite, "--key", "settings", "set", "port", "99").status == 0)
        #expect(try loupe("--defaults", suite, "--key", "settings", "get", "port").output == "99\n")
        let config = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"] ?? NSHomeDirectory() + "/.config"
        try? FileManager.default.removeItem(atPath: config + "/" + suite + ".plist")
    }

    /// A file the CLI creates is 0600 unless `--file-mode` asks for more, and never more than the umask
    /// lets through (`fchmod` alone ignores it: under `umask 077` files were created 0644).
    @Test func newFilesAreOwnerOnlyByDefaultAndHonourTheUmask() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        func mode(_ path: String) -> mode_t {
            var info = stat()
            return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
        }
        func created(_ name: String, umask mask: String, _ options: String...) throws -> mode_t {
            let path = directory.file(name)
            let script = "umask \(mask); exec \"$0\" \"$@\""
            let result = try run("/bin/sh", ["-c", script, loupe, "--file", path] + options + ["set", "a", "1"])
            #expect(result.status == 0, "\(result.error)")
            return mode(path)
        }
        #expect(try created("default.json", umask: "022") == 0o600)
        #expect(try created("shared.json", umask: "022", "--file-mode", "644") == 0o644)
        #expect(try created("private.json", umask: "077", "--file-mode", "644") == 0o600)
        #expect(try created("group.toml", umask: "027", "--file-mode", "664") == 0o640)
        // A file that exists keeps its mode.
        chmod(directory.file("shared.json"), 0o640)
        #expect(try created("shared.json", umask: "077", "--file-mode", "644") == 0o640)
        let refused = try loupe("--file", directory.file("x.json"), "--file-mode", "9", "set", "a", "1")
        #expect(refused.status == 64, "\(refused.error)")
    }

    /// `$version` is Loupe's stamp: `set`, `unset` and an edit that names it are refused (exit 65) and write
    /// nothing; before, `set '$version' '"v1.2"'` exited 0 and left a file every later command refused, and
    /// `set '$version' 5` was taken over as the stamp.
    @Test func theVersionStampIsNotASetting() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("settings.json")
        try replaceFile(file, with: #"{"a": 1}"# + "\n")
        for arguments in [
            ["set", "$version", "\"v1.2\""], ["set", "$version", "5"], ["unset", "$version"],
            ["set", "", #"{"$version": 3, "a": 2}"#],
        ] {
            let result = try run(loupe, ["--file", file] + arguments)
            #expect(
                result.status == 65 && result.error.contains("$version is the version stamp"),
                "\(arguments): \(result.status) \(result.error)")
            #expect(
                try String(contentsOfFile: file, encoding: .utf8) == #"{"a": 1}"# + "\n", "\(arguments) wrote nothing")
        }
        #expect(try loupe("--file", file, "get", "a").output == "1\n")
    }

    /// A set to what the file already holds, spelled otherwise (`1` where it says `1.0`, `[1.0, 2]` where it
    /// says `[1, 2]`), writes nothing: the file is not replaced, and no watcher wakes.
    @Test func aSetOfWhatTheFileHoldsWritesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("settings.json")
        let text = #"{"a": 1.0, "b": [1, 2], "c": {"d": 2.50}}"# + "\n"
        try replaceFile(file, with: text)
        func inode() -> ino_t {
            var info = stat()
            return stat(file, &info) == 0 ? info.st_ino : 0
        }
        let before = inode()
        for (path, value) in [("a", "1"), ("b", "[1.0, 2]"), ("c", #"{"d": 2.5}"#), ("c.d", "2.5")] {
            let result = try loupe("--file", file, "set", path, value)
            #expect(result.status == 0, "\(result.error)")
            #expect(
                try String(contentsOfFile: file, encoding: .utf8) == text && inode() == before,
                "set \(path) \(value) wrote nothing")
        }
    }

    /// Property-list integers keep their exact value up to 2⁶⁴ − 1 (18446744073709551615 read as -1), one
    /// a property list cannot hold is refused rather than rounded, and data and dates nobody changed stay
    /// `<data>` and `<date>` through an unrelated write (they became `<string>` and `<real>`).
    @Test func propertyListsKeepBigIntegersDataAndDates() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("settings.plist")
        try replaceFile(
            file,
            with: """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict><key>big</key><integer>18446744073709551615</integer>\
                <key>blob</key><data>aGVsbG8=</data><key>when</key><date>2020-01-01T00:00:00Z</date></dict></plist>
                """)
        #expect(try loupe("--file", file, "get", "big").output == "18446744073709551615\n")
        #expect(try loupe("--file", file, "set", "other", "1").status == 0)
        let written = try String(contentsOfFile: file, encoding: .utf8)
        #expect(
            written.contains("<integer>18446744073709551615</integer>") && written.contains("<data>")
                && written.contains("<date>2020-01-01T00:00:00Z</date>"), "\(written)")
        #expect(try loupe("--file", file, "set", "big", "18446744073709551614").status == 0)
        #expect(try loupe("--file", file, "get", "big").output == "18446744073709551614\n")
        let before = try String(contentsOfFile: file, encoding: .utf8)
        let refused = try loupe("--file", file, "set", "small", "-9223372036854775809")
        #expect(refused.status != 0 && refused.error.contains("cannot be written exactly"), "\(refused.error)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == before)
    }

    /// A value held aside under a lock that breaks a rule once the lock is lifted: `get` and `show` print
    /// what is stored with the error, and `unset` takes it out of the user's file (exit 0, saying so), which
    /// is how the user repairs it; `unset` under the lock takes the held value out too.
    @Test func unsetRepairsAUsersFileThatALiftedLockLeftBroken() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let user = directory.file("user.json"), locks = directory.file("locks")
        try replaceFile(locks, with: "upstream.timeoutSeconds\n")
        let held = #"{"upstream": {"timeoutSeconds": 0}, "logLevel": "debug"}"#
        func loupeOver(_ arguments: String...) throws -> ProcessOutput {
            try run(loupe, ["--file", user, "--locks", locks, "--schema", "daemon"] + arguments)
        }
        // Under the lock: the held value is ignored, and unset takes it out of the user's file.
        try replaceFile(user, with: held)
        #expect(try loupeOver("get", "upstream.timeoutSeconds").output == "5\n")
        #expect(try loupeOver("unset", "upstream.timeoutSeconds").status == 0)
        #expect(
            try JSONValue(parsing: String(contentsOfFile: user, encoding: .utf8))[path: "upstream.timeoutSeconds"]
                == nil)
        // The lock lifted over a value that breaks a rule: get and show print what they can, with the error.
        try replaceFile(user, with: held)
        try replaceFile(locks, with: "")
        let get = try loupeOver("get", "upstream.timeoutSeconds")
        #expect(
            get.status == 69 && get.output == "0\n" && get.error.contains("must be between 1 and 300"),
            "\(get.status) \(get.output) \(get.error)")
        let show = try loupeOver("show")
        #expect(
            show.status == 69 && show.output.contains("\"timeoutSeconds\" : 0"),
            "\(show.status) \(show.output) \(show.error)")
        // unset repairs it, and says what it removed.
        let unset = try loupeOver("unset", "upstream.timeoutSeconds")
        #expect(
            unset.status == 0 && unset.error.contains("removed upstream.timeoutSeconds"),
            "\(unset.status) \(unset.error)")
        #expect(try loupeOver("get", "logLevel").output == "\"debug\"\n", "the rest of the file is as it was")
        #expect(try loupeOver("get", "upstream.timeoutSeconds").output == "5\n")
    }

    /// A type's schema, its description of a path and its template need the type, not a store.
    @Test func schemaDescribeAndTemplateNeedNoStore() throws {
        let schema = try loupe("--schema", "daemon", "schema")
        #expect(schema.status == 0 && schema.output.contains("\"$schema\""), "\(schema.status) \(schema.error)")
        let describe = try loupe("--schema", "daemon", "describe", "ticker.greeting")
        #expect(describe.status == 0 && describe.output.contains("hello"), "\(describe.status) \(describe.error)")
        let template = try loupe("--schema", "daemon", "template", "--format", "toml")
        #expect(
            template.status == 0 && template.output.contains("# greeting = "), "\(template.status) \(template.error)")
        // Without a type there is nothing to describe: a store is still asked for.
        #expect(try loupe("schema").status == 64)
    }

    @Test func tomlFilesAreReadAndWrittenByTheirExtension() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("app.toml")
        try replaceFile(file, with: "# by hand\na = 1\n\n[server]\nport = 8_080\nstarted = 1979-05-27T07:32:00Z\n")
        let get = try loupe("--file", file, "get", "a")
        #expect(get.status == 0 && get.output == "1\n", "\(get.error)")
        #expect(try loupe("--file", file, "get", "server.port").output == "8080\n")
        let set = try loupe("--file", file, "set", "server.host", "\"example.org\"")
        #expect(set.status == 0, "\(set.error)")
        let written = try python(
            "import tomllib,sys,json; print(json.dumps(tomllib.load(open(sys.argv[1],'rb')), default=str, sort_keys=True))",
            [file])
        #expect(
            written
                == #"{"a": 1, "server": {"host": "example.org", "port": 8080, "started": "1979-05-27 07:32:00+00:00"}}"#
        )
        // Not TOML: an error naming the file, line and column, and exit 69 as for every unreadable store.
        try replaceFile(file, with: "a = [1 2]\n")
        let broken = try loupe("--file", file, "get", "a")
        #expect(
            broken.status == 69 && broken.error.contains(file) && broken.error.contains("line 1, column 8"),
            "\(broken.error)")
    }

    /// `set` at the index one past an array's end appends, in the file's own list, its comments kept; an
    /// index further out is "not found" (66), naming the index that appends.
    @Test func setOnePastAnArraysEndAppendsInPlace() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("app.yaml")
        try replaceFile(
            file,
            with:
                "upstreams:\n  # tried in order\n  - https://a.example  # primary\n  - https://b.example\nretries: 3\n")
        let set = try loupe("--file", file, "set", "upstreams[2]", "https://c.example")
        #expect(set.status == 0, "\(set.error)")
        #expect(
            try String(contentsOfFile: file, encoding: .utf8)
                == "upstreams:\n  # tried in order\n  - https://a.example  # primary\n  - https://b.example\n  - https://c.example\nretries: 3\n"
        )
        let tooFar = try loupe("--file", file, "set", "upstreams[7]", "https://d.example")
        #expect(tooFar.status == 66, "\(tooFar.error)")
        #expect(
            tooFar.error.contains("no upstreams[7]: upstreams has [0]…[2]; upstreams[3] adds an element"),
            "\(tooFar.error)")
        #expect(try loupe("--file", file, "get", "upstreams").output.contains("https://c.example"))
    }

    @Test func templatePrintsEverySettingCommentedOutInTheFormatAsked() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("settings.toml")
        let toml = try loupe("--file", file, "--schema", "daemon", "template", "--format", "toml")
        #expect(toml.status == 0, "\(toml.error)")
        #expect(
            toml.output.contains("# How much the daemon logs.\n# Allowed values: one of \"trace\"")
                && toml.output.contains("# [ticker]\n"), "\(toml.output)")
        // Saved as the settings file: a program reading it has its defaults, and a set keeps it readable.
        try replaceFile(file, with: toml.output)
        #expect(try loupe("--file", file, "--schema", "daemon", "get", "ticker.greeting").output == "\"hello\"\n")
        let jsonc = try loupe("--file", directory.file("s.jsonc"), "--schema", "daemon", "template")
        #expect(jsonc.status == 0 && jsonc.output.hasPrefix("{\n  // Settings of DaemonSettings."), "\(jsonc.output)")
        try replaceFile(directory.file("s.jsonc"), with: jsonc.output)
        #expect(
            try loupe("--file", directory.file("s.jsonc"), "--schema", "daemon", "set", "ticker.greeting", "bonjour")
                .status == 0)
        let edited = try String(contentsOfFile: directory.file("s.jsonc"), encoding: .utf8)
        #expect(
            edited.contains("// What the ticker says.") && edited.contains("\"greeting\": \"bonjour\""), "\(edited)")
        #expect(try loupe("--file", directory.file("s.json"), "template", "--format", "ini").status == 64)
    }

    @Test func watchPrintsChangesThatAnotherProcessMakes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("doc.json")
        try loupe("--file", file, "set", "greeting", "hello")
        let watcher = try ChildProcess(loupe, ["--file", file, "watch", "greeting"])
        #expect(eventually { watcher.output == "\"hello\"\n" })
        try loupe("--file", file, "set", "greeting", "bonjour")
        try loupe("--file", file, "set", "other", "1")
        try loupe("--file", file, "set", "greeting", "hallo")
        #expect(eventually { watcher.output == "\"hello\"\n\"bonjour\"\n\"hallo\"\n" }, "\(watcher.output)")
        watcher.kill(SIGINT)
        #expect(watcher.wait(limit: .seconds(10)) == 0)
    }

    @Test func editOpensTheEditorAndReopensItOnABadEdit() throws {
        let (directory, file) = try daemonSettingsSayingHi()
        defer { directory.cleanUp() }
        // An editor that writes a bad edit the first time and a good one the second.
        let editor = directory.file("editor.sh")
        try writeExecutable(
            editor,
            """
            #!/bin/sh
            count=$(cat "\(directory.path)/count" 2>/dev/null || echo 0)
            echo $((count + 1)) > "\(directory.path)/count"
            if [ "$count" = 0 ]; then
                sed -i 's/"hi"/5/' "$1"
            else
                sed -i 's/"greeting" : 5/"greeting" : "edited"/' "$1"
            fi
            """)
        let result = try loupe(
            "--file", file, "--schema", "daemon", "edit", environment: ["EDITOR": editor, "VISUAL": editor])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.contains("the edit is invalid: ticker.greeting: expected String"))
        #expect(try String(contentsOfFile: directory.file("count"), encoding: .utf8) == "2\n")
        #expect(try loupe("--file", file, "--schema", "daemon", "get", "ticker.greeting").output == "\"edited\"\n")

        // An editor that changes nothing: nothing is written.
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        let unchanged = try loupe(
            "--file", file, "--schema", "daemon", "edit", environment: ["EDITOR": "true", "VISUAL": "true"])
        #expect(unchanged.status == 0)
        #expect(unchanged.error == "loupe: no changes\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
    }

    /// A key the type does not have, written by `set` inside an object or by `edit`, is refused (65) naming
    /// it and the keys that exist; it used to be dropped without a word, and the command exited 0.
    @Test func misspelledKeysInsideWrittenObjectsAreRefusedNamingThem() throws {
        let (directory, file) = try daemonSettingsSayingHi()
        defer { directory.cleanUp() }
        let before = try String(contentsOfFile: file, encoding: .utf8)
        let typo = try loupe(
            "--file", file, "--schema", "daemon", "set", "ticker",
            #"{"intervalSeconds": 2, "greeting": "hi", "intervalSecond": 30}"#)
        #expect(
            typo.status == 65 && typo.error.contains("ticker.intervalSecond") && typo.error.contains("intervalSeconds"),
            "\(typo.status) \(typo.error)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == before)
        // An edit that adds a misspelled key is refused and the editor reopens; left as it is, the command fails.
        let editor = directory.file("typo.sh")
        try writeExecutable(
            editor,
            """
            #!/bin/sh
            grep -q logLevl "$1" || sed -i 's/^{/{"logLevl": "debug",/' "$1"
            """)
        let edited = try loupe(
            "--file", file, "--schema", "daemon", "edit", environment: ["EDITOR": editor, "VISUAL": editor])
        #expect(edited.status == 65 && edited.error.contains("logLevl"), "\(edited.status) \(edited.error)")
        #expect(edited.error.contains("the edit was refused and left as it was"), "\(edited.error)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == before)
    }

    /// When someone else changes the settings during an edit (75), the edit is kept and its path printed.
    @Test func anEditThatConflictsIsKeptAndItsPathPrinted() throws {
        let (directory, file) = try daemonSettingsSayingHi()
        defer { directory.cleanUp() }
        // The editor edits, and meanwhile another command changes the same settings.
        let editor = directory.file("racing.sh")
        try writeExecutable(
            editor,
            """
            #!/bin/sh
            sed -i 's/"hi"/"mine"/' "$1"
            '\(loupe)' --file '\(file)' --schema daemon set ticker.greeting theirs
            """)
        let result = try loupe(
            "--file", file, "--schema", "daemon", "edit", environment: ["EDITOR": editor, "VISUAL": editor])
        #expect(result.status == 75, "\(result.status) \(result.error)")
        let kept =
            result.error.components(separatedBy: "your edit is in ").last?.trimmingCharacters(
                in: .whitespacesAndNewlines) ?? ""
        #expect(try String(contentsOfFile: kept, encoding: .utf8).contains("\"mine\""), "kept at \(kept)")
        try? FileManager.default.removeItem(atPath: kept)
        #expect(try loupe("--file", file, "--schema", "daemon", "get", "ticker.greeting").output == "\"theirs\"\n")
    }

    @Test(.enabled(if: keyringAvailable, "run Scripts/test, which starts a keyring"))
    func keyringValuesPrintMaskedUnlessRevealed() throws {
        let item = "org.loupe.tests.\(UUID().uuidString)/cli"
        #expect(try loupe("--keyring", item, "set", "token", #""hunter2-cli""#).status == 0)
        #expect(try loupe("--keyring", item, "get", "token").output == "\"********\"\n")
        #expect(!(try loupe("--keyring", item, "show").output.contains("hunter2")))
        #expect(try loupe("--keyring", item, "--reveal", "get", "token").output == "\"hunter2-cli\"\n")
        // Numbers and booleans are secrets too (a PIN, an OTP counter).
        #expect(try loupe("--keyring", item, "set", "pin", "4711").status == 0)
        #expect(try loupe("--keyring", item, "get", "pin").output == "\"********\"\n")
        #expect(!(try loupe("--keyring", item, "show").output.contains("4711")))
        #expect(try loupe("--keyring", item, "--reveal", "get", "pin").output == "4711\n")
        let edit = try loupe("--keyring", item, "edit")
        #expect(edit.status == 64, "edit refuses the keyring: it would put the secret in a temporary file")
        let parts = item.split(separator: "/").map(String.init)
        _ = try run("/usr/bin/env", ["secret-tool", "clear", "service", parts[0], "account", parts[1]])
    }
}

@Suite("Settings across program versions, through the example CLI and daemon")
struct EvolvingSettingsTests {
    /// The JSON document in the file at `path`.
    func document(_ path: String) throws -> JSONValue {
        try JSONValue(parsing: String(contentsOfFile: path, encoding: .utf8))
    }

    @Test func aHandWrittenPartialFileRunsTheDaemon() throws {
        let written = #"{"ticker":{"greeting":"hi"}}"#
        let daemon = try Daemon(settings: written, extraArguments: [])
        #expect(
            daemon.waitFor(": hi"), "a tick with the file's greeting, every other setting the default's: \(daemon.log)")
        #expect(try String(contentsOfFile: daemon.settings, encoding: .utf8) == written, "loading never writes")
    }

    @Test func loupeKeepsWhatItDoesNotKnowAndWhatTheFileHeldAndStoresOnlyWhatDiffers() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        // Written by a newer version of the daemon, or an administrator's tool.
        try Data(#"{"logLevel": "info", "ticker": {"greeting": "hi", "colour": "red"}, "addedLater": {"x": 1}}"#.utf8)
            .write(to: URL(fileURLWithPath: path))

        let set = try loupe("--file", path, "--schema", "daemon", "set", "ticker.intervalSeconds", "2")
        #expect(set.status == 0, "\(set.error)")
        #expect(
            try document(path)
                == (try JSONValue(
                    parsing: """
                        {"logLevel": "info", "ticker": {"greeting": "hi", "colour": "red", "intervalSeconds": 2}, "addedLater": {"x": 1}}
                        """)),
            "unknown keys kept at their place; so is a key the file held at the default's value (logLevel)")

        let stored = try loupe("--file", path, "--schema", "daemon", "show", "--stored")
        #expect(stored.status == 0)
        #expect(try JSONValue(parsing: stored.output) == document(path), "show --stored prints the file's document")
        let effective = try loupe("--file", path, "--schema", "daemon", "show")
        let shown = try JSONValue(parsing: effective.output)
        #expect(
            shown[path: "upstream.timeoutSeconds"] == .integer(5) && shown[path: "ticker.greeting"] == .string("hi"),
            "show prints the effective value, defaults included")

        let unset = try loupe("--file", path, "--schema", "daemon", "unset", "ticker.greeting")
        #expect(unset.status == 0, "\(unset.error)")
        #expect(
            try document(path)
                == (try JSONValue(
                    parsing: """
                        {"logLevel": "info", "ticker": {"colour": "red", "intervalSeconds": 2}, "addedLater": {"x": 1}}
                        """)),
            "unset returns the part to its default, which is then not stored")
        #expect(try loupe("--file", path, "--schema", "daemon", "get", "ticker.greeting").output.contains("\"hello\""))

        // A key held at the default's value leaves the file only when it is unset, though the value stays.
        let release = try loupe("--file", path, "--schema", "daemon", "unset", "logLevel")
        #expect(release.status == 0, "\(release.error)")
        #expect(
            try document(path)
                == (try JSONValue(
                    parsing: """
                        {"ticker": {"colour": "red", "intervalSeconds": 2}, "addedLater": {"x": 1}}
                        """)),
            "unset takes a pinned key out of the file")
    }

    @Test func aWrongTypeNamesThePathAndLeavesTheFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let written = #"{"upstream": {"timeoutSeconds": "eighty"}}"#
        try Data(written.utf8).write(to: URL(fileURLWithPath: path))
        let set = try loupe("--file", path, "--schema", "daemon", "set", "ticker.greeting", "hey")
        #expect(
            set.status != 0 && set.error.contains(path)
                && set.error.contains(#"upstream.timeoutSeconds: expected Int, found String "eighty""#), "\(set.error)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == written, "never overwritten")
    }
}

@Suite("The daemon's rules, through the example CLI and daemon")
struct DaemonRulesTests {
    @Test func loupeRefusesAValueThatBreaksARuleWithExitStatus65AndTheDaemonIgnoresSuchAnEdit() throws {
        let daemon = try Daemon()
        for (path, value, message) in [
            ("ticker.intervalSeconds", "0", "ticker.intervalSeconds: must be greater than 0, got 0"),
            ("upstream.timeoutSeconds", "700000", "upstream.timeoutSeconds: must be between 1 and 300, got 700000"),
            (
                "upstream.url", "ftp://example.org",
                #"upstream.url: must be an http or https URL, got "ftp://example.org""#
            ),
        ] {
            let refused = try daemon.set(path, value)
            #expect(refused.status == 65 && refused.error.contains(message), "\(refused.error)")
        }
        #expect(!FileManager.default.fileExists(atPath: daemon.settings), "nothing was written")
        try replaceFile(daemon.settings, with: #"{"upstream": {"timeoutSeconds": 0}}"#)
        #expect(daemon.waitFor("upstream.timeoutSeconds: must be between 1 and 300, got 0"), "\(daemon.log)")
        #expect(
            try daemon.set("ticker.greeting", "hi").status == 69, "loupe will not overwrite a file that breaks a rule")
    }
}

@Suite("The daemon's JSON Schema, under a real validator (Python jsonschema)")
struct DaemonSchemaTests {
    /// Documents a person might write, and whether they are good settings for the daemon.
    static let documents: [(document: String, good: Bool)] = [
        ("{}", true),
        (#"{"logLevel": "debug"}"#, true),
        (#"{"ticker": {"intervalSeconds": 0.5, "greeting": "hi"}}"#, true),
        (#"{"ticker": {"intervalSeconds": 86400}}"#, true),
        (#"{"upstream": {"url": "https://upstream.example", "timeoutSeconds": 300}}"#, true),
        (#"{"upstream": {"timeoutSeconds": 1}}"#, true),
        (#"{"upstream": {"timeoutSeconds": 5.0}}"#, true),
        (#"{"aNewerProgramsKey": {"x": 1}, "$version": 1}"#, true),
        (#"{"$schema": "settings.schema.json"}"#, true),
        ("[]", false),
        (#"{"logLevel": "shouting"}"#, false),
        (#"{"logLevel": 3}"#, false),
        (#"{"ticker": {"intervalSeconds": 0}}"#, false),
        (#"{"ticker": {"intervalSeconds": -5}}"#, false),
        (#"{"ticker": {"intervalSeconds": 1e300}}"#, false),
        (#"{"ticker": {"intervalSeconds": "1"}}"#, false),
        (#"{"ticker": {"intervalSeconds": null}}"#, false),
        (#"{"ticker": {"greeting": 5}}"#, false),
        (#"{"ticker": []}"#, false),
        (#"{"upstream": null}"#, false),
        (#"{"upstream": {"timeoutSeconds": 0}}"#, false),
        (#"{"upstream": {"timeoutSeconds": 301}}"#, false),
        (#"{"upstream": {"timeoutSeconds": 2.5}}"#, false),
        (#"{"upstream": {"timeoutSeconds": 1e20}}"#, false),
        (#"{"upstream": {"url": "ftp://upstream.example"}}"#, false),
        (#"{"upstream": {"url": 80}}"#, false),
        (#"{"$version": "2"}"#, false),
        (#"{"$version": 0}"#, false),
    ]

    @Test func theGeneratedSchemaAndLoupeAcceptAndRejectTheSameDocuments() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let schema = try loupe("--file", directory.file("any.json"), "--schema", "daemon", "schema")
        #expect(schema.status == 0, "\(schema.error)")
        try Data(schema.output.utf8).write(to: URL(fileURLWithPath: directory.file("schema.json")))

        var loupeVerdicts: [Bool] = []
        for (index, entry) in Self.documents.enumerated() {
            let path = directory.file("document-\(index).json")
            try Data(entry.document.utf8).write(to: URL(fileURLWithPath: path))
            let shown = try loupe("--file", path, "--schema", "daemon", "show")
            #expect([0, 65, 69].contains(shown.status), "\(entry.document): \(shown.error)")
            loupeVerdicts.append(shown.status == 0)
        }
        // Draft 2020-12, as the schema's $schema says; it checks the schema itself first.
        let verdicts = try python(
            """
            import json, sys
            from jsonschema import Draft202012Validator
            schema = json.load(open(sys.argv[1]))
            Draft202012Validator.check_schema(schema)
            validator = Draft202012Validator(schema)
            for path in sys.argv[2:]:
                print("good" if validator.is_valid(json.load(open(path))) else "bad")
            """, [directory.file("schema.json")] + Self.documents.indices.map { directory.file("document-\($0).json") })
        let validatorVerdicts = verdicts.split(separator: "\n").map { $0 == "good" }
        #expect(validatorVerdicts.count == Self.documents.count, "\(verdicts)")
        for (index, entry) in Self.documents.enumerated() where index < validatorVerdicts.count {
            #expect(loupeVerdicts[index] == entry.good, "Loupe on \(entry.document)")
            #expect(validatorVerdicts[index] == entry.good, "jsonschema on \(entry.document)")
        }
    }

    @Test func theSchemaSaysTheDaemonsTypesDefaultsChoicesRulesAndDescriptions() throws {
        let printed = try loupe("--file", "/nonexistent/settings.json", "--schema", "daemon", "schema")
        let schema = try JSONValue(parsing: printed.output)
        #expect(try schema.value(at: "title") == .string("DaemonSettings"))
        #expect(
            try schema.value(at: "properties.logLevel.enum")
                == .array(
                    ["trace", "debug", "info", "notice", "warning", "error", "critical"].map(JSONValue.string)))
        #expect(try schema.value(at: "properties.ticker.properties.intervalSeconds.exclusiveMinimum") == .integer(0))
        #expect(try schema.value(at: "properties.upstream.properties.timeoutSeconds.minimum") == .integer(1))
        #expect(try schema.value(at: "properties.upstream.properties.timeoutSeconds.maximum") == .integer(300))
        #expect(try schema.value(at: "properties.upstream.properties.url.pattern") == .string("^https?://"))
        #expect(try schema.value(at: "properties.upstream.properties.url.default") == .string("http://127.0.0.1:9000"))
        #expect(
            try schema.value(at: "properties.ticker.properties.greeting.description")
                == .string("What the ticker says."))
    }
}

@Suite("Layered settings, as Linux deploys them, through the example CLI and daemon")
struct LayeredSettingsTests {
    /// The vendor's defaults the example ships.
    static let vendor = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Examples/vendor/settings-daemon.json").standardized.path

    @Test func aLayeredDaemonMergesVendorAdminDropInsAndUserAndRefusesALockedWrite() throws {
        let etc = try TemporaryDirectory()
        defer { etc.cleanUp() }
        for folder in ["settings.d", "locks"] {
            try FileManager.default.createDirectory(atPath: etc.file(folder), withIntermediateDirectories: false)
        }
        try replaceFile(etc.file("settings.json"), with: #"{"upstream": {"timeoutSeconds": 3}}"#)
        let layers = [
            "--layer", Self.vendor, "--layer", etc.file("settings.json"), "--layer", etc.file("settings.d"), "--locks",
            etc.file("locks"),
        ]
        let daemon = try Daemon(extraArguments: layers)
        // The vendor's upstream, with the administrator's timeout over it.
        #expect(daemon.waitFor("upstream is now https://upstream.vendor.example (timeout 3 s"), "\(daemon.log)")
        func cli(_ arguments: String...) throws -> ProcessOutput {
            try run(loupe, layers + ["--file", daemon.settings, "--schema", "daemon"] + arguments)
        }

        // An administrator's drop-in reaches the running daemon.
        try replaceFile(etc.file("settings.d/50-site.json"), with: #"{"upstream": {"url": "https://site.example"}}"#)
        #expect(daemon.waitFor("upstream is now https://site.example"), "\(daemon.log)")
        // The user's edit goes to the user's file only, as the patch over the layers below.
        #expect(try cli("set", "ticker.greeting", "bonjour").status == 0)
        #expect(daemon.waitFor("greeting is now bonjour"), "\(daemon.log)")
        #expect(
            try String(contentsOfFile: daemon.settings, encoding: .utf8).replacingOccurrences(of: " ", with: "")
                .replacingOccurrences(of: "\n", with: "") == #"{"ticker":{"greeting":"bonjour"}}"#)

        // A lock refuses the user's write, with exit status 77 and the lock's file named.
        try replaceFile(etc.file("locks/site"), with: "# the site's upstream\nupstream.url\n")
        let refused = try cli("set", "upstream.url", "https://mine.example")
        #expect(refused.status == 77, "\(refused.error)")
        #expect(
            refused.error.contains("cannot write upstream.url") && refused.error.contains(etc.file("locks/site")),
            "\(refused.error)")

        // explain names where each value came from.
        let explained = try cli("explain")
        #expect(explained.status == 0, "\(explained.error)")
        #expect(
            explained.output.contains(
                #"upstream.url = "https://site.example" from \#(etc.file("settings.d/50-site.json")) line 1 (overrides \#(Self.vendor), default), locked by \#(etc.file("locks/site")) line 2"#
            ), "\(explained.output)")
        #expect(
            explained.output.contains(
                #"ticker.greeting = "bonjour" from \#(daemon.settings) line 3 (overrides \#(Self.vendor), default)"#),
            "\(explained.output)")
        #expect(
            explained.output.contains(
                #"upstream.timeoutSeconds = 3 from \#(etc.file("settings.json")) line 1 (overrides \#(Self.vendor), default)"#
            ),
            "\(explained.output)")
        #expect(
            explained.output.contains("ticker.intervalSeconds = 2 from \(Self.vendor) line 5 (overrides default)"),
            "\(explained.output)")
        let one = try cli("explain", "logLevel")
        #expect(
            one.output == #"logLevel = "notice" from \#(Self.vendor) line 2 (overrides default)"# + "\n",
            "\(one.output)")

        let shown = try cli("show", "--layers")
        #expect(
            shown.output.contains("# default\n") && shown.output.contains("# \(Self.vendor)\n")
                && shown.output.contains("# \(daemon.settings) (writable)\n")
                && shown.output.contains("# locks\nupstream.url  (\(etc.file("locks/site")), line 2)"),
            "\(shown.output)")
        // --layer without --file is a usage error.
        #expect(try run(loupe, ["--layer", Self.vendor, "get", "logLevel"]).status == 64)
    }
}

/// `history`, `diff` and `rollback` through `loupe`, on a real file that a person also edits by hand.
@Suite("loupe history, diff and rollback")
struct HistoryCommandTests {
    @Test func historyDiffAndRollbackOverAFileEditedByHandToo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("settings.json")
        func daemon(_ arguments: String...) throws -> ProcessOutput {
            try run(loupe, ["--file", file, "--schema", "daemon"] + arguments)
        }
        #expect(try daemon("set", "ticker.greeting", "hi").status == 0)
        #expect(try daemon("set", "upstream.timeoutSeconds", "30").status == 0)
        try replaceFile(
            file, with: #"{"ticker": {"greeting": "hi"}, "upstream": {"timeoutSeconds": 30}, "logLevel": "debug"}"#)
        #expect(try daemon("set", "ticker.greeting", "hello-again").status == 0)

        let history = try daemon("history")
        let lines = history.output.split(separator: "\n")
        #expect(history.status == 0 && lines.count == 4, "\(history.output) \(history.error)")
        #expect(
            lines.first.map { $0.hasPrefix("1  ") && $0.contains("loupe[") && $0.hasSuffix("ticker.greeting") } == true,
            "\(lines)")
        #expect(
            lines.count == 4 && lines[2].hasPrefix("3  ") && lines[2].contains("outside edit")
                && lines[2].hasSuffix("logLevel"), "\(lines)")
        let touching = try daemon("history", "upstream.timeoutSeconds")
        #expect(touching.output.split(separator: "\n").map { $0.prefix(3) } == ["2  "], "\(touching.output)")

        #expect(try daemon("diff", "2").output == "upstream.timeoutSeconds: (none) -> 30\n")
        let between = try daemon("diff", "1", "4")
        #expect(
            between.output == """
                logLevel: (none) -> "debug"
                ticker.greeting: "hi" -> "hello-again"
                upstream.timeoutSeconds: (none) -> 30

                """, "\(between.output) \(between.error)")

        let rollback = try daemon("rollback", "1")
        #expect(
            rollback.status == 0 && rollback.error.contains("recorded as revision 5"),
            "\(rollback.status) \(rollback.error)")
        #expect(
            try daemon("get", "upstream.timeoutSeconds").output == "5\n"
                && daemon("get", "logLevel").output == "\"info\"\n")
        #expect(try daemon("get", "ticker.greeting").output == "\"hi\"\n")
        #expect(
            try JSONValue(parsing: String(contentsOfFile: file, encoding: .utf8))
                == JSONValue(parsing: #"{"ticker": {"greeting": "hi"}}"#))

        let missing = try daemon("rollback", "99")
        #expect(missing.status == 66 && missing.error.contains("revisions 0–5"), "\(missing.status) \(missing.error)")
        let malformed = try daemon("diff", "seven")
        #expect(malformed.status == 64, "\(malformed.status) \(malformed.error)")
    }

    @Test func aRollbackARuleOrALockRefusesExits65Or77AndWritesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("settings.json"), locks = directory.file("locks")
        // Written without the type (any JSON), then put right.
        #expect(try loupe("--file", file, "set", "upstream.timeoutSeconds", "700000").status == 0)
        #expect(try loupe("--file", file, "set", "upstream.timeoutSeconds", "30").status == 0)
        func daemon(_ arguments: String...) throws -> ProcessOutput {
            try run(loupe, ["--file", file, "--locks", locks, "--schema", "daemon"] + arguments)
        }
        try replaceFile(locks, with: "")
        #expect(try daemon("set", "ticker.greeting", "hi").status == 0)
        let held = try String(contentsOfFile: file, encoding: .utf8)

        let ruled = try daemon("rollback", "1")
        #expect(
            ruled.status == 65 && ruled.error.contains("must be between 1 and 300"), "\(ruled.status) \(ruled.error)")
        // Under a lock, revision 1's value is held aside rather than read: setting it is what the lock refuses.
        try replaceFile(locks, with: "upstream.timeoutSeconds\n")
        let locked = try daemon("rollback", "1")
        #expect(
            locked.status == 77 && locked.error.contains("upstream.timeoutSeconds"), "\(locked.status) \(locked.error)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == held)
        #expect(try daemon("history").output.split(separator: "\n").count == 3, "nothing was recorded")
    }

    @Test func diffMasksSecrets() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("settings.json"), credentials = directory.file("credentials")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        try replaceFile(credentials + "/upstream.token", with: "from-the-credential")
        #expect(
            try loupe("--file", file, "--schema", "daemon", "set", "upstream.token", "s3cret-in-the-file").status == 0)
        let diff = try loupe("--file", file, "--schema", "daemon", "--credentials", credentials, "diff", "1")
        #expect(
            diff.status == 0 && diff.output == "upstream.token: (none) -> \"********\"\n",
            "\(diff.output) \(diff.error)")
    }
}
