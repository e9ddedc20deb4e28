import Foundation

/// An update that cannot be applied to the value graph, named by the path of the lens that tried it.
///
/// Paths are written the way ``ValuePath`` prints them (`protection.enabled`, `items[3]`); the root itself
/// is `<root>`. Switch on ``code``; show ``description`` to people.
public struct LensError: Error, Sendable, Equatable {
    /// What kind of failure this is. New codes may be added; a `switch` over them needs a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Hashable, Sendable {
            case missingParent, notOptional, reentrantUpdate, conflict, outOfRange, readOnly, locked
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
        /// The store kept reporting that another writer changed the value first (see
        /// ``StoreError/Code/conflict``), and the update gave up.
        public static let conflict = Code(base: .conflict)
        /// A write through an index lens (``MutableLens/subscript(index:)``) whose element does not exist.
        public static let outOfRange = Code(base: .outOfRange)
        /// A write to a graph whose store cannot be written (a read-only store).
        public static let readOnly = Code(base: .readOnly)
        /// A write to a path an administrator locked (see ``SettingsLock``): it keeps the value of the
        /// layers below the writable one. The `loupe` CLI exits with 77 (`EX_NOPERM`).
        public static let locked = Code(base: .locked)
    }

    /// What kind of failure this is.
    public var code: Code
    /// The path of the lens the error concerns.
    public var path: String
    /// What happened and what to do, in words.
    public var reason: String
    /// The error underneath, when there is one.
    public var cause: (any Error)?

    /// Creates a lens error.
    public init(_ code: Code, path: String, reason: String, cause: (any Error)? = nil) {
        self.code = code
        self.path = path
        self.reason = reason
        self.cause = cause
    }

    /// A write through an optional part that is `nil` and has no default.
    public static func missingParent(path: String, parent: String) -> LensError {
        LensError(
            .missingParent, path: path,
            reason: "cannot write \(path): \(parent) is nil and has no default (use withDefault(_:) or set \(parent) first)")
    }

    /// A write of `nil` to a part that cannot be removed.
    public static func notOptional(path: String) -> LensError {
        LensError(.notOptional, path: path, reason: "cannot remove \(path): it is not optional")
    }

    /// An update started from inside another update of the same graph on the same thread.
    public static func reentrantUpdate(path: String) -> LensError {
        LensError(
            .reentrantUpdate, path: path,
            reason: "cannot update \(path) from inside another update of the same settings on this thread")
    }

    /// An update that gave up after `attempts` conflicting writes.
    public static func conflict(path: String, attempts: Int, cause: (any Error)?) -> LensError {
        LensError(
            .conflict, path: path,
            reason: "gave up updating \(path): another writer changed it first, \(attempts) times in a row", cause: cause)
    }

    /// A write through an index lens to an element the array does not have.
    public static func outOfRange(path: String, index: Int, count: Int) -> LensError {
        LensError(
            .outOfRange, path: path,
            reason: "cannot write \(path): the array has \(count) element\(count == 1 ? "" : "s"), so there is no index \(index)")
    }

    /// A write that would set `path`, which `lock` keeps at the value of the layers below.
    public static func locked(path: String, by lock: SettingsLock) -> LensError {
        let under = lock.path.description == path ? "it is" : "\(lock.path.description.isEmpty ? "everything" : lock.path.description) is"
        return LensError(
            .locked, path: path,
            reason: "cannot write \(path): \(under) locked by \(lock.file) (line \(lock.line)); ask an administrator to change it there")
    }

    /// A write to a graph whose store cannot be written.
    public static func readOnly(path: String, store: String) -> LensError {
        LensError(.readOnly, path: path, reason: "cannot write \(path): \(store) is read-only")
    }
}

extension LensError: CustomStringConvertible, LocalizedError {
    public var description: String { reason }
    public var errorDescription: String? { description }
}

extension LensError {
    /// Two errors are equal when they say the same thing; their ``cause``s are not compared.
    public static func == (lhs: LensError, rhs: LensError) -> Bool {
        lhs.code == rhs.code && lhs.path == rhs.path && lhs.reason == rhs.reason
    }
}
