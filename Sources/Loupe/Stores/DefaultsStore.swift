import Foundation
import Logging

/// A store that keeps the document in `UserDefaults`, under one key of a suite, as a property-list
/// object, so the suite's file shows it as readable keys rather than an opaque blob.
///
/// ```swift
/// let root = try RootLens(default: Settings(), store: DefaultsStore(suite: "com.example.app", key: "settings"))
/// ```
///
/// On Linux the suite is the file `<suite>.plist` in `$XDG_CONFIG_HOME` (or `~/.config`), and the store
/// reads and writes it as ``FileStore`` writes a file: each update holds a lock (`flock` on
/// `.<suite>.plist.lock` beside it) and applies to what the file holds now, written atomically (not flushed
/// to disk, as `UserDefaults` writes it), so
/// processes updating one suite lose nothing (`UserDefaults` itself caches the suite and writes its copy
/// back). As with ``FileStore``, stored data that does not fit the type is an error naming the key and the
/// coding path, and is never replaced by a default. If the suite's file itself is not a valid property
/// list, the store refuses to load or save rather than drop and overwrite it. The suite file is watched,
/// so another process's change reaches observers.
public final class DefaultsStore: DocumentStore, StoreExclusiveAccess {
    /// The suite's name.
    public let suite: String
    /// The key the value is stored under.
    public let key: String

    /// `UserDefaults` is documented as thread-safe.
    nonisolated(unsafe) private let defaults: UserDefaults
    private let logger: Logger
    /// The suite's file, on Linux.
    private let file: WatchedFile<SuiteContents>?

    /// A suite file's keys and format, as read: never changed once read.
    private struct SuiteContents: @unchecked Sendable {
        let keys: [String: Any]
        let format: PropertyListSerialization.PropertyListFormat
    }

    /// Creates a store for `key` in the defaults suite `suite`.
    ///
    /// - Parameters:
    ///   - suite: The `UserDefaults` suite's name (on Linux, the file `<suite>.plist` in `~/.config`).
    ///   - key: The key the value is stored under.
    ///   - logger: Where loads and saves are logged (at debug level); values are never logged.
    /// - Throws: ``SettingsError`` when `suite` cannot name a suite (empty, a path, the app's own bundle
    ///   identifier, `NSGlobalDomain`).
    public init(suite: String, key: String, logger: Logger = Logger(label: "loupe.defaults")) throws {
        // A suite is a name, not a path: `../../tmp/x` would write outside the defaults' directory.
        guard !suite.isEmpty, !suite.contains("/"), suite != ".", suite != ".." else {
            throw SettingsError(
                .unavailable, store: "defaults \(suite) key \(key)",
                reason: "\(String(reflecting: suite)) is not a suite name: a name such as com.example.app, without /")
        }
        guard let defaults = UserDefaults(suiteName: suite) else {
            throw SettingsError(
                .unavailable, store: "defaults \(suite) key \(key)",
                reason: "\(suite) cannot be used as a UserDefaults suite name")
        }
        self.suite = suite
        self.key = key
        self.defaults = defaults
        self.logger = logger
        let name = "defaults \(suite) key \(key)"
        file = Self.suiteFile(of: suite).map { url in
            WatchedFile(path: url.path, name: name) { data in
                var format = PropertyListSerialization.PropertyListFormat.xml
                guard
                    let keys = try? PropertyListSerialization.propertyList(from: data, options: [], format: &format)
                        as? [String: Any]
                else {
                    throw SettingsError(
                        .corrupt, store: name,
                        reason: "the suite file \(url.path) is not a valid property list (it is left as it is)")
                }
                return SuiteContents(keys: keys, format: format)
            }
        }
    }

    public var description: String { "defaults \(suite) key \(key)" }

    /// The file that holds the suite on Linux; nil on platforms where the system owns it.
    public var suiteFile: URL? { Self.suiteFile(of: suite) }

    private static func suiteFile(of suite: String) -> URL? {
        #if os(Linux)
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (NSHomeDirectory() + "/.config")
        return URL(fileURLWithPath: base).appendingPathComponent(suite + ".plist")
        #else
        return nil
        #endif
    }

