import Foundation
import Logging

/// A store that keeps the document in `UserDefaults`, under one key of a suite, as a property-list
/// object, so the suite's file shows it as readable keys rather than an opaque blob.
///
/// ```swift
/// let root = try RootLens(default: Settings(), store: DefaultsStore(suite: "com.example.app", key: "settings"))
/// ```
///
/// On Linux the suite is the file `<suite>.plist` in `$XDG_CONFIG_HOME` (or `~/.config`). As with
/// ``FileStore``, stored data that does not fit the type is an error naming the key and the coding path,
/// and is never replaced by a default. If the suite's file itself is not a valid property list, the store
/// refuses to load or save rather than let `UserDefaults` silently drop and overwrite it.
public final class DefaultsStore: WritableDocumentStore {
    /// The suite's name.
    public let suite: String
    /// The key the value is stored under.
    public let key: String

    /// `UserDefaults` is documented as thread-safe.
    nonisolated(unsafe) private let defaults: UserDefaults
    private let logger: Logger
    /// The version of the suite file last known to be a valid property list.
    private let knownGoodSuiteFile = Locked<FileIdentity?>(nil)

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
    }

    public var description: String { "defaults \(suite) key \(key)" }

    /// The file that holds the suite on Linux; nil on platforms where the system owns it.
    public var suiteFile: URL? {
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
        guard let object = defaults.object(forKey: key) else {
            logger.debug("nothing stored yet; starting from the default", metadata: ["store": "\(description)"])
            return nil
        }
        return JSONValue(propertyList: object)
    }

    public func save(_ document: JSONValue) throws {
        try checkSuiteFile()
        defaults.set(document.propertyListObject, forKey: key)
        try synchronize()
        logger.debug("saved settings", metadata: ["store": "\(description)"])
    }

    public func remove() throws {
        try checkSuiteFile()
        defaults.removeObject(forKey: key)
        try synchronize()
        logger.debug("removed settings", metadata: ["store": "\(description)"])
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
