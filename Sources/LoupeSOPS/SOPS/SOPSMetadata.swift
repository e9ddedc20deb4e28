#if SOPS
import Crypto
import Foundation
import Loupe

/// The `sops` block of a file: the data key wrapped for each recipient, the MAC, when it was last changed,
/// and which values are encrypted.
///
/// Loupe reads and writes age recipients; the block's other members (PGP, cloud KMS, `key_groups` of other
/// kinds) are kept as they are, so a file stays openable by whoever it was sealed for.
struct SOPSMetadata {
    /// The member of the document that holds the block.
    static let key = "sops"
    /// What sops hashes first when only encrypted values are in the MAC.
    static let macOnlyEncryptedPrefix: [UInt8] = [
        0x8a, 0x3f, 0xd2, 0xad, 0x54, 0xce, 0x66, 0x52, 0x7b, 0x10, 0x34, 0xf3, 0xd1, 0x47, 0xbe, 0x0b, 0x0b, 0x97,
        0x5b, 0x3b,
        0xf4, 0x4f, 0x72, 0xc6, 0xfd, 0xad, 0xec, 0x81, 0x76, 0xf2, 0x7d, 0x69,
    ]
    /// The sops version Loupe writes in a block it creates.
    static let writtenVersion = "3.9.0"

    /// The block as the document holds it; written back with only `lastmodified`, `mac` and the age
    /// stanzas changed.
    var block: [String: JSONValue]
    var rules: SOPSRules

    /// The age recipients and their armored stanzas, top-level and in key groups.
    var ageKeys: [(recipient: String, enc: String)] {
        var keys: [(String, String)] = []
        func collect(_ list: JSONValue?) {
            guard case .array(let entries)? = list else { return }
            for case .object(let entry) in entries {
                if case .string(let recipient)? = entry["recipient"], case .string(let enc)? = entry["enc"] {
                    keys.append((recipient, enc))
                }
            }
        }
        collect(block["age"])
        if case .array(let groups)? = block["key_groups"] {
            for case .object(let group) in groups { collect(group["age"]) }
        }
        return keys
    }

    /// Every recipient the block names, for an error saying whom a file was sealed for.
    var recipientNames: [String] {
        var names = ageKeys.map { "age \($0.recipient)" }
        func other(_ kind: String, _ field: String, in container: [String: JSONValue]) {
            guard case .array(let entries)? = container[kind] else { return }
            for case .object(let entry) in entries {
                if case .string(let name)? = entry[field] { names.append("\(kind) \(name)") }
            }
        }
        let kinds = [
            ("pgp", "fp"), ("kms", "arn"), ("gcp_kms", "resource_id"), ("azure_kv", "vault_url"),
            ("hc_vault", "vault_address"), ("hckms", "key_id"),
        ]
        for (kind, field) in kinds { other(kind, field, in: block) }
        if case .array(let groups)? = block["key_groups"] {
            for case .object(let group) in groups { for (kind, field) in kinds { other(kind, field, in: group) } }
        }
        return names
    }

    var lastModified: String? { if case .string(let text)? = block["lastmodified"] { text } else { nil } }
    var mac: String? { if case .string(let text)? = block["mac"] { text } else { nil } }

    /// The block of `document`; nil when it has none.
    ///
    /// - Throws: ``SOPSFailure`` for a block that is not an object, an unknown version, or features Loupe
    ///   does not support (comment rules, Shamir thresholds above one).
    static func of(_ document: JSONValue) throws(SOPSFailure) -> SOPSMetadata? {
        guard case .object(let members) = document, let value = members[key] else { return nil }
        guard case .object(let block) = value else { throw SOPSFailure("its sops block is not a mapping") }
        let version: String
        switch block["version"] {
        case .string(let text)?: version = text
        case .double(let number)?: version = String(number)
        case .integer(let number)?: version = String(number)
        default: throw SOPSFailure("its sops block has no version")
        }
        guard version.split(separator: ".").first == "3" else {
            throw SOPSFailure("its sops block has version \(version), which Loupe does not read (it reads sops 3)")
        }
        if case .integer(let threshold)? = block["shamir_threshold"], threshold > 1 {
            throw SOPSFailure(
                "its sops block splits the data key (shamir_threshold \(threshold)), which Loupe does not read")
        }
        for unsupported in ["encrypted_comment_regex", "unencrypted_comment_regex"] where block[unsupported] != nil {
            throw SOPSFailure("its sops block has \(unsupported), which Loupe does not read")
        }
        func string(_ name: String) -> String? {
            if case .string(let text)? = block[name], !text.isEmpty { text } else { nil }
        }
        let macOnly: Bool = if case .bool(true)? = block["mac_only_encrypted"] { true } else { false }
        let rules: SOPSRules
        do {
            rules = try SOPSRules(
                unencryptedSuffix: string("unencrypted_suffix"), encryptedSuffix: string("encrypted_suffix"),
                unencryptedRegex: string("unencrypted_regex"), encryptedRegex: string("encrypted_regex"),
                macOnlyEncrypted: macOnly)
        } catch {
            throw SOPSFailure("its sops block's rules do not read: \(error)")
        }
        return SOPSMetadata(block: block, rules: rules)
    }

