import Foundation
import Logging
import Loupe
import LoupeKeyring
import LoupeTesting
import LoupeTestSupport
import Testing

struct Credentials: Codable, Sendable, Equatable {
    var user = "nobody"
    var token = ""
}

/// The keyring tests talk to a real gnome-keyring daemon on a private D-Bus session, which `Scripts/test`
/// starts (and stops) around the test run and announces with `LOUPE_KEYRING=1`.
let keyringAvailable = ProcessInfo.processInfo.environment["LOUPE_KEYRING"] == "1"

/// A service name of the test's own, so tests running at once never touch each other's items.
private func uniqueService() -> String { "org.loupe.tests." + UUID().uuidString }

private func secretTool(_ arguments: [String], input: String? = nil) throws -> ProcessOutput {
    try run("/usr/bin/env", ["secret-tool"] + arguments, input: input)
}

@Suite(
    "KeyringStore: the real Secret Service", .enabled(if: keyringAvailable, "run Scripts/test, which starts a keyring"))
struct KeyringStoreTests {
    @Test func passesTheStoreConformanceSuite() async throws {
        let service = uniqueService()
        try await StoreConformanceTest { KeyringStore(service: service, account: "conformance", collection: .session) }
            .run()
    }

    /// A long-running root must never write over what `secret-tool` stored meanwhile, nor write back what
    /// `secret-tool clear` deleted: its update runs again on what the item holds now.
    @Test func anItemChangedOrDeletedBySecretToolWhileARootHoldsItIsNeverOverwritten() throws {
        let service = uniqueService()
        let root = try RootLens(default: Credentials(), store: KeyringStore(service: service, account: "a"))
        try root.set(Credentials(user: "alice", token: "hunter2-first"))

        _ = try secretTool(
            ["store", "--label=by hand", "service", service, "account", "a"],
            input: #"{"user":"bob","token":"hunter2-by-hand"}"#)
        try root.user.set("carol")
        let afterChange = try secretTool(["lookup", "service", service, "account", "a"]).output
        #expect(
            try JSONValue(parsing: afterChange) == JSONValue(parsing: #"{"token":"hunter2-by-hand","user":"carol"}"#),
            "the update ran on secret-tool's item")
        #expect(root.value == Credentials(user: "carol", token: "hunter2-by-hand"))

        _ = try secretTool(["clear", "service", service, "account", "a"])
        try root.user.set("dave")
        let afterDelete = try secretTool(["lookup", "service", service, "account", "a"]).output
        #expect(
            try JSONValue(parsing: afterDelete) == JSONValue(parsing: #"{"user":"dave"}"#),
            "the deleted token was not written back")
        #expect(root.value == Credentials(user: "dave", token: ""))
        try root.remove()
    }

    @Test func roundTripsAndSecretToolPrintsExactlyWhatLoupeStored() throws {
        let service = uniqueService()
        let logs = LogCapture()
        let store = KeyringStore(service: service, account: "upstream", logger: logs.logger)
        let root = try RootLens(default: Credentials(), store: store)
        try root.update {
            $0.user = "bob"
            $0.token = "hunter2-round-trip"
        }
        let reopened = try RootLens(default: Credentials(), store: KeyringStore(service: service, account: "upstream"))
        #expect(reopened.value == Credentials(user: "bob", token: "hunter2-round-trip"))

        let lookup = try secretTool(["lookup", "service", service, "account", "upstream"])
        #expect(lookup.status == 0)
        #expect(try JSONDecoder().decode(Credentials.self, from: Data(lookup.output.utf8)) == reopened.value)
        #expect(!logs.text.contains("hunter2"), "the secret never reaches a log")
        #expect(!"\(store) \(root) \(String(reflecting: root))".contains("hunter2"))
        try root.remove()
    }

    @Test func readsWhatSecretToolStoredAndReplacesIt() throws {
        let service = uniqueService()
        let stored = try secretTool(
            ["store", "--label=from secret-tool", "service", service, "account", "a"],
            input: #"{"user": "alice", "token": "hunter2-from-tool"}"#)
        #expect(stored.status == 0, "\(stored.error)")
        let root = try RootLens(default: Credentials(), store: KeyringStore(service: service, account: "a"))
        #expect(root.value == Credentials(user: "alice", token: "hunter2-from-tool"))

        try root.token.set("rotated")
        let search = try secretTool(["search", "--all", "service", service, "account", "a"])
        #expect(
            search.output.components(separatedBy: "\n").filter { $0.hasPrefix("[/") }.count == 1, "one item, replaced")

        // And the other way: secret-tool replaces Loupe's item, and Loupe reads it.
        _ = try secretTool(
            ["store", "--label=again", "service", service, "account", "a"], input: #"{"user": "carol", "token": "t"}"#)
        try root.reload()
        #expect(root.user.value == "carol")
        try root.remove()
    }

    @Test func anItemHoldingAPlainPasswordIsNamedForWhatItIsAndCanBeStartedAfresh() throws {
        let service = uniqueService()
        let stored = try secretTool(
            ["store", "--label=a password", "service", service, "account", "a"], input: "hunter2-plain")
        #expect(stored.status == 0, "\(stored.error)")
        let store = KeyringStore(service: service, account: "a")
        #expect {
            _ = try RootLens(default: Credentials(), store: store)
        } throws: { error in
            let text = "\(error)"
            return (error as? SettingsError)?.code == .corrupt && text.contains("its secret is not a JSON document")
                && text.contains("secret-tool clear service \(service) account a") && !text.contains("hunter2")
        }
        // The item is the user's to replace: removed as the error says, the root starts from its default
        // and writes anew.
        #expect(try secretTool(["clear", "service", service, "account", "a"]).status == 0)
        let root = try RootLens(default: Credentials(), store: store)
        try root.user.set("bob")
        #expect(try secretTool(["lookup", "service", service, "account", "a"]).output.contains(#""user":"bob""#))
        try root.remove()
    }

    @Test func aSecretTooLargeForTheKeyringIsRefusedBeforeItIsSent() throws {
        let store = KeyringStore(service: "org.loupe.tests.\(UUID().uuidString)", account: "large")
        defer { try? store.removeWhateverIsStored() }
        let large = JSONValue.object(["blob": .string(String(repeating: "x", count: 2 << 20))])
        #expect {
            try store.overwrite(with: large)
        } throws: { error in
            "\(error)".contains("more than a keyring item may hold") && !"\(error)".contains("xxxx")
        }
        // The connection to the Secret Service is still good.
        try store.overwrite(with: .object(["token": .string("small")]))
        #expect(try store.storedDocument() == .object(["token": .string("small")]))
    }

