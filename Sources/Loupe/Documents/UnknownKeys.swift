/// The parts of a stored document that the type did not read: keys a newer version of the program, an
/// administrator's tool or a person put there. They are put back at their place in every document the
/// root stores, so an older program never loses what a newer one wrote.
///
/// Kept in the document's shape: the unknown keys of an object with their values, and below the known
/// keys that hold objects or arrays, what is unknown there. An unknown key is put back only while the
/// object that held it is still there: a dictionary entry that was removed stays removed, with whatever
/// it held. An element of an array keeps its unknown keys as it moves: an element whose known content is
/// unchanged keeps them wherever it goes, and one changed in place (between the same unchanged neighbours,
/// as many changed as before) keeps them too. They are never put on another element: an element removed,
/// or one that cannot be told from others that changed, takes them with it, and the root logs which it
/// dropped.
struct UnknownKeys: Sendable, Equatable {
    /// Unknown keys of this object, with their values.
    private(set) var values: [String: JSONValue] = [:]
    /// Known keys of this object whose values hold unknown keys.
    private(set) var children: [String: UnknownKeys] = [:]
    /// Elements of this array that hold unknown keys.
    private(set) var elements: [Int: UnknownKeys] = [:]
    /// This array's elements as the type knows them (without their unknown keys), when it was read or
    /// last written: what a later array's elements are matched with.
    private(set) var knownElements: [JSONValue] = []
    /// Whether the part is an array (its unknown keys are in its elements).
    private(set) var isArray = false

    var isEmpty: Bool { values.isEmpty && children.isEmpty && elements.isEmpty }

    /// The paths of the unknown keys, under `path`, in no particular order.
    func paths(under path: [ValuePath.Component] = []) -> [ValuePath] {
        values.keys.map { ValuePath(path + [.key($0)]) }
            + children.flatMap { key, child in child.paths(under: path + [.key(key)]) }
            + elements.flatMap { index, child in child.paths(under: path + [.index(index)]) }
    }

    /// What `document` holds that `reads` does not name; nil when everything was read.
    init?(in document: JSONValue, reads: ReadKeys) {
        switch document {
        case .object(let object):
            for (key, value) in object {
                // Leaves first, the most keys: a key read as a leaf holds a scalar, with nothing below it.
                if reads.leaves.contains(key) { continue }
                if let child = reads.children[key] {
                    if let unknown = UnknownKeys(in: value, reads: child) { children[key] = unknown }
                } else {
                    values[key] = value
                }
            }
        case .array(let array):
            isArray = true
            knownElements = array
            for (index, child) in reads.elements where array.indices.contains(index) {
                if let unknown = UnknownKeys(in: array[index], reads: child) {
                    elements[index] = unknown
                    knownElements[index] = unknown.stripped(array[index])
                }
            }
        default:
            break
        }
        if isEmpty { return nil }
    }

