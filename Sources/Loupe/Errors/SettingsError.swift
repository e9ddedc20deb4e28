#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Every failure Loupe reports: a write that cannot land, a path that names nothing, a store that cannot be
/// read or written.
///
/// Switch on ``code`` (with a `default`: codes may be added); show ``description`` to people. The ``path``
/// says which part of the value the failure concerns and the ``store`` which store, where there is one.
/// A message never contains a value from a store that keeps secrets, so it is safe to log.
///
/// Two errors are equal when they have the same code, path and store; their words and causes are not
/// compared, so a test or a caller never depends on a message's text.
public struct SettingsError: Error, Sendable, Equatable {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Hashable, Sendable {
            // Writes through lenses
            case missingParent, notOptional, reentrantUpdate, outOfRange, locked
            // Paths written as text
            case invalidPath, notFound, invalidValue, notRemovable
            // Stores
            case unreadable, corrupt, unwritable, unavailable, conflict, timeout, readOnly
        }
        let base: Base

        /// The code's name, as written in Swift (`conflict`).
        public var description: String { base.rawValue }

        /// A write through an optional part that is `nil` and has no default, so the write has nowhere to
        /// land. Give the optional part a default with ``MutableLens/withDefault(_:)`` or write the parent first.
        public static let missingParent = Code(base: .missingParent)
        /// A write of `nil` to a part that cannot be removed this way.
        public static let notOptional = Code(base: .notOptional)
        /// An update started from inside another update's closure on the same graph. Updates are serial;
        /// nest the work in the outer closure instead.
        public static let reentrantUpdate = Code(base: .reentrantUpdate)
        /// A value outside what the type allows: a write through an index lens
        /// (``MutableLens/subscript(index:)``) whose element does not exist, or an update whose value breaks
        /// one of the type's rules (``Validated``; the ``RuleViolation`` is the error's ``SettingsError/cause``
        /// and its message the ``SettingsError/reason``).
        public static let outOfRange = Code(base: .outOfRange)
        /// A write to a path an administrator locked (see ``SettingsLock``): it keeps the value of the
        /// layers below the writable one. The `loupe` CLI exits with 77 (`EX_NOPERM`).
        public static let locked = Code(base: .locked)

        /// A path's text is not a valid path.
        public static let invalidPath = Code(base: .invalidPath)
        /// Nothing is at the path; ``SettingsError/parent`` and ``SettingsError/validKeys`` say what is near.
        public static let notFound = Code(base: .notFound)
        /// The value written at the path does not fit the type, or breaks one of its rules.
        public static let invalidValue = Code(base: .invalidValue)
        /// The part at the path is required by the type and cannot be removed.
        public static let notRemovable = Code(base: .notRemovable)

        /// The stored data exists but cannot be read (permissions, I/O error).
        public static let unreadable = Code(base: .unreadable)
        /// The stored data was read but is not a valid document, or not a valid encoding of the value type.
        public static let corrupt = Code(base: .corrupt)
        /// The value could not be encoded or written (read-only location, full disk, I/O error).
        public static let unwritable = Code(base: .unwritable)
        /// The store's backing service is not there or refuses to serve (no keyring, server down, locked).
        public static let unavailable = Code(base: .unavailable)
        /// Another writer changed the stored value since it was read. A store's save throws it, and the
        /// root re-runs the update on the fresh value; an update that keeps meeting it gives up with it.
        public static let conflict = Code(base: .conflict)
        /// The backing service, or another process holding a lock, did not answer in time.
        public static let timeout = Code(base: .timeout)
        /// The store can only be read: a root over it reads and observes, and its writes are refused.
        public static let readOnly = Code(base: .readOnly)
    }

    /// What kind of failure this is.
    public var code: Code
    /// The part of the value the failure concerns (`server.port`), when it concerns one that a path names.
    ///
    /// `nil` for a failure of a whole store, for a path whose text does not parse, and for a lens through a
    /// computed property or a subscript, which no path names (its ``description`` shows it as `[…]`).
    public var path: ValuePath?
    /// The store, as its `description` names it (`JSON file /etc/app/settings.json`), when a store failed.
    public var store: String?
    /// What happened and what to do, in words a user can act on.
    public var reason: String
    /// For ``Code/notFound``: the nearest part that exists.
    public var parent: ValuePath?
    /// For ``Code/notFound``: the keys of ``parent`` (or, for an array, its indices), as paths print them.
    public var validKeys: [String]
    /// The error underneath (a `DecodingError`, a ``RuleViolation``, an HTTP client's error), when there is one.
    public var cause: (any Error)?
    /// The system's error number, when a system call failed.
    public var errno: Int32?
    /// For an error opening a root, the paths (from the root) of the secrets the settings type declares
    /// (``SecretSettings``) that a value, the part at a path, holds: for a tool that prints what the store
    /// holds after the error.
    package var secretPaths: (@Sendable (_ value: JSONValue, _ path: ValuePath) -> [ValuePath])?

    /// Creates a settings error.
    ///
    /// - Parameters:
    ///   - code: What kind of failure this is.
    ///   - path: The part of the value it concerns, if a path names one.
    ///   - store: The store that failed, as its `description` names it.
    ///   - reason: What happened, in words. With a `store`, ``description`` puts the store and the path in
    ///     front of it; without, it is the whole message.
    ///   - parent: For ``Code/notFound``, the nearest part that exists.
    ///   - validKeys: For ``Code/notFound``, the keys of `parent`.
    ///   - cause: The error underneath.
    ///   - errno: The system's error number.
    public init(
        _ code: Code, path: ValuePath? = nil, store: String? = nil, reason: String, parent: ValuePath? = nil,
        validKeys: [String] = [], cause: (any Error)? = nil, errno: Int32? = nil
    ) {
        self.code = code
        self.path = path
        self.store = store
        self.reason = reason
        self.parent = parent
        self.validKeys = validKeys
        self.cause = cause
        self.errno = errno
    }

    /// Two errors are equal when they have the same code, path and store.
    public static func == (lhs: SettingsError, rhs: SettingsError) -> Bool {
        lhs.code == rhs.code && lhs.path == rhs.path && lhs.store == rhs.store
    }
}

