/// What one encode or write produced for the large parts of a document, by place, for the next one to
/// reuse where a part has not changed (``DocumentEncoder`` keeps documents, ``JSONWriter`` text).
///
/// Each encode or write takes every entry and keeps, when it is done, exactly the entries it used or made:
/// what the last one saw. Two at once simply find nothing to reuse.
final class PartMemo<Entry: Sendable>: Sendable {
    private let entries = Locked<[String: Entry]>([:])

    init() {}

    /// Takes every entry, leaving none.
    func take() -> [String: Entry] {
        entries.withLock { entries in
            defer { entries = [:] }
            return entries
        }
    }

    /// Keeps `kept` for the next one, in place of whatever is there.
    func keep(_ kept: [String: Entry]) {
        entries.withLock { $0 = kept }
    }
}
