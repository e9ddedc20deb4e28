import ArgumentParser
import Foundation
import Loupe

extension LoupeCommand {
    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Opens the settings in $EDITOR and saves them if they are valid.",
            discussion: """
                The settings are written to a private temporary copy (pretty JSON) and opened in $EDITOR \
                (or vi). When the editor exits, the copy is checked; if it is invalid, the error is printed \
                and the editor opens again on what you wrote. Save it unchanged or empty to give up. A valid \
                copy replaces the settings atomically, unless someone else changed them meanwhile (exit 75). \
                Not for the keyring: a secret is never written to a temporary file.
                """)
        @ParentCommand var loupe: LoupeCommand
        var store: StoreOptions { loupe.store }

        func run() throws {
            try reportingErrors {
                guard store.keyring == nil else {
                    throw CLIError.usage("edit does not work on the keyring: it would write the secret to a temporary file; use get and set")
                }
                try store.withRoot { document in
                    let original = try document.json
                    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-edit-\(UUID().uuidString)")
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                    defer { try? FileManager.default.removeItem(at: directory) }
                    let copy = directory.appendingPathComponent("settings.json")
                    var text = original.jsonText(pretty: true) + "\n"
                    while true {
                        try Data(text.utf8).write(to: copy)
                        try openEditor(on: copy.path)
                        let edited = (try? String(contentsOf: copy, encoding: .utf8)) ?? ""
                        if edited.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || edited == text {
                            FileHandle.standardError.write(Data("loupe: no changes\n".utf8))
                            return
                        }
                        do {
                            let value = try JSONValue(parsing: edited)
                            try document.check(value)
                            try document.replace(original, with: value)
                            return
                        } catch let error as DecodingError {
                            report(PathErrorDescription.describe(error))
                        } catch let error as CLIError {
                            throw error
                        } catch let error as StoreError {
                            throw error
                        } catch {
                            report("not valid JSON: \(error.localizedDescription)")
                        }
                        text = edited
                    }
                }
            }
        }

        private func report(_ message: String) {
            FileHandle.standardError.write(Data("loupe: the edit is invalid: \(message); reopening the editor\n".utf8))
        }

        private func openEditor(on path: String) throws {
            let editor = ProcessInfo.processInfo.environment["VISUAL"] ?? ProcessInfo.processInfo.environment["EDITOR"] ?? "vi"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", editor + " \"$1\"", "sh", path]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw CLIError.usage("the editor (\(editor)) failed with status \(process.terminationStatus); nothing was written")
            }
        }
    }
}

/// Describes a decoding error of an edited document like a path error: where, and what was wrong.
enum PathErrorDescription {
    static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            ValuePath(codingPath.map { key in key.intValue.map { .index($0) } ?? .key(key.stringValue) }).description
        }
        switch error {
        case .typeMismatch(let type, let context): return "\(path(context.codingPath)): expected \(type)"
        case .valueNotFound(let type, let context): return "\(path(context.codingPath)): expected \(type), got null"
        case .keyNotFound(let key, let context): return "\(path(context.codingPath + [key])): required, but missing"
        case .dataCorrupted(let context): return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}