extension SettingsError: CustomStringConvertible, LocalizedError {
    /// The message: for a store's failure, what could not be done to which store, at which path, and why
    /// (`invalid data in JSON file /etc/app/settings.json: server.port: expected Int, found String`);
    /// otherwise ``reason``.
    public var description: String {
        guard let store else { return reason }
        let verb: String
        switch code.base {
        case .unreadable: verb = "cannot read"
        case .corrupt: verb = "invalid data in"
        case .unavailable: verb = "unavailable:"
        case .conflict: verb = "conflicting write to"
        case .timeout: verb = "timed out waiting for"
        default: verb = "cannot write"
        }
        if let path, !path.components.isEmpty {
            return "\(verb) \(store): \(path): \(reason)"
        }
        return "\(verb) \(store): \(reason)"
    }

    public var errorDescription: String? { description }
}

// MARK: - The errors Loupe raises

extension SettingsError {
    /// An update whose value breaks one of the type's rules (``Validated``): code ``Code/outOfRange``, the
    /// rule's message as the reason, the ``RuleViolation`` as the cause.
    static func brokenRule(_ violation: RuleViolation) -> SettingsError {
        SettingsError(
            .outOfRange, path: violation.path.components.isEmpty ? nil : violation.path, reason: violation.description,
            cause: violation)
    }

    /// A write through an optional part that is `nil` and has no default.
    static func missingParent(_ path: LensPath, parent: LensPath) -> SettingsError {
        SettingsError(
            .missingParent, path: path.valuePath,
            reason:
                "cannot write \(path): \(parent) is nil and has no default (use withDefault(_:) or set \(parent) first)"
        )
    }

    /// A write of `nil` to a part that cannot be removed.
    static func notOptional(_ path: LensPath, reason: String? = nil) -> SettingsError {
        SettingsError(.notOptional, path: path.valuePath, reason: reason ?? "cannot remove \(path): it is not optional")
    }

    /// An update started from inside another update of the same graph on the same thread.
    static func reentrantUpdate(_ path: LensPath) -> SettingsError {
        SettingsError(
            .reentrantUpdate, path: path.valuePath,
            reason: "cannot update \(path) from inside another update of the same settings on this thread")
    }

    /// An update that gave up after `attempts` conflicting writes.
    static func conflict(_ path: LensPath, attempts: Int, cause: (any Error)?) -> SettingsError {
        SettingsError(
            .conflict, path: path.valuePath,
            reason: "gave up updating \(path): another writer changed it first, \(attempts) times in a row",
            cause: cause)
    }

    /// A write through an index lens to an element the array does not have.
    static func outOfRange(_ path: LensPath, index: Int, count: Int) -> SettingsError {
        SettingsError(
            .outOfRange, path: path.valuePath,
            reason:
                "cannot write \(path): the array has \(count) element\(count == 1 ? "" : "s"), so there is no index \(index)"
        )
    }

