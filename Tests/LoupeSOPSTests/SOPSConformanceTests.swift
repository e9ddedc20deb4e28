#if SOPS
import Foundation
import Loupe
import LoupeTestSupport
import LoupeTesting
import LoupeYAML
import Testing
@testable import LoupeSOPS

@Suite("SOPSFileStore conformance")
struct SOPSConformanceTests {
    @Test("SOPSFileStore passes the store conformance suite, JSON and YAML", arguments: ["json", "yaml"])
    func conformance(format: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let identity = AgeIdentity.generate()
        let path = directory.file("settings.\(format)")
        let codec: any DocumentCodec = format == "yaml" ? YAMLCodec() : JSONCodec()
        try await StoreConformanceTest {
            SOPSFileStore(
                path: path, format: codec, identities: .identities([identity]), recipients: [identity.recipient])
        }.run()
    }
}
#endif
