#if Commands
import ArgumentParser
import Loupe

extension SettingsCommand {
    /// `template [--format toml|yaml|jsonc]`: a settings file with every setting commented out at its
    /// default.
    public struct Template: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "template",
                abstract: "Prints a settings file with every setting commented out at its default.",
                discussion: """
                    Each setting is shown at its default value, with its description and what it allows as \
                    comments above it, as systemd's vendor files show theirs: save it as the settings file and \
                    uncomment a line to change that setting. The file holds no setting, so a program reading it \
                    has its defaults. A JSONC file keeps its comments through every later write.
                    """)
        }
        @ParentCommand var group: SettingsCommand

        /// `--template-format` is the same option, for a program whose own options have a `--format`.
        @Option(
            name: [.customLong("format"), .customLong("template-format")],
            help: "The file's format: \(TemplateFormat.allCases.map(\.rawValue).joined(separator: ", ")).")
        var format: TemplateFormat = .jsonc

        public init() {}

        public func run() throws {
            try group.withSettingsType { settings in
                try printLine(String(try settings.root.schema().template(format: format).dropLast()))
            }
        }
    }
}

extension TemplateFormat: ExpressibleByArgument {}
#endif
