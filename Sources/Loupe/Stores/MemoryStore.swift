/// A store that keeps its document in memory only: for tests, previews, and state that must not outlive
/// the process.
///
/// ```swift
/// let root = try RootLens(default: Settings(), store: MemoryStore())
/// ```
///
/// It goes through the document pipeline like any store, so what a test sees through it is what a file
/// would hold. For a graph with no store at all, use `RootLens.init(_:)`.
public final class MemoryStore: WritableDocumentStore {
    private let document: Locked<JSONValue?>

    /// Creates a store that holds `document`, or nothing (the root then starts from its default).
    public init(_ document: JSONValue? = nil) {
        self.document = Locked(document)
    }

    public func load() throws -> JSONValue? {
        document.value
    }

    public func save(_ document: JSONValue) throws {
        self.document.withLock { $0 = document }
    }

    public func remove() throws {
        document.withLock { $0 = nil }
    }

    public var description: String { "memory store" }
}
