/// One document of a stack of layers, with where it came from.
struct LayerDocument: Sendable, Equatable {
    /// Where it came from, for provenance: a file's path, or a store's description.
    var source: String
    /// How errors name it: `JSON file /etc/app/settings.json`.
    var name: String
    var document: JSONValue
    /// Who can change it, when it is a file: what its secret references may read.
    var writers: DocumentWriters? = nil
}

/// What a root's store holds, as the pipeline reads it: the documents of the read-only layers, lowest
/// first, the document of the writable top layer, and the administrator's locks. A store that is not a
/// ``LayeredStore`` is a stack with its document on top and nothing below.
struct LayerStack: Sendable {
    /// The read-only layers' documents, lowest first, as stored (stamps and all).
    var lower: [LayerDocument] = []
    /// The top layer's document, as stored; nil when it holds nothing.
    var top: JSONValue?
    /// Where the top layer's document is, for provenance (a file's path); nil: the root's store.
    var topSource: String?
    /// Who can change the top layer's document, when it is a file: what its secret references may read.
    var topWriters: DocumentWriters?
    /// The paths the top layer may not set.
    var locks: [SettingsLock] = []
    /// The layers above the top (the environment, `--set`, credentials), lowest first: never written.
    var overrides: [OverrideLayer] = []

    /// Who can change the document that holds the secret reference at `path` among `lower` (as migrated)
    /// and `top`: the topmost layer that sets it; nil when that is none (the defaults: the program's own),
    /// or a layer of the program's own.
    func writers(ofReferenceAt path: ValuePath, top: JSONValue, lower: [LayerDocument]) -> DocumentWriters? {
        if self.top != nil, top.patchTouches(path) { return topWriters }
        return lower.last { $0.document.patchTouches(path) }?.writers
    }
}

/// A path an administrator locked: it and everything under it keep the value of the layers below the
/// writable top layer, as dconf's lockdown does.
///
/// Locks are text files, one path per line (`server.port`, `features.beta`, or dconf's `/server/port`),
/// with `#` starting a comment; see ``LayeredStore``.
public struct SettingsLock: Sendable, Hashable, CustomStringConvertible {
    /// The locked path.
    public var path: ValuePath
    /// The file that locks it.
    public var file: String
    /// The line of ``file`` that locks it, from 1.
    public var line: Int

    /// Creates a lock.
    public init(path: ValuePath, file: String, line: Int) {
        self.path = path
        self.file = file
        self.line = line
    }

    /// `server.port (locked by /etc/app/locks/admin, line 3)`.
    public var description: String { "\(path) (locked by \(file), line \(line))" }

    /// Whether this lock covers `other`: the same path or one below it.
    func covers(_ other: ValuePath) -> Bool {
        other.components.starts(with: path.components)
    }
}

/// Where the value at a path comes from: the layer that set it, and the lower layers it overrides.
///
/// ```swift
/// let origin = try root.provenance(ofPath: "upstream.url")
/// print(origin.source)      // /etc/app/settings.d/10-site.json
/// print(origin.overrides)   // [/usr/share/app/settings.json, default]
/// ```
public struct Provenance: Sendable, Equatable, CustomStringConvertible {
    /// A place a value comes from.
    public enum Source: Sendable, Hashable, CustomStringConvertible {
        /// The program's default value.
        case defaultValue
        /// A layer (or the root's only store): a file's path, or a store's description.
        case layer(String)
        /// A value of an override layer, above the files and never written: `environment variable
        /// MYAPP_SERVER__PORT`, `--set logLevel`, `credential upstream.token`.
        case override(String)

        /// `default`, the layer's file or store, or the override's origin.
        public var description: String {
            switch self {
            case .defaultValue: "default"
            case .layer(let name), .override(let name): name
            }
        }
    }

