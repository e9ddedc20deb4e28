import ArgumentParser
import Foundation
import Loupe
import LoupeSOPS
import LoupeYAML

/// `loupe encrypt|decrypt|rotate|updatekeys FILE`: sops files sealed under age keys, through LoupeSOPS.
/// Identities come from where sops looks (`SOPS_AGE_KEY`, `SOPS_AGE_KEY_FILE`,
/// `$XDG_CONFIG_HOME/sops/age/keys.txt`); recipients from `--age` or the nearest `.sops.yaml`.
struct SOPSCommand: ParsableCommand {
    static let verbs: Set<String> = ["encrypt", "decrypt", "rotate", "updatekeys"]

    static let configuration = CommandConfiguration(
        commandName: "loupe",
        abstract: "Seals and opens sops files under age keys.",
        discussion: """
            Exit status: 0 success; 64 usage; 65 invalid (no recipient, already sealed); 66 no such file; \
            69 the file does not open (no identity for it, a value or the MAC does not verify: "MAC mismatch").
            """,
        subcommands: [Encrypt.self, Decrypt.self, Rotate.self, UpdateKeys.self])

    /// The file and its format, which every verb takes.
    struct FileOptions: ParsableArguments {
        @Argument(help: "The settings file.")
        var file: String

        @Option(help: "The file's format (json, jsonc, yaml, toml), when its extension does not say it.")
        var format: String?

        var codec: any DocumentCodec {
            let name = format ?? URL(fileURLWithPath: file).pathExtension.lowercased()
            switch name {
            case "yaml", "yml": return YAMLCodec()
            case "toml": return TOMLCodec()
            case "jsonc": return JSONCCodec()
            default: return JSONCodec()
            }
        }

        func store() -> SOPSFileStore {
            SOPSFileStore(path: file, format: codec, identities: .sopsDefaults())
        }

    }

    /// `--age`, which the verbs that wrap the data key take.
    struct RecipientOptions: ParsableArguments {
        @Option(
            name: .customLong("age"),
            help: ArgumentHelp(
                "An age recipient (age1…); repeatable. Without it, the .sops.yaml creation rule for the file.",
                valueName: "recipient"))
        var recipients: [String] = []

        /// The recipients `--age` names, else those of the `.sops.yaml` rule for `file`, and its rules.
        func resolved(for file: String) throws -> ([AgeRecipient], SOPSRules?) {
            if !recipients.isEmpty {
                return (
                    try recipients.flatMap { $0.split(separator: ",") }.map { try AgeRecipient(String($0)) },
                    try SOPSConfiguration.nearest(to: file)?.rule(for: file)?.rules
                )
            }
            guard let rule = try SOPSConfiguration.nearest(to: file)?.rule(for: file) else { return ([], nil) }
            return (rule.recipients, rule.rules)
        }
    }

    struct Encrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seals a plaintext settings file in place, comments and layout kept.")
        @OptionGroup var options: FileOptions
        @OptionGroup var age: RecipientOptions

        func run() throws {
            try exiting {
                let (recipients, rules) = try age.resolved(for: options.file)
                try SOPSFileStore.encrypt(
                    path: options.file, format: options.codec, recipients: recipients, rules: rules)
            }
        }
    }

    struct Decrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Prints the file with every value opened, as sops -d does; the file is not changed.")
        @OptionGroup var options: FileOptions

        func run() throws {
            try exiting { FileHandle.standardOutput.write(try options.store().decryptedText()) }
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seals every value again under a new data key, for the same recipients.")
        @OptionGroup var options: FileOptions

        func run() throws {
            try exiting { try options.store().rotate() }
        }
    }

    struct UpdateKeys: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "updatekeys",
            abstract: "Wraps the data key for the recipients the .sops.yaml rule (or --age) names now.")
        @OptionGroup var options: FileOptions
        @OptionGroup var age: RecipientOptions

        func run() throws {
            try exiting {
                let (recipients, _) = try age.resolved(for: options.file)
                try options.store().updateRecipients(recipients)
            }
        }
    }
}

/// Runs `body`; a failure is one line on standard error and the exit status of its kind.
private func exiting(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as SettingsError {
        FileHandle.standardError.write(Data("loupe: \(error)\n".utf8))
        let status: Int32 =
            switch error.code {
            case .notFound: 66
            case .invalidValue, .invalidPath: 65
            case .conflict: 75
            default: 69  // corrupt (a value or the MAC does not verify), unavailable (no identity), unwritable
            }
        throw ExitCode(status)
    } catch let error as AgeError {
        FileHandle.standardError.write(Data("loupe: \(error)\n".utf8))
        throw ExitCode(64)
    }
}
