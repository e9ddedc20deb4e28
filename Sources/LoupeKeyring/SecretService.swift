#if os(Linux)
import CLibSecret
import Foundation
import Glibc
import Loupe

/// The calls Loupe makes to the freedesktop Secret Service through libsecret.
///
/// Only the non-variadic libsecret functions are used (`secret_password_storev_sync` and friends), with a
/// `GHashTable` of attributes: the variadic ones do not import into Swift.
///
/// Loupe's items have exactly two attributes, `service` and `account`, and are stored without a libsecret
/// schema object (`schema` is NULL). With one, libsecret records its name as an extra `xdg:schema`
/// attribute, and since the Secret Service replaces an item only when *all* attributes match, a save by
/// `secret-tool store service S account A` (which uses no schema) and a save by Loupe would then leave two
/// items side by side, either of which a lookup might return. Without it, each replaces the other's item.
///
/// **Bounded calls.** libsecret's calls are synchronous, and cancelling one does not interrupt every wait
/// inside it: on a bus that never answers, a call returns only after D-Bus's own 25-second timeout. So each
/// call runs on a thread of its own and the caller waits at most `timeout`. If the call has not finished by
/// then, the caller gets `SettingsError/Code/timeout` at once; the call is cancelled and, when libsecret
/// lets it end, frees and wipes what it holds.
struct SecretService: Sendable {
    let service: String
    let account: String
    let collection: String?
    let timeout: Duration
    /// How the store names itself in errors.
    let storeName: String

    /// Stores `secret` (UTF-8 text without NUL bytes), replacing the item with the same attributes.
    /// The call takes its own copy, which it wipes.
    func store(_ secret: Data, label: String) throws {
        let owned = SecretBuffer(secret)
        let collection = collection
        try call("store the item") { attributes, cancellable, error in
            owned.withCString { text in
                secret_password_storev_sync(nil, attributes, collection, label, text, cancellable, &error) != 0
            }
        }
    }

    /// The stored secret, in a buffer that wipes itself, or nil when there is no item.
    ///
    /// - Throws: `SettingsError` with code `unavailable` when the item exists but cannot be read because its
    ///   collection is locked (libsecret's lookup answers "nothing" then, which must not be taken for "no item").
    func lookup() throws -> SecretBuffer? {
        let found = try call("look the item up") { attributes, cancellable, error -> Lookup in
            if let password = secret_password_lookupv_sync(nil, attributes, cancellable, &error) {
                defer { secret_password_free(password) }  // wipes, then frees
                return .found(SecretBuffer(UnsafeRawBufferPointer(start: password, count: strlen(password))))
            }
            guard error == nil else { return .missing }
            // Nothing unlocked matched: see whether a locked item did.
            let items = secret_password_searchv_sync(nil, attributes, SECRET_SEARCH_ALL, cancellable, &error)
            defer { g_list_free_full(items, g_object_unref) }
            return items != nil ? .locked : .missing
        }
        switch found {
        case .found(let secret): return secret
        case .missing: return nil
        case .locked:
            throw SettingsError(
                .unavailable, store: storeName, reason: "the item exists but its keyring collection is locked")
        }
    }

    /// Deletes the item; deleting nothing is not an error.
    func clear() throws {
        try call("delete the item") { attributes, cancellable, error in
            _ = secret_password_clearv_sync(nil, attributes, cancellable, &error)
            return error == nil
        }
    }

    private enum Lookup: Sendable {
        case found(SecretBuffer)
        case missing
        case locked
    }

    /// Runs one libsecret call on a thread of its own, with the item's attributes and a cancellable, and
    /// waits for it at most `timeout`. A `Bool` result of `false` without an error is a refusal.
    @discardableResult
    private func call<T: Sendable>(
        _ what: String,
        _ work:
            @escaping @Sendable (
                _ attributes: OpaquePointer, _ cancellable: UnsafeMutablePointer<GCancellable>,
                _ error: inout UnsafeMutablePointer<GError>?
            ) -> T
    ) throws -> T {
        let cancellable = GObjectReference(g_cancellable_new()!)
        let outcome = Locked<(value: T, error: CallError?)?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let (service, account) = (service, account)
        Thread.detachNewThread {
            let attributes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)!
            defer { g_hash_table_unref(attributes) }
            g_hash_table_insert(attributes, g_strdup("service"), g_strdup(service))
            g_hash_table_insert(attributes, g_strdup("account"), g_strdup(account))
            var error: UnsafeMutablePointer<GError>?
            let value = work(attributes, cancellable.pointer, &error)
            let failure = error.map { CallError($0.pointee) }
            if let error { g_error_free(error) }
            outcome.withLock { $0 = (value, failure) }
            finished.signal()
        }
        guard finished.wait(timeout: .now() + timeout.timeInterval) == .success else {
            g_cancellable_cancel(cancellable.pointer)  // let the abandoned call end as soon as libsecret allows
            throw SettingsError(
                .timeout, store: storeName,
                reason: "the Secret Service did not \(what) within \(timeout) (is it waiting for an unlock prompt?)")
        }
        let (value, failure) = outcome.withLock { $0! }
        if let failure { throw storeError(what, failure) }
        if let succeeded = value as? Bool, !succeeded {
            throw SettingsError(
                .unavailable, store: storeName,
                reason: "the Secret Service refused to \(what) (a prompt was dismissed, or the collection is locked)")
        }
        return value
    }

    private func storeError(_ what: String, _ error: CallError) -> SettingsError {
        if error.isLocked {
            return SettingsError(
                .unavailable, store: storeName, reason: "the keyring collection is locked: \(error.message)")
        }
        if error.isCancelled {
            return SettingsError(
                .timeout, store: storeName, reason: "the Secret Service did not \(what) within \(timeout)")
        }
        return SettingsError(
            .unavailable, store: storeName, reason: "cannot \(what) in the Secret Service: \(error.message)")
    }
}

/// What a failed call said, copied out of its `GError` (which libsecret's messages keep free of secrets).
private struct CallError: Sendable {
    let message: String
    let isLocked: Bool
    let isCancelled: Bool

    init(_ error: GError) {
        message = error.message.map { String(cString: $0) } ?? "unknown error"
        isLocked = error.domain == secret_error_get_quark() && error.code == Int32(SECRET_ERROR_IS_LOCKED.rawValue)
        isCancelled = error.domain == g_io_error_quark() && error.code == Int32(G_IO_ERROR_CANCELLED.rawValue)
    }
}

/// A reference to a GObject, released when the last Swift reference goes.
private final class GObjectReference<T>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<T>
    init(_ pointer: UnsafeMutablePointer<T>) { self.pointer = pointer }
    deinit { g_object_unref(pointer) }
}

/// Secret bytes in memory this process owns, wiped when released.
final class SecretBuffer: @unchecked Sendable {
    private let bytes: UnsafeMutableRawBufferPointer

    init(_ source: some DataProtocol) {
        bytes = .allocate(byteCount: source.count + 1, alignment: 1)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        source.copyBytes(to: bytes)
    }

    deinit {
        explicit_bzero(bytes.baseAddress!, bytes.count)
        bytes.deallocate()
    }

    /// The bytes as a NUL-terminated C string (valid only inside `body`).
    func withCString<R>(_ body: (UnsafePointer<CChar>) -> R) -> R {
        body(bytes.baseAddress!.assumingMemoryBound(to: CChar.self))
    }

    /// The bytes without the terminating NUL (valid only inside `body`).
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - 1)]))
    }
}

extension Duration {
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
#endif
