/// A store that keeps its document in memory only: for tests, previews, and state that must not outlive
/// the process.
///
/// ```swift
/// let root = try RootLens(default: Settings(), store: MemoryStore())
/// ```
///
/// It goes through the document pipeline like any store, so what a test sees through it is what a file
/// would hold. Its token is a count of its saves, so two roots over one `MemoryStore` never lose each
/// other's updates. For a graph with no store at all, use `RootLens.init(_:)`.
public final class MemoryStore: DocumentStore {
    private let state: Locked<(document: JSONValue?, generation: Int64)>

    /// Creates a store that holds `document`, or nothing (the root then starts from its default).
    public init(_ document: JSONValue? = nil) {
        state = Locked((document, 0))
    }

    public func load() throws -> StoredDocument {
        let (document, generation) = state.value
        return StoredDocument(document, token: ChangeToken(generation))
    }

    public func save(_ document: JSONValue, replacing token: ChangeToken) throws -> ChangeToken {
        try replace(token, with: document)
    }

    public func remove(replacing token: ChangeToken) throws -> ChangeToken {
        try replace(token, with: nil)
    }

    private func replace(_ token: ChangeToken, with document: JSONValue?) throws -> ChangeToken {
        try state.withLock { state in
            guard token == ChangeToken(state.generation) else {
                throw SettingsError(.conflict, store: description, reason: "another writer saved since it was read")
            }
            state = (document, state.generation + 1)
            return ChangeToken(state.generation)
        }
    }

    public var description: String { "memory store" }
}
