#if Commands
import ArgumentParser
import Foundation
import Loupe

extension SettingsCommand {
    /// `get PATH`: the value at a path, as JSON.
    public struct Get: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(commandName: "get", abstract: "Prints the value at a path, as JSON.")
        }
        @ParentCommand var group: SettingsCommand
        @Argument(help: "The path, such as server.port or items[2].name.") var path: String

        public init() {}

        public func run() throws {
            try group.withSettings { settings in
                try show(try settings.root.value(atPath: path), settings, at: try ValuePath(parsing: path))
            } orOwnStore: { store, error in
                // What the store holds at the path, before the error: what can be printed.
                guard !store.secretPaths.contains(.root), let path = try? ValuePath(parsing: path),
                    let value = try? store.load().document?[path: path],
                    let secrets = group.secretPaths(in: value, at: path, after: error)
                else { return false }
                try printLine(value.masking(secrets, at: path).jsonText(pretty: true))
                return false
            }
        }
    }

    /// `show`: the whole value, the stored document, the defaults, or the layers.
    public struct Show: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "show",
                abstract: "Prints the whole value, as pretty JSON.",
                discussion: """
                    The effective value: the stored document over the defaults. With --stored, the document \
                    as the store holds it: only what differs from the defaults, keys the type does not know, \
                    and the version stamp. With --defaults, the defaults. With --layers, each layer, lowest \
                    first, then the locks.
                    """)
        }
        @ParentCommand var group: SettingsCommand
        @Flag(help: "Print the document as stored rather than the effective value.") var stored = false
        @Flag(help: "Print the defaults: the value when nothing is stored.") var defaults = false
        // The same, for a location whose own options take `--defaults` (as `loupe`'s UserDefaults suite):
        // the group's options are matched anywhere in the command line, before the verb's.
        @Flag(name: .customLong("only-defaults"), help: .hidden) var onlyDefaults = false
        @Flag(
            help:
                "Print each layer (the defaults, each read-only layer, the writable top), lowest first, then the locks."
        )
        var layers = false

        public init() {}

        public func validate() throws {
            guard [stored, defaults || onlyDefaults, layers].filter({ $0 }).count <= 1 else {
                throw ValidationError("choose one of --stored, --defaults and --layers")
            }
        }

        public func run() throws {
            try group.withSettings { settings in
                if layers {
                    for layer in try settings.root.layers() {
                        try printLine("# \(layer.source)\(layer.isWritable ? " (writable)" : "")")
                        try show(layer.isSecret ? layer.document.masked : layer.document, settings)
                    }
                    let locks = settings.root.locks
                    if !locks.isEmpty {
                        try printLine("# locks")
                        for lock in locks { try printLine("\(lock.path)  (\(lock.file), line \(lock.line))") }
                    }
                } else if stored {
                    guard let stored = try settings.root.storedDocument() else {
                        printError("nothing is stored; the value is the default")
                        return try show(.object([:]), settings)
                    }
                    try show(stored, settings)
                } else if defaults || onlyDefaults {
                    try show(try settings.root.defaults, settings)
                } else {
                    try show(try settings.root.document, settings)
                }
            } orOwnStore: { store, error in
                // The settings do not read: what the store holds, as it holds it, before the error.
                guard !store.secretPaths.contains(.root), let document = try? store.load().document,
                    let secrets = group.secretPaths(in: document, at: ValuePath([]), after: error)
                else { return false }
                try printLine(document.masking(secrets, at: ValuePath([])).jsonText(pretty: true))
                return false
            }
        }
    }

    /// `list`: every path with its value.
    public struct List: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "list",
                abstract: "Prints every path with its value, one per line: server.port = 8080.",
                discussion:
                    "As gsettings list-recursively: each value that is not an object, under PATH (or everywhere), in path order."
            )
        }
        @ParentCommand var group: SettingsCommand
        @Argument(help: "Where to start; everywhere when left out.") var path: String = ""

        public init() {}

        public func run() throws {
            try group.printLeaves(under: path) { settings, path, value in
                "\(path) = \(displayed(value, settings, at: path).jsonText())"
            }
        }
    }

    /// `describe PATH`: what a part is and may be.
    public struct Describe: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "describe",
                abstract:
                    "Describes the part at a path: its type, default, current value, allowed values and description.",
                discussion: "From the settings' JSON Schema (see schema) and their current value.")
        }
        @ParentCommand var group: SettingsCommand
        @Argument(help: "The path, such as server.port.") var path: String

        public init() {}

        public func run() throws {
            try group.withSettingsType { settings in
                let path = try ValuePath(parsing: path)
                let schema = try settings.root.schema()
                let current = try? settings.root.value(atPath: path.description)
                guard let part = schema.part(at: path) else {
                    // Not a part of the type: an error unless the document holds it (a key the type does not know).
                    guard let current else { _ = try settings.root.value(atPath: path.description); return }
                    try printLine("path: \(path.description.isEmpty ? "(the whole value)" : path.description)")
                    try printLine("type: unknown (a key the settings type does not know; kept as it is)")
                    return try printLine("value: \(displayed(current, settings, at: path).jsonText())")
                }
                let description = PartDescription(part)
                try printLine("path: \(path.description.isEmpty ? "(the whole value)" : path.description)")
                try printLine("type: \(description.type)")
                let fallback = (try? settings.root.defaults.value(at: path))
                if let value = description.defaultValue ?? fallback {
                    try printLine("default: \(displayed(value, settings, at: path).jsonText())")
                } else {
                    try printLine("default: none")
                }
                try printLine(
                    "value: \(current.map { displayed($0, settings, at: path).jsonText() } ?? "none (not set)")")
                if let allowed = description.allowed { try printLine("allowed: \(allowed)") }
                if let text = description.text { try printLine("description: \(text)") }
            }
        }
    }

    /// `schema`: the JSON Schema of the settings.
    public struct Schema: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "schema",
                abstract: "Prints the JSON Schema (draft 2020-12) of the settings, for editors and tools.",
                discussion: """
                    Types, defaults, allowed values, the rules JSON Schema can say, and descriptions. No key is \
                    required (a stored document holds only what differs from the defaults), none is forbidden \
                    (keys the type does not know are kept). Save it and name it in the settings file \
                    ("$schema": "settings.schema.json") for completion and checks in an editor.
                    """)
        }
        @ParentCommand var group: SettingsCommand

        public init() {}

        public func run() throws {
            try group.withSettingsType { settings in
                try printLine(try settings.root.schema().document.jsonText(pretty: true))
            }
        }
    }

    /// `explain [PATH]`: where values come from.
    public struct Explain: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "explain",
                abstract:
                    "Says where the value at a path comes from: the layer that set it, and the layers it overrides.",
                discussion: """
                    One line for the path, or for each value under it when it holds an object: \
                    `upstream.url = "https://a.example" from /etc/app/settings.json (overrides default)`, with \
                    the lock that holds it, if any.
                    """)
        }
        @ParentCommand var group: SettingsCommand
        @Argument(help: "The path; the whole value when left out.") var path: String = ""

        public init() {}

        public func run() throws {
            try group.printLeaves(under: path) { settings, path, _ in
                var origin = try settings.root.provenance(of: path)
                origin.value = origin.value.map { displayed($0, settings, at: path) }
                if settings.revealsSecrets { origin.isSecret = false }
                return origin.description
            }
        }
    }
}

