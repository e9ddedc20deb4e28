import Foundation

// What the encoder keeps of one encode for the next (``DocumentEncoder/MemoNode``), and how it encodes a
// changed dictionary with `String` keys by its changed members alone (``DocumentEncoder/DictionaryLayout``,
// ``EncodedDictionary``). A part found unchanged keeps the last document's storage, so the edit walk
// (`DocumentEdit.changes`) passes over it too.
//
// Rows it holds (Benchmarks/README.md, "Fast paths"), measured on the 2-core machine in one release build
// with the memo and without it (`DocumentPipeline.memo` nil), calm (load 1.5–2), the figures of a run among
// other builds (load 6–12) in brackets:
// - the one-value updates of a 2,211-line TOML file and of a 40,000-key JSON object, edited in place,
//   target ≤ 1.30× their floor: 1.28× and 1.31× with it [1.05–1.24×, 1.05–1.13×], 1.78× and 2.10× without
//   it [1.24×, 1.79×]. These rows need it.
// - "durable update, ~157 KB graph", target ≤ 2.00× its floor: 1.07–1.08× with it [1.18×], 1.78× without
//   it [1.80×].

extension DocumentEncoder {
    /// Whether `value` is the part `previous` remembers: of the same type, and the same bytes, or (when
    /// `comparing`) `==` for an `Equatable` type, unless it is an object of many parts, whose members are
    /// asked one by one.
    static func isUnchanged<T>(_ value: T, from previous: MemoNode, comparing: Bool) -> Bool {
        guard type(of: previous.part) == T.self else { return false }
        let part = previous.part as! T
        if SameBytes.equal(value, part) { return true }
        guard comparing, !previous.comparesMembersAlone, let equatable = previous.equatable else { return false }
        return Loupe.areEqual(value, part, as: equatable)
    }

    /// What one encode made, for the next to reuse: the node of the whole value.
    ///
    /// Each encode takes what is kept and keeps, when it is done, exactly what it made: what the last one
    /// saw. Two at once simply find nothing to reuse.
    final class Memo: Sendable {
        private let node = Locked<MemoNode?>(nil)

        /// Takes what is kept, leaving nothing.
        func take() -> MemoNode? {
            node.withLock { node in
                defer { node = nil }
                return node
            }
        }

        /// Keeps `kept` for the next encode, in place of whatever is there.
        func keep(_ kept: MemoNode) {
            node.withLock { $0 = kept }
        }
    }

    /// A part of the value that is not a scalar, its document, and the nodes of its own parts.
    ///
    /// The part belongs to a `Sendable` root (the pipeline encodes only those) and is never mutated here,
    /// only compared. A node never changes once made, but for a dictionary's layout, which the encode that
    /// holds the memo (taken from its ``Memo``, so no other) hands on to the dictionary's next node.
    final class MemoNode: @unchecked Sendable {
        let part: Any
        /// The part's type, when it is `Equatable`; found once, when the node is made.
        let equatable: (any Equatable.Type)?
        let document: JSONValue
        /// The nodes of the parts it encoded under keys (an object's members that are not scalars), in the
        /// order it encoded them.
        let members: [(key: String, node: MemoNode)]
        /// `members` by key, for an object with many (a few are searched in order).
        private let membersByKey: [String: MemoNode]?
        /// The nodes of the parts it encoded in order (an array's elements); nil for a scalar element.
        let elements: [MemoNode?]
        /// Whether the part is a dictionary with `String` keys, encoded member by member.
        private let isDictionary: Bool
        /// A dictionary's members in its own order (a ``DictionaryLayout``); nil for any other part, and
        /// once the next encode has taken it.
        private var layout: AnyObject?

        init<Part>(part: Part, document: JSONValue, members: [(key: String, node: MemoNode)], elements: [MemoNode?]) {
            self.part = part
            equatable = Part.self as? any Equatable.Type
            self.document = document
            self.members = members
            membersByKey = members.count > 16 ? Dictionary(members, uniquingKeysWith: { _, last in last }) : nil
            self.elements = elements
            isDictionary = false
        }

        /// The node of a dictionary with `String` keys, its members in its order.
        init<Value>(dictionary: [String: Value], document: JSONValue, layout: DictionaryLayout<Value>) {
            part = dictionary
            equatable = [String: Value].self as? any Equatable.Type
            self.document = document
            members = []
            membersByKey = nil
            elements = []
            isDictionary = true
            self.layout = layout
        }

