import Foundation

/// An update that cannot be applied to the value graph, named by the path of the lens that tried it.
///
/// Paths are written the way Swift spells them from the root, for example `protection.enabled` or
/// `features["beta"]`; the root itself is `<root>`.
public enum LensError: Error, Sendable, Equatable {
    /// A write through an optional part that is `nil` and has no default, so the write has nowhere to land.
    ///
    /// Give the optional part a default with ``MutableLens/withDefault(_:)`` or write the parent first.
    case missingParent(path: String, parent: String)

    /// A write of `nil` to a part that is not optional.
    case notOptional(path: String)

    /// An update started from inside another update's closure on the same lens graph.
    ///
    /// Updates are serial; nest the work in the outer closure instead.
    case reentrantUpdate(path: String)

    /// An operation that only the root lens can perform, such as ``MutableLens/remove()``.
    case notRoot(path: String, operation: String)

    /// The store kept reporting that another writer changed the value first (see ``StoreError/Code/conflict``),
    /// and the update gave up after `attempts` tries.
    case conflict(path: String, attempts: Int)

    /// The path of the lens the error concerns.
    public var path: String {
        switch self {
        case .missingParent(let path, _), .notOptional(let path), .reentrantUpdate(let path),
            .notRoot(let path, _), .conflict(let path, _):
            path
        }
    }
}

extension LensError: CustomStringConvertible, LocalizedError {
    public var description: String {
        switch self {
        case .missingParent(let path, let parent):
            "cannot write \(path): \(parent) is nil and has no default (use withDefault(_:) or set \(parent) first)"
        case .notOptional(let path):
            "cannot remove \(path): it is not optional"
        case .reentrantUpdate(let path):
            "cannot update \(path) from inside another update of the same settings on this thread"
        case .notRoot(let path, let operation):
            "\(operation) works on the root lens only, not on \(path)"
        case .conflict(let path, let attempts):
            "gave up updating \(path): another writer changed it first, \(attempts) times in a row"
        }
    }

    public var errorDescription: String? { description }
}
