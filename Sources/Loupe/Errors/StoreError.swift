import Foundation

/// A failure of a ``ValueStore``: what went wrong, in which store, and where in the value.
///
/// The message never contains a stored value, so it is safe to log even for stores that hold secrets.
public struct StoreError: Error, Sendable {
    /// What kind of failure this is; callers switch on it, people read ``description``.
    public enum Code: String, Sendable, Equatable {
        /// The stored data exists but cannot be read (permissions, I/O error).
        case unreadable
        /// The stored data was read but is not a valid encoding of the value type.
        case corrupt
        /// The value could not be encoded or written (read-only location, full disk, I/O error).
        case unwritable
        /// The store's backing service is not there or refuses to serve (no keyring, server down, locked).
        case unavailable
        /// Another writer changed the stored value since it was read; the update is retried on the fresh value.
        case conflict
        /// The backing service did not answer in time.
        case timeout
    }

    /// What kind of failure this is.
    public var code: Code
    /// The store, as its `description` names it (for example `file /etc/app/settings.json`).
    public var store: String
    /// The coding path of the offending part, when the failure concerns one part (`server.port`).
    public var codingPath: String?
    /// What happened, in words a user can act on. Never contains a stored value.
    public var reason: String

    /// Creates a store error.
    public init(_ code: Code, store: String, codingPath: String? = nil, reason: String) {
        self.code = code
        self.store = store
        self.codingPath = codingPath
        self.reason = reason
    }
}

extension StoreError: CustomStringConvertible, LocalizedError {
    public var description: String {
        let verb: String
        switch code {
        case .unreadable: verb = "cannot read"
        case .corrupt: verb = "invalid data in"
        case .unwritable: verb = "cannot write"
        case .unavailable: verb = "unavailable:"
        case .conflict: verb = "conflicting write to"
        case .timeout: verb = "timed out talking to"
        }
        if let codingPath, !codingPath.isEmpty {
            return "\(verb) \(store): \(codingPath): \(reason)"
        }
        return "\(verb) \(store): \(reason)"
    }

    public var errorDescription: String? { description }
}
