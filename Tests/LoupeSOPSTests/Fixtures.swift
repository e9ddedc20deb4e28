#if SOPS
import Foundation
@testable import LoupeSOPS

/// The fixtures committed beside the tests (see Fixtures/README.md for where each comes from).
enum Fixture {
    static func path(_ name: String) -> String {
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)!.appendingPathComponent(name).path
    }

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path(name)))
    }

    static func text(_ name: String) throws -> String {
        String(decoding: try data(name), as: UTF8.self)
    }

    /// sops's published test identities (`age/keys.txt` in getsops/sops).
    static func sopsIdentities() throws -> [AgeIdentity] {
        try AgeIdentity.parseIdentities(text("sops/keys.txt"))
    }
}
#endif
