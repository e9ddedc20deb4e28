#if os(Linux)
import Foundation
import Glibc
import Logging
import Loupe

/// A store that keeps the document in the user's keyring (the freedesktop Secret Service: GNOME Keyring,
/// KeePassXC, KWallet) through libsecret, for credentials and tokens that do not belong in files.
///
/// ```swift
/// import LoupeKeyring
/// let credentials = try RootLens(
///     default: Credentials(),
///     store: KeyringStore(service: "com.example.app", account: "upstream"))
/// ```
///
/// The whole document is stored as compact JSON in one secret item whose attributes are `service` and
/// `account`, so `secret-tool lookup service S account A` prints exactly what Loupe stored, and an item
/// that `secret-tool store` wrote with those attributes is read by Loupe. Saving replaces the item
/// atomically; `RootLens/remove()` deletes it.
///
/// The Secret Service has no compare-and-swap, so a save or a removal holds a lock file in the user's
/// runtime directory (`$XDG_RUNTIME_DIR/loupe`), reads the item, and writes only if the item is still what
/// the root last read, compared by a digest keyed for this process: an item that `secret-tool` or another
/// program changed or deleted meanwhile makes the root read it again and re-run its update, never
/// overwrite it.
///
/// Nothing of the secret ever appears in an error, a log line, or this store's `description`; buffers
/// the store owns are wiped after use. Every call to the Secret Service is bounded by ``timeout``: no
/// service, a locked collection, a prompt nobody answers or a D-Bus error each give a `SettingsError`.
public final class KeyringStore: DocumentStore, StoreExclusiveAccess {
    /// Which keyring collection holds the item.
    public enum Collection: Sendable, Equatable {
        /// The user's default collection (usually `login`), which persists.
        case `default`
        /// The session collection, kept in memory by the keyring daemon until it exits; for tests and
        /// secrets that must not persist.
        case session
        /// A collection by alias or D-Bus object path.
        case named(String)

        var libsecretName: String {
            switch self {
            case .default: "default"
            case .session: "session"
            case .named(let name): name
            }
        }
    }

    /// The item's `service` attribute.
    public let service: String
    /// The item's `account` attribute.
    public let account: String
    /// The item's label, as keyring managers show it.
    public let label: String
    /// Which collection new items are stored in.
    public let collection: Collection
    /// The longest any call to the Secret Service may take.
    public let timeout: Duration

    private let secretService: SecretService
    private let logger: Logger

    /// Creates a store for the keyring item with attributes `service` and `account`.
    ///
    /// - Parameters:
    ///   - service: The item's `service` attribute, usually the application's reverse-DNS name.
    ///   - account: The item's `account` attribute: which of the application's secrets this is.
    ///   - label: What keyring managers show for the item; `"<service> (<account>)"` by default.
    ///   - collection: ``Collection/default`` (the default) or ``Collection/session`` for secrets that must
    ///     not persist.
    ///   - timeout: The longest any call to the Secret Service may take (5 seconds by default).
    ///   - logger: Where loads, saves and deletions are logged (at debug level); the secret never is.
    public init(
        service: String,
        account: String,
        label: String? = nil,
        collection: Collection = .default,
        timeout: Duration = .seconds(5),
        logger: Logger = Logger(label: "loupe.keyring")
    ) {
        self.service = service
        self.account = account
        self.label = label ?? "\(service) (\(account))"
        self.collection = collection
        self.timeout = timeout
        self.logger = logger
        self.secretService = SecretService(
            service: service, account: account,
            collection: collection == .default ? nil : collection.libsecretName,
            timeout: timeout, storeName: "keyring item service=\(service) account=\(account)")
    }

    /// The largest secret saved, as compact JSON: 1 MiB. Credentials are bytes to kilobytes; a far larger
    /// secret (tens of MiB) makes the Secret Service drop the process's connection for good, so it is
    /// refused before it is sent.
    public static let maximumSecretSize = 1 << 20

    /// Names the item, never its secret.
    public var description: String { "keyring item service=\(service) account=\(account)" }

    /// The codec of the item's secret: compact JSON, through the same parser and writer as every store.
    private static var codec: JSONCodec { JSONCodec(prettyPrinted: false) }

    /// Every value of the item is a secret (the root path): tools mask them, and errors never quote them.
    public var secretPaths: [ValuePath] { [.root] }

