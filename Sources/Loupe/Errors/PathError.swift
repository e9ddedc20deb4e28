import Foundation

/// A string path that could not be read or written: a malformed path, a part that does not exist, or a
/// value the Swift type does not accept.
public enum PathError: Error, Sendable, Equatable {
    /// The path's text is not a valid path.
    case invalidPath(String, reason: String)
    /// Nothing is at `path`. `parent` is the nearest part that exists, and `validKeys` its keys (or, for
    /// an array, its valid indices).
    case notFound(path: String, parent: String, validKeys: [String])
    /// The value written at `path` does not fit the type: `reason` says what was expected and what came.
    case invalidValue(path: String, reason: String)
    /// The part at `path` is required by the type and cannot be removed.
    case notRemovable(path: String)
}

extension PathError: CustomStringConvertible, LocalizedError {
    public var description: String {
        switch self {
        case .invalidPath(let text, let reason):
            "invalid path \(String(reflecting: text)): \(reason)"
        case .notFound(let path, let parent, let validKeys):
            validKeys.isEmpty
                ? "no \(path): \(parent) has nothing inside it"
                : "no \(path): \(parent) has \(validKeys.joined(separator: ", "))"
        case .invalidValue(let path, let reason):
            "\(path): \(reason)"
        case .notRemovable(let path):
            "\(path) is required and cannot be removed"
        }
    }

    public var errorDescription: String? { description }
}