    /// The path explained.
    public var path: ValuePath
    /// The effective value at the path; nil when there is none.
    public var value: JSONValue?
    /// The topmost layer that sets the path (or something under it); ``Source/defaultValue`` when no
    /// layer does.
    public var source: Source
    /// The lower layers that set it too and are overridden, nearest first; the last is often the
    /// default.
    public var overrides: [Source]
    /// Where ``source`` writes the value, when it is a file whose format can tell (JSON, JSONC, TOML,
    /// YAML): its line and column, or those of the nearest part above it that the file writes.
    public var position: TextPosition?
    /// The lock that keeps the path at the value of the layers below the top, if any.
    public var lock: SettingsLock?
    /// Whether the value, or a part of it, is a secret (a credential's): never shown unmasked without
    /// being asked.
    public var isSecret = false

    /// `upstream.url = "https://a.example" from /etc/app/settings.json line 3 (overrides default)`.
    public var description: String {
        let shown = isSecret ? "\"********\"" : value?.jsonText() ?? "(none)"
        var text = "\(path.components.isEmpty ? "<root>" : path.description) = \(shown) from \(source)"
        if let position { text += " line \(position.line)" }
        if !overrides.isEmpty { text += " (overrides \(overrides.map(\.description).joined(separator: ", ")))" }
        if let lock { text += ", locked by \(lock.file) line \(lock.line)" }
        return text
    }
}

/// One layer of a root's settings as the root last read it, for tools that show where values come from
/// (`loupe show --layers`).
public struct SettingsLayer: Sendable, Equatable {
    /// Where the layer is.
    public var source: Provenance.Source
    /// What it holds, after migrations: a merge patch over the layers below (for ``Provenance/Source/defaultValue``,
    /// the encoded default value). The top layer without what it holds at locked paths.
    public var document: JSONValue
    /// Whether updates are stored in it (the top layer).
    public var isWritable: Bool
    /// Whether what it holds is secret (a credential).
    public var isSecret: Bool = false
}

extension JSONValue {
    /// Whether this merge patch sets `path` or something under it: a value there (an object with members
    /// below, or anything else), or something that is not an object on the way, which replaces or removes
    /// everything under it.
    func patchTouches(_ path: ValuePath) -> Bool {
        firstPatched(under: path) != nil
    }

    /// The first path at or under `path` that this merge patch sets, or nil when it sets nothing there.
    func firstPatched(under path: ValuePath) -> ValuePath? {
        var current = self
        var walked: [ValuePath.Component] = []
        for component in path.components {
            guard case .object(let members) = current else { return ValuePath(walked) }
            guard case .key(let key) = component else { return nil }
            guard let child = members[key] else { return nil }
            walked.append(component)
            current = child
        }
        // Name the first member set below, to say exactly what a write changed.
        while case .object(let members) = current, let key = members.keys.min() {
            walked.append(.key(key))
            current = members[key]!
        }
        if case .object = current, walked.count == path.components.count { return nil }  // an empty object sets nothing
        return ValuePath(walked)
    }

    /// Takes out of this merge patch what it sets at `path` and under it, and returns it with the path it
    /// was at (a part that is not an object, on the way, is taken whole); nil when it set nothing there.
    mutating func removePatch(at path: ValuePath) -> HeldValue? {
        guard patchTouches(path) else { return nil }
        return removePatch(at: path.components[...], walked: [])
    }

    private mutating func removePatch(
        at rest: ArraySlice<ValuePath.Component>, walked: [ValuePath.Component]
    ) -> HeldValue? {
        guard let first = rest.first, case .object(var members) = self else {
            defer { self = .object([:]) }
            return HeldValue(path: ValuePath(walked), value: self)
        }
        guard case .key(let key) = first, var child = members[key] else { return nil }
        let held: HeldValue?
        if rest.count == 1 || !(child.isObject) {
            held = HeldValue(path: ValuePath(walked + [first]), value: child)
            members[key] = nil
        } else {
            held = child.removePatch(at: rest.dropFirst(), walked: walked + [first])
            if case .object(let left) = child, left.isEmpty { members[key] = nil } else { members[key] = child }
        }
        self = .object(members)
        return held
    }

    private var isObject: Bool {
        if case .object = self { true } else { false }
    }
}

/// A value the top layer holds at a locked path: ignored while the lock holds, and kept in the top layer's
/// document, so that it applies again when the lock is lifted.
struct HeldValue: Sendable, Equatable {
    var path: ValuePath
    var value: JSONValue
}