    public func load() throws -> StoredDocument {
        guard let secret = try secretService.lookup() else {
            logger.debug("no keyring item yet", metadata: ["item": "\(description)"])
            return .empty
        }
        do {
            return try secret.withBytes { bytes in
                // An empty secret has no address; it is no document either.
                let data =
                    bytes.baseAddress.map {
                        Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: $0), count: bytes.count, deallocator: .none)
                    } ?? Data()
                let document = try Self.codec.parseDocument(data, store: description, quotingValues: false)
                return StoredDocument(document, token: Self.token(of: bytes))
            }
        } catch let error as SettingsError where error.code == .corrupt {
            // Most often a password another program stored in the item (`secret-tool store`): say what
            // the item must hold and how to start afresh, never what it holds.
            throw SettingsError(
                .corrupt, store: description,
                reason:
                    "its secret is not a JSON document (a plain password another program stored?); Loupe keeps a JSON document in its items: delete this one to start afresh (secret-tool clear service \(service) account \(account))",
                cause: error)
        }
    }

    public func save(_ document: JSONValue, replacing token: ChangeToken) throws -> ChangeToken {
        var data: Data
        do {
            data = try Self.codec.serialize(document)
        } catch {
            throw SettingsError(.unwritable, store: description, reason: "cannot write the value as JSON")
        }
        defer { wipe(&data) }
        guard data.count <= Self.maximumSecretSize else {
            throw SettingsError(
                .unwritable, store: description,
                reason:
                    "the value is \(data.count) bytes as JSON, more than a keyring item may hold here (\(Self.maximumSecretSize) bytes); keep large data in a file"
            )
        }
        return try whileUnchanged(since: token) {
            try secretService.store(data, label: label)
            logger.debug("saved keyring item", metadata: ["item": "\(description)"])
            return data.withUnsafeBytes { Self.token(of: $0) }
        }
    }

    public func remove(replacing token: ChangeToken) throws -> ChangeToken {
        try whileUnchanged(since: token) {
            try secretService.clear()
            logger.debug("deleted keyring item", metadata: ["item": "\(description)"])
            return .absent
        }
    }

    /// The item's lock file, held after a conflict.
    public var capabilities: StoreCapabilities { StoreCapabilities(exclusiveAccess: self) }

    /// Holds this item's lock file around `body`.
    public func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R {
        try withLockFile(at: lockFile(), timeout: timeout, store: description, body)
    }

    private func lockFile() throws -> String {
        try userLockDirectory(store: description) + "/keyring-" + Self.lockName(service: service, account: account)
    }

    /// Runs `write` holding this item's lock file, if the item is still what `token` identifies; else a
    /// conflict.
    private func whileUnchanged(since token: ChangeToken, _ write: () throws -> ChangeToken) throws -> ChangeToken {
        try withLockFile(at: lockFile(), timeout: timeout, store: description) {
            let current = try secretService.lookup().map { $0.withBytes(Self.token(of:)) } ?? .absent
            guard current == token else {
                throw SettingsError(
                    .conflict, store: description,
                    reason: "another program changed or deleted the item since it was read")
            }
            return try write()
        }
    }

    /// A token for the item's bytes: a digest keyed for this process (Swift's `Hasher`, seeded at random
    /// in each process), so that it tells versions apart without holding or revealing the secret.
    private static func token(of bytes: UnsafeRawBufferPointer) -> ChangeToken {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        hasher.combine(bytes.count)
        return ChangeToken(Int64(hasher.finalize()))
    }

    /// The lock file's name for an item: the same in every process (FNV-1a of the attributes), so that
    /// every process writing the item takes the same lock, and free of characters a file name cannot hold.
    private static func lockName(service: String, account: String) -> String {
        String(StableDigest.fnv1a(service + "\u{0}" + account), radix: 16) + ".lock"
    }

    private func wipe(_ data: inout Data) {
        data.withUnsafeMutableBytes { bytes in
            if let base = bytes.baseAddress { explicit_bzero(base, bytes.count) }
        }
    }
}

extension KeyringStore: CustomDebugStringConvertible {
    /// The store's type, place and policy, for a debugger; never its value.
    public var debugDescription: String {
        "KeyringStore(service: \(service), account: \(account), collection: \(collection), timeout: \(timeout))"
    }
}
#endif
