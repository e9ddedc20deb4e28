/// JSON Merge Patch (RFC 7386): how a stored document lies over the defaults, and how the document to
/// store is found.
///
/// `merging(patch:)`: objects merge key by key, a `null` removes a key, anything else replaces whole
/// (arrays included). `mergePatch(to:)` is the smallest patch that turns this document into another: the
/// keys whose values differ (recursively, for objects on both sides), and `null` for keys that are gone.
extension JSONValue {
    /// This document with `patch` applied, as RFC 7386 defines it.
    ///
    /// ```swift
    /// let defaults: JSONValue = try JSONValue(parsing: #"{"port": 80, "tls": {"on": false, "ciphers": "any"}}"#)
    /// defaults.merging(patch: try JSONValue(parsing: #"{"tls": {"on": true}}"#))
    /// // {"port": 80, "tls": {"on": true, "ciphers": "any"}}
    /// ```
    public func merging(patch: JSONValue) -> JSONValue {
        guard case .object(let changes) = patch else { return patch }
        guard case .object(var result) = self, !result.isEmpty else { return patch.withoutNullMembers }
        for (key, change) in changes {
            if case .null = change {
                result[key] = nil
            } else if let index = result.index(forKey: key) {
                result.values[index] = result.values[index].merging(patch: change)
            } else {
                result[key] = change.withoutNullMembers
            }
        }
        return .object(result)
    }

    /// This value as a patch merged into nothing makes it: without the `null` members of its objects, at
    /// any depth (arrays are values, kept as they are). Unchanged, and not copied, when it has none.
    private var withoutNullMembers: JSONValue {
        guard case .object(let members) = self, members.values.contains(where: \.hasNullMembers) else { return self }
        var result: [String: JSONValue] = [:]
        result.reserveCapacity(members.count)
        for (key, value) in members {
            if case .null = value { continue }
            result[key] = value.withoutNullMembers
        }
        return .object(result)
    }

    /// Whether this is `null`, or an object with a `null` member at any depth.
    private var hasNullMembers: Bool {
        switch self {
        case .null: true
        case .object(let members): members.values.contains(where: \.hasNullMembers)
        default: false
        }
    }

    /// Whether this and `other` are the same numbers, spelled differently: `.integer(2)` and `.double(2.0)`,
    /// or arrays of such, element by element. (Objects are compared key by key by `mergePatch(to:)`.)
    func isSameNumbers(as other: JSONValue) -> Bool {
        switch (self, other) {
        case (.integer(let integer), .double(let double)), (.double(let double), .integer(let integer)):
            return Int(exactly: double) == integer
        // A number kept as written is the same as the Double a program read it as: writing that Double
        // back must not respell it.
        case (.exactNumber(let text), .double(let double)), (.double(let double), .exactNumber(let text)):
            return Double(text) == double
        case (.exactNumber(let text), .integer(let integer)), (.integer(let integer), .exactNumber(let text)):
            return NumberText(text) == NumberText(String(integer))
        case (.exactNumber(let left), .exactNumber(let right)):
            return NumberText(left) == NumberText(right)
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { $0 == $1 || $0.isSameNumbers(as: $1) }
        default:
            return false
        }
    }

    /// This document, with each number that `previous` holds at the same place as the same number spelled
    /// otherwise (`30.0` for 30, `12345678901234567.89` for the Double read from it) spelled as there: a
    /// write changes only what changed.
    ///
    /// Only the parts that are not ``isShared(with:)`` the part at the same place in `previous` are walked:
    /// a part made from the last write costs one comparison of its bytes, and an object or an array is
    /// copied only where a number in it is spelled again.
    func keepingNumberSpellings(of previous: JSONValue?) -> JSONValue {
        guard let previous, !isShared(with: previous) else { return self }
        switch (self, previous) {
        case (.object(let current), .object(let old)):
            var members = current
            current.forEachMember(notSharedWith: old) { key, value, before in
                guard let before else { return }
                let kept = value.keepingNumberSpellings(of: before)
                if !kept.isShared(with: value) { members[key] = kept }
            }
            return .object(members)
        case (.array(var elements), .array(let old)) where elements.count == old.count:
            for index in elements.indices where !elements[index].isShared(with: old[index]) {
                let kept = elements[index].keepingNumberSpellings(of: old[index])
                if !kept.isShared(with: elements[index]) { elements[index] = kept }
            }
            return .array(elements)
        default:
            return isSameNumbers(as: previous) ? previous : self
        }
    }

