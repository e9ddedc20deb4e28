#if SOPS
import Foundation
import Loupe

/// Where a ``SOPSFileStore`` finds the age identities that open its file's data key: where sops looks for
/// them, a systemd credential, a string a provider returns (a keyring item), or identities in hand. Read
/// when a data key must be unwrapped, so a key file replaced meanwhile is read afresh.
///
/// ```swift
/// // The keyring (LoupeKeyring), without LoupeSOPS linking libsecret:
/// let keyring = KeyringStore(service: "com.example.app", account: "age-identity")
/// let identities = AgeIdentities.provider(named: "keyring item com.example.app") {
///     try keyring.load().document.flatMap { if case .string(let key) = $0 { key } else { nil } }
/// }
/// ```
public struct AgeIdentities: Sendable, CustomStringConvertible {
    /// Where the identities come from, for messages.
    public let description: String
    private let read: @Sendable () throws -> [AgeIdentity]

    /// Identities read by `read` when needed; `description` names where, for messages.
    public init(description: String, read: @escaping @Sendable () throws -> [AgeIdentity]) {
        self.description = description
        self.read = read
    }

    /// The identities, read now.
    ///
    /// - Throws: `SettingsError` with code `SettingsError.Code.unavailable` naming where, never a key.
    public func identities() throws -> [AgeIdentity] {
        do {
            return try read()
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError(
                .unavailable, reason: "the age identities in \(description) do not read: \(error)", cause: error)
        }
    }

    /// These identities.
    public static func identities(_ identities: [AgeIdentity]) -> AgeIdentities {
        AgeIdentities(description: "\(identities.count) identities given") { identities }
    }

    /// Where sops looks, in its order, all that are there: `SOPS_AGE_KEY` (identities in the variable),
    /// `SOPS_AGE_KEY_FILE` (a file of them), then `$XDG_CONFIG_HOME/sops/age/keys.txt` (`~/.config` when
    /// unset).
    public static func sopsDefaults(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> AgeIdentities {
        AgeIdentities(description: "SOPS_AGE_KEY, SOPS_AGE_KEY_FILE and sops/age/keys.txt") {
            var identities: [AgeIdentity] = []
            if let text = environment["SOPS_AGE_KEY"], !text.isEmpty {
                identities += try AgeIdentity.parseIdentities(text)
            }
            if let path = environment["SOPS_AGE_KEY_FILE"], !path.isEmpty {
                identities += try readFile(path)
            }
            let base =
                environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? (environment["HOME"].map { $0 + "/.config" } ?? NSHomeDirectory() + "/.config")
            let keys = base + "/sops/age/keys.txt"
            if FileManager.default.fileExists(atPath: keys) { identities += try readFile(keys) }
            return identities
        }
    }

    /// The identities in an identity file (`keys.txt`).
    public static func file(_ path: String) -> AgeIdentities {
        AgeIdentities(description: "the age identity file \(path)") { try readFile(path) }
    }

    /// The identities in the systemd credential `name` (`LoadCredential=` or `LoadCredentialEncrypted=`,
    /// read from `$CREDENTIALS_DIRECTORY`).
    public static func systemdCredential(
        _ name: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> AgeIdentities {
        AgeIdentities(description: "the systemd credential \(name)") {
            guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
                throw SettingsError(
                    .unavailable,
                    reason: "the systemd credential \(name) is not there: CREDENTIALS_DIRECTORY is not set")
            }
            return try readFile(directory + "/" + name)
        }
    }

    /// The identities in the string `provider` returns (nil: none), such as a keyring item's secret.
    public static func provider(
        named name: String, _ provider: @escaping @Sendable () throws -> String?
    ) -> AgeIdentities {
        AgeIdentities(description: name) {
            guard let text = try provider() else { return [] }
            return try AgeIdentity.parseIdentities(text)
        }
    }

    private static func readFile(_ path: String) throws -> [AgeIdentity] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw SettingsError(.unavailable, reason: "the age identity file \(path) does not read", cause: error)
        }
        do {
            return try AgeIdentity.parseIdentities(String(decoding: data, as: UTF8.self))
        } catch {
            throw SettingsError(.unavailable, reason: "the age identity file \(path): \(error)", cause: error)
        }
    }
}
#endif
