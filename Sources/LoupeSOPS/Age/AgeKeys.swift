#if SOPS
import Crypto
import Foundation

/// An age X25519 identity (`AGE-SECRET-KEY-1…`): the secret key that opens what was sealed for its
/// recipient. Its `description` never shows the key.
public struct AgeIdentity: Sendable, CustomStringConvertible {
    let privateKey: Curve25519.KeyAgreement.PrivateKey

    /// The identity `string` spells (`AGE-SECRET-KEY-1…`, as `age-keygen` writes it).
    ///
    /// - Throws: ``AgeError`` when `string` is not an age X25519 identity; the message never quotes it.
    public init(_ string: String) throws {
        let key = try x25519Key(
            string, prefix: "age-secret-key-", spelled: "AGE-SECRET-KEY-1…",
            otherwise: "an identity is not an age X25519 secret key")
        privateKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: key)
    }

    /// A new random identity.
    public static func generate() -> AgeIdentity { AgeIdentity(privateKey: .init()) }

    private init(privateKey: Curve25519.KeyAgreement.PrivateKey) {
        self.privateKey = privateKey
    }

    /// The recipient that seals for this identity.
    public var recipient: AgeRecipient { AgeRecipient(publicKey: privateKey.publicKey) }

    /// The identity spelled as `age-keygen` writes it; a secret: never log it.
    public var secretKeyString: String {
        Bech32.encode(prefix: "AGE-SECRET-KEY-", data: Array(privateKey.rawRepresentation)).uppercased()
    }

    /// The identities in `text`, as in an age identity file (`keys.txt`): one `AGE-SECRET-KEY-1…` a line,
    /// blank lines and `#` comments ignored. Identities of kinds Loupe does not open (plugins'
    /// `AGE-PLUGIN-…`, post-quantum `AGE-SECRET-KEY-PQ-1…`) are passed over, so the file's X25519 ones serve.
    ///
    /// - Throws: ``AgeError`` naming the line of an identity that does not read (never quoting it).
    public static func parseIdentities(_ text: String) throws -> [AgeIdentity] {
        var identities: [AgeIdentity] = []
        for (number, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix("AGE-PLUGIN-")
                || trimmed.hasPrefix("AGE-SECRET-KEY-PQ-")
            {
                continue
            }
            do {
                identities.append(try AgeIdentity(trimmed))
            } catch {
                throw AgeError("line \(number + 1) of the identities is not an age X25519 secret key")
            }
        }
        return identities
    }

    public var description: String { "AgeIdentity(\(recipient))" }
}

/// An age X25519 recipient (`age1…`): the public key a file key is sealed for.
public struct AgeRecipient: Sendable, Hashable, CustomStringConvertible {
    let publicKey: Curve25519.KeyAgreement.PublicKey

    /// The recipient `string` spells (`age1…`).
    ///
    /// - Throws: ``AgeError`` when it is not one.
    public init(_ string: String) throws {
        let key = try x25519Key(
            string, prefix: "age", spelled: "age1…", inLowerCase: true,
            otherwise: "\(string) is not an age X25519 recipient")
        publicKey = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: key)
    }

    init(publicKey: Curve25519.KeyAgreement.PublicKey) {
        self.publicKey = publicKey
    }

    /// The recipient as `age1…`.
    public var description: String { Bech32.encode(prefix: "age", data: Array(publicKey.rawRepresentation)) }

    public static func == (lhs: AgeRecipient, rhs: AgeRecipient) -> Bool {
        lhs.publicKey.rawRepresentation == rhs.publicKey.rawRepresentation
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(publicKey.rawRepresentation) }
}

/// A failure of the age layer: a header, stanza or payload that does not read or verify, or a key that
/// does not parse. Its message never holds a secret.
public struct AgeError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, in words.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// The 32 bytes of the X25519 key `string` spells in Bech32 under `prefix` (white space around it
/// ignored; only in lower case where `inLowerCase`).
///
/// - Throws: ``AgeError`` saying `failure`, then why: Bech32's reason, or `spelled` (how such a key starts)
///   when `string` is another kind of key.
private func x25519Key(
    _ string: String, prefix: String, spelled: String, inLowerCase: Bool = false, otherwise failure: String
) throws -> [UInt8] {
    let trimmed = string.trimmingCharacters(in: .whitespaces)
    let decoded: (prefix: String, data: [UInt8])
    do {
        decoded = try Bech32.decode(trimmed)
    } catch {
        throw AgeError("\(failure) (\(error))")
    }
    guard decoded.prefix == prefix, decoded.data.count == 32, !inLowerCase || trimmed.first?.isLowercase == true else {
        throw AgeError("\(failure) (\(spelled))")
    }
    return decoded.data
}
#endif