    /// This patch (the stored document a value needs over `base`) as the store is to hold it, given `held`
    /// (the stored document as last read or written) and `whole` (the value's whole document):
    ///
    /// - every key that `held` holds and `whole` still has is put back where the patch left it out for
    ///   being equal to the layers below: a key someone wrote in the file stays there, with its value now,
    ///   until it is released. Nothing under a path in `released` is put back (`reset(atPath:)`,
    ///   `loupe unset`);
    /// - each number that `held` holds at the same place as the same number spelled otherwise keeps its
    ///   spelling there, as ``keepingNumberSpellings(of:)`` has it.
    ///
    /// One walk of `held` beside the patch does both; a part the patch holds as `held` did (one made from
    /// the last write shares its storage) is passed over at the cost of one comparison of its bytes.
    func keepingKeysAndSpellings(
        of held: JSONValue?, whole: JSONValue, releasing released: [ValuePath], at path: [ValuePath.Component] = []
    ) -> JSONValue {
        guard let held, !isShared(with: held) else { return self }
        guard case .object(let heldMembers) = held, case .object(let patch) = self,
            case .object(let wholeMembers) = whole,
            !released.contains(where: { path.starts(with: $0.components) })
        else { return keepingNumberSpellings(of: held) }
        func isReleased(_ key: String) -> Bool {
            guard !released.isEmpty else { return false }
            let here = path.appending(.key(key))
            return released.contains { here.starts(with: $0.components) }
        }
        var members = patch
        heldMembers.forEachMember(notSharedWith: patch) { key, heldValue, patched in
            var kept = patched
            if let wholeValue = wholeMembers[key], !isReleased(key) {  // a key gone from the value is not kept
                switch (heldValue, wholeValue, patched) {
                case (.object, .object, let patched):
                    // Its keys and spellings, below.
                    let below = (patched ?? .object([:])).keepingKeysAndSpellings(
                        of: heldValue, whole: wholeValue, releasing: released, at: path.appending(.key(key)))
                    if let patched, below.isShared(with: patched) { return }
                    if patched != nil || below != .object([:]) { members[key] = below }
                    return
                case (_, _, nil):
                    kept = wholeValue
                default:
                    break
                }
            }
            guard let kept else { return }
            let spelled = kept.keepingNumberSpellings(of: heldValue)
            if let patched, spelled.isShared(with: patched) { return }
            members[key] = spelled
        }
        return .object(members)
    }

    /// Whether this and `other` are the same value held in the same storage: a part made from the other
    /// and not changed since. A comparison of their bytes, which costs nothing however large they are;
    /// false says nothing (equal values may be held in storage of their own).
    ///
    /// (Not the bytes of the two enums: the payload of a case may not fill them, and what is left over is
    /// not copied with the value. The bytes of a collection are its storage's address.)
    func isShared(with other: JSONValue) -> Bool {
        switch (self, other) {
        case (.object(let a), .object(let b)): SameBytes.equal(a, b)
        case (.array(let a), .array(let b)): SameBytes.equal(a, b)
        case (.string(let a), .string(let b)), (.exactNumber(let a), .exactNumber(let b)): SameBytes.equal(a, b)
        case (.integer(let a), .integer(let b)): a == b
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    /// Whether this is `other`'s part as it was: sharing its storage, or a scalar (or an empty object or
    /// array) the same as it. (A `Double` the same by its bits: `-0.0` is written otherwise than `0.0`.)
    func isSamePart(as other: JSONValue) -> Bool {
        if isShared(with: other) { return true }
        return switch (self, other) {
        case (.object(let a), .object(let b)): a.isEmpty && b.isEmpty
        case (.array(let a), .array(let b)): a.isEmpty && b.isEmpty
        // By their bytes: `==` takes canonically equivalent strings (two spellings of "é") for one.
        case (.string(let a), .string(let b)), (.exactNumber(let a), .exactNumber(let b)): a.utf8.elementsEqual(b.utf8)
        default: false  // the other scalars are shared when they are the same
        }
    }

    /// Whether this and `other` hold the same values, numbers spelled differently (`2`, `2.0`) included.
    func isSameDocument(as other: JSONValue) -> Bool {
        if self == other || isSameNumbers(as: other) { return true }
        guard case .object = self, case .object = other else { return false }
        return mergePatch(to: other) == .object([:]) && other.mergePatch(to: self) == .object([:])
    }

    /// The merge patch that turns this document into `target`: `merging(patch: mergePatch(to: target))`
    /// equals `target` wherever `target` holds no `null` inside an object (which a merge patch cannot
    /// set, only remove).
    ///
    /// `{}` when the two are equal objects.
    public func mergePatch(to target: JSONValue) -> JSONValue {
        guard case .object(let old) = self, case .object(let new) = target else { return target }
        // Over nothing, the patch is the target itself (not copied key by key: a large dictionary the
        // defaults leave empty is stored whole on every update).
        if old.isEmpty { return target }
        var patch: [String: JSONValue] = [:]
        for (key, value) in new {
            guard let previous = old[key] else {
                patch[key] = value
                continue
            }
            if previous == value || previous.isSameNumbers(as: value) { continue }
            let change = previous.mergePatch(to: value)
            // Objects that differ only in how numbers are spelled (`2.0` in a file, `2` encoded) need no patch.
            if case .object(let members) = change, members.isEmpty, case .object = previous { continue }
            patch[key] = change
        }
        for key in old.keys where new[key] == nil {
            patch[key] = .null
        }
        return .object(patch)
    }
}

extension [String: JSONValue] {
    /// Calls `body` with each member whose value is not ``JSONValue/isShared(with:)`` the value under the
    /// same key in `old` (nil when `old` has no such key), and returns how many of this object's keys `old`
    /// holds: fewer than `old.count` says that `old` has keys this object lacks.
    ///
    /// An object made from a copy of `old` (a member replaced, which is how a document is made from the
    /// one before) keeps `old`'s storage layout, and so its order: the two are walked side by side, key
    /// beside key, and nothing is hashed. From the first key out of step on, each key is looked up in
    /// `old` instead, so objects of any origin are walked right.
    @discardableResult
    package func forEachMember(
        notSharedWith old: [String: JSONValue],
        _ body: (_ key: String, _ value: JSONValue, _ old: JSONValue?) throws -> Void
    ) rethrows -> Int {
        var theirs = old.makeIterator()
        var inStep = true
        var found = 0
        for (key, value) in self {
            let before: JSONValue?
            if inStep, let (oldKey, oldValue) = theirs.next(), oldKey == key {
                before = oldValue
            } else {
                inStep = false
                before = old[key]
            }
            guard let before else {
                try body(key, value, nil)
                continue
            }
            found += 1
            if !value.isShared(with: before) { try body(key, value, before) }
        }
        return found
    }
}
