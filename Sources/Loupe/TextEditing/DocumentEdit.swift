/// One change that turns a stored document into the next: the edit model every text format is edited by.
///
/// The list is worked out once, from the document a file holds and the document to store
/// (``changes(from:to:)``), and each format's editor turns each edit into splices of the file's text in the
/// style of the container it lands in. Paths name places in the *old* document: an edit says where in the
/// text as it stands something changes, which is what an editor that reads that text can find.
///
/// - An object's members are edited by key: a member that changes is replaced (or walked into, when both
///   values are objects or both arrays), a member that goes is removed, a new member is added after the
///   last (new members in the order of their keys).
/// - An array's elements are edited by position: elements are lined up by a difference of the two arrays
///   (`CollectionDifference`), so removing one element of eleven removes that element and keeps the ten
///   others where they are; an element removed where another is inserted counts as that element changed.
package enum DocumentEdit: Sendable, Equatable {
    /// The value at the path (a member, an element, or the root) becomes `value`.
    case replace(at: [ValuePath.Component], with: JSONValue)
    /// The object at the path gains the member `key`, after its last member.
    case addMember(in: [ValuePath.Component], key: String, value: JSONValue)
    /// The object at the path loses its member `key`.
    case removeMember(in: [ValuePath.Component], key: String)
    /// The array at the path gains `value` before its element `before` (its count: after its last). Elements
    /// added before the same element are in the new array's order.
    case addElement(in: [ValuePath.Component], before: Int, value: JSONValue)
    /// The array at the path loses its element `index`.
    case removeElement(in: [ValuePath.Component], index: Int)

    /// The path of the value the edit changes: the replaced value, or the object or array that gains or
    /// loses an entry.
    package var path: [ValuePath.Component] {
        switch self {
        case .replace(let path, _), .addMember(let path, _, _), .removeMember(let path, _),
            .addElement(let path, _, _), .removeElement(let path, _):
            path
        }
    }

    /// The edits that turn `old` into `new`; empty when they are the same document.
    package static func changes(from old: JSONValue, to new: JSONValue) -> [DocumentEdit] {
        var edits: [DocumentEdit] = []
        collect(from: old, to: new, at: [], into: &edits)
        return edits
    }

    private static func collect(
        from old: JSONValue, to new: JSONValue, at path: [ValuePath.Component], into edits: inout [DocumentEdit]
    ) {
        // A part the encoder did not make again shares its storage with the old document's: it is the same.
        if old.isShared(with: new) { return }
        switch (old, new) {
        case (.object(let before), .object(let after)):
            collectMembers(from: before, to: after, at: path, into: &edits)
        case (.array(let before), .array(let after)):
            collectElements(from: before, to: after, at: path, into: &edits)
        default:
            if !old.isSameValue(as: new) { edits.append(.replace(at: path, with: new)) }
        }
    }

    private static func collectMembers(
        from before: [String: JSONValue], to after: [String: JSONValue], at path: [ValuePath.Component],
        into edits: inout [DocumentEdit]
    ) {
        func changed(_ key: String, from was: JSONValue, to now: JSONValue) {
            if !was.isShared(with: now), !was.isSameValue(as: now) {
                collect(from: was, to: now, at: path.appending(.key(key)), into: &edits)
            }
        }
        // An object the encoder copied to change some of its members holds its keys in the old one's order:
        // the two are walked side by side as long as their keys line up, and the rest by looking keys up.
        var lined = 0
        if before.count == after.count {
            for ((key, was), (otherKey, now)) in zip(before, after) {
                guard key == otherKey else { break }
                changed(key, from: was, to: now)
                lined += 1
            }
            if lined == before.count { return }  // the same keys: none added, none removed
        }
        for (key, was) in before.dropFirst(lined) {
            if let now = after[key] {
                changed(key, from: was, to: now)
            } else {
                edits.append(.removeMember(in: path, key: key))
            }
        }
        for key in after.keys.filter({ before[$0] == nil }).sorted() {
            edits.append(.addMember(in: path, key: key, value: after[key]!))
        }
    }

    private static func collectElements(
        from before: [JSONValue], to after: [JSONValue], at path: [ValuePath.Component],
        into edits: inout [DocumentEdit]
    ) {
        func changed(_ index: Int, to value: JSONValue) {
            collect(from: before[index], to: value, at: path.appending(.index(index)), into: &edits)
        }
        if before.count == after.count {
            for index in before.indices where !before[index].isSameValue(as: after[index]) {
                changed(index, to: after[index])
            }
            return
        }
        // What the two arrays share at their ends stays; the elements between are lined up.
        var head = 0
        while head < min(before.count, after.count), before[head].isSameValue(as: after[head]) { head += 1 }
        var tail = 0
        while tail < min(before.count, after.count) - head,
            before[before.count - 1 - tail].isSameValue(as: after[after.count - 1 - tail])
        { tail += 1 }
        let old = head..<(before.count - tail)
        let new = head..<(after.count - tail)
        // A difference takes time in proportion to the elements times the changes: beyond a few thousand
        // elements between the shared ends, the elements are lined up by position instead (each changed in
        // place, the rest added or removed at the end), so that no edit is slower than linear.
        guard old.count <= Self.alignedElements, new.count <= Self.alignedElements else {
            let common = min(old.count, new.count)
            for offset in 0..<common
            where !before[old.lowerBound + offset].isSameValue(as: after[new.lowerBound + offset]) {
                changed(old.lowerBound + offset, to: after[new.lowerBound + offset])
            }
            for index in (old.lowerBound + common)..<old.upperBound {
                edits.append(.removeElement(in: path, index: index))
            }
            for index in (new.lowerBound + common)..<new.upperBound {
                edits.append(.addElement(in: path, before: old.upperBound, value: after[index]))
            }
            return
        }
        let difference = after[new].difference(from: before[old]) { $0.isSameValue(as: $1) }
        var removed = Set<Int>()
        var inserted = Set<Int>()
        for change in difference {
            switch change {
            case .remove(let offset, _, _): removed.insert(offset)
            case .insert(let offset, _, _): inserted.insert(offset)
            }
        }
        var (oldIndex, newIndex) = (old.lowerBound, new.lowerBound)
        while oldIndex < old.upperBound || newIndex < new.upperBound {
            let isRemoved = oldIndex < old.upperBound && removed.contains(oldIndex - old.lowerBound)
            let isInserted = newIndex < new.upperBound && inserted.contains(newIndex - new.lowerBound)
            switch (isRemoved, isInserted) {
            case (true, true):
                changed(oldIndex, to: after[newIndex])
                oldIndex += 1
                newIndex += 1
            case (true, false):
                edits.append(.removeElement(in: path, index: oldIndex))
                oldIndex += 1
            case (false, true):
                edits.append(.addElement(in: path, before: oldIndex, value: after[newIndex]))
                newIndex += 1
            case (false, false):
                oldIndex += 1
                newIndex += 1
            }
        }
    }

    /// The most elements between two arrays' shared ends that are lined up by a difference.
    static let alignedElements = 2_000
}