    /// The key's document; its token is the suite file's version, its identity and the digest of its bytes
    /// (a change to any key of the suite is a change), or where the system owns the suite, a digest of the
    /// key's value.
    public func load() throws -> StoredDocument {
        guard let file else {
            let document = defaults.object(forKey: key).map(JSONValue.init(propertyList:))
            return StoredDocument(document, token: Self.digest(of: document))
        }
        guard let read = try file.read() else { return .empty }
        guard let object = read.content.keys[key] else {
            logger.debug("nothing stored yet; starting from the default", metadata: ["store": "\(description)"])
            return StoredDocument(nil, token: read.token)
        }
        return StoredDocument(JSONValue(propertyList: object), token: read.token)
    }

    public func save(_ document: JSONValue, replacing token: ChangeToken) throws -> ChangeToken {
        let saved = try changeSuite(replacing: token) { keys in
            do {
                // Data and dates the suite holds, unchanged, stay data and dates.
                keys[key] = try document.propertyListObject(keeping: keys[key])
            } catch {
                throw SettingsError(
                    .unwritable, store: description, reason: "cannot write the value as a property list: \(error)",
                    cause: error)
            }
        }
        logger.debug("saved settings", metadata: ["store": "\(description)"])
        return saved
    }

    public func remove(replacing token: ChangeToken) throws -> ChangeToken {
        let removed = try changeSuite(replacing: token) { $0.removeValue(forKey: key) }
        logger.debug("removed settings", metadata: ["store": "\(description)"])
        return removed
    }

    public func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        try file?.watch(onChange).watch
    }

    /// The suite file's lock, held after a conflict.
    public var capabilities: StoreCapabilities { StoreCapabilities(exclusiveAccess: self) }

    /// Holds the suite file's lock around `body`, on Linux.
    public func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R {
        guard let file else { return try body() }
        return try file.withLock(timeout: .seconds(10)) { _ in try body() }
    }

    /// Changes the suite's keys with `change`, if the suite is still the version `token` names: on Linux,
    /// under the suite file's lock, written atomically in its own format (not flushed to disk, as
    /// `UserDefaults` writes a suite: readers see the old file or the new one; a crash may lose the write).
    private func changeSuite(
        replacing token: ChangeToken, _ change: (inout [String: Any]) throws -> Void
    ) throws -> ChangeToken {
        let conflict = SettingsError(
            .conflict, store: description, reason: "another process changed the suite since it was read")
        guard let file else {
            guard Self.digest(of: defaults.object(forKey: key).map(JSONValue.init(propertyList:))) == token else {
                throw conflict
            }
            var keys = [key: defaults.object(forKey: key) as Any]
            try change(&keys)
            defaults.set(keys[key], forKey: key)
            guard defaults.synchronize() else {
                throw SettingsError(.unwritable, store: description, reason: "UserDefaults could not write the suite")
            }
            return Self.digest(of: defaults.object(forKey: key).map(JSONValue.init(propertyList:)))
        }
        return try file.withLock(timeout: .seconds(10)) { target in
            let current = try file.read()
            guard (current?.token ?? .absent) == token else { throw conflict }
            var keys = current?.content.keys ?? [:]
            try change(&keys)
            let format = current?.content.format ?? .xml
            let data: Data
            do {
                data = try PropertyListSerialization.data(fromPropertyList: keys, format: format, options: 0)
            } catch {
                throw SettingsError(
                    .unwritable, store: description, reason: "the value cannot be written as a property list",
                    cause: error)
            }
            let identity = try file.write(data, to: target, permissions: 0o600, durable: false)
            return file.remember(SuiteContents(keys: keys, format: format), written: data, as: identity, at: target)
                .token
        }
    }

    /// A token for a value the system keeps: a digest of its JSON, never the value itself.
    private static func digest(of document: JSONValue?) -> ChangeToken {
        guard let document else { return .absent }
        var hasher = Hasher()
        hasher.combine(document.jsonText())
        return ChangeToken(Int64(hasher.finalize()))
    }
}

extension DefaultsStore: CustomDebugStringConvertible {
    /// The store's type, place and policy, for a debugger; never its value.
    public var debugDescription: String { "DefaultsStore(suite: \(suite), key: \(key))" }
}
