/// What one encode or write produced, for the next one to reuse where a part has not changed
/// (``DocumentEncoder`` keeps a tree of documents, ``JSONWriter`` the text of large parts by place).
///
/// Each encode or write takes what is kept and keeps, when it is done, exactly what it used or made: what
/// the last one saw. Two at once simply find nothing to reuse.
package final class PartMemo<Content: Sendable>: Sendable {
    private let content = Locked<Content?>(nil)

    package init() {}

    /// Takes what is kept, leaving nothing.
    package func take() -> Content? {
        content.withLock { content in
            defer { content = nil }
            return content
        }
    }

    /// Keeps `kept` for the next one, in place of whatever is there.
    package func keep(_ kept: Content) {
        content.withLock { $0 = kept }
    }
}
