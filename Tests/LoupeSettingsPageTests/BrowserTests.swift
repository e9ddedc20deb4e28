#if SettingsPage
import Foundation
import Loupe
import LoupeSettingsPage
import LoupeTestSupport
import Testing

/// The settings page in a real browser: `Tests/Browser/settings_page.py` drives Debian's chromium,
/// headless, through Playwright for Python, on the example daemon's settings served by this process.
@Suite("Settings page in a browser")
struct BrowserTests {
    static let chromium = ProcessInfo.processInfo.environment["LOUPE_CHROMIUM"] ?? "/usr/bin/chromium"

    /// Whether chromium and Playwright are installed (`Scripts/install-dependencies` installs both).
    static var browserInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: chromium)
            && (try? run("/usr/bin/env", ["python3", "-c", "import playwright.sync_api"]))?.status == 0
    }

    /// In CI the browser tests always run, and fail when the browser is missing.
    static var inCI: Bool { ProcessInfo.processInfo.environment["CI"] != nil }

    @Test(
        "load, provenance, an edit in place, a refused value, a lock, an outside edit, rollback, the token, a document no type describes, a dictionary's entries",
        .enabled(
            if: browserInstalled || inCI,
            "needs chromium and Playwright for Python (Scripts/install-dependencies); skipped outside CI only"),
        .timeLimit(.minutes(3)))
    func browser() async throws {
        let fixture = try PageFixture(configuration: SettingsPage.Configuration())
        let refused = try refusal { try fixture.root.erased.set(atPath: "ticker.intervalSeconds", to: .integer(-1)) }
        let address = Recorder<String>()
        let server = SettingsPageServer(page: fixture.page, address: .loopback(port: 0)) { url in address.append(url) }
        let serving = Task { try await server.run() }
        defer { serving.cancel() }
        // A second page, over a JSON document no settings type describes.
        let untypedFile = fixture.directory.file("untyped.json"), untypedAddress = Recorder<String>()
        try #"{"port": 8080, "server": {"host": "a.example"}, "legacy": {"mode": "old"}}"#.write(
            toFile: untypedFile, atomically: true, encoding: .utf8)
        let untyped = try RootLens(default: JSONValue.object([:]), store: FileStore(path: untypedFile), watch: true)
        let untypedServer = SettingsPageServer(
            page: SettingsPage(untyped, configuration: SettingsPage.Configuration()), address: .loopback(port: 0)
        ) { url in untypedAddress.append(url) }
        let untypedServing = Task { try await untypedServer.run() }
        defer { untypedServing.cancel() }
        // A third, over a root that is a dictionary: its entries added and removed on the page.
        let endpointsFile = fixture.directory.file("endpoints.jsonc"), endpointsAddress = Recorder<String>()
        try "{\n  // Where each service is.\n  \"api\": {\"host\": \"api.example\", \"port\": 443}\n}\n".write(
            toFile: endpointsFile, atomically: true, encoding: .utf8)
        let endpoints = try RootLens(
            default: [String: EveryKind.Endpoint](), store: FileStore(path: endpointsFile, format: JSONCCodec()),
            watch: true)
        let endpointsServer = SettingsPageServer(
            page: SettingsPage(endpoints, configuration: SettingsPage.Configuration()), address: .loopback(port: 0)
        ) { url in endpointsAddress.append(url) }
        let endpointsServing = Task { try await endpointsServer.run() }
        defer { endpointsServing.cancel() }
        #expect(
            await eventually(deadline: pageDeadline) {
                address.count == 1 && untypedAddress.count == 1 && endpointsAddress.count == 1
            })
        let url = try #require(address.all.first), untypedURL = try #require(untypedAddress.all.first)
        let endpointsURL = try #require(endpointsAddress.all.first)

        let script = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Browser/settings_page.py").path
        // Screenshots go where LOUPE_SCREENSHOTS says (the README's comes from there), else the temporary directory.
        let shots = ProcessInfo.processInfo.environment["LOUPE_SCREENSHOTS"] ?? fixture.directory.file("screenshots")
        let browser = try ChildProcess(
            "python3",
            [
                script, url, fixture.settingsFile, fixture.lockFile, fixture.directory.file("vendor.json"), refused,
                shots, untypedURL, untypedFile, endpointsURL, endpointsFile,
            ],
            environment: ["LOUPE_CHROMIUM": Self.chromium])
        #expect(await eventually(deadline: .seconds(150)) { browser.wait(limit: .zero) != nil })
        let status = browser.wait(limit: .zero)
        #expect(status == 0, "\(browser.output)\n\(browser.errorOutput)")
        #expect(browser.output.contains(" passed, 0 failed"), "\(browser.output)")
        #expect(FileManager.default.fileExists(atPath: shots + "/settings-page.png"))
    }
}
#endif
