#if Commands
import ArgumentParser
import Foundation
import Loupe

extension SettingsCommand {
    /// `history [PATH]`: the changes the store keeps a record of; `history --purge PATH`: takes a path's
    /// values out of them.
    public struct History: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "history",
                abstract:
                    "Lists the changes the store keeps a record of: revision, time, who, the paths changed; --purge PATH takes a path's values out of them.",
                discussion: """
                    One line a change, oldest first: `12  2026-11-25T10:00:00.000Z  ann (uid 1000) via loupe[4242] \
                    on web-1  port, upstream.url`. An edit made without Loupe (an editor, a script) shows as an \
                    outside edit: the next write saw it. With a path, only the changes that touched it.

                    The history keeps the values it records, a value `unset` removed among them (`diff` prints \
                    it), until it drops the change. `--purge PATH` takes the values at PATH, and under it, out of \
                    every record (the value each change set and the one it replaced), and says how many records \
                    held one; what is stored now stays. Each such change lists PATH as `(purged)`, `diff` prints \
                    `PATH: (purged)`, and `rollback` leaves PATH as it is now. `--purge ''` (the root) purges \
                    every value; `--purge` with no path is a usage error (64). Exit 69 if the history cannot be \
                    read or written, or is not Loupe's to rewrite (etcd's revisions: `etcdctl compact`).
                    """)
        }
        @ParentCommand var group: SettingsCommand
        @Argument(help: "Only the changes that set or removed this path, a part under it, or a part above it.")
        var path: String = ""
        @Option(
            help: ArgumentHelp(
                "Takes the values at this path, and under it, out of every record of the history; '' purges every value.",
                valueName: "path"))
        var purge: String?

        public init() {}

        public func validate() throws {
            if purge != nil, !path.isEmpty {
                throw ValidationError(
                    "give either a path to list the changes that touched it, or --purge PATH, not both")
            }
        }

        public func run() throws {
            if let purge {
                return try group.withSettings { settings in
                    let target = try ValuePath(parsing: purge)
                    let named = target.components.isEmpty ? "every value" : "the values at \(target)"
                    let purged = try settings.root.purgeHistory(of: target)
                    printError(
                        purged == 0
                            ? "no record of the history holds \(named); nothing was written"
                            : "purged \(named) from \(purged) record\(purged == 1 ? "" : "s") of the history")
                }
            }
            try group.withSettings { settings in
                let filter = try ValuePath(parsing: path)
                let history = try settings.root.history()
                let changes = history.changes.filter { filter.components.isEmpty || $0.touches(filter) }
                guard !changes.isEmpty else {
                    printError(
                        history.changes.isEmpty ? "no changes are recorded yet" : "no change recorded touched \(path)")
                    return
                }
                for change in changes {
                    let paths = change.changedPaths.map { path in
                        (path.components.isEmpty ? "<root>" : path.description)
                            + (change.purgedPaths.contains(path) ? " (purged)" : "")
                    }
                    let who = history.recordsAuthors ? author(of: change) : "-"
                    try printLine(
                        "\(change.revision)  \(change.time.map(timestamp) ?? "-")  \(who)  \(paths.joined(separator: ", "))"
                    )
                }
            }
        }
    }

    /// `diff REV [REV2]`: what a revision changed, or what changed between two; `diff --files A B`: what
    /// changes from one settings file to another.
    public struct Diff: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "diff",
                abstract:
                    "Prints what revision REV changed, or what changed from revision REV to REV2, or from one settings file to another.",
                discussion: """
                    One line a path, with its value before and after as JSON: `port: 8080 -> 9000`; \
                    `(none)` where nothing was stored (a path added or removed). An array is compared element \
                    by element (`servers[2].port: 80 -> 8080`, an element added or taken out at its index) \
                    where its elements stay in place, and whole where they moved. Secrets are masked unless \
                    --reveal. A path whose values were purged from the changes in between (`history --purge`) \
                    is `PATH: (purged)`.

                    With --files A B, what changes from settings file A to settings file B, whatever their \
                    formats (by extension: .json, .jsonc, .toml, .plist, .yaml, .yml): the review of a change \
                    to a settings file, path by path, comments and layout aside, arrays as above. \
                    `git show main:settings.toml > base.toml; diff --files base.toml settings.toml`. Exit 0 \
                    whether or not they differ, 66 if a file does not exist, 69 if one cannot be read as its \
                    format.
                    """)
        }
        @ParentCommand var group: SettingsCommand
        @Argument(help: "A revision, as `history` lists them.") var revision: Int?
        @Argument(help: "A later (or earlier) revision: what changed from REV to it.") var other: Int?
        @Option(
            name: .customLong("files"), parsing: .upToNextOption,
            help: ArgumentHelp(
                "Two settings files, A B: what changes from A to B.", valueName: "file"))
        var files: [String] = []
        @Flag(help: "Print secrets' values as they are instead of masking them.") var reveal = false

        public init() {}

        public func validate() throws {
            if files.isEmpty {
                guard revision != nil else {
                    throw ValidationError("give a revision, or --files A B to compare two settings files")
                }
            } else {
                guard files.count == 2 else {
                    throw ValidationError("--files takes two settings files, A B: what changes from A to B")
                }
                guard revision == nil else { throw ValidationError("give either revisions or --files A B, not both") }
            }
        }

        public func run() throws {
            guard files.isEmpty else { return try diffFiles() }
            guard let revision else { return }
            try group.withSettings { settings in
                let history = try settings.root.history()
                let (from, to) = other.map { (revision, $0) } ?? (revision - 1, revision)
                if other == nil { _ = try history.document(after: revision) }  // names the revisions kept
                let old = try history.document(after: from)
                let new = try history.document(after: to)
                // The history no longer knows what the changes in between did at a purged path.
                var purged: [ValuePath] = []
                for change in history.changes where change.revision > min(from, to) && change.revision <= max(from, to)
                {
                    purged += change.purgedPaths.filter { !purged.contains($0) }
                }
                let change = SettingsChange(
                    revision: to, time: Date(), author: nil, patch: SettingsHistory.patch(from: old, to: new),
                    reversePatch: .null, purgedPaths: purged)
                let paths = change.patch == .object([:]) && purged.isEmpty ? [] : change.changedPaths
                guard !paths.isEmpty else {
                    printError("nothing changed from revision \(from) to revision \(to)")
                    return
                }
                try printChanges(at: paths, from: old, to: new, purged: purged, settings)
            }
        }

        /// `--files A B`: the documents of two files, compared path by path.
        private func diffFiles() throws {
            try reportingErrors {
                let settings = try group.location.openSettingsToCheck()
                let old = try SettingsFiles.document(of: files[0]).document
                let new = try SettingsFiles.document(of: files[1]).document
                let changes = Self.changes(from: old, to: new, at: ValuePath([]))
                guard !changes.isEmpty else {
                    printError("\(files[0]) and \(files[1]) hold the same settings")
                    return
                }
                for change in changes {
                    try printLine(line(change.path, from: change.old, to: change.new, settings))
                }
            }
        }

        /// `PATH: OLD -> NEW`, each value masked where it is a secret unless --reveal, `(none)` where it is
        /// absent.
        private func line(
            _ path: ValuePath, from old: JSONValue?, to new: JSONValue?, _ settings: OpenSettings
        )
            -> String
        {
            func shown(_ value: JSONValue?) -> String {
                guard let value else { return "(none)" }
                return (reveal ? value : displayed(value, settings, at: path)).jsonText()
            }
            return "\(path.components.isEmpty ? "<root>" : path.description): \(shown(old)) -> \(shown(new))"
        }

        /// Prints what changed at each of `paths` from `old` to `new` as `--files` prints it (an array element
        /// by element where its elements stay in place), masked where they are secrets unless --reveal, or
        /// `PATH: (purged)` for a path of `purged`.
        private func printChanges(
            at paths: [ValuePath], from old: JSONValue?, to new: JSONValue?, purged: [ValuePath],
            _ settings: OpenSettings
        ) throws {
            for path in paths {
                if purged.contains(path) {
                    try printLine("\(path.components.isEmpty ? "<root>" : path.description): (purged)")
                    continue
                }
                for change in Self.changes(from: old?[path: path], to: new?[path: path], at: path) {
                    try printLine(line(change.path, from: change.old, to: change.new, settings))
                }
            }
        }

        /// What changes from `old` to `new` (the parts at `path` of two documents), in path order: each value
        /// that is not an object or an array, so that an object added or removed is its values added or
        /// removed, and an array's changes are its elements' where they can be told apart
        /// (``arrayChanges(from:to:at:)``).
        static func changes(
            from old: JSONValue?, to new: JSONValue?, at path: ValuePath
        ) -> [(path: ValuePath, old: JSONValue?, new: JSONValue?)] {
            switch (old, new) {
            case (.object(let before)?, .object(let after)?):
                return Swift.Set(before.keys).union(after.keys).sorted().flatMap { key in
                    changes(from: before[key], to: after[key], at: ValuePath(path.components + [.key(key)]))
                }
            case (.array(let before)?, .array(let after)?):
                return arrayChanges(from: before, to: after, at: path)
            case (let value?, nil):
                return leaves(of: value, at: path).map { ($0.path, $0.value, nil) }
            case (nil, let value?):
                return leaves(of: value, at: path).map { ($0.path, nil, $0.value) }
            case (let before?, let after?):
                return before.isSameValue(as: after) ? [] : [(path, before, after)]
            case (nil, nil):
                return []
            }
        }

        /// An array's changes, element by element where its elements stay where they were: in two arrays of
        /// one length whose differences are changed elements (not moved ones), each element compared at its
        /// index; where elements were only added, or only taken out, each of those at its index in the file
        /// that holds it. Anything else (elements moved, some added and others taken out) is the whole array,
        /// before and after.
        static func arrayChanges(
            from before: [JSONValue], to after: [JSONValue], at path: ValuePath
        ) -> [(path: ValuePath, old: JSONValue?, new: JSONValue?)] {
            func element(_ index: Int) -> ValuePath { ValuePath(path.components + [.index(index)]) }
            let difference = after.difference(from: before) { $0.isSameValue(as: $1) }
            if before.count == after.count {
                let changed = before.indices.filter { !before[$0].isSameValue(as: after[$0]) }
                // Elements that moved: the alignment explains the change with fewer elements than their places.
                if difference.removals.count >= changed.count {
                    return changed.flatMap { changes(from: before[$0], to: after[$0], at: element($0)) }
                }
            } else if difference.removals.isEmpty || difference.insertions.isEmpty {
                let elements: [(offset: Int, old: JSONValue?, new: JSONValue?)] = difference.map { change in
                    switch change {
                    case .insert(let offset, let value, _): (offset, nil, value)
                    case .remove(let offset, let value, _): (offset, value, nil)
                    }
                }
                return elements.sorted { $0.offset < $1.offset }.flatMap {
                    changes(from: $0.old, to: $0.new, at: element($0.offset))
                }
            }
            return [(path, .array(before), .array(after))]
        }
    }

    /// `rollback REV`: stores the document as it was after a revision, as a new change.
    public struct Rollback: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "rollback",
                abstract: "Stores the settings as they were after revision REV again, as a new change.",
                discussion: """
                    Checked like any write: exit 65 if the type or a rule refuses that document now, 77 if it \
                    would change a locked path, 66 if the revision is not kept (the message names those that \
                    are). A file is edited in place: its comments and order stay. A path whose values were \
                    purged from the history (`history --purge`) keeps what is stored there now: the history \
                    no longer knows what it held then.
                    """)
        }
        @ParentCommand var group: SettingsCommand
        @Argument(help: "The revision whose settings to restore, as `history` lists them.") var revision: Int

        public init() {}

        public func run() throws {
            try group.withSettings { settings in
                let history = try settings.root.history()
                let before = history.changes.last?.revision
                try settings.root.rollback(to: revision)
                let after = try settings.root.history().changes.last?.revision
                let purged = history.purgedPaths(through: revision)
                if !purged.isEmpty {
                    let named = purged.map { $0.components.isEmpty ? "<root>" : $0.description }.joined(separator: ", ")
                    printError(
                        "left \(named) as \(purged.count == 1 ? "it is" : "they are") now: purged from the history")
                }
                if after == before {
                    printError("the settings are already as revision \(revision) left them; nothing was written")
                } else {
                    printError(
                        "restored the settings as revision \(revision) left them, recorded as revision \(after.map(String.init) ?? "?")"
                    )
                }
            }
        }
    }
}

/// A change's time, as UTC ISO 8601 text with milliseconds.
func timestamp(_ time: Date) -> String {
    time.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
}

/// Who made a change, in words: `ann (uid 1000) via loupe[4242] on web-1`, or `outside edit`.
private func author(of change: SettingsChange) -> String {
    guard let author = change.author else { return "outside edit" }
    let user = author.userName.map { "\($0) (uid \(author.userID))" } ?? "uid \(author.userID)"
    return "\(user) via \(author.program)[\(author.processID)] on \(author.host)"
}
#endif