    @Test func removeDeletesTheItem() throws {
        let service = uniqueService()
        let root = try RootLens(default: Credentials(), store: KeyringStore(service: service, account: "a"))
        try root.user.set("dave")
        #expect(try secretTool(["lookup", "service", service, "account", "a"]).status == 0)
        try root.remove()
        #expect(try secretTool(["lookup", "service", service, "account", "a"]).status != 0)
        #expect(root.value == Credentials())
        try root.remove()  // removing nothing is fine
    }

    @Test func theSessionCollectionHoldsItemsToo() throws {
        let service = uniqueService()
        let store = KeyringStore(service: service, account: "a", collection: .session)
        try store.overwrite(with: DocumentCoding().encode(Credentials(user: "erin", token: "t")))
        #expect(
            try KeyringStore(service: service, account: "a", collection: .session).storedDocument()
                == DocumentCoding().encode(Credentials(user: "erin", token: "t")))
        try store.removeWhateverIsStored()
        #expect(try store.storedDocument() == nil)
    }

    @Test(arguments: [
        #"{"user": 5, "token": "hunter2-wrong-type"}"#,
        "hunter2-not-json-at-all",
        #"{"user": ["hunter2-in-an-array"], "token": "t"}"#,
    ])
    func aBadItemIsAClearErrorThatNeverShowsTheSecret(_ secret: String) throws {
        let service = uniqueService()
        _ = try secretTool(["store", "--label=bad", "service", service, "account", "a"], input: secret)
        #expect {
            _ = try RootLens(default: Credentials(), store: KeyringStore(service: service, account: "a"))
        } throws: { error in
            let message = "\(error) \(String(reflecting: error)) \(error.localizedDescription)"
            return (error as? SettingsError)?.code == .corrupt && message.contains("service=\(service)")
                && !message.contains("hunter2")
        }
        #expect(try secretTool(["lookup", "service", service, "account", "a"]).output == secret, "left as it was")
        _ = try secretTool(["clear", "service", service, "account", "a"])
    }
}

