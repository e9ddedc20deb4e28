import ArgumentParser
import Dispatch
import Foundation
import Loupe

@main
struct LoupeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loupe",
        abstract: "Reads and edits settings by path, in a file, UserDefaults or the keyring, while their users run.",
        discussion: """
            Paths name parts of the settings: server.port, features.beta, items[3].name, "key.with.dots".
            Values are JSON; a bare word of letters, digits and -_.:/ is taken as a string.

            \(ExitStatus.help)
            """,
        subcommands: [Get.self, Set.self, Unset.self, Show.self, Edit.self, Watch.self])

    @OptionGroup(title: "Store") var store: StoreOptions
}

/// Prints `value` as pretty JSON, masking every string when the store holds secrets.
func show(_ value: JSONValue, _ options: StoreOptions) {
    printLine((options.masksValues ? masked(value) : value).jsonText(pretty: true))
}

/// `value` with every string replaced by asterisks.
func masked(_ value: JSONValue) -> JSONValue {
    switch value {
    case .string: .string("********")
    case .array(let values): .array(values.map(masked))
    case .object(let values): .object(values.mapValues(masked))
    default: value
    }
}

extension LoupeCommand {
    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Prints the value at a path, as JSON.")
        @ParentCommand var loupe: LoupeCommand
        var store: StoreOptions { loupe.store }
        @Argument(help: "The path, such as server.port.") var path: String

        func run() throws {
            try reportingErrors {
                try store.withRoot { show(try $0.value(atPath: path), store) }
            }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sets the value at a path.",
            discussion: "VALUE is JSON (8080, true, \"two words\", {\"a\": 1}); a bare word (example.org, info) is a string.")
        @ParentCommand var loupe: LoupeCommand
        var store: StoreOptions { loupe.store }
        @Argument(help: "The path, such as server.port.") var path: String
        @Argument(help: "The new value.") var value: String

        func run() throws {
            try reportingErrors {
                let parsed = try parseValue(value)
                try store.withRoot { try $0.set(atPath: path, to: parsed) }
            }
        }
    }

    struct Unset: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resets the value at a path to its default.",
            discussion: """
                With --schema, the part takes the schema's default again and is no longer stored, so a later \
                change of the default reaches it; a part the default lacks (an optional, an entry, an \
                element) is removed. Without a schema, the value at the path is removed.
                """)
        @ParentCommand var loupe: LoupeCommand
        var store: StoreOptions { loupe.store }
        @Argument(help: "The path, such as ticker.intervalSeconds or features.beta.") var path: String

        func run() throws {
            try reportingErrors {
                try store.withRoot { try $0.reset(atPath: path) }
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Prints the whole value, as pretty JSON.",
            discussion: """
                The effective value: with --schema, the stored document over the schema's defaults. With \
                --stored, the document as the store holds it: only what differs from the defaults, keys \
                the schema does not know, and the version stamp.
                """)
        @ParentCommand var loupe: LoupeCommand
        var store: StoreOptions { loupe.store }
        @Flag(help: "Print the document as stored rather than the effective value.") var stored = false

        func run() throws {
            try reportingErrors {
                try store.withRoot { document in
                    if stored {
                        guard let stored = try document.storedDocument() else {
                            FileHandle.standardError.write(Data("loupe: nothing is stored; the value is the default\n".utf8))
                            return show(.object([:]), store)
                        }
                        show(stored, store)
                    } else {
                        show(try document.json, store)
                    }
                }
            }
        }
    }

    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Prints the value at a path (or the whole value), then each change as it lands, one JSON line each, until interrupted.")
        @ParentCommand var loupe: LoupeCommand
        var store: StoreOptions { loupe.store }
        @Argument(help: "The path; the whole value when left out.") var path: String?

        func run() throws {
            try reportingErrors {
                try store.withRoot(watch: true) { document in
                    let path = self.path ?? ""
                    let options = store
                    let last = LastPrinted()
                    @Sendable func emit(_ whole: JSONValue) {
                        let value = (try? whole.value(at: ValuePath(parsing: path))) ?? .null
                        if last.replace(with: value) {
                            printLine((options.masksValues ? masked(value) : value).jsonText())
                        }
                    }
                    let token = document.observe { emit($0) }
                    let errors = document.observeErrors { error in
                        FileHandle.standardError.write(Data("loupe: ignored a change: \(oneLine(error))\n".utf8))
                    }
                    emit(try document.json)
                    waitForInterrupt()
                    token.cancel()
                    errors.cancel()
                }
            }
        }
    }
}

/// The last value `watch` printed, so that it prints changes only: a root with no store is a thread-safe
/// value.
struct LastPrinted: Sendable {
    private let last = RootLens<JSONValue?>(nil)

    /// Records `new`; returns whether it differs from the last one.
    func replace(with new: JSONValue) -> Bool {
        (try? last.update { last -> Bool in
            guard last != new else { return false }
            last = new
            return true
        }) ?? false
    }
}

/// Blocks until SIGINT or SIGTERM.
func waitForInterrupt() {
    let interrupted = DispatchSemaphore(value: 0)
    var sources: [any DispatchSourceSignal] = []
    for signalNumber in [SIGINT, SIGTERM] {
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        source.setEventHandler { interrupted.signal() }
        source.resume()
        sources.append(source)
    }
    interrupted.wait()
    sources.forEach { $0.cancel() }
}

/// Parses a command-line value: JSON, or a bare word of letters, digits and `-_.:/` as a string.
func parseValue(_ text: String) throws -> JSONValue {
    if let value = try? JSONValue(parsing: text) { return value }
    let bare = !text.isEmpty && text.unicodeScalars.allSatisfy {
        CharacterSet.alphanumerics.contains($0) || "-_.:/".unicodeScalars.contains($0)
    }
    guard bare else {
        throw CLIError.invalidValue("\(String(reflecting: text)) is not JSON; write a string with spaces or symbols in JSON quotes: '\"...\"'")
    }
    return .string(text)
}
