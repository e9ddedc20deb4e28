#if Commands
import ArgumentParser
import Foundation
import Loupe

extension SettingsCommand {
    /// `edit`: the settings in `$EDITOR`.
    public struct Edit: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "edit",
                abstract: "Opens the settings in $EDITOR and saves them if they are valid.",
                discussion: """
                    The settings are written to a private temporary copy (pretty JSON) and opened in $VISUAL, \
                    $EDITOR or vi. When the editor exits, the copy is checked against the type and its rules; \
                    if it is invalid, the error is printed and the editor opens again on what you wrote, up to \
                    \(maximumRounds) times. Save it unchanged or empty to give up. A valid copy replaces the \
                    settings, unless someone else changed them meanwhile (exit 75). Not for secrets: a secret \
                    is never written to a temporary file.
                    """)
        }
        @ParentCommand var group: SettingsCommand

        /// How many times the editor opens on an invalid edit before giving up.
        static var maximumRounds: Int { 5 }

        public init() {}

        public func run() throws {
            try group.withSettings { settings in
                guard !settings.root.secretPaths.contains(.root) else {
                    throw CommandError.usage(
                        "edit does not work on secrets: it would write them to a temporary file; use get and set")
                }
                let secrets = settings.root.secretPaths
                guard secrets.isEmpty else {
                    throw CommandError.usage(
                        "edit does not work while the settings hold secrets (\(secrets.map(\.description).joined(separator: ", "))): it would write them to a temporary file; use get and set, or edit the settings file itself"
                    )
                }
                let original = try settings.root.document
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "settings-edit-\(UUID().uuidString)")
                try FileManager.default.createDirectory(
                    at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                defer { try? FileManager.default.removeItem(at: directory) }
                let copy = directory.appendingPathComponent("settings.json")
                var text = original.jsonText(pretty: true) + "\n"
                // Whether `text` is an edit that was refused (rather than the settings as they are).
                var refused = false
                for _ in 0..<Self.maximumRounds {
                    try Data(text.utf8).write(to: copy)
                    try openEditor(on: copy.path)
                    let edited = (try? String(contentsOf: copy, encoding: .utf8)) ?? ""
                    if edited.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || edited == text {
                        // Giving up on a refused edit is not success: nothing the person wrote was saved.
                        if refused {
                            throw CommandError.invalidValue(
                                "the edit was refused and left as it was; nothing was written")
                        }
                        printError("no changes")
                        return
                    }
                    do {
                        try settings.root.set(atPath: "", to: try JSONValue(parsing: edited), ifUnchangedFrom: original)
                        return
                    } catch let error as SettingsError {
                        switch error.code {
                        case .invalidPath, .notFound, .invalidValue, .notRemovable, .outOfRange:
                            report(error.description)  // the edit's own fault: edit again
                        case .conflict:
                            // The person's work is kept, beside the temporary directory that goes.
                            let kept = try keep(edited)
                            throw CommandError.conflict(
                                "the settings changed while you were editing them; nothing was written; your edit is in \(kept)"
                            )
                        default:
                            throw error  // a lock, a read-only or broken store: editing again cannot help
                        }
                    } catch let error as RuleViolation {
                        report(error.description)
                    } catch let error as DecodingError {
                        report("\(error)")
                    } catch {
                        report("not valid JSON: \(oneLine(error))")
                    }
                    text = edited
                    refused = true
                }
                throw CommandError.invalidValue(
                    "the edit was still invalid after \(Self.maximumRounds) rounds; nothing was written")
            }
        }

        /// Writes `edited` to a private file of its own that outlives the command, and returns its path.
        private func keep(_ edited: String) throws -> String {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "settings-edit-\(UUID().uuidString).json"
            ).path
            guard
                FileManager.default.createFile(
                    atPath: path, contents: Data(edited.utf8), attributes: [.posixPermissions: 0o600])
            else {
                throw CommandError.conflict(
                    "the settings changed while you were editing them; nothing was written, and your edit could not be kept at \(path)"
                )
            }
            return path
        }

        private func report(_ message: String) {
            printError("the edit is invalid: \(message); reopening the editor")
        }

        private func openEditor(on path: String) throws {
            let environment = ProcessInfo.processInfo.environment
            let editor = environment["VISUAL"] ?? environment["EDITOR"] ?? "vi"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", editor + " \"$1\"", "sh", path]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw CommandError.unavailable(
                    "the editor (\(editor)) failed with status \(process.terminationStatus); nothing was written")
            }
        }
    }
}
#endif
