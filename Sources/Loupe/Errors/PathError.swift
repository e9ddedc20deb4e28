import Foundation

/// A string path that could not be read or written: a malformed path, a part that does not exist, or a
/// value the Swift type does not accept.
public struct PathError: Error, Sendable, Equatable {
    /// What kind of failure this is. New codes may be added; a `switch` over them needs a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Hashable, Sendable {
            case invalidPath, notFound, invalidValue, notRemovable
        }
        let base: Base

        /// The code's name, as written in Swift (`conflict`).
        public var description: String { base.rawValue }

        /// The path's text is not a valid path.
        public static let invalidPath = Code(base: .invalidPath)
        /// Nothing is at the path.
        public static let notFound = Code(base: .notFound)
        /// The value written at the path does not fit the type.
        public static let invalidValue = Code(base: .invalidValue)
        /// The part at the path is required by the type and cannot be removed.
        public static let notRemovable = Code(base: .notRemovable)
    }

    /// What kind of failure this is.
    public var code: Code
    /// The path, as given (``Code/invalidPath``) or as ``ValuePath`` prints it.
    public var path: String
    /// What is wrong, in words: what was expected and what came, or the nearest part that exists.
    public var reason: String
    /// For ``Code/notFound``: the nearest part that exists, and its keys (or, for an array, its indices).
    public var parent: String?
    /// For ``Code/notFound``: the keys of ``parent``.
    public var validKeys: [String]
    /// The error underneath (a `DecodingError`), when there is one.
    public var cause: (any Error)?

    /// Creates a path error.
    public init(
        _ code: Code, path: String, reason: String, parent: String? = nil, validKeys: [String] = [],
        cause: (any Error)? = nil
    ) {
        self.code = code
        self.path = path
        self.reason = reason
        self.parent = parent
        self.validKeys = validKeys
        self.cause = cause
    }

    /// A path whose text does not parse.
    public static func invalidPath(_ text: String, reason: String) -> PathError {
        PathError(.invalidPath, path: text, reason: "invalid path \(String(reflecting: text)): \(reason)")
    }

    /// Nothing at `path`; `parent` is the nearest part that exists, `validKeys` its keys.
    public static func notFound(path: String, parent: String, validKeys: [String]) -> PathError {
        let reason = validKeys.isEmpty
            ? "no \(path): \(parent) has nothing inside it"
            : "no \(path): \(parent) has \(validKeys.joined(separator: ", "))"
        return PathError(.notFound, path: path, reason: reason, parent: parent, validKeys: validKeys)
    }

    /// A value at `path` that the type refuses, for `reason`.
    public static func invalidValue(path: String, reason: String, cause: (any Error)? = nil) -> PathError {
        PathError(.invalidValue, path: path, reason: "\(path): \(reason)", cause: cause)
    }

    /// A part the type requires, which cannot be removed.
    public static func notRemovable(path: String) -> PathError {
        PathError(.notRemovable, path: path, reason: "\(path) is required and cannot be removed")
    }
}

extension PathError: CustomStringConvertible, LocalizedError {
    public var description: String { reason }
    public var errorDescription: String? { description }
}

extension PathError {
    /// Two errors are equal when they say the same thing; their ``cause``s are not compared.
    public static func == (lhs: PathError, rhs: PathError) -> Bool {
        lhs.code == rhs.code && lhs.path == rhs.path && lhs.reason == rhs.reason && lhs.parent == rhs.parent && lhs.validKeys == rhs.validKeys
    }
}
