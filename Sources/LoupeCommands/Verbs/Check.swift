#if Commands
import ArgumentParser
import Foundation
import Loupe

extension SettingsCommand {
    /// `check FILE…`: every problem settings files have, for CI and pre-commit hooks.
    public struct Check: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "check",
                abstract: "Checks settings files against the type, its rules and the locks, and reports every problem.",
                discussion: """
                    Each FILE is read in the format its extension names (.json, .jsonc, .toml, .plist, .yaml or \
                    .yml), as the user's settings file over the layers below it and under the locks, and \
                    checked: its syntax, each part that does not fit the type, each rule it breaks, each locked \
                    path it sets to another value (ignored where the program runs). Keys the type does not \
                    know are kept by Loupe, and are not problems unless --strict (a misspelt key is one). One \
                    line a problem, in the file's order:

                        settings.toml:3:8: server.port: must be at least 1024, got 80

                    `--format json` prints a JSON array of {file, line, column, path, message, code} instead \
                    (code: syntax, invalid-value, rule, locked or unknown-key). No message holds a secret's value. \
                    `--schema NAME` checks against another type the program registers. Exit 0 if no file has \
                    a problem, 65 if one has, 66 if a file does not exist, 64 for an extension no format has.
                    """)
        }

        /// How problems are printed.
        public enum ReportFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
            /// `FILE:LINE:COLUMN: PATH: message`, one line each.
            case text
            /// One JSON array of objects.
            case json
        }

        @ParentCommand var group: SettingsCommand
        @Argument(help: ArgumentHelp("The settings files to check.", valueName: "file")) var files: [String]
        @Option(
            help: ArgumentHelp(
                "Check against this type the program registers, rather than its own settings type.", valueName: "type"))
        var schema: String?
        @Option(help: "How problems are printed: text, one line each, or json, an array for tools.")
        var format: ReportFormat = .text
        @Flag(help: "Report each key the type does not know (a misspelt one) as a problem; Loupe keeps such keys.")
        var strict = false
        // The same, for a location whose own options take `--format` (as `loupe`'s file format).
        @Option(name: .customLong("check-format"), help: .hidden) var checkFormat: ReportFormat?

        public init() {}

        public func validate() throws {
            if files.isEmpty { throw ValidationError("name at least one settings file to check") }
        }

        public func run() throws {
            try reportingErrors {
                let settings = try openSettings()
                var problems: [FileProblem] = []
                for file in files {
                    let codec = try SettingsFiles.codec(of: file)
                    let data = try SettingsFiles.contents(of: file)
                    problems += Self.problems(
                        in: data, of: file, codec: codec, settings: settings, reportingUnknownKeys: strict)
                }
                try report(problems)
                if !problems.isEmpty { throw ExitCode(ExitStatus.invalidValue) }
            }
        }

        /// The settings the files are checked against: the type `--schema` names, or the location's.
        private func openSettings() throws -> OpenSettings {
            guard let schema else { return try group.location.openSettingsToCheck() }
            let types = Location.settingsTypes
            guard let open = types[schema] else {
                let known = types.keys.sorted()
                throw CommandError.usage(
                    known.isEmpty
                        ? "--schema \(schema): this program registers no other settings type; leave --schema out"
                        : "--schema \(schema): no such settings type; the program registers \(known.joined(separator: ", "))"
                )
            }
            return try open()
        }

        /// Every problem of `data`, the file at `path`, in the order they stand in the text.
        static func problems(
            in data: Data, of path: String, codec: any DocumentCodec, settings: OpenSettings,
            reportingUnknownKeys: Bool = false
        ) -> [FileProblem] {
            let document: JSONValue
            do {
                document = try codec.parse(data)
            } catch let error as DocumentSyntaxError {
                let position = error.position ?? TextPosition(line: 1, column: 1)
                return [
                    FileProblem(
                        file: path, position: position,
                        problem: SettingsProblem(message: error.problem, kind: .syntax))
                ]
            } catch {
                let message =
                    data.isEmpty
                    ? "it is empty (expected a \(codec.formatName) document)"
                    : "not a \(codec.formatName) document: \(oneLine(error))"
                return [
                    FileProblem(
                        file: path, position: TextPosition(line: 1, column: 1),
                        problem: SettingsProblem(message: message, kind: .syntax))
                ]
            }
            let found = settings.root.problems(
                in: document, named: path, coding: codec.coding, reportingUnknownKeys: reportingUnknownKeys
            ).map { problem in
                FileProblem(
                    file: path,
                    position: codec.position(of: problem.path, in: data) ?? TextPosition(line: 1, column: 1),
                    problem: problem)
            }
            return found.enumerated().sorted {
                ($0.element.position, $0.offset) < ($1.element.position, $1.offset)
            }.map(\.element)
        }

        private func report(_ problems: [FileProblem]) throws {
            switch checkFormat ?? format {
            case .text:
                for problem in problems { try printLine(problem.description) }
                let files = Swift.Set(problems.map(\.file)).count
                printError(
                    problems.isEmpty
                        ? "checked \(self.files.count) file\(self.files.count == 1 ? "" : "s"): no problems"
                        : "\(problems.count) problem\(problems.count == 1 ? "" : "s") in \(files) of \(self.files.count) file\(self.files.count == 1 ? "" : "s")"
                )
            case .json:
                try printLine(JSONValue.array(problems.map(\.json)).jsonText(pretty: true))
            }
        }
    }
}

/// A problem of a settings file, where it stands in the file.
struct FileProblem: Sendable, CustomStringConvertible {
    var file: String
    var position: TextPosition
    var problem: SettingsProblem

    /// `settings.toml:3:8: server.port: must be at least 1024, got 80`.
    var description: String {
        "\(file):\(position.line):\(position.column): \(problem)"
    }

    /// `{"file": …, "line": …, "column": …, "path": …, "message": …, "code": …}`; the root's path is "".
    var json: JSONValue {
        .object([
            "file": .string(file), "line": .integer(position.line), "column": .integer(position.column),
            "path": .string(problem.path.components.isEmpty ? "" : problem.path.description),
            "message": .string(problem.message), "code": .string(problem.kind.rawValue),
        ])
    }
}
#endif
