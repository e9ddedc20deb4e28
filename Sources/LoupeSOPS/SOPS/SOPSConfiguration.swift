#if SOPS
import Foundation
import Loupe
import Yams

/// A `.sops.yaml`: its `creation_rules`, each a `path_regex` and the age recipients and encryption rules of
/// the files it matches. `encrypt` and `updatekeys` take the first rule that matches a file.
public struct SOPSConfiguration: Sendable {
    /// One creation rule.
    public struct CreationRule: Sendable {
        /// The files it is for; nil: every file.
        public var pathRegex: String?
        /// The age recipients a file is sealed for.
        public var recipients: [AgeRecipient]
        /// Which values are encrypted.
        public var rules: SOPSRules
    }

    /// Where it was read from.
    public let path: String
    /// Its creation rules, in order.
    public let creationRules: [CreationRule]

    /// The `.sops.yaml` that applies to `file`: the nearest in its directory or one above; nil when none.
    ///
    /// - Throws: `SettingsError` when one is found that does not read.
    public static func nearest(to file: String) throws -> SOPSConfiguration? {
        var directory = URL(fileURLWithPath: file).standardizedFileURL.deletingLastPathComponent()
        while true {
            for name in [".sops.yaml", ".sops.yml"] {
                let candidate = directory.appendingPathComponent(name).path
                if FileManager.default.fileExists(atPath: candidate) { return try SOPSConfiguration(path: candidate) }
            }
            let parent = directory.deletingLastPathComponent()
            if parent.path == directory.path { return nil }
            directory = parent
        }
    }

    /// The configuration in the file at `path`.
    ///
    /// - Throws: `SettingsError` naming the file and what does not read.
    public init(path: String) throws {
        self.path = path
        let store = "sops configuration \(path)"
        let node: Node?
        do {
            node = try Yams.compose(yaml: String(contentsOfFile: path, encoding: .utf8))
        } catch {
            throw SettingsError(.corrupt, store: store, reason: "it does not read: \(error)", cause: error)
        }
        var rules: [CreationRule] = []
        for (index, rule) in (node?["creation_rules"]?.sequence ?? []).enumerated() {
            func string(_ key: String) -> String? { rule[key]?.string }
            var recipients: [String] = []
            if let age = rule["age"] {
                recipients +=
                    age.sequence.map { $0.compactMap(\.string) }
                    ?? (age.string ?? "").split(separator: ",").map(String.init)
            }
            for group in rule["key_groups"]?.sequence ?? [] {
                recipients += group["age"]?.sequence?.compactMap(\.string) ?? []
            }
            do {
                rules.append(
                    CreationRule(
                        pathRegex: string("path_regex"),
                        recipients: try recipients.map {
                            try AgeRecipient($0.trimmingCharacters(in: .whitespacesAndNewlines))
                        },
                        rules: try SOPSRules(
                            unencryptedSuffix: string("unencrypted_suffix"),
                            encryptedSuffix: string("encrypted_suffix"),
                            unencryptedRegex: string("unencrypted_regex"), encryptedRegex: string("encrypted_regex"),
                            macOnlyEncrypted: rule["mac_only_encrypted"]?.bool ?? false)))
            } catch {
                throw SettingsError(
                    .corrupt, store: store, reason: "creation rule \(index + 1) does not read: \(error)", cause: error)
            }
        }
        creationRules = rules
    }

    /// The first creation rule whose `path_regex` matches `file`, as given or relative to the
    /// configuration's directory; nil when none does.
    public func rule(for file: String) -> CreationRule? {
        let base = URL(fileURLWithPath: path).deletingLastPathComponent().standardizedFileURL.path + "/"
        let absolute = URL(fileURLWithPath: file).standardizedFileURL.path
        let relative = absolute.hasPrefix(base) ? String(absolute.dropFirst(base.count)) : absolute
        return creationRules.first { rule in
            guard let pattern = rule.pathRegex else { return true }
            guard let expression = try? NSRegularExpression(pattern: pattern) else { return false }
            return [file, relative, absolute].contains {
                expression.firstMatch(in: $0, range: NSRange($0.startIndex..., in: $0)) != nil
            }
        }
    }
}
#endif
