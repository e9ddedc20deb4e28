import Foundation
import LoupeTestSupport
import Testing

/// The README's example end to end (`Scripts/demo`), on this build's programs: what `.ci/run` checks of
/// the demo, as a test of the examples.
@Suite("The README's demo")
struct DemoTests {
    @Test(.enabled(if: keyringAvailable, "the demo keeps its token in the keyring: run under Scripts/with-services"))
    func theDemoRunsAsTheREADMESays() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../Scripts/demo"
        ).standardized.path
        var environment = ProcessInfo.processInfo.environment
        environment["LOUPE_DEMO_BIN"] = buildProductsDirectory
        let demo = try run(script, [], environment: environment)
        #expect(demo.status == 0, "\(demo.output)\n\(demo.error)")
        #expect(demo.output.contains("greeting is now bonjour"), "\(demo.output)")
        #expect(demo.output.contains("settings-daemon stopped"), "\(demo.output)")
        let daemonLines = demo.output.split(separator: "\n").filter { $0.contains("daemon|") }
        #expect(!daemonLines.isEmpty, "the demo shows what the daemon logged")
        #expect(!daemonLines.contains { $0.contains("s3cr3t") }, "the daemon logged the secret")
    }
}
