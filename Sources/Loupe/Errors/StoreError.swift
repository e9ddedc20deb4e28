#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A failure of a store: what went wrong, in which store, and where in the value.
///
/// The message never contains a value from a store that keeps secrets, so it is safe to log.
public struct StoreError: Error, Sendable, Equatable {
    /// What kind of failure this is; callers switch on it (with a `default`: codes may be added), people
    /// read ``description``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Hashable, Sendable {
            case unreadable, corrupt, unwritable, unavailable, conflict, timeout, readOnly
        }
        let base: Base

        /// The code's name, as written in Swift (`conflict`).
        public var description: String { base.rawValue }

        /// The stored data exists but cannot be read (permissions, I/O error).
        public static let unreadable = Code(base: .unreadable)
        /// The stored data was read but is not a valid document, or not a valid encoding of the value type.
        public static let corrupt = Code(base: .corrupt)
        /// The value could not be encoded or written (read-only location, full disk, I/O error).
        public static let unwritable = Code(base: .unwritable)
        /// The store's backing service is not there or refuses to serve (no keyring, server down, locked).
        public static let unavailable = Code(base: .unavailable)
        /// Another writer changed the stored value since it was read; the update is retried on the fresh value.
        public static let conflict = Code(base: .conflict)
        /// The backing service, or another process holding a lock, did not answer in time.
        public static let timeout = Code(base: .timeout)
        /// The store can only be read: a root over it reads and observes, and its writes are refused.
        public static let readOnly = Code(base: .readOnly)
    }

    /// What kind of failure this is.
    public var code: Code
    /// The store, as its `description` names it (for example `JSON file /etc/app/settings.json`).
    public var store: String
    /// The path of the offending part, when the failure concerns one part (`server.port`).
    public var codingPath: String?
    /// What happened, in words a user can act on.
    public var reason: String
    /// The error underneath (a `DecodingError`, an HTTP client's error), when there is one.
    public var cause: (any Error)?
    /// The system's error number, when a system call failed.
    public var errno: Int32?

    /// Creates a store error.
    public init(
        _ code: Code, store: String, codingPath: String? = nil, reason: String, cause: (any Error)? = nil,
        errno: Int32? = nil
    ) {
        self.code = code
        self.store = store
        self.codingPath = codingPath
        self.reason = reason
        self.cause = cause
        self.errno = errno
    }
}

extension StoreError: CustomStringConvertible, LocalizedError {
    public var description: String {
        let verb: String
        switch code.base {
        case .unreadable: verb = "cannot read"
        case .corrupt: verb = "invalid data in"
        case .unwritable: verb = "cannot write"
        case .unavailable: verb = "unavailable:"
        case .conflict: verb = "conflicting write to"
        case .timeout: verb = "timed out waiting for"
        case .readOnly: verb = "cannot write"
        }
        if let codingPath, !codingPath.isEmpty {
            return "\(verb) \(store): \(codingPath): \(reason)"
        }
        return "\(verb) \(store): \(reason)"
    }

    public var errorDescription: String? { description }
}

extension StoreError {
    /// Two errors are equal when they say the same thing; their ``cause``s are not compared.
    public static func == (lhs: StoreError, rhs: StoreError) -> Bool {
        lhs.code == rhs.code && lhs.store == rhs.store && lhs.codingPath == rhs.codingPath && lhs.reason == rhs.reason && lhs.errno == rhs.errno
    }
}
