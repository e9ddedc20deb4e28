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
    /// The version of the suite file last known to be a valid property list.
    private let knownGoodSuiteFile = Locked<FileIdentity?>(nil)
    /// The version of the suite file this store last read or wrote (`known` false: none yet).
    private let lastSeen = Locked<(known: Bool, identity: FileIdentity?)>((false, nil))
    /// The lock every process updating the suite takes, on Linux.
    private let lock: FileLock?
    /// The suite file as last read or written: its version, keys and format, so that an update reads it
    /// again only when another process changed it.
    private let cached = Locked<(identity: FileIdentity, suite: [String: Any], format: PropertyListSerialization.PropertyListFormat)?>(nil)

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
        try checkSuiteFile()
        if let file = suiteFile {
            let (suite, identity, _) = try readSuite(file)
            lastSeen.withLock { $0 = (true, identity) }
            guard let object = suite[key] else {
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
        try checkSuiteFile()
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
        try checkSuiteFile()
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
        let seen = lastSeen.withLock { $0 }
        if seen.known, seen.identity == current { return .unchanged }
        return .changed(try load())
    }

    /// The suite file's keys, the version read and its format; no keys when there is no file.
    private func readSuite(_ file: URL) throws -> (suite: [String: Any], identity: FileIdentity?, format: PropertyListSerialization.PropertyListFormat) {
        if let known = cached.withLock({ $0 }), (try? FileSystem.identity(of: file.path)) == known.identity {
            return (known.suite, known.identity, known.format)
        }
        let read: (data: Data, identity: FileIdentity)?
        do {
            read = try FileSystem.read(file.path)
        } catch let error as SystemCallError {
            throw StoreError(.unreadable, store: description, reason: error.description, cause: error, errno: error.code)
        }
        guard let read else { return ([:], nil, .xml) }
        var format = PropertyListSerialization.PropertyListFormat.xml
        guard let suite = try? PropertyListSerialization.propertyList(from: read.data, options: [], format: &format) as? [String: Any] else {
            throw StoreError(
                .corrupt, store: description,
                reason: "the suite file \(file.path) is not a valid property list (it is left as it is)")
        }
        cached.withLock { $0 = (read.identity, suite, format) }
        return (suite, read.identity, format)
    }

    /// Changes the suite file's keys with `change` and writes it atomically, keeping its format.
    private func writeSuite(_ file: URL, _ change: (inout [String: Any]) -> Void) throws {
        var (suite, _, format) = try readSuite(file)
        change(&suite)
        do {
            let data = try PropertyListSerialization.data(fromPropertyList: suite, format: format, options: 0)
            // Atomic, not flushed to disk, as UserDefaults writes a suite: readers see the old file or the
            // new one; a crash may lose the write.
            let identity = try FileSystem.writeAtomically(
                data, to: file.path, permissions: FileSystem.permissions(of: file.path) ?? 0o600, durable: false)
            lastSeen.withLock { $0 = (true, identity) }
            knownGoodSuiteFile.withLock { $0 = identity }
            cached.withLock { $0 = (identity, suite, format) }
        } catch let error as SystemCallError {
            throw StoreError(.unwritable, store: description, reason: error.description, cause: error, errno: error.code)
        }
    }

    private func synchronize() throws {
        guard defaults.synchronize() else {
            let place = suiteFile.map { " to \($0.path)" } ?? ""
            throw StoreError(.unwritable, store: description, reason: "UserDefaults could not write the suite\(place)")
        }
        if let file = suiteFile {
            let written = try? FileSystem.identity(of: file.path)
            knownGoodSuiteFile.withLock { $0 = written }
        }
    }

    /// Refuses to go on when the suite's file exists but is not a property list, which `UserDefaults`
    /// would otherwise treat as empty and overwrite.
    private func checkSuiteFile() throws {
        guard let file = suiteFile, let current = try? FileSystem.identity(of: file.path) else { return }
        if knownGoodSuiteFile.withLock({ $0 == current }) { return }
        guard let (data, identity) = try? FileSystem.read(file.path) else { return }
        do {
            _ = try PropertyListSerialization.propertyList(from: data, format: nil)
            knownGoodSuiteFile.withLock { $0 = identity }
        } catch {
            throw StoreError(
                .corrupt, store: description,
                reason: "the suite file \(file.path) is not a valid property list (it is left as it is)")
        }
    }
}

extension DefaultsStore: CustomDebugStringConvertible {
    /// The store's type, place and policy, for a debugger; never its value.
    public var debugDescription: String { "DefaultsStore(suite: \(suite), key: \(key))" }
}
