#if Configuration
import Configuration
import Foundation
import Loupe

/// A swift-configuration provider over any Loupe lens, so services read Loupe settings through
/// `ConfigReader`, with other providers (environment variables, command-line arguments) in front of it.
///
/// ```swift
/// import Configuration
/// import LoupeConfiguration
///
/// let root = try RootLens(default: Settings(), store: FileStore(path: "settings.json"))
/// let config = ConfigReader(providers: [EnvironmentVariablesProvider(), LoupeProvider(root)])
/// let port = config.int(forKey: "server.port", default: 8080)    // SERVER_PORT wins if it is set
/// try await config.watchInt(forKey: "server.port") { updates in
///     for await port in updates { print("port:", port ?? 0) }     // every Loupe commit
/// }
/// ```
///
/// Keys are the lens value's `Codable` keys joined by dots (`server.port`). Strings, integers, floating
/// point numbers and booleans map to their configuration types, `Data` (base64 text) to bytes; arrays of one of those to the array
/// types; elements of other arrays are reached by index (`items.0.name`). The values at the lens's
/// `secretPaths` are marked secret (every value of a store that keeps secrets, as `KeyringStore`; the
/// values a credential directory or a secret reference gives; the parts the settings type declares secret,
/// `SecretSettings`), so `ConfigReader`'s access logs redact them.
///
/// The provider keeps one flattened snapshot of the value, replaced on each commit, so a lookup is a
/// dictionary access; watchers are sent each commit that changes what they watch, in commit order.
public struct LoupeProvider: ConfigProvider, CustomStringConvertible {
    private let storage: Storage

    /// A provider over `lens`'s value.
    ///
    /// - Parameters:
    ///   - lens: The lens whose value the provider serves; its changes reach watchers.
    ///   - name: How the provider names itself in `ConfigReader`'s logs; the lens's path and store by default.
    public init<Value: Encodable & Sendable>(_ lens: Lens<Value>, name: String? = nil) {
        storage = Storage(source: lens, name: name ?? "Loupe \(lens.path) in \(lens)")
    }

    /// A provider over `lens`'s value, as for a read-only lens.
    ///
    /// - Parameters:
    ///   - lens: The lens whose value the provider serves; its changes reach watchers.
    ///   - name: How the provider names itself in `ConfigReader`'s logs; the lens's path and store by default.
    public init<Value: Codable & Sendable>(_ lens: MutableLens<Value>, name: String? = nil) {
        self.init(lens.readOnly, name: name)
    }

    /// A provider over a root's whole value.
    ///
    /// - Parameters:
    ///   - root: The root whose value the provider serves; its changes reach watchers.
    ///   - name: How the provider names itself in `ConfigReader`'s logs; the root's store by default.
    public init<Value: Codable & Sendable>(_ root: RootLens<Value>, name: String? = nil) {
        self.init(root.erased, name: name)
    }

    /// A provider over a root's whole value, whatever its type.
    ///
    /// - Parameters:
    ///   - root: The root whose value the provider serves; its changes reach watchers.
    ///   - name: How the provider names itself in `ConfigReader`'s logs; the root's store by default.
    public init(_ root: AnyRootLens, name: String? = nil) {
        storage = Storage(source: root, name: name ?? "Loupe \(root.storeDescription)")
    }

    public var providerName: String { storage.name }

    public var description: String { "LoupeProvider[\(storage.name)]" }

    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try storage.current.value(forKey: key, type: type)
    }

    public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try value(forKey: key, type: type)
    }

    nonisolated(nonsending) public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler:
            nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>)
            async throws -> Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<Result<LookupResult, any Error>>.makeStream(
            bufferingPolicy: .unbounded)
        let last = LastSent()
        let id = storage.addWatcher { snapshot in
            let result = Result { try snapshot.value(forKey: key, type: type) }
            if last.isNew(result) { continuation.yield(result) }
        }
        defer {
            storage.removeWatcher(id)
            continuation.finish()
        }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }

    public func snapshot() -> any ConfigSnapshot {
        storage.current
    }

    nonisolated(nonsending) public func watchSnapshot<Return: ~Copyable>(
        updatesHandler:
            nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws ->
            Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<any ConfigSnapshot>.makeStream(bufferingPolicy: .unbounded)
        let id = storage.addWatcher { continuation.yield($0) }
        defer {
            storage.removeWatcher(id)
            continuation.finish()
        }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }
}

