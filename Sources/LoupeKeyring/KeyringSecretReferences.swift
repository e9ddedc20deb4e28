#if os(Linux)
import Foundation
import Loupe

extension SecretReferences {
    /// Resolves `keyring:SERVICE/ACCOUNT` references from the login keyring: the secret of the item whose
    /// attributes are `service` and `account`, as `secret-tool store service SERVICE account ACCOUNT`
    /// stores it (its text, as it is).
    ///
    /// ```swift
    /// import LoupeKeyring
    /// SecretReferences.registerKeyring()
    /// // settings.json: {"upstream": {"token": {"$secret": "keyring:com.example.app/upstream"}}}
    /// ```
    ///
    /// Each call is bounded by `timeout`; a missing item, a locked collection or no keyring at all is an
    /// error naming the reference, never a value.
    public static func registerKeyring(timeout: Duration = .seconds(5)) {
        register(scheme: "keyring") { name in
            let parts = name.split(separator: "/", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw SettingsError(.unreadable, reason: "expected keyring:SERVICE/ACCOUNT")
            }
            let service = SecretService(
                service: parts[0], account: parts[1], collection: nil, timeout: timeout,
                storeName: "keyring item service=\(parts[0]) account=\(parts[1])")
            guard let secret = try service.lookup() else {
                throw SettingsError(.unreadable, reason: "no such keyring item")
            }
            return secret.withBytes { String(decoding: $0, as: UTF8.self) }
        }
    }
}
#endif
