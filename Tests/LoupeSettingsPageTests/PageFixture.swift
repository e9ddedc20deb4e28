#if SettingsPage
import DaemonSettings
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Loupe
import LoupeSettingsPage
import LoupeTestSupport
import Testing

/// The example daemon's settings as an administrator and a user keep them: vendor defaults below, a lock
/// on `upstream.url`, a credential for `upstream.token`, and the user's commented JSONC file on top.
struct PageFixture: Sendable {
    let directory: TemporaryDirectory
    let settingsFile: String
    let lockFile: String
    let root: RootLens<DaemonSettings>
    let page: SettingsPage

    static let userFile = """
        // The daemon's settings: edited by hand and by the settings page.
        {
          // Chatty while we debug.
          "logLevel": "debug",
          "ticker": {
            "greeting": "hi" // said every tick
          }
        }

        """

    init(configuration: SettingsPage.Configuration = SettingsPage.Configuration(token: "test-token")) throws {
        directory = try TemporaryDirectory()
        settingsFile = directory.file("settings.jsonc")
        lockFile = directory.file("locks")
        try #"{"upstream": {"timeoutSeconds": 7, "url": "https://vendor.example"}}"#.write(
            toFile: directory.file("vendor.json"), atomically: true, encoding: .utf8)
        try "# The site decides where the upstream is.\nupstream.url\n".write(
            toFile: lockFile, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(
            atPath: directory.file("credentials"), withIntermediateDirectories: true)
        try "s3cret-upstream-token".write(
            toFile: directory.file("credentials/upstream.token"), atomically: true, encoding: .utf8)
        try Self.userFile.write(toFile: settingsFile, atomically: true, encoding: .utf8)
        let store = LayeredStore(
            layers: [.file(directory.file("vendor.json")), .directory(credentials: directory.file("credentials"))],
            top: FileStore(path: settingsFile, format: JSONCCodec()), locks: [lockFile])
        root = try RootLens(default: DaemonSettings(), store: store)
        page = SettingsPage(root, configuration: configuration)
    }

    var fileText: String { (try? String(contentsOfFile: settingsFile, encoding: .utf8)) ?? "" }

    /// Runs `body` with a client of an application that mounts the page at `/settings`.
    func withClient(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let router = Router()
        router.addRoutes(page.routes(), atPath: "/settings")
        try await Application(router: router).test(.router) { client in try await body(client) }
    }
}

/// Headers of a request the page's own script sends.
func pageHeaders(token: String = "test-token", origin: String? = "http://localhost", json: Bool = true) -> HTTPFields {
    var headers = HTTPFields()
    headers[HTTPField.Name("X-Loupe-Token")!] = token
    if let origin { headers[.origin] = origin }
    if json { headers[.contentType] = "application/json" }
    return headers
}

extension TestResponse {
    /// The body, parsed as JSON; `null` when it is not JSON.
    var json: JSONValue { (try? JSONValue(parsing: String(buffer: body))) ?? .null }
    var text: String { String(buffer: body) }
}

extension JSONValue {
    /// The setting at `path` in a settings model the page's API answers.
    func setting(_ path: String) -> JSONValue? {
        guard case .array(let groups)? = self[path: "groups"] else { return nil }
        for group in groups {
            guard case .array(let settings)? = group[path: "settings"] else { continue }
            if let found = settings.first(where: { $0[path: "path"] == .string(path) }) { return found }
        }
        return nil
    }
}
#endif

/// How long a page test waits for its server and its streams. The server runs on Swift's cooperative pool,
/// which the whole suite shares on a 2-core machine: while other suites' synchronous tests hold the pool's
/// threads, the server waits for one. A bound on waiting, never a timing assertion.
let pageDeadline: Duration = .seconds(120)
