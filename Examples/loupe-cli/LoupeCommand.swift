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

            Layers: --layer PATH (a file or a drop-in directory, lowest first, repeatable) under --file (the \
            writable top layer), with --locks PATH for an administrator's locks. Every command sees the \
            merged value; set and unset write the top layer only.

            \(ExitStatus.help)
            """,
        subcommands: [Get.self, Set.self, Unset.self, Show.self, Explain.self, Edit.self, Watch.self])

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
                the schema does not know, and the version stamp. With --layers, each layer, lowest first, \
                then the locks.
                """)
        @ParentCommand var loupe: LoupeCommand
        var store: StoreOptions { loupe.store }
        @Flag(help: "Print the document as stored rather than the effective value.") var stored = false
        @Flag(help: "Print each layer (the default, each --layer, the top), lowest first, then the locks.") var layers = false

        func run() throws {
            try reportingErrors {
                try store.withRoot { document in
                    if layers {
                        for layer in try document.layers() {
                            printLine("# \(layer.source)\(layer.isWritable ? " (writable)" : "")")
                            show(layer.document, store)
                        }
                        let locks = document.locks
                        if !locks.isEmpty {
                            printLine("# locks")
                            for lock in locks { printLine("\(lock.path)  (\(lock.file), line \(lock.line))") }
                        }
                    } else if stored {
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

    struct Explain: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Says where the value at a path comes from: the layer that set it, and the layers it overrides.",
            discussion: """
                One line for the path, or for each value under it when it holds an object: \
                `upstream.url = "https://a.example" from /etc/app/settings.json (overrides default)`, with the \
                lock that holds it, if any. Sources are the default, each --layer's file, and the top file.
                """)
        @ParentCommand var loupe: LoupeCommand
        var store: StoreOptions { loupe.store }
        @Argument(help: "The path; the whole value when left out.") var path: String = ""

        func run() throws {
            try reportingErrors {
                try store.withRoot { document in
                    let start = try ValuePath(parsing: path)
                    let value = try document.value(atPath: path)
                    for leaf in leaves(of: value, at: start) {
                        var origin = try document.provenance(atPath: leaf.description)
                        if store.masksValues { origin.value = origin.value.map(masked) }
                        printLine(origin.description)
                    }
                }
            }
        }

        /// The paths of the values under `value` (itself, unless it is a non-empty object).
        private func leaves(of value: JSONValue, at path: ValuePath) -> [ValuePath] {
            guard case .object(let members) = value, !members.isEmpty else { return [path] }
            return members.keys.sorted().flatMap { leaves(of: members[$0]!, at: ValuePath(path.components + [.key($0)])) }
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