/// A value of the wrong configuration type was asked for.
public struct LoupeProviderError: Error, CustomStringConvertible, LocalizedError, Sendable {
    /// The key, dotted.
    public let key: String
    /// The type asked for.
    public let requested: ConfigType
    /// The type of the value there.
    public let found: ConfigType

    public var description: String {
        "\(key): asked for \(requested.rawValue), but the Loupe value is \(found.rawValue)"
    }

    public var errorDescription: String? { description }
}

/// The provider's snapshot: the lens's value, flattened to dotted keys.
struct LoupeSnapshot: ConfigSnapshot {
    let providerName: String
    let values: [[String]: ConfigValue]

    /// - Parameter secretPaths: Paths whose values are secret (the root path when every value is;
    ///   credentials, secret references, declared secrets).
    init(providerName: String, json: JSONValue, secretPaths: [ValuePath] = []) {
        self.providerName = providerName
        var values: [[String]: ConfigValue] = [:]
        let isSecret = secretPaths.contains(.root)
        Self.flatten(json, at: [], isSecret: isSecret, into: &values)
        for path in secretPaths where !isSecret {
            let keys = path.components.map { component -> String in
                switch component {
                case .key(let key): key
                case .index(let index): String(index)
                }
            }
            for (key, value) in values where key.starts(with: keys) || keys.starts(with: key) {
                values[key] = ConfigValue(value.content, isSecret: true)
            }
        }
        self.values = values
    }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let encodedKey = key.components.joined(separator: ".")
        guard let value = values[key.components] else { return LookupResult(encodedKey: encodedKey, value: nil) }
        guard let content = Self.convert(value.content, to: type) else {
            throw LoupeProviderError(key: encodedKey, requested: type, found: Self.type(of: value.content))
        }
        return LookupResult(encodedKey: encodedKey, value: ConfigValue(content, isSecret: value.isSecret))
    }

    private static func flatten(
        _ json: JSONValue, at path: [String], isSecret: Bool, into values: inout [[String]: ConfigValue]
    ) {
        func put(_ content: ConfigContent) { values[path] = ConfigValue(content, isSecret: isSecret) }
        switch json {
        case .null: break
        case .bool(let value): put(.bool(value))
        case .integer(let value): put(.int(value))
        case .double(let value): put(.double(value))
        case .exactNumber(let text):
            // No Int holds a whole number kept as written: as text, so that reading it as an Int fails
            // rather than wraps. A fraction: the nearest Double.
            if NumberText(text)?.isWhole == true || Double(text)?.isFinite != true {
                put(.string(text))
            } else {
                put(.double(Double(text)!))
            }
        case .string(let value): put(.string(value))
        case .object(let members):
            for (key, member) in members { flatten(member, at: path + [key], isSecret: isSecret, into: &values) }
        case .array(let elements):
            if let strings = elements.allAs({ if case .string(let s) = $0 { s } else { nil } }) {
                put(.stringArray(strings))
            } else if let ints = elements.allAs({ if case .integer(let i) = $0 { i } else { nil } }) {
                put(.intArray(ints))
            } else if let bools = elements.allAs({ if case .bool(let b) = $0 { b } else { nil } }) {
                put(.boolArray(bools))
            } else if let doubles = elements.allAs({ element -> Double? in
                switch element {
                case .double(let d): d
                case .integer(let i): Double(i)
                default: nil
                }
            }) {
                put(.doubleArray(doubles))
            } else {
                for (index, element) in elements.enumerated() {
                    flatten(element, at: path + [String(index)], isSecret: isSecret, into: &values)
                }
            }
        }
    }

    /// `content` as `type`, where the conversion loses nothing (an integer as a double, an integral
    /// double as an integer, an empty array as any array), or nil.
    private static func convert(_ content: ConfigContent, to type: ConfigType) -> ConfigContent? {
        switch (content, type) {
        case (.string, .string), (.int, .int), (.double, .double), (.bool, .bool),
            (.stringArray, .stringArray), (.intArray, .intArray), (.doubleArray, .doubleArray),
            (.boolArray, .boolArray):
            return content
        case (.int(let value), .double): return .double(Double(value))
        case (.double(let value), .int) where value.rounded() == value && abs(value) < 9e15: return .int(Int(value))
        case (.intArray(let values), .doubleArray): return .doubleArray(values.map(Double.init))
        case (.stringArray([]), .intArray): return .intArray([])
        case (.stringArray([]), .doubleArray): return .doubleArray([])
        case (.stringArray([]), .boolArray): return .boolArray([])
        // `Data` encodes as base64 text, so bytes are read from base64 strings.
        case (.string(let text), .bytes): return Data(base64Encoded: text).map { .bytes(Array($0)) }
        case (.stringArray(let texts), .byteChunkArray):
            let chunks = texts.compactMap { Data(base64Encoded: $0).map(Array.init) }
            return chunks.count == texts.count ? .byteChunkArray(chunks) : nil
        default: return nil
        }
    }

    private static func type(of content: ConfigContent) -> ConfigType {
        switch content {
        case .string: .string
        case .int: .int
        case .double: .double
        case .bool: .bool
        case .bytes: .bytes
        case .stringArray: .stringArray
        case .intArray: .intArray
        case .doubleArray: .doubleArray
        case .boolArray: .boolArray
        case .byteChunkArray: .byteChunkArray
        }
    }
}

