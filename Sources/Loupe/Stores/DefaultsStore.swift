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
/// list, the store refuses to load or save rather than drop and overwrite it.
public final class DefaultsStore: WritableDocumentStore, LockingStore, ChangeDetectingStore {
    /// The suite's name.
    public let suite: String
    /// The key the value is stored under.
    public let key: String

    /// `UserDefaults` is documented as thread-safe.
    nonisolated(unsafe) private let defaults: UserDefaults
    private let logger: Logger
    /// The lock every process updating the suite takes, on Linux.
    private let lock: FileLock?
    /// The suite file as last read or written (nil: not yet): its version (nil: no file), keys and format,
    /// so that an update reads it again only when another process changed it.
    private let seen = Locked<(identity: FileIdentity?, suite: [String: Any], format: PropertyListSerialization.PropertyListFormat)?>(nil)

    /// Creates a store for `key` in the defaults suite `suite`.
    ///
    /// - Parameters:
    ///   - suite: The `UserDefaults` suite's name (on Linux, the file `<suite>.plist` in `~/.config`).
    ///   - key: The key the value is stored under.
    ///   - logger: Where loads and saves are logged (at debug level); values are never logged.
    /// - Throws: ``StoreError`` when `suite` cannot name a suite (empty, a path, the app's own bundle
    ///   identifier, `NSGlobalDomain`).
    public init(suite: String, key: String, logger: Logger = Logger(label: "loupe.defaults")) throws {
        // A suite is a name, not a path: `../../tmp/x` would write outside the defaults' directory.
        guard !suite.isEmpty, !suite.contains("/"), suite != ".", suite != ".." else {
            throw StoreError(
                .unavailable, store: "defaults \(suite) key \(key)",
                reason: "\(String(reflecting: suite)) is not a suite name: a name such as com.example.app, without /")
        }
        guard let defaults = UserDefaults(suiteName: suite) else {
            throw StoreError(.unavailable, store: "defaults \(suite) key \(key)", reason: "\(suite) cannot be used as a UserDefaults suite name")
        }
        self.suite = suite
        self.key = key
        self.defaults = defaults
        self.logger = logger
        lock = Self.suiteFile(of: suite).map { file in
            FileLock(path: FileSystem.directory(of: file.path) + "/"
                + FileSystem.sidecarName(for: FileSystem.fileName(of: file.path), suffix: ".lock"))
        }
    }

    public var description: String { "defaults \(suite) key \(key)" }

    /// The file that holds the suite on Linux; nil on platforms where the system owns it.
    public var suiteFile: URL? { Self.suiteFile(of: suite) }

    private static func suiteFile(of suite: String) -> URL? {
        #if os(Linux)
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (NSHomeDirectory() + "/.config")
        return URL(fileURLWithPath: base).appendingPathComponent(suite + ".plist")
        #else
        return nil
        #endif
    }

    public func load() throws -> JSONValue? {
        if let file = suiteFile {
            guard let object = try readSuite(file).suite[key] else {
                logger.debug("nothing stored yet; starting from the default", metadata: ["store": "\(description)"])
                return nil
            }
            return JSONValue(propertyList: object)
        }
        guard let object = defaults.object(forKey: key) else {
            logger.debug("nothing stored yet; starting from the default", metadata: ["store": "\(description)"])
            return nil
        }
        return JSONValue(propertyList: object)
    }

    public func save(_ document: JSONValue) throws {
        if let file = suiteFile {
            try writeSuite(file) { $0[key] = document.propertyListObject }
            logger.debug("saved settings", metadata: ["store": "\(description)"])
            return
        }
        defaults.set(document.propertyListObject, forKey: key)
        try synchronize()
        logger.debug("saved settings", metadata: ["store": "\(description)"])
    }

    public func remove() throws {
        if let file = suiteFile {
            try writeSuite(file) { $0.removeValue(forKey: key) }
            logger.debug("removed settings", metadata: ["store": "\(description)"])
            return
        }
        defaults.removeObject(forKey: key)
        try synchronize()
        logger.debug("removed settings", metadata: ["store": "\(description)"])
    }

    public func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R {
        guard let lock else { return try body() }
        let result: Result<R, any Error>
        do {
            result = try lock.withLock(timeout: .seconds(10)) { Result { try body() } }
        } catch let error as SystemCallError {
            throw StoreError(error.code == ETIMEDOUT ? .timeout : .unwritable, store: description, reason: error.description, cause: error, errno: error.code)
        }
        return try result.get()
    }

    public func loadIfChanged() throws -> StoreChange {
        guard let file = suiteFile else { return .changed(try load()) }
        let current = try? FileSystem.identity(of: file.path)
        if let known = seen.withLock({ $0 }), known.identity == current { return .unchanged }
        return .changed(try load())
    }

    /// The suite file's keys and its format; no keys when there is no file. A suite file that is not a
    /// property list is refused, never treated as empty and overwritten (as `UserDefaults` would).
    private func readSuite(_ file: URL) throws -> (suite: [String: Any], format: PropertyListSerialization.PropertyListFormat) {
        if let known = seen.withLock({ $0 }), (try? FileSystem.identity(of: file.path)) == known.identity {
            return (known.suite, known.format)
        }
        let read: (data: Data, identity: FileIdentity)?
        do {
            read = try FileSystem.read(file.path)
        } catch let error as SystemCallError {
            throw StoreError(.unreadable, store: description, reason: error.description, cause: error, errno: error.code)
        }
        guard let read else {
            seen.withLock { $0 = (nil, [:], .xml) }
            return ([:], .xml)
        }
        var format = PropertyListSerialization.PropertyListFormat.xml
        guard let suite = try? PropertyListSerialization.propertyList(from: read.data, options: [], format: &format) as? [String: Any] else {
            throw StoreError(
                .corrupt, store: description,
                reason: "the suite file \(file.path) is not a valid property list (it is left as it is)")
        }
        seen.withLock { $0 = (read.identity, suite, format) }
        return (suite, format)
    }

    /// Changes the suite file's keys with `change` and writes it atomically, keeping its format.
    private func writeSuite(_ file: URL, _ change: (inout [String: Any]) -> Void) throws {
        var (suite, format) = try readSuite(file)
        change(&suite)
        do {
            let data = try PropertyListSerialization.data(fromPropertyList: suite, format: format, options: 0)
            // Atomic, not flushed to disk, as UserDefaults writes a suite: readers see the old file or the
            // new one; a crash may lose the write.
            let identity = try FileSystem.writeAtomically(
                data, to: file.path, permissions: FileSystem.permissions(of: file.path) ?? 0o600, durable: false)
            seen.withLock { $0 = (identity, suite, format) }
        } catch let error as SystemCallError {
            throw StoreError(.unwritable, store: description, reason: error.description, cause: error, errno: error.code)
        }
    }

    /// Where the system owns the suite (not Linux): `UserDefaults` writes it.
    private func synchronize() throws {
        guard defaults.synchronize() else {
            throw StoreError(.unwritable, store: description, reason: "UserDefaults could not write the suite")
        }
    }
}

extension DefaultsStore: CustomDebugStringConvertible {
    /// The store's type, place and policy, for a debugger; never its value.
    public var debugDescription: String { "DefaultsStore(suite: \(suite), key: \(key))" }
}