@Test func everyValueOfAKeyringStoreIsSecret() {
    let store: any DocumentStore = KeyringStore(service: "s", account: "a")
    #expect(store.secretPaths == [.root])
}

/// The failure paths run the test helper in an environment of their own: no session bus, a bus with no
/// keyring daemon, a locked collection. Each must end in a clear, typed error within its timeout.
@Suite("KeyringStore: failures", .enabled(if: keyringAvailable, "run Scripts/test, which installs the keyring"))
struct KeyringFailureTests {
    @Test func noSessionBus() throws {
        let result = try run(
            "/usr/bin/env",
            ["-u", "DBUS_SESSION_BUS_ADDRESS", "-u", "DISPLAY", testHelper, "keyring-save", "s", "a", "3"])
        #expect(result.status == 1)
        #expect(result.output.contains("unavailable: keyring item service=s account=a"))
        #expect(result.output.contains("Cannot autolaunch D-Bus"))
        #expect(!result.output.contains("hunter2"))
    }

    @Test func noKeyringDaemonOnTheBus() throws {
        // A session bus that activates nothing: no service directories, so no keyring can be started.
        let home = try TemporaryDirectory()
        defer { home.cleanUp() }
        let config = home.file("bus.conf")
        try Data(
            """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:tmpdir=\(home.path)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.utf8
        ).write(to: URL(fileURLWithPath: config))
        let result = try run(
            "/usr/bin/env",
            [
                "-u", "DISPLAY", "HOME=\(home.path)", "XDG_DATA_HOME=\(home.path)",
                "dbus-run-session", "--config-file=\(config)", "--", testHelper, "keyring-save", "s", "a", "3",
            ])
        #expect(result.status == 1)
        #expect(result.output.contains("error: unavailable: keyring item service=s account=a"))
        #expect(result.output.contains("org.freedesktop.secrets was not provided by any .service files"))
        #expect(!result.output.contains("hunter2"))
    }

    @Test func aLockedCollection() throws {
        let home = try TemporaryDirectory()
        defer { home.cleanUp() }
        // The keyring runs in the foreground, so the script knows it and stops it.
        let script = """
            printf loupe | gnome-keyring-daemon --foreground --unlock --components=secrets >"$HOME/keyring.env" 2>/dev/null &
            keyring=$!
            trap 'kill $keyring' EXIT
            until grep -q GNOME_KEYRING_CONTROL "$HOME/keyring.env"; do sleep 0.05; done
            "$0" keyring-save s a 3 || exit 10
            dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \
                org.freedesktop.Secret.Service.Lock array:objpath:/org/freedesktop/secrets/collection/login >/dev/null || exit 11
            "$0" keyring-load s a 3
            "$0" keyring-save s a 3
            """
        let result = try run(
            "/usr/bin/env",
            [
                "-u", "DISPLAY", "HOME=\(home.path)", "XDG_DATA_HOME=\(home.path)",
                "dbus-run-session", "--", "sh", "-c", script, testHelper,
            ])
        // Depending on whether the daemon can try an unlock prompt, a call fails as "locked" at once or
        // waits for the prompt until the timeout: either way a typed error, never "nothing stored".
        let lines = result.output.components(separatedBy: "\n").filter {
            $0 == "saved" || $0.hasPrefix("error:") || $0 == "nothing" || $0.hasPrefix("user ")
        }
        #expect(lines.count == 3, "\(result.output)\(result.error)")
        #expect(lines.first == "saved")
        for line in lines.dropFirst() {
            let typed =
                line.contains("error: unavailable: keyring item service=s account=a")
                || line.contains("error: timed out waiting for keyring item service=s account=a")
            #expect(typed, "\(line)")
            #expect(line.contains("locked") || line.contains("prompt"), "\(line)")
        }
        #expect(!result.output.contains("hunter2"))
    }
}

/// Collects log lines so a test can check what was logged.
final class LogCapture: Sendable {
    private let lines = Locked<[String]>([])

    var logger: Logger {
        Logger(label: "test") { _ in Handler(capture: self) }
    }

    var text: String { lines.withLock { $0.joined(separator: "\n") } }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            capture.lines.withLock { $0.append("\(event.message) \(event.metadata ?? [:])") }
        }
    }
}
