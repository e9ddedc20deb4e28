/// Where a lens writes through one entry of a dictionary with `String` keys that is a stored property of
/// the root (`root[\.groups["group-100"]]`, `root.groups["group-100"]`): the dictionary's key path, and the
/// entry's key.
///
/// A write through such a lens changes that entry and nothing else of the root: a stored property is
/// changed only by the write, and a dictionary's subscript changes only its key's entry. So an update
/// through the lens tells the encoder which member of the dictionary it wrote (a ``DictionaryEntryWrite``),
/// and the encoder encodes that member alone instead of comparing all of them.
///
/// Found by key path equality, never by a key path's printed form: the key path is matched against the
/// dictionary's key path followed by its subscript for each key the dictionary holds. A stored property
/// with observers (`didSet`) is written through its setter, and its key path equals no chain of stored
/// properties, so a write through one (which may change anything) has no route.
///
/// Not generic over the root (the key path is a root's, whatever its type): an update of a root of a type
/// from another module, in generic code, passes one without looking up the metadata of a generic type.
struct DictionaryEntryRoute: @unchecked Sendable {  // immutable: a key path and a string
    /// The dictionary, from the root.
    let dictionary: AnyKeyPath
    let key: String

    /// What a write through the route made of `before`: the dictionary as it was and as it is.
    func write<Root>(from before: Root, to after: Root) -> DictionaryEntryWrite? {
        guard let was = before[keyPath: dictionary], let now = after[keyPath: dictionary] else { return nil }
        return DictionaryEntryWrite(before: was, after: now, key: key)
    }

    /// The route of `keyPath`, or nil when it writes through no entry of a dictionary that is a stored
    /// property of the root, or through the entry of a key the dictionary in `root` does not hold.
    ///
    /// A route once found is kept, per key path. Finding one tries each key of each dictionary of `String`
    /// keys among the root's stored properties (up to ``maximumTries`` in all): a lens does it at its first
    /// update.
    ///
    /// Only the root's own stored properties are searched: a key path joined from reflected ones
    /// (`\.inner` then `\Inner.table`) reads wrong memory under the thread sanitizer's runtime, while the
    /// root's own reflected key paths, read and joined to a subscript, read right. A dictionary deeper in
    /// the graph is walked by the encoder.
    static func of<Root>(_ keyPath: PartialKeyPath<Root>, in root: Root) -> DictionaryEntryRoute? {
        // Stored properties alone (a key path with an offset) go through no subscript.
        guard MemoryLayout<Root>.offset(of: keyPath) == nil else { return nil }
        if let known = foundRoutes.withLock({ $0[keyPath] }) { return known }
        var tries = 0
        for field in StoredField.all(of: Root.self) {
            guard tries < maximumTries else { return nil }
            tries += 1
            guard let dictionary = field.valueType as? any DictionaryWithStringKeys.Type,
                let path = field.keyPath as? PartialKeyPath<Root>,
                let route = dictionary.route(of: keyPath, through: path, in: root, tries: &tries)
            else { continue }
            foundRoutes.withLock { $0[keyPath] = route }
            return route
        }
        return nil
    }

    /// How many key paths a search builds and compares at most, across all the dictionaries it tries.
    static var maximumTries: Int { 1024 }
}

/// The routes found, by key path.
private let foundRoutes = Locked<[AnyKeyPath: DictionaryEntryRoute]>([:])

/// A dictionary with `String` keys, whose entries a route can name.
private protocol DictionaryWithStringKeys {
    /// The route of `target` when it is `prefix` (a key path to a dictionary of this type) followed by the
    /// subscript of a key the dictionary in `root` holds.
    static func route<Root>(
        of target: PartialKeyPath<Root>, through prefix: PartialKeyPath<Root>, in root: Root, tries: inout Int
    ) -> DictionaryEntryRoute?
}

extension Dictionary: DictionaryWithStringKeys where Key == String {
    fileprivate static func route<Root>(
        of target: PartialKeyPath<Root>, through prefix: PartialKeyPath<Root>, in root: Root, tries: inout Int
    ) -> DictionaryEntryRoute? {
        guard type(of: target).valueType == Value?.self, let dictionary = prefix as? WritableKeyPath<Root, Self>
        else { return nil }
        for key in root[keyPath: dictionary].keys {
            guard tries < DictionaryEntryRoute.maximumTries else { return nil }
            tries += 1
            let entry: WritableKeyPath<Self, Value?> = \.[key]
            if dictionary.appending(path: entry) == target {
                return DictionaryEntryRoute(dictionary: dictionary, key: key)
            }
        }
        return nil
    }
}

/// What an update wrote through a ``DictionaryEntryRoute``: the dictionary before the write and after it,
/// and the entry's key. The encoder, finding the dictionary it encodes to be `after` and the one it
/// encoded last to be `before` (the same storage, compared by their bytes), encodes the entry alone.
///
/// A class: an update through no route passes a nil reference down the commit, not a large optional.
final class DictionaryEntryWrite {
    let before: Any
    let after: Any
    let key: String

    init(before: Any, after: Any, key: String) {
        self.before = before
        self.after = after
        self.key = key
    }
}
