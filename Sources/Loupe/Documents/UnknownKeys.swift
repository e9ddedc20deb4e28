/// The parts of a stored document that the type did not read: keys a newer version of the program, an
/// administrator's tool or a person put there. They are put back at their place in every document the
/// root stores, so an older program never loses what a newer one wrote.
///
/// Kept in the document's shape: the unknown keys of an object with their values, and below the known
/// keys that hold objects or arrays, what is unknown there. An unknown key is put back only while the
/// object that held it is still there: a dictionary entry that was removed stays removed, with whatever
/// it held. Elements of an array are matched by index, so their unknown keys are put back only while the
/// array has the length it had when read (an array changed in length is written as the type has it, and
/// the root logs which unknown keys it dropped).
struct UnknownKeys: Sendable, Equatable {
    /// Unknown keys of this object, with their values.
    private(set) var values: [String: JSONValue] = [:]
    /// Known keys of this object whose values hold unknown keys.
    private(set) var children: [String: UnknownKeys] = [:]
    /// Elements of this array that hold unknown keys.
    private(set) var elements: [Int: UnknownKeys] = [:]
    /// This array's length when it was read.
    private(set) var elementCount = 0

    var isEmpty: Bool { values.isEmpty && children.isEmpty && elements.isEmpty }

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
            elementCount = array.count
            for (index, child) in reads.elements where array.indices.contains(index) {
                if let unknown = UnknownKeys(in: array[index], reads: child) { elements[index] = unknown }
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
    mutating func restore(into stored: inout JSONValue?, full: JSONValue, at path: ValuePath = ValuePath([])) -> [ValuePath] {
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
                dropped += child.restore(into: &childStored, full: fullChild, at: ValuePath(path.components + [.key(key)]))
                object[key] = childStored
                children[key] = child.isEmpty ? nil : child
            }
            if stored != nil || !object.isEmpty { stored = .object(object) }
        case .array(let fullArray) where fullArray.count == elementCount:
            guard !elements.isEmpty else { break }
            // Arrays replace whole in a merge patch: one that holds unknown keys is stored whole.
            var array: [JSONValue]
            if case .array(let existing) = stored, existing.count == fullArray.count { array = existing } else { array = fullArray }
            for (index, var child) in elements {
                var element: JSONValue? = array[index]
                dropped += child.restore(into: &element, full: fullArray[index], at: ValuePath(path.components + [.index(index)]))
                array[index] = element ?? fullArray[index]
                elements[index] = child.isEmpty ? nil : child
            }
            stored = .array(array)
        default:
            // The array changed length, or the part changed kind: name each element or part dropped.
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
}