extension JSONValue {
    /// Whether this and `other` are the same value as a reader of any format sees it: numbers by their
    /// value, whatever case holds them (`1`, `1.0`; an exact number by its text's value), NaN the same as
    /// NaN, objects whatever their keys' order. Every write compares what it reads back with the document
    /// it meant this way before it replaces a file.
    public func isSameValue(as other: JSONValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.integer(let a), .double(let b)), (.double(let b), .integer(let a)):
            return Double(exactly: a) == b && Int(exactly: b) == a
        case (.exactNumber(let a), .exactNumber(let b)): return a == b || Self.sameNumber(a, b)
        case (.exactNumber(let text), .integer(let number)), (.integer(let number), .exactNumber(let text)):
            return Self.sameNumber(text, String(number))
        case (.exactNumber(let text), .double(let number)), (.double(let number), .exactNumber(let text)):
            return Double(text) == number && Self.sameNumber(text, "\(number)")
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isSameValue(as: $1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count
                && a.allSatisfy { key, value in b[key].map { value.isSameValue(as: $0) } ?? false }
        default: return false
        }
    }

    /// Whether two numbers' texts spell the same value: compared as decimals, which hold any spelling of a
    /// settings file's numbers exactly enough to tell two apart.
    private static func sameNumber(_ a: String, _ b: String) -> Bool {
        guard let x = ExactDecimal(a), let y = ExactDecimal(b) else { return false }
        return x == y
    }

    /// The first place, in document order, where this document and `other` differ as values
    /// (``isSameValue(as:)``); nil where they are the same.
    package func firstDifference(from other: JSONValue) -> ValuePath? {
        func walk(_ a: JSONValue, _ b: JSONValue, _ path: [ValuePath.Component]) -> [ValuePath.Component]? {
            switch (a, b) {
            case (.object(let x), .object(let y)):
                for key in Set(x.keys).union(y.keys).sorted() {
                    guard let p = x[key], let q = y[key] else { return path.appending(.key(key)) }
                    if let found = walk(p, q, path.appending(.key(key))) { return found }
                }
                return nil
            case (.array(let x), .array(let y)):
                for index in 0..<max(x.count, y.count) {
                    guard index < x.count, index < y.count else { return path.appending(.index(index)) }
                    if let found = walk(x[index], y[index], path.appending(.index(index))) { return found }
                }
                return nil
            default:
                return a.isSameValue(as: b) ? nil : path
            }
        }
        return walk(self, other, []).map(ValuePath.init)
    }
}

/// A decimal number's value as a sign, its significant digits and a power of ten, so that two spellings of
/// one number (`1e2`, `100`, `100.0`) compare equal without rounding.
private struct ExactDecimal: Equatable {
    let negative: Bool
    let digits: [UInt8]
    let exponent: Int

    init?(_ text: String) {
        var bytes = Substring(text).utf8[...]
        var negative = false
        if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        var digits: [UInt8] = []
        var exponent = 0
        var seenPoint = false
        var seenDigit = false
        while let byte = bytes.first, byte != UInt8(ascii: "e"), byte != UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if byte == UInt8(ascii: ".") {
                guard !seenPoint else { return nil }
                seenPoint = true
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                seenDigit = true
                digits.append(byte)
                if seenPoint { exponent -= 1 }
            } else if byte != UInt8(ascii: "_") {
                return nil
            }
        }
        guard seenDigit else { return nil }
        if !bytes.isEmpty {
            guard let power = Int(Substring(bytes.dropFirst())) else { return nil }
            exponent += power
        }
        while let first = digits.first, first == UInt8(ascii: "0") { digits.removeFirst() }
        while let last = digits.last, last == UInt8(ascii: "0") {
            digits.removeLast()
            exponent += 1
        }
        if digits.isEmpty { (negative, exponent) = (false, 0) }
        self.negative = negative
        self.digits = digits
        self.exponent = exponent
    }
}