    /// A write that would set `path`, which `lock` keeps at the value of the layers below.
    static func locked(_ path: ValuePath, by lock: SettingsLock) -> SettingsError {
        let under =
            lock.path == path ? "it is" : "\(lock.path.components.isEmpty ? "everything" : lock.path.description) is"
        return SettingsError(
            .locked, path: path,
            reason:
                "cannot write \(path): \(under) locked by \(lock.file) (line \(lock.line)); ask an administrator to change it there"
        )
    }

    /// A write to a graph whose store cannot be written.
    static func readOnly(_ path: LensPath, store: String) -> SettingsError {
        SettingsError(.readOnly, path: path.valuePath, reason: "cannot write \(path): \(store) is read-only")
    }

    /// A path whose text does not parse.
    static func invalidPath(_ text: String, reason: String) -> SettingsError {
        SettingsError(.invalidPath, reason: "invalid path \(String(reflecting: text)): \(reason)")
    }

    /// Nothing at `path`; `parent` is the nearest part that exists (described as `shownParent`), `validKeys`
    /// its keys.
    static func notFound(
        _ path: ValuePath, parent: ValuePath, shownParent: String? = nil, validKeys: [String], note: String? = nil
    ) -> SettingsError {
        let shown = shownParent ?? parent.description
        var reason =
            validKeys.isEmpty
            ? "no \(path): \(shown) has nothing inside it"
            : "no \(path): \(shown) has \(validKeys.joined(separator: ", "))"
        if let note { reason += "; \(note)" }
        return SettingsError(.notFound, path: path, reason: reason, parent: parent, validKeys: validKeys)
    }

    /// A value at `path` that the type refuses, for `reason`.
    static func invalidValue(_ path: ValuePath, reason: String, cause: (any Error)? = nil) -> SettingsError {
        SettingsError(.invalidValue, path: path, reason: "\(path): \(reason)", cause: cause)
    }

    /// A part the type requires, which cannot be removed.
    static func notRemovable(_ path: ValuePath) -> SettingsError {
        SettingsError(.notRemovable, path: path, reason: "\(path) is required and cannot be removed")
    }
}

// MARK: - Loupe 2's names

/// The failure of a write through a lens: a ``SettingsError``.
@available(*, deprecated, renamed: "SettingsError", message: "Loupe has one error type; switch on its code")
public typealias LensError = SettingsError

/// A string path that could not be read or written: a ``SettingsError``.
@available(*, deprecated, renamed: "SettingsError", message: "Loupe has one error type; switch on its code")
public typealias PathError = SettingsError

/// The failure of a store: a ``SettingsError``.
@available(*, deprecated, renamed: "SettingsError", message: "Loupe has one error type; switch on its code")
public typealias StoreError = SettingsError

extension SettingsError {
    /// Creates a store's error, with the path as text, as Loupe 2 did.
    @available(*, deprecated, message: "use init(_:path:store:reason:cause:errno:), which takes a ValuePath")
    public init(
        _ code: Code, store: String, codingPath: String?, reason: String, cause: (any Error)? = nil,
        errno: Int32? = nil
    ) {
        self.init(
            code, path: codingPath.flatMap { try? ValuePath(parsing: $0) }, store: store, reason: reason,
            cause: cause, errno: errno)
    }

    /// The path of the offending part, as text, as Loupe 2's `StoreError` had it.
    @available(*, deprecated, renamed: "path")
    public var codingPath: String? { path?.description }
}

extension SettingsError {
    /// The error as a log line may carry it: what failed, in which store, at which path, and the system's
    /// error, but never ``reason``, which may quote a value (a token an outside edit put in the wrong
    /// place, a URL with credentials). The whole error, values and all, goes to the root's
    /// ``RootLens/errors`` and to the caller.
    package var logDescription: String {
        var text = code.description
        if let store { text += " in \(store)" }
        if let path, !path.components.isEmpty { text += " at \(path)" }
        if let errno { text += " (\(String(cString: strerror(errno))))" }
        if let cause = cause as? SystemCallError { text += ": \(cause)" }
        return text
    }
}

/// `error` as a log line may carry it: never a value. A ``SettingsError`` says what failed where (see
/// ``SettingsError/logDescription``); a system call's error says which call failed on which path, and
/// why; any other error only its type, since its text may quote what it was given.
package func logDescription(of error: any Error) -> String {
    switch error {
    case let error as SettingsError: error.logDescription
    case let error as SystemCallError: "\(error)"
    case is CancellationError: "cancelled"
    default: "\(type(of: error)) (its message may hold values, and is not logged)"
    }
}