    /// Puts the unknown keys back into `stored`, the document (or the merge patch) stored for the value
    /// whose whole document is `full`; `stored` is nil where the patch holds nothing.
    ///
    /// Forgets what it could not put back (its object gone, its array resized) and returns the paths of
    /// what it dropped, so the root's memory of the store matches what was written.
    @discardableResult
    mutating func restore(
        into stored: inout JSONValue?, full: JSONValue, at path: ValuePath = ValuePath([])
    ) -> [ValuePath] {
        var dropped: [ValuePath] = []
        switch full {
        case .object(let fullObject):
            var object: [String: JSONValue]
            if case .object(let existing) = stored { object = existing } else { object = [:] }
            for (key, value) in values {
                // A key the type writes now is the type's, not unknown any more.
                if fullObject[key] == nil { object[key] = value } else { values[key] = nil }
            }
            for (key, var child) in children {
                guard let fullChild = fullObject[key] else {
                    children[key] = nil  // removed, with what it held
                    continue
                }
                var childStored = object[key]
                dropped += child.restore(
                    into: &childStored, full: fullChild, at: ValuePath(path.components + [.key(key)]))
                object[key] = childStored
                children[key] = child.isEmpty ? nil : child
            }
            if stored != nil || !object.isEmpty { stored = .object(object) }
        case .array(let fullArray) where isArray:
            guard !elements.isEmpty else {
                knownElements = fullArray
                break
            }
            // Arrays replace whole in a merge patch: one that holds unknown keys is stored whole.
            var array: [JSONValue]
            if case .array(let existing) = stored, existing.count == fullArray.count {
                array = existing
            } else {
                array = fullArray
            }
            var moved: [Int: UnknownKeys] = [:]
            for (newIndex, oldIndex) in Self.pairs(from: knownElements, to: fullArray) {
                guard var child = elements.removeValue(forKey: oldIndex) else { continue }
                var element: JSONValue? = array[newIndex]
                dropped += child.restore(
                    into: &element, full: fullArray[newIndex], at: ValuePath(path.components + [.index(newIndex)]))
                array[newIndex] = element ?? fullArray[newIndex]
                if !child.isEmpty { moved[newIndex] = child }
            }
            // The rest went with their elements (removed, or not to be told from others that changed).
            dropped += elements.keys.sorted().map { ValuePath(path.components + [.index($0)]) }
            elements = moved
            knownElements = fullArray
            if !moved.isEmpty || stored != nil { stored = .array(array) }
        default:
            // The part changed kind: name each element or part dropped.
            if !elements.isEmpty {
                dropped += elements.keys.sorted().map { ValuePath(path.components + [.index($0)]) }
            } else if !isEmpty {
                dropped.append(path)
            }
            self = UnknownKeys()
        }
        return dropped
    }

    private init() {}

    /// `value` (the part this describes) without its unknown keys: what the type knows of it.
    private func stripped(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(var object):
            for key in values.keys { object[key] = nil }
            for (key, child) in children {
                if let inner = object[key] { object[key] = child.stripped(inner) }
            }
            return .object(object)
        case .array(var array):
            for (index, child) in elements where array.indices.contains(index) {
                array[index] = child.stripped(array[index])
            }
            return .array(array)
        default:
            return value
        }
    }

    /// Which element of `old` each element of `new` is (new index to old index), as far as that can be
    /// told: the elements a difference leaves in place; then an element whose known content is the same as
    /// a removed one's (it moved); then, between the same two elements left in place, removed and inserted
    /// elements as many on each side (changed in place), in order. Anything else is no element of `old`.
    static func pairs(from old: [JSONValue], to new: [JSONValue]) -> [Int: Int] {
        let difference = new.difference(from: old) { $0.isSameDocument(as: $1) }
        var removed = Set<Int>(), inserted = Set<Int>()
        for change in difference {
            switch change {
            case .remove(let offset, _, _): removed.insert(offset)
            case .insert(let offset, _, _): inserted.insert(offset)
            }
        }
        // Left in place: the elements neither removed nor inserted, in order on both sides.
        var pairs: [Int: Int] = [:]
        var anchors: [(old: Int, new: Int)] = [(-1, -1)]
        var oldIndex = 0
        for newIndex in new.indices where !inserted.contains(newIndex) {
            while removed.contains(oldIndex) { oldIndex += 1 }
            pairs[newIndex] = oldIndex
            anchors.append((oldIndex, newIndex))
            oldIndex += 1
        }
        anchors.append((old.count, new.count))
        // Moved: the same known content, removed in one place and inserted in another.
        var unpairedOld = removed.sorted()
        for newIndex in inserted.sorted() {
            if let match = unpairedOld.firstIndex(where: { old[$0].isSameDocument(as: new[newIndex]) }) {
                pairs[newIndex] = unpairedOld.remove(at: match)
            }
        }
        // Changed in place: between two anchors, as many removed as inserted.
        let stillOld = Set(unpairedOld)
        for (start, end) in zip(anchors, anchors.dropFirst()) {
            let olds = (start.old + 1..<end.old).filter { stillOld.contains($0) }
            let news = (start.new + 1..<end.new).filter { inserted.contains($0) && pairs[$0] == nil }
            guard olds.count == news.count else { continue }
            for (oldIndex, newIndex) in zip(olds, news) { pairs[newIndex] = oldIndex }
        }
        return pairs
    }
}
