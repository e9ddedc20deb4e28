import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// `loupe check` and `loupe diff --files` over the example daemon's type, its layers and its locks, as CI
/// runs them on a repository's settings files.
@Suite("loupe check and diff --files: the daemon's settings files before they ship")
struct LoupeCheckTests {
    private func loupe(_ arguments: [String]) throws -> ProcessOutput {
        try run(buildProductsDirectory + "/loupe", arguments)
    }

    @Test("check over --schema, --layer and --locks with no --file: every problem, --format json after the verb")
    func checkUnderLayersAndLocks() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let base = directory.file("base.json"), locks = directory.file("locks"),
            settings = directory.file("settings.toml")
        try #"{"ticker": {"intervalSeconds": 2}}"#.write(toFile: base, atomically: true, encoding: .utf8)
        try "ticker.intervalSeconds\n".write(toFile: locks, atomically: true, encoding: .utf8)
        try """
        logLevel = "loud"

        [ticker]
        intervalSeconds = -1

        [upstream]
        url = "ftp://example.org"
        timeoutSeconds = 0
        """.write(toFile: settings, atomically: true, encoding: .utf8)
        let text = try loupe(["--schema", "daemon", "--layer", base, "--locks", locks, "check", settings])
        #expect(text.status == 65, "\(text.error)")
        #expect(
            text.output == """
                \(settings):1:12: logLevel: expected one of trace, debug, info, notice, warning, error, critical, found "loud"
                \(settings):4:19: ticker.intervalSeconds: locked by \(locks) line 1: the value here is ignored, the layers below give it
                \(settings):7:7: upstream.url: must be an http or https URL, got "ftp://example.org"
                \(settings):8:18: upstream.timeoutSeconds: must be between 1 and 300, got 0

                """, "\(text.output)")

        let json = try loupe(["--schema", "daemon", "check", "--format", "json", settings])
        #expect(json.status == 65, "\(json.error)")
        guard case .array(let problems) = try JSONValue(parsing: json.output) else {
            Issue.record("not a JSON array: \(json.output)")
            return
        }
        #expect(
            problems.compactMap { if case .string(let code)? = $0[path: "code"] { code } else { nil } }
                == ["invalid-value", "rule", "rule", "rule"], "without the lock, -1 breaks a rule: \(json.output)")

        try "[ticker]\nintervalSeconds = 5\n".write(toFile: settings, atomically: true, encoding: .utf8)
        #expect(try loupe(["--schema", "daemon", "check", settings]).status == 0)
    }

    @Test("diff --files: a JSON base against a YAML file, path by path")
    func diffFilesAcrossFormats() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let base = directory.file("base.json"), settings = directory.file("settings.yaml")
        try #"{"logLevel": "info", "upstream": {"timeoutSeconds": 5}}"#.write(
            toFile: base, atomically: true, encoding: .utf8)
        try "# reviewed\nlogLevel: debug\nticker:\n  greeting: hi\n".write(
            toFile: settings, atomically: true, encoding: .utf8)
        let diff = try loupe(["--schema", "daemon", "diff", "--files", base, settings])
        #expect(diff.status == 0, "\(diff.error)")
        #expect(
            diff.output == """
                logLevel: "info" -> "debug"
                ticker.greeting: (none) -> "hi"
                upstream.timeoutSeconds: 5 -> (none)

                """, "\(diff.output)")
    }
}