extension Array where Element == JSONValue {
    /// Every element mapped by `transform`, or nil if any does not map (an empty array maps to strings).
    fileprivate func allAs<T>(_ transform: (JSONValue) -> T?) -> [T]? {
        var result: [T] = []
        result.reserveCapacity(count)
        for element in self {
            guard let value = transform(element) else { return nil }
            result.append(value)
        }
        return result
    }
}

/// What the provider shares between its copies: the current snapshot, and its watchers.
private final class Storage: Sendable {
    let name: String
    private struct State {
        var snapshot: LoupeSnapshot
        var watchers: [UInt64: @Sendable (LoupeSnapshot) -> Void] = [:]
        var nextID: UInt64 = 0
    }
    private let state: Locked<State>
    private let token = Locked<ObservationToken?>(nil)

    init(source: some SnapshotSource, name: String) {
        self.name = name
        state = Locked(
            State(
                snapshot: LoupeSnapshot(
                    providerName: name, json: source.currentDocument, secretPaths: source.secretPaths)))
        let observation = source.observeDocument { [weak self] document in
            self?.publish(LoupeSnapshot(providerName: name, json: document, secretPaths: source.secretPaths))
        }
        token.withLock { $0 = observation }
        // A commit between reading the value and observing it would be missed: read once more.
        let latest = LoupeSnapshot(providerName: name, json: source.currentDocument, secretPaths: source.secretPaths)
        state.withLock { $0.snapshot = latest }
    }

    deinit { token.withLock { $0?.cancel() } }

    var current: LoupeSnapshot { state.withLock { $0.snapshot } }

    /// Registers `watcher`, which is called at once with the current snapshot, then after each commit.
    func addWatcher(_ watcher: @escaping @Sendable (LoupeSnapshot) -> Void) -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            state.watchers[state.nextID] = watcher
            watcher(state.snapshot)
            return state.nextID
        }
    }

    func removeWatcher(_ id: UInt64) {
        state.withLock { $0.watchers[id] = nil }
    }

    /// Called by the lens's observation, one commit at a time, in commit order.
    private func publish(_ new: LoupeSnapshot) {
        let current = state.withLock { state in
            state.snapshot = new
            return state.watchers.sorted { $0.key < $1.key }.map(\.value)
        }
        for watcher in current { watcher(new) }
    }
}

/// What a provider serves: a lens's value or a root's, as a document, and its changes.
private protocol SnapshotSource: Sendable {
    /// The paths whose values are secret: the root path when every value is.
    var secretPaths: [ValuePath] { get }
    /// The value now, encoded; `null` if it cannot be encoded.
    var currentDocument: JSONValue { get }
    func observeDocument(_ handler: @escaping @Sendable (JSONValue) -> Void) -> ObservationToken
}

extension AnyRootLens: SnapshotSource {
    var currentDocument: JSONValue { (try? document) ?? .null }
    func observeDocument(_ handler: @escaping @Sendable (JSONValue) -> Void) -> ObservationToken {
        observe(handler)
    }
}

extension Lens: SnapshotSource where Value: Encodable {
    var currentDocument: JSONValue { (try? value(atPath: "")) ?? .null }
    func observeDocument(_ handler: @escaping @Sendable (JSONValue) -> Void) -> ObservationToken {
        observe { [self] _ in handler(currentDocument) }
    }
}

/// The last result a value watcher sent, so it sends changes only.
private final class LastSent: Sendable {
    private let state = Locked<(sent: Bool, last: LookupResult?)>((false, nil))

    func isNew(_ result: Result<LookupResult, any Error>) -> Bool {
        state.withLock { state in
            guard case .success(let value) = result else {
                state = (true, nil)
                return true
            }
            if state.sent && state.last == value { return false }
            state = (true, value)
            return true
        }
    }
}
#endif
