#if Commands
import ArgumentParser
import Foundation
import Loupe

extension SettingsCommand {
    /// `set PATH VALUE`.
    public struct Set: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "set",
                abstract: "Sets the value at a path.",
                discussion: """
                    VALUE is JSON (8080, -5, true, "two words", {"a": 1}); a bare word (example.org, info) is a \
                    string; - reads the value from standard input. The settings' type and rules check it: a \
                    value they refuse changes nothing (exit 65).

                    --wait-applied [SECONDS] (after the value; 30 seconds by default), for a shared store whose \
                    readers report what they run (etcd): waits until every reader runs the new revision, and \
                    otherwise names those that do not, with what they refused (exit 75).
                    """)
        }
        @ParentCommand var group: SettingsCommand
        @Argument(help: "The path, such as server.port.") var path: String
        // Captures what looks like an option too, so that `set offset -5` needs no `--`.
        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The new value.", valueName: "value")) var value:
            [String]

        public init() {}

        /// The value's words, without the `--` that ends options where a script still writes one
        /// (`set offset -- -5`), and without `--wait-applied [SECONDS]`. A value that is the text `--` is
        /// written as JSON: `'"--"'`.
        private var words: [String] { parsed.words }

        /// The words of the value, and how many seconds `--wait-applied` waits (nil: it was not given). The
        /// value takes what looks like an option (`set offset -5`), so `--wait-applied` is found among its words.
        private var parsed: (words: [String], waitSeconds: Double?) {
            var words: [String] = []
            var wait: Double?
            var index = value.startIndex
            while index < value.endIndex {
                let word = value[index]
                if word == "--" {
                    words += value[(index + 1)...]
                    break
                }
                if word == "--wait-applied" || word.hasPrefix("--wait-applied=") {
                    var seconds =
                        word.hasPrefix("--wait-applied=") ? Double(word.dropFirst("--wait-applied=".count)) : nil
                    // A number after it is its SECONDS once the value is given (`set port 9000 --wait-applied 10`).
                    if seconds == nil, !words.isEmpty, index + 1 < value.endIndex, let given = Double(value[index + 1])
                    {
                        seconds = given
                        index += 1
                    }
                    wait = seconds ?? 30
                } else {
                    words.append(word)
                }
                index += 1
            }
            return (words, wait)
        }

        public func validate() throws {
            guard words.count == 1 else {
                throw ValidationError(
                    words.isEmpty
                        ? "Missing expected argument '<value>'"
                        : "set takes one value; quote it as JSON: '\"two words\"'")
            }
            if let seconds = parsed.waitSeconds, !(seconds >= 0 && seconds <= 86_400) {
                throw ValidationError("--wait-applied takes a number of seconds from 0 to 86400")
            }
        }

        public func run() throws {
            try group.withSettings { settings in
                try settings.root.set(atPath: path, to: try parseValue(words[0]))
                warnOfOverrides(at: path, settings)
                if let seconds = parsed.waitSeconds {
                    try waitUntilApplied(settings, for: .milliseconds(Int(seconds * 1000)))
                }
            }
        }

        /// Waits until every reader that reports runs the store's current revision (the one just written,
        /// or a later one); throws a conflict naming those that do not when `limit` passes, or as soon as
        /// every one that does not has refused it.
        private func waitUntilApplied(_ settings: OpenSettings, for limit: Duration) throws {
            var status = try appliedStatus(of: settings)
            let target = status.currentRevision
            let deadline = ContinuousClock.now + limit
            while true {
                let behind = status.readers(behind: target)
                if behind.isEmpty {
                    let count = status.readers.count
                    printError(
                        count == 0
                            ? "no reader reports what it runs: nothing to wait for"
                            : "revision \(target) is applied by \(count == 1 ? "the one reader" : "all \(count) readers")"
                    )
                    return
                }
                let refusedByAll = behind.allSatisfy { ($0.refusal?.revision ?? 0) >= target }
                if refusedByAll || ContinuousClock.now >= deadline {
                    let names = behind.map { describe($0, current: target) }.joined(separator: "; ")
                    throw CommandError.conflict(
                        "revision \(target) is not applied by \(behind.count) of \(status.readers.count) readers\(refusedByAll ? "" : " after \(limit)"): \(names)"
                    )
                }
                Thread.sleep(forTimeInterval: 0.05)
                status = try appliedStatus(of: settings)
            }
        }
    }

    /// `unset PATH`.
    public struct Unset: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "unset",
                abstract: "Resets the value at a path to its default.",
                discussion: """
                    The part takes the default again and is no longer stored, so a later change of the default \
                    reaches it; with layers, it takes the value of the layers below, and a value the top layer \
                    held under a lock goes too. A part the default lacks (an optional, an entry, an element) is \
                    removed. When the stored settings do not read (a value breaks a rule), unset takes the \
                    value out of the store as it is, says what it removed, and exits 0: it is how they are \
                    repaired.
                    """)
        }
        @ParentCommand var group: SettingsCommand
        @Argument(help: "The path, such as server.port or features.beta.") var path: String

        public init() {}

        public func run() throws {
            try group.withSettings { settings in
                try settings.root.reset(atPath: path)
                warnOfOverrides(at: path, settings)
            } orOwnStore: { store, error in
                // The settings do not read: the value comes out of the store as it is, which is how a user
                // repairs a file that breaks a rule (once a lock over it is lifted, say).
                let parsed = try ValuePath(parsing: path)
                let stored = try store.load()
                guard var document = stored.document, document[path: parsed] != nil else { return false }
                document[path: parsed] = nil
                _ = try store.save(document, replacing: stored.token)
                printError("removed \(parsed) from \(store); the settings did not read: \(oneLine(error))")
                return true
            }
        }
    }
}

/// Says on standard error that what was just stored at `path` does not take effect where an override
/// layer (an environment variable, a `--set` option, a credential) sets the path or a part of it: the
/// override still wins. The write itself succeeded (exit 0).
func warnOfOverrides(at path: String, _ settings: OpenSettings) {
    guard let parsed = try? ValuePath(parsing: path), let value = try? settings.root.value(atPath: path) else { return }
    var origins: [String] = []
    for leaf in leaves(of: value, at: parsed) {
        guard let provenance = try? settings.root.provenance(of: leaf.path),
            case .override(let origin) = provenance.source
        else { continue }
        if !origins.contains(origin) { origins.append(origin) }
    }
    guard !origins.isEmpty else { return }
    printError(
        "stored, but \(origins.joined(separator: ", ")) still \(origins.count == 1 ? "overrides" : "override") \(parsed) while set"
    )
}
#endif