        /// The dictionary's layout, which the next node of the dictionary takes over: nil when this is not
        /// a dictionary's node, or the layout was taken.
        func takeLayout() -> AnyObject? {
            defer { layout = nil }
            return layout
        }

        /// Whether the part is an object of many parts that are not scalars (a dictionary of settings
        /// groups), or a dictionary with `String` keys: whether it is unchanged is then asked of each
        /// member, which finds a changed one without first comparing the whole part (and each unchanged
        /// member costs a comparison of its bytes).
        var comparesMembersAlone: Bool { isDictionary || membersByKey != nil }

        /// The nodes of the members, by key.
        var nodesByKey: [String: MemoNode] {
            membersByKey ?? Dictionary(members, uniquingKeysWith: { _, last in last })
        }

        /// The node of the member under `key`. An encode usually encodes its members in the same order
        /// each time, so `hint`, the index after the member found last, is tried first. (A key encoded
        /// twice may find the node of either encode: each is a part with its own document, so reusing
        /// either for an unchanged part is right.)
        func member(_ key: String, hint: inout Int) -> MemoNode? {
            if hint < members.count, members[hint].key == key {
                hint += 1
                return members[hint - 1].node
            }
            if let membersByKey { return membersByKey[key] }
            guard let index = members.firstIndex(where: { $0.key == key }) else { return nil }
            hint = index + 1
            return members[index].node
        }
    }

    /// A dictionary's keys, values and members' nodes, in the dictionary's own order.
    ///
    /// A dictionary changed by copy-on-write (`settings.groups["a"]?.limit = 3`) is a copy of the one before
    /// with a member changed in place, and a copy keeps each member where it was. So the next encode walks
    /// the new dictionary beside its layout, compares each member with the value at the same place (by its
    /// bytes, in place, without copying it out or looking its key up), and changes the layout where a
    /// member changed, in place: the layout passes from node to node, never copied. A dictionary whose
    /// order is not the layout's (keys added or removed) is compared key by key, and gets a new layout.
    final class DictionaryLayout<Value>: @unchecked Sendable {  // used only by the encode holding its node
        var keys: [String]
        var values: [Value]
        var nodes: [MemoNode?]

        init(keys: [String], values: [Value], nodes: [MemoNode?]) {
            self.keys = keys
            self.values = values
            self.nodes = nodes
        }

        /// The members' nodes, by key.
        var nodesByKey: [String: MemoNode] {
            var byKey: [String: MemoNode] = [:]
            for (key, node) in zip(keys, nodes) { byKey[key] = node }
            return byKey
        }
    }
}

// MARK: Dictionaries

/// A dictionary with `String` keys, whose encoding the standard library fixes (an object with a member
/// under each key, as `Dictionary.encode(to:)` makes it): so a dictionary that changed is encoded by its
/// members that changed, on the document it had, without going through its `encode(to:)` for the rest.
protocol EncodedDictionary {
    /// The document and node of this dictionary, made from `previous`'s (the node of a dictionary of the
    /// same type at the same place last time) by encoding again only the members that changed; nil when
    /// `previous` is not such a node.
    func document(
        changedFrom previous: DocumentEncoder.MemoNode, by encoder: DocumentEncoder, at codingPath: [any CodingKey]
    ) throws -> (document: JSONValue, node: DocumentEncoder.MemoNode?)?
}

/// A ``EncodedDictionary`` whose values are `Equatable`: a member is unchanged when it has the same
/// bytes or `==` says so (as ``DocumentEncoder`` asks of any part). Its own protocol, so that `==` is
/// called directly rather than through a cast for every member.
protocol EncodedEquatableDictionary {
    func documentComparingMembers(
        changedFrom previous: DocumentEncoder.MemoNode, by encoder: DocumentEncoder, at codingPath: [any CodingKey]
    ) throws -> (document: JSONValue, node: DocumentEncoder.MemoNode?)?
}

extension Dictionary: EncodedDictionary where Key == String, Value: Encodable {
    func document(
        changedFrom previous: DocumentEncoder.MemoNode, by encoder: DocumentEncoder, at codingPath: [any CodingKey]
    ) throws -> (document: JSONValue, node: DocumentEncoder.MemoNode?)? {
        if let equatable = self as? any EncodedEquatableDictionary {
            return try equatable.documentComparingMembers(changedFrom: previous, by: encoder, at: codingPath)
        }
        return try document(changedFrom: previous, by: encoder, at: codingPath, unchanged: { SameBytes.equal($0, $1) })
    }