/// A part's schema, in words for `describe`.
struct PartDescription {
    var type: String
    var defaultValue: JSONValue?
    var allowed: String?
    var text: String?

    init(_ schema: JSONValue) {
        guard case .object(let keywords) = schema else {
            type = "any"
            return
        }
        type = Self.type(of: keywords)
        defaultValue = keywords["default"]
        if case .string(let text)? = keywords["description"] { self.text = text }
        var allowed: [String] = []
        if case .array(let choices)? = keywords["enum"] {
            allowed.append("one of " + choices.map { $0.jsonText() }.joined(separator: ", "))
        }
        let bounds: [(String, String)] = [
            ("minimum", "at least"), ("exclusiveMinimum", "greater than"), ("maximum", "at most"),
            ("exclusiveMaximum", "less than"),
        ]
        for (keyword, words) in bounds {
            if let bound = keywords[keyword], !SettingsSchema.isTypesOwnBound(bound) {
                allowed.append("\(words) \(bound.jsonText())")
            }
        }
        if case .string(let pattern)? = keywords["pattern"] { allowed.append("matching \(pattern)") }
        if !allowed.isEmpty { self.allowed = allowed.joined(separator: ", ") }
    }

    /// `integer`, `string or null`, `array of string`, `object of boolean`.
    private static func type(of keywords: [String: JSONValue]) -> String {
        var names: [String] = []
        switch keywords["type"] {
        case .string(let name)?: names = [name]
        case .array(let types)?: names = types.compactMap { if case .string(let name) = $0 { name } else { nil } }
        default:
            if case .array(let choices)? = keywords["anyOf"] {
                return choices.map { if case .object(let inner) = $0 { type(of: inner) } else { "any" } }.joined(
                    separator: " or ")
            }
            return "any"
        }
        return names.map { name in
            if name == "array", case .object(let items)? = keywords["items"] { return "array of \(type(of: items))" }
            if name == "object", case .object(let values)? = keywords["additionalProperties"] {
                return "object of \(type(of: values))"
            }
            return name
        }.joined(separator: " or ")
    }
}
#endif
