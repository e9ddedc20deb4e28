import Foundation
import LoupeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `loupe serve` and `settings-daemon --serve`: the settings page started by the example programs,
/// reached with curl as a person's browser reaches it.
@Suite("The settings page of the example programs")
struct SettingsPageExamplesTests {
    /// The built example programs (as ExamplesTests names them).
    static let loupe = buildProductsDirectory + "/loupe"
    static let daemon = buildProductsDirectory + "/settings-daemon"

    /// The page's address in `text`, a line `…page: http://127.0.0.1:PORT/?token=TOKEN`: the base and the token.
    static func address(in text: String) -> (base: String, token: String)? {
        guard let range = text.range(of: #"http://127\.0\.0\.1:[0-9]+/\?token=[^\s"]+"#, options: .regularExpression)
        else { return nil }
        let url = String(text[range])
        let parts = url.components(separatedBy: "?token=")
        return (parts[0], parts[1])
    }

    static func curl(_ arguments: [String]) throws -> ProcessOutput {
        try run("curl", ["-s", "--max-time", "10"] + arguments)
    }

    @Test("loupe serve prints the page's address with a token, serves it, writes through the root, stops on SIGTERM")
    func loupeServe() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("settings.jsonc")
        let text = "// kept\n{\n  \"ticker\": {\"greeting\": \"hi\"} // the greeting\n}\n"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let server = try ChildProcess(Self.loupe, ["--file", file, "--schema", "daemon", "serve", "--port", "0"])
        #expect(
            eventually(deadline: .seconds(15)) { Self.address(in: server.output) != nil },
            "\(server.output)\(server.errorOutput)")
        let (base, token) = try #require(Self.address(in: server.output))
        #expect(server.output.hasPrefix("Settings page: http://127.0.0.1:"))

        #expect(try Self.curl(["-o", "/dev/null", "-w", "%{http_code}", base + "?token=" + token]).output == "200")
        #expect(try Self.curl(["-o", "/dev/null", "-w", "%{http_code}", base + "api/settings"]).output == "401")
        let saved = try Self.curl([
            "-X", "PUT", "-H", "X-Loupe-Token: \(token)", "-H", "Content-Type: application/json",
            "--data", #"{"path": "ticker.greeting", "value": "bonjour"}"#, "-w", "\n%{http_code}", base + "api/value",
        ])
        #expect(saved.output.hasSuffix("\n200"), "\(saved.output)")
        #expect(
            (try? String(contentsOfFile: file, encoding: .utf8))
                == text.replacingOccurrences(of: "\"hi\"", with: "\"bonjour\""))

        server.kill(SIGTERM)
        #expect(server.wait(limit: .seconds(15)) == 0, "\(server.errorOutput)")
    }

    @Test("settings-daemon --serve: an edit on its page reaches the running daemon; a given token stays out of its log")
    func daemonServe() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let token = "page-token-\(UUID().uuidString)"
        let daemon = try ChildProcess(
            Self.daemon,
            [
                "--settings", directory.file("settings.json"), "--state", directory.file("state.json"), "--keyring",
                "org.loupe.tests.\(UUID().uuidString)/upstream", "--serve", "0",
            ],
            environment: ["LOUPE_PAGE_TOKEN": token])
        defer {
            daemon.kill(SIGKILL)
            _ = daemon.wait(limit: .seconds(10))
        }
        let line = #"settings page: (http://127\.0\.0\.1:[0-9]+/)"#
        #expect(
            eventually(deadline: .seconds(15)) {
                daemon.errorOutput.range(of: line, options: .regularExpression) != nil
            }, "\(daemon.errorOutput)")
        let log = daemon.errorOutput
        #expect(!log.contains(token))
        let found = try #require(log.range(of: #"http://127\.0\.0\.1:[0-9]+/"#, options: .regularExpression))
        let base = String(log[found])
        let saved = try Self.curl([
            "-X", "PUT", "-H", "X-Loupe-Token: \(token)", "-H", "Content-Type: application/json",
            "--data", #"{"path": "ticker.greeting", "value": "hej"}"#, "-o", "/dev/null", "-w", "%{http_code}",
            base + "api/value",
        ])
        #expect(saved.output == "200")
        #expect(
            eventually(deadline: .seconds(15)) { daemon.errorOutput.contains("greeting is now hej") },
            "\(daemon.errorOutput)")
        daemon.kill(SIGTERM)
        #expect(daemon.wait(limit: .seconds(15)) == 0)
        #expect(!daemon.errorOutput.contains(token))
    }
}