    /// The document and node of this dictionary, made from `previous`'s by encoding again the members
    /// that are not `unchanged` from the member under the same key there.
    func document(
        changedFrom previous: DocumentEncoder.MemoNode, by encoder: DocumentEncoder, at codingPath: [any CodingKey],
        unchanged: (Value, Value) -> Bool
    ) throws -> (document: JSONValue, node: DocumentEncoder.MemoNode?)? {
        // Of exactly this type: a cast would convert a dictionary of another value type, element by element.
        guard type(of: previous.part) == Self.self, case .object(let last) = previous.document else { return nil }
        var members = last
        let layout = previous.takeLayout() as? DocumentEncoder.DictionaryLayout<Value>
        var changed: [String] = []
        if let layout, layout.keys.count == count,
            try changeInStep(
                layout, members: &members, changed: &changed, by: encoder, at: codingPath, unchanged: unchanged)
        {
            let document = JSONValue.object(members)
            return (document, DocumentEncoder.MemoNode(dictionary: self, document: document, layout: layout))
        }
        // Out of step: compared key by key, from the last document (a member encoded again above is
        // encoded again here, its node reused).
        members = last
        let old = previous.part as! Self
        var nodes = layout?.nodesByKey ?? previous.nodesByKey
        var kept = 0
        for (key, value) in self {
            if let before = old[key] {
                kept += 1
                if unchanged(value, before) { continue }
            }
            let (document, node) = try encoder.part(
                value, at: codingPath + [DocumentCodingKey(key)], previous: nodes[key])
            // A member encoded again as it was keeps the object's storage as it was.
            if members[key].map(document.isSamePart) != true { members[key] = document }
            nodes[key] = node
        }
        if kept < old.count {
            for key in old.keys where self[key] == nil { members[key] = nil }
        }
        let document = JSONValue.object(members)
        let keys = Array(self.keys)
        let newLayout = DocumentEncoder.DictionaryLayout(
            keys: keys, values: Array(values), nodes: keys.map { nodes[$0] })
        return (document, DocumentEncoder.MemoNode(dictionary: self, document: document, layout: newLayout))
    }

    /// Encodes again the members that changed, walking this dictionary beside `layout` (the last one's
    /// members, in its order) and changing the layout where a member changed; false once a key is not
    /// where the layout has it (`members` and the layout may then hold some members encoded again). Adds
    /// the keys of the members it set to `changed`.
    private func changeInStep(
        _ layout: DocumentEncoder.DictionaryLayout<Value>, members: inout [String: JSONValue], changed: inout [String],
        by encoder: DocumentEncoder, at codingPath: [any CodingKey], unchanged: (Value, Value) -> Bool
    ) throws -> Bool {
        // Moved out of the layout while it is walked, and back after: changed in place, never copied.
        var keys: [String] = [], values: [Value] = [], nodes: [DocumentEncoder.MemoNode?] = []
        swap(&keys, &layout.keys)
        swap(&values, &layout.values)
        swap(&nodes, &layout.nodes)
        defer {
            swap(&keys, &layout.keys)
            swap(&values, &layout.values)
            swap(&nodes, &layout.nodes)
        }
        var index = 0
        for (key, value) in self {
            guard keys[index] == key else { return false }
            defer { index += 1 }
            if values.withUnsafeBufferPointer({ SameBytes.equal(value, asAt: $0.baseAddress! + index) }) { continue }
            if unchanged(value, values[index]) {
                values[index] = value  // the same bytes next time
                continue
            }
            let (document, node) = try encoder.part(
                value, at: codingPath + [DocumentCodingKey(key)], previous: nodes[index])
            if members[key].map(document.isSamePart) != true {
                members[key] = document
                changed.append(key)
            }
            values[index] = value
            nodes[index] = node
        }
        return true
    }
}

extension Dictionary: EncodedEquatableDictionary where Key == String, Value: Encodable & Equatable {
    func documentComparingMembers(
        changedFrom previous: DocumentEncoder.MemoNode, by encoder: DocumentEncoder, at codingPath: [any CodingKey]
    ) throws -> (document: JSONValue, node: DocumentEncoder.MemoNode?)? {
        try document(changedFrom: previous, by: encoder, at: codingPath) { SameBytes.equal($0, $1) || $0 == $1 }
    }
}