    /// A new block for a file sealed for `recipients` under `rules`, whose data key each stanza wraps.
    static func new(rules: SOPSRules, ageStanzas: [(recipient: String, enc: String)]) -> SOPSMetadata {
        var block: [String: JSONValue] = ["version": .string(writtenVersion)]
        block["age"] = .array(ageStanzas.map { .object(["recipient": .string($0.recipient), "enc": .string($0.enc)]) })
        if let suffix = rules.unencryptedSuffix { block["unencrypted_suffix"] = .string(suffix) }
        if let suffix = rules.encryptedSuffix { block["encrypted_suffix"] = .string(suffix) }
        if let regex = rules.unencryptedRegexPattern { block["unencrypted_regex"] = .string(regex) }
        if let regex = rules.encryptedRegexPattern { block["encrypted_regex"] = .string(regex) }
        if rules.macOnlyEncrypted { block["mac_only_encrypted"] = .bool(true) }
        return SOPSMetadata(block: block, rules: rules)
    }

    /// The time as sops writes `lastmodified` (RFC 3339, UTC, whole seconds): Foundation's ISO 8601 format
    /// style, whose default is that form, and which costs a fraction of `ISO8601DateFormatter` (see
    /// `Benchmarks/README.md`, the sops rows).
    static func timestamp(_ date: Date = Date()) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }
}

/// Which values sops encrypts: all, except under a key with the unencrypted suffix, or only under a key
/// with the encrypted suffix, or matching the regular expressions; and whether the MAC covers only the
/// encrypted ones.
public struct SOPSRules: Sendable, Equatable {
    /// Keys ending in this (and what is under them) stay plaintext (sops's default: `_unencrypted`).
    public var unencryptedSuffix: String?
    /// When set, only keys ending in this (and what is under them) are encrypted.
    public var encryptedSuffix: String?
    /// When set, keys matching it (and what is under them) stay plaintext.
    public var unencryptedRegexPattern: String? { unencryptedRegex?.pattern }
    /// When set, only keys matching it (and what is under them) are encrypted.
    public var encryptedRegexPattern: String? { encryptedRegex?.pattern }
    /// Whether the MAC covers only the encrypted values (sops's `mac_only_encrypted`).
    public var macOnlyEncrypted: Bool

    var unencryptedRegex: Pattern?
    var encryptedRegex: Pattern?

    /// sops's default rules: every value encrypted, except under keys ending in `_unencrypted`.
    public static let standard = SOPSRules(unencryptedSuffix: "_unencrypted", macOnlyEncrypted: false)

    private init(unencryptedSuffix: String, macOnlyEncrypted: Bool) {
        self.unencryptedSuffix = unencryptedSuffix
        self.macOnlyEncrypted = macOnlyEncrypted
    }

    /// Rules as a `sops` block or a `.sops.yaml` creation rule states them; with none set, sops's default
    /// (every value encrypted, except under keys ending in `_unencrypted`).
    ///
    /// - Throws: ``SOPSRulesError`` when a regular expression does not compile.
    public init(
        unencryptedSuffix: String? = nil, encryptedSuffix: String? = nil, unencryptedRegex: String? = nil,
        encryptedRegex: String? = nil, macOnlyEncrypted: Bool = false
    ) throws {
        let none =
            unencryptedSuffix == nil && encryptedSuffix == nil && unencryptedRegex == nil && encryptedRegex == nil
        self.unencryptedSuffix = none ? "_unencrypted" : unencryptedSuffix
        self.encryptedSuffix = encryptedSuffix
        self.unencryptedRegex = try unencryptedRegex.map(Pattern.init)
        self.encryptedRegex = try encryptedRegex.map(Pattern.init)
        self.macOnlyEncrypted = macOnlyEncrypted
    }

    /// Whether the value at `keys` (the object keys on its path) is encrypted, as sops 3 decides.
    func encrypts(_ keys: [String]) -> Bool {
        var encrypted = true
        if let suffix = unencryptedSuffix, keys.contains(where: { $0.hasSuffix(suffix) }) { encrypted = false }
        if let suffix = encryptedSuffix { encrypted = keys.contains { $0.hasSuffix(suffix) } }
        if let regex = unencryptedRegex, keys.contains(where: regex.matches) { encrypted = false }
        if let regex = encryptedRegex { encrypted = keys.contains(where: regex.matches) }
        return encrypted
    }

    /// A regular expression, matched anywhere in a key as Go's `regexp.Match` does.
    struct Pattern: Sendable, Equatable {
        let pattern: String
        private let expression: NSRegularExpression

        init(_ pattern: String) throws {
            self.pattern = pattern
            do {
                expression = try NSRegularExpression(pattern: pattern)
            } catch {
                throw SOPSRulesError(description: "the regular expression \(pattern) does not compile")
            }
        }

        func matches(_ key: String) -> Bool {
            expression.firstMatch(in: key, range: NSRange(key.startIndex..., in: key)) != nil
        }

        static func == (lhs: Pattern, rhs: Pattern) -> Bool { lhs.pattern == rhs.pattern }
    }
}

/// Encryption rules that do not read: a regular expression that does not compile.
public struct SOPSRulesError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, in words.
    public var description: String
}
#endif
