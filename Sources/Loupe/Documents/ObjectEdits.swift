/// The objects an encode made from the last document's by setting or removing a few members: for the
/// update being saved, a walk of such an object beside the one it was made from (in either order) visits
/// those members alone.
///
/// The walks that find what an update changed (the stored document's keys and spellings, a codec's edit
/// of its text) compare two objects member by member, passing over members that share their storage.
/// When the encoder made one object from the other by setting or removing keys (a dictionary's entry
/// written, or the few members of a dictionary that changed), every other member is the same storage in
/// both, so the walk needs only those keys. An edit is found by the storage of both objects (compared by
/// their bytes, as ``JSONValue/isShared(with:)`` does), never by place, so it is right wherever those two
/// objects meet; each edit holds both objects, so their storage cannot be reused for others while it
/// lives.
///
/// Bound for the save of one update (``GraphCore``), in a task-local value, so that a store's codec finds
/// it without its contract changing; a walk with none bound, or of objects no edit names, walks them
/// whole.
package struct ObjectEdits: Sendable {
    /// `after` is `before` with the members under `keys` set or removed.
    struct Edit: Sendable {
        let before: [String: JSONValue]
        let after: [String: JSONValue]
        let keys: [String]
    }

    private(set) var edits: [Edit] = []

    /// The edits of the update being saved.
    @TaskLocal package static var current = ObjectEdits()

    /// Notes that `after` is `before` with the members under `keys` set or removed.
    mutating func note(from before: [String: JSONValue], to after: [String: JSONValue], keys: [String]) {
        edits.append(Edit(before: before, after: after, keys: keys))
    }

    /// The keys that may differ between `a` and `b`, when one was made from the other by an edit.
    func keys(between a: [String: JSONValue], and b: [String: JSONValue]) -> [String]? {
        for edit in edits {
            if haveSameBytes(edit.after, a) && haveSameBytes(edit.before, b) { return edit.keys }
            if haveSameBytes(edit.before, a) && haveSameBytes(edit.after, b) { return edit.keys }
        }
        return nil
    }
}
