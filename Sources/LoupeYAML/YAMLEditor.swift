#if YAML
import Loupe

/// Turns document edits into splices of a YAML text, each in the style of the container it lands in, so
/// that everything an edit does not change stays byte for byte: comments, order, quoting, indentation,
/// flow or block style, `yes` and `---`.
///
/// - A scalar that changes is replaced where it stands, in its quoting where the value allows it (plain
///   text another reader would see as another type is quoted); a multi-line string written as a block
///   scalar (`|`, `>`) stays one, with its indentation.
/// - A block mapping gains a key after its last entry at its keys' column, a block sequence an element
///   (`- …`) at its place; an entry removed goes with its lines, its end-of-line comment and the comment
///   lines directly above it.
/// - A flow collection is edited in place and stays flow; new entries go last (or at their place).
/// - A value that becomes a collection, or stops being one, is written anew in its entry: block in a block
///   collection, flow in a flow one. A block collection written is laid out as most of the file's are
///   (``YAMLLayout``: indented by 2 or 4, a sequence's dashes at its key's column or further in).
/// - A key that only a merge key (`<<: *defaults`) brings in, set to a new value or changed inside, becomes
///   the mapping's own (written after its last entry, as the new document holds it), which YAML takes over
///   the merged one: the mapping the anchor holds, and every other mapping that merges it, stay as they were.
///
/// - A change through an alias (`settings: *defaults`) writes that alias out in full, as the new document
///   holds it, in its anchored value's key order and style: what it shows changes, and nothing else does.
/// - A change of an anchored value that aliases or merge keys show is made in place; each alias that is
///   not to show the new value is written out as it was, and each mapping that merges it gets, as its own,
///   the keys whose values would change. Where they all change the same way, the anchored value alone does.
///
/// It refuses (``TextEditRefusal``, naming the path) taking out a key a merge key brings in (the merge would
/// show it again) or a node that holds an anchor aliases show, an anchored value replaced by one that
/// cannot keep its anchor, an anchored mapping gaining a key that a mapping merging it does not hold, and
/// an anchor written twice.
struct YAMLEditor: TextEditor {
    /// The document the edits make: a value a merge key brings in that changes is written from it.
    var document: JSONValue

    func splices(for edits: [DocumentEdit], in text: [UInt8], holding old: JSONValue) throws -> [TextSplice] {
        let lines = TextLines(text)
        let tree: YAMLSyntaxTree
        do {
            tree = try YAMLSyntaxReader.read(text)
        } catch let failure as YAMLSyntaxFailure {
            throw TextEditRefusal(
                path: [],
                reason:
                    "Loupe's YAML editor cannot follow line \(lines.line(of: min(failure.offset, max(0, text.count - 1))) + 1) of the file (\(failure.reason)); nothing was written: edit the file by hand"
            )
        }
        var editor = Splicing(text: text, lines: lines, tree: tree)
        guard tree.root != nil else {
            try editor.writeIntoEmptyDocument(edits)
            return editor.splices
        }
        // Edits of one container's entries are made together (removing all of them, say, empties it); the
        // containers deepest first, then in the order of their first edit, so that lines added at one place
        // come in order.
        var containers: [[ValuePath.Component]] = []
        var structural: [[ValuePath.Component]: [DocumentEdit]] = [:]
        func collect(_ edit: DocumentEdit) {
            if structural[edit.path] == nil { containers.append(edit.path) }
            structural[edit.path, default: []].append(edit)
        }
        // The keys a mapping gains (by path), once each: a key only a merge key brings in, changed (set, or
        // edited inside), becomes the mapping's own, as one that keeps its value when the anchored mapping
        // it comes from changes does.
        var madeOwn: Set<[ValuePath.Component]> = []
        for var edit in edits {
            if case .addMember(let mapping, let key, _) = edit, !madeOwn.insert(mapping + [.key(key)]).inserted {
                continue
            }
            // A change to what an alias shows: the alias written out in full, as the new document holds it,
            // once for all the edits under it.
            if let alias = editor.alias(onTheWayTo: edit.path) {
                if !editor.writtenOut.contains(alias), let value = document[path: ValuePath(alias)],
                    !editor.showsItsAnchorsChange(alias, value, in: document, from: old)
                {
                    try editor.writeOut(alias: alias, as: value)
                }
                continue
            }
            // A change to an anchored value aliases show, made in place: each alias that should not show it is
            // written out in full, and each mapping a merge key brings it into keeps, as its own, the keys
            // whose values would change.
            if let (anchor, path) = editor.sharedAnchor(onTheWayTo: edit.path), !editor.released.contains(anchor) {
                for own in try editor.release(anchor, at: path, in: document, from: old)
                where madeOwn.insert(own.mapping + [.key(own.key)]).inserted {
                    collect(.addMember(in: own.mapping, key: own.key, value: own.value))
                }
            }
            if let (mapping, key) = editor.mergedKey(holding: edit) {
                let path = mapping + [.key(key)]
                guard let value = document[path: ValuePath(path)] else {
                    throw TextEditRefusal(
                        path: path,
                        reason:
                            "it comes from a YAML merge key (<<), which would bring it in again if it were taken out here; take it out of the merged mapping, by hand"
                    )
                }
                // The anchored mapping the merge brings it in from changes the same way: its edit shows it.
                if editor.followsItsMergedChange(mapping, key, value, in: document, from: old) { continue }
                guard madeOwn.insert(path).inserted else { continue }
                editor.writeOwn(path, as: value, over: old[path: ValuePath(path)])
                edit = .addMember(in: mapping, key: key, value: value)
            } else if case .replace(let path, let value) = edit {
                try editor.replace(at: path, with: value)
                continue
            }
            collect(edit)
        }
        // Where a container is its parent's last entry, the lines both gain go at one place: the inner's first.
        let deepestFirst = containers.enumerated().sorted {
            ($0.element.count, $1.offset) > ($1.element.count, $0.offset)
        }
        for (_, path) in deepestFirst { try editor.edit(entriesOf: path, structural[path]!) }
        return editor.splices
    }
}

/// The splices of one edit of a text, made as its edits are walked.
private struct Splicing {
    let text: [UInt8]
    let lines: TextLines
    let tree: YAMLSyntaxTree
    var splices: [TextSplice] = []
    /// What follows the key of an entry a block mapping gains (by the entry's path) where it is not the
    /// value written out: `<<: *name` and what differs, for a key a merge key brought in.
    var ownTexts: [[ValuePath.Component]: String] = [:]
    /// How the text lays out nested collections: what an edit writes follows it.
    lazy var layout = YAMLLayout(of: tree)
    /// The aliases (by path) written out in full: an edit under one is made by that.
    var writtenOut: Set<[ValuePath.Component]> = []
    /// The anchors whose anchored value is edited in place, each alias of it that is not to show the edit
    /// written out (``release(_:at:in:from:)``).
    var released: Set<String> = []

    init(text: [UInt8], lines: TextLines, tree: YAMLSyntaxTree) {
        self.text = text
        self.lines = lines
        self.tree = tree
    }

    /// A node found by its path, with the entry that holds it and that entry's container.
    struct Located {
        var node: YAMLSyntaxNode
        var entry: YAMLSyntaxEntry?
        var container: YAMLSyntaxNode?
    }

    // MARK: Finding nodes

    private func refuse(_ path: some Collection<ValuePath.Component>, _ reason: String) -> TextEditRefusal {
        TextEditRefusal(path: Array(path), reason: reason)
    }

    /// Refuses an edit of a node aliases share (an alias, or a value with an anchor an alias refers to).
    private func checkNotShared(_ node: YAMLSyntaxNode, at path: some Collection<ValuePath.Component>) throws {
        if node.kind == .alias {
            throw refuse(
                path,
                "it is a YAML alias (\(String(decoding: text[node.range], as: UTF8.self))), which shows the value its anchor holds; change that value, or write this one out in full, by hand"
            )
        }
        if let anchor = node.anchor, tree.aliased.contains(anchor), !released.contains(anchor) {
            throw refuse(
                path, "it is anchored (&\(anchor)) and its aliases (*\(anchor)) show it too; edit the file by hand")
        }
    }

    // MARK: Aliases

    /// The name an alias node refers to (`*name`).
    private func aliasName(_ node: YAMLSyntaxNode) -> String {
        String(decoding: text[(node.range.lowerBound + 1)..<node.range.upperBound], as: UTF8.self)
    }

    /// The nodes on the way to `path` through the text's own entries, the root first and the node at
    /// `path` last where the text writes it there.
    private func nodes(onTheWayTo path: [ValuePath.Component]) -> [YAMLSyntaxNode] {
        guard var node = tree.root else { return [] }
        var nodes = [node]
        for component in path {
            guard let entry = Self.entry(component, of: node) else { break }
            node = entry.value
            nodes.append(node)
        }
        return nodes
    }

    /// The path of the first alias on the way to `path` (`path` itself included); nil when there is none.
    func alias(onTheWayTo path: [ValuePath.Component]) -> [ValuePath.Component]? {
        nodes(onTheWayTo: path).firstIndex { $0.kind == .alias }.map { Array(path[..<$0]) }
    }

    /// The anchor of the first node on the way to `path` (`path` itself included) that holds an anchor an
    /// alias refers to, with that node's path.
    func sharedAnchor(onTheWayTo path: [ValuePath.Component]) -> (String, [ValuePath.Component])? {
        for (depth, node) in nodes(onTheWayTo: path).enumerated() {
            if let anchor = node.anchor, tree.aliased.contains(anchor) { return (anchor, Array(path[..<depth])) }
        }
        return nil
    }

    private static func entry(_ component: ValuePath.Component, of node: YAMLSyntaxNode) -> YAMLSyntaxEntry? {
        switch component {
        case .key(let key): node.isMapping ? node.member(key) : nil
        case .index(let index): node.isSequence && index < node.entries.count ? node.entries[index] : nil
        }
    }

    /// Every use of an anchor in the text: each node that holds it, each alias of it written as a value (by
    /// path), and each mapping (by path) whose merge keys (`<<`) bring it in, directly or through another.
    private func uses(
        of anchor: String
    ) -> (anchored: Int, values: [[ValuePath.Component]], merging: [([ValuePath.Component], YAMLSyntaxNode)]) {
        var uses: (anchored: Int, values: [[ValuePath.Component]], merging: [([ValuePath.Component], YAMLSyntaxNode)]) =
            (0, [], [])
        let target = tree.anchored[anchor]
        func visit(_ node: YAMLSyntaxNode, at path: [ValuePath.Component], merging: Bool) {
            if node.anchor == anchor { uses.anchored += 1 }
            if node.kind == .alias, aliasName(node) == anchor, !merging { uses.values.append(path) }
            if !merging, node.isMapping, node.entries.contains(where: \.isMerge), let target,
                mergedMappings(of: node).contains(where: { $0.range == target.range })
            {
                uses.merging.append((path, node))
            }
            for (index, entry) in node.entries.enumerated() {
                if entry.isMerge {
                    visit(entry.value, at: path, merging: true)
                } else if merging {
                    visit(entry.value, at: path, merging: true)
                } else if let key = entry.key {
                    visit(entry.value, at: path + [.key(key)], merging: false)
                } else {
                    visit(entry.value, at: path + [.index(index)], merging: false)
                }
            }
        }
        if let root = tree.root { visit(root, at: [], merging: false) }
        return uses
    }

    /// Whether the alias at `path`, which is to show `value`, shows it by its anchored value's own change:
    /// that value changes to `value` too (the anchored mapping's edit keeps the alias).
    func showsItsAnchorsChange(
        _ path: [ValuePath.Component], _ value: JSONValue, in document: JSONValue, from old: JSONValue
    ) -> Bool {
        guard let alias = try? locate(path).node, alias.kind == .alias,
            let target = tree.anchored[aliasName(alias)], let anchored = self.path(of: target),
            let new = document[path: ValuePath(anchored)], let before = old[path: ValuePath(anchored)]
        else { return false }
        return new.isSameValue(as: value) && !before.isSameValue(as: new)
    }

    /// Whether `key` of the mapping at `path`, which a merge key brings in and which is to be `value`,
    /// becomes it by the change of the anchored mapping it comes from (which changes to `value` there too).
    func followsItsMergedChange(
        _ path: [ValuePath.Component], _ key: String, _ value: JSONValue, in document: JSONValue, from old: JSONValue
    ) -> Bool {
        guard let mapping = try? locate(path).node,
            let source = mergedMappings(of: mapping).first(where: { $0.member(key) != nil }),
            let anchor = source.anchor, tree.aliased.contains(anchor), let sourcePath = self.path(of: source)
        else { return false }
        let at = ValuePath(sourcePath + [.key(key)])
        guard let new = document[path: at] else { return false }
        return new.isSameValue(as: value) && !(old[path: at]?.isSameValue(as: new) ?? false)
    }

    /// The path of `target` in the document, through the text's own entries (nil: within a merge key's value).
    private func path(of target: YAMLSyntaxNode) -> [ValuePath.Component]? {
        func find(_ node: YAMLSyntaxNode, _ path: [ValuePath.Component]) -> [ValuePath.Component]? {
            if node.range == target.range, node.kind == target.kind { return path }
            for (index, entry) in node.entries.enumerated() where !entry.isMerge {
                let component: ValuePath.Component = entry.key.map { .key($0) } ?? .index(index)
                if let found = find(entry.value, path + [component]) { return found }
            }
            return nil
        }
        return tree.root.flatMap { find($0, []) }
    }

    /// Writes the alias at `path` out in full, as `value`: what it shows changes, and nothing else does.
    mutating func writeOut(alias path: [ValuePath.Component], as value: JSONValue) throws {
        writtenOut.insert(path)
        try replace(at: path, with: value, writingOut: true)
    }

    /// Lets the value anchored as `anchor` at `path` be edited in place, so that every other place that
    /// shows it keeps showing what `document` holds there: each alias of it (written as a value) that should
    /// not show the new value is written out in full; returns, for each mapping whose merge keys (`<<`)
    /// bring it in, the keys whose values would change, with the values that mapping keeps (to become its
    /// own). Refused where the anchor is written twice, or a merge key would bring in a key its mapping does
    /// not hold.
    mutating func release(
        _ anchor: String, at path: [ValuePath.Component], in document: JSONValue, from old: JSONValue
    ) throws -> [(mapping: [ValuePath.Component], key: String, value: JSONValue)] {
        let uses = uses(of: anchor)
        guard uses.anchored == 1, let new = document[path: ValuePath(path)] else {
            throw refuse(
                path, "it is anchored (&\(anchor)) and its aliases (*\(anchor)) show it too; edit the file by hand")
        }
        released.insert(anchor)
        for alias in uses.values where !writtenOut.contains(alias) {
            // An alias taken out with its entry goes; one that shows the new value stays.
            guard let value = document[path: ValuePath(alias)], !value.isSameValue(as: new) else { continue }
            try writeOut(alias: alias, as: value)
        }
        guard !uses.merging.isEmpty else { return [] }
        guard case .object(let before)? = old[path: ValuePath(path)], case .object(let after) = new else {
            throw refuse(
                path,
                "it is anchored (&\(anchor)) and a merge key (<<: *\(anchor)) brings it into other mappings, which would change too; edit the file by hand"
            )
        }
        var own: [(mapping: [ValuePath.Component], key: String, value: JSONValue)] = []
        for (mappingPath, mapping) in uses.merging {
            // A mapping taken out, or replaced by something else, shows nothing of it any more.
            guard case .object(let shown)? = document[path: ValuePath(mappingPath)] else { continue }
            for key in Set(before.keys).union(after.keys).sorted() {
                if mapping.member(key) != nil {
                    // Its own key, taken out where the anchored mapping now holds it: the merge would show it.
                    guard shown[key] == nil, after[key] != nil else { continue }
                    throw refuse(
                        mappingPath + [.key(key)],
                        "a YAML merge key (<<: *\(anchor)) would bring it in again from the anchored mapping, which gains it; edit the file by hand"
                    )
                }
                if let meant = shown[key], let merged = after[key], merged.isSameValue(as: meant) { continue }
                guard let meant = shown[key] else {
                    if after[key] == nil { continue }
                    throw refuse(
                        mappingPath + [.key(key)],
                        "a YAML merge key (<<: *\(anchor)) would bring it in from the anchored mapping it is added to; edit the file by hand"
                    )
                }
                own.append((mappingPath, key, meant))
            }
        }
        return own
    }

    /// Refuses removing a node that holds an anchor an alias refers to (an alias itself may go: nothing
    /// else shows it).
    private func checkHoldsNoSharedAnchor(_ node: YAMLSyntaxNode, at path: some Collection<ValuePath.Component>) throws
    {
        if node.kind != .alias { try checkNotShared(node, at: path) }
        // A released anchor on the node itself stays where the node is replaced in place.
        let within = node.anchorsWithin.filter { $0 != node.anchor || !released.contains($0) }
        if let anchor = within.first(where: tree.aliased.contains) {
            throw refuse(path, "it holds the anchor &\(anchor), which aliases (*\(anchor)) show; edit the file by hand")
        }
    }

    /// The mappings the merge keys (`<<`) of `mapping` bring in, in the order YAML takes their keys: each
    /// merged mapping before the ones its own merge keys bring in, and `[*a, *b]` in its order.
    private func mergedMappings(of mapping: YAMLSyntaxNode) -> [YAMLSyntaxNode] {
        var mappings: [YAMLSyntaxNode] = []
        func add(_ source: YAMLSyntaxNode, depth: Int) {
            guard depth < 8 else { return }
            switch source.kind {
            case .alias:
                let name = String(
                    decoding: text[(source.range.lowerBound + 1)..<source.range.upperBound], as: UTF8.self)
                if let target = tree.anchored[name] { add(target, depth: depth + 1) }
            case .blockMapping, .flowMapping:
                mappings.append(source)
                for entry in source.entries where entry.isMerge { add(entry.value, depth: depth + 1) }
            case .blockSequence, .flowSequence:
                for entry in source.entries { add(entry.value, depth: depth + 1) }
            default: break
            }
        }
        for entry in mapping.entries where entry.isMerge { add(entry.value, depth: 0) }
        return mappings
    }

    /// The keys the merge keys (`<<`) of `mapping` bring in.
    private func mergedKeys(of mapping: YAMLSyntaxNode) -> Set<String> {
        Set(mergedMappings(of: mapping).flatMap { $0.entries.filter { !$0.isMerge }.compactMap(\.key) })
    }

    /// The mapping and key on the way to what `edit` changes (the value it sets, or the container whose
    /// entries it adds or removes) where the key is one only a merge key (`<<`) of that mapping brings in
    /// (none of its own), through nodes aliases do not share: the edit changes that key's value, which
    /// becomes the mapping's own. Nil for every other edit (a removed key a merge key brings in included).
    func mergedKey(holding edit: DocumentEdit) -> ([ValuePath.Component], String)? {
        let path = edit.path
        let nodes = nodes(onTheWayTo: path)
        // Where the text stops on the way: a key of a mapping that it does not write.
        let depth = nodes.count - 1
        guard depth < path.count, case .key(let key) = path[depth], let mapping = nodes.last, mapping.isMapping,
            nodes.enumerated().allSatisfy({ (try? checkNotShared($1, at: path[..<$0])) != nil })
        else { return nil }
        return mergedKeys(of: mapping).contains(key) ? (Array(path[..<depth]), key) : nil
    }

    /// Notes how the entry at `path` (a key a merge key brings in, made its mapping's own) is written, when
    /// not as `value` in full: where the merged value is an anchored mapping (`environment: &env`) and the
    /// change only sets and adds members, as a mapping that merges that anchor and holds what differs
    /// (`<<: *env` and the members changed), which is how a person writes it, and keeps following the anchor.
    mutating func writeOwn(_ path: [ValuePath.Component], as value: JSONValue, over merged: JSONValue?) {
        guard case .key(let key)? = path.last, case .object(let members) = value,
            case .object(let before)? = merged, before.keys.allSatisfy({ members[$0] != nil }),
            let mapping = try? locate(Array(path.dropLast())), !mapping.node.isFlow,
            let source = mergedValue(of: mapping.node, key: key), let anchor = source.anchor
        else { return }
        let column = mapping.node.column + layout.step
        let changed = members.filter { before[$0.key] != $0.value }
        ownTexts[path] =
            "\n" + String(repeating: " ", count: column) + "<<: *" + anchor
            + (changed.isEmpty ? "" : "\n" + YAMLValueWriter.blockMapping(changed, indent: column, layout: layout))
    }

    /// The node of the value the merge keys (`<<`) of `mapping` bring in for `key`, as YAML takes it.
    private func mergedValue(of mapping: YAMLSyntaxNode, key: String) -> YAMLSyntaxNode? {
        mergedMappings(of: mapping).lazy.compactMap { $0.member(key)?.value }.first
    }

    /// The node at `path`; refuses a path through an alias or a value aliases share.
    func locate(_ path: [ValuePath.Component]) throws -> Located {
        var located = Located(node: tree.root!)
        for (depth, component) in path.enumerated() {
            let node = located.node
            try checkNotShared(node, at: path[..<depth])
            let found = Self.entry(component, of: node)
            if found == nil, case .key(let key) = component, node.isMapping, mergedKeys(of: node).contains(key) {
                throw refuse(
                    path[...depth],
                    "it comes from a YAML merge key (<<), which an edit here would change for every mapping that merges it; edit the file by hand"
                )
            }
            guard let found else {
                throw refuse(
                    path[...depth],
                    "Loupe's YAML editor does not find it in the file as it reads it; nothing was written")
            }
            located = Located(node: found.value, entry: found, container: node)
        }
        return located
    }

    // MARK: Replacing values

    private func scalarStyle(_ node: YAMLSyntaxNode) -> YAMLValueWriter.Style {
        switch node.kind {
        case .singleQuoted: .singleQuoted
        case .doubleQuoted: .doubleQuoted
        default: .plain
        }
    }

    private static func isCollection(_ value: JSONValue) -> Bool {
        switch value {
        case .object(let members): !members.isEmpty
        case .array(let elements): !elements.isEmpty
        default: false
        }
    }

    /// Writes `value` where the value at `path` is written; `writingOut` an alias there (which shows its
    /// anchor's value) in full.
    mutating func replace(at path: [ValuePath.Component], with value: JSONValue, writingOut: Bool = false) throws {
        let located = try locate(path)
        let node = located.node
        if !(writingOut && node.kind == .alias) { try checkNotShared(node, at: path) }
        try checkHoldsNoSharedAnchor(node, at: path)
        // An alias written out takes the order of its anchored value's keys.
        let order = node.kind == .alias ? tree.anchored[aliasName(node)] : nil
        let inFlow = located.container?.isFlow ?? false
        // A tag stays where it still says what the value is: a string's.
        var start = node.range.lowerBound
        var stringTag = false
        if let tag = node.tag {
            var keepsTag = false
            if case .string = value { keepsTag = tag == "!!str" || !tag.hasPrefix("!!") }
            if !keepsTag { start = node.propertiesStart }
            stringTag = keepsTag && tag == "!!str"
        }
        // The anchor stays where the tag goes.
        let anchorText = start < node.range.lowerBound ? node.anchor.map { "&" + $0 + " " } ?? "" : ""
        switch node.kind {
        case .plain, .singleQuoted, .doubleQuoted:
            if !Self.isCollection(value) {
                splices.append(
                    TextSplice(
                        start..<node.range.upperBound,
                        anchorText
                            + YAMLValueWriter.scalar(value, style: scalarStyle(node), flow: inFlow, tagged: stringTag)))
                return
            }
        case .literal, .folded:
            if case .string(let string) = value, try replaceBlockScalar(node, with: string) { return }
            if !Self.isCollection(value) {
                splices.append(
                    TextSplice(
                        min(start, node.header!.lowerBound)..<node.range.upperBound,
                        anchorText + YAMLValueWriter.scalar(value, style: .doubleQuoted, flow: false)))
                return
            }
        case .empty where !Self.isCollection(value):
            let indicator = located.entry?.bareKey == true ? ":" : ""
            splices.append(
                .insert(
                    Array((indicator + " " + YAMLValueWriter.scalar(value, flow: inFlow)).utf8),
                    at: node.range.lowerBound))
            return
        default:
            break
        }
        // A value that becomes a collection or stops being one: written anew in its entry's style (an
        // anchored one keeps no anchor there, which its aliases need).
        if let anchor = node.anchor, released.contains(anchor) {
            throw refuse(
                path,
                "it is anchored (&\(anchor)), and what it becomes would not keep its anchor; edit the file by hand")
        }
        // An alias written out is written in its anchored value's style: flow where that is flow.
        if inFlow || node.isFlow || order?.isFlow == true {
            let lead = node.kind != .empty ? "" : located.entry?.bareKey == true ? ": " : " "
            splices.append(
                TextSplice(node.propertiesStart..<node.range.upperBound, lead + YAMLValueWriter.scalarOrFlow(value)))
            return
        }
        guard let entry = located.entry, let container = located.container else {
            splices.append(
                TextSplice(
                    node.propertiesStart..<node.range.upperBound, YAMLValueWriter.document(value, layout: layout)))
            return
        }
        let end = node.kind == .empty ? entry.slot : node.range.upperBound
        let written =
            entry.key == nil
            ? YAMLValueWriter.afterDash(value, indent: container.column, layout: layout, order: order)
            : YAMLValueWriter.afterKey(value, indent: container.column, layout: layout, order: order)
        splices.append(TextSplice(entry.slot..<end, written))
    }

    /// Replaces a block scalar's header and body with `string` in the scalar's style; false where a block
    /// scalar cannot hold it.
    private mutating func replaceBlockScalar(_ node: YAMLSyntaxNode, with string: String) throws -> Bool {
        guard let header = node.header,
            let written = YAMLValueWriter.blockScalar(string, folded: node.kind == .folded, indent: node.column)
        else { return false }
        // The header's indentation indicator, if any, goes: the body's indentation is the one written.
        splices.append(TextSplice(header, written.header))
        if let body = node.body {
            var end = body.upperBound
            if written.header.hasSuffix("+") {
                // Kept line breaks: the empty lines after the scalar become its own.
                var line = lines.line(of: end) + 1
                while line < lines.starts.count, lines.starts[line] < text.count {
                    let lineEnd = lines.lineEnd(of: lines.starts[line])
                    guard text[lines.starts[line]..<lineEnd].allSatisfy({ $0 == 0x20 }) else { break }
                    end = lineEnd
                    line += 1
                }
            }
            splices.append(TextSplice(body.lowerBound..<end, written.body))
        } else {
            splices.append(.insert(Array(("\n" + written.body).utf8), at: lines.lineEnd(of: header.upperBound)))
        }
        return true
    }

    // MARK: Adding and removing entries

    /// The text `line` (without its line break) inserted as a line of its own at `offset`, a line's start
    /// or the end of the text.
    private mutating func insertLine(_ line: String, at offset: Int) {
        if offset == text.count, offset > 0, text[offset - 1] != UInt8(ascii: "\n") {
            splices.append(.insert(Array(("\n" + line).utf8), at: offset))
        } else {
            splices.append(.insert(Array((line + "\n").utf8), at: offset))
        }
    }

    /// Writes the members of a document whose text holds no node (empty, or comments only).
    mutating func writeIntoEmptyDocument(_ edits: [DocumentEdit]) throws {
        for edit in edits {
            guard case .addMember(let path, let key, let value) = edit, path.isEmpty else {
                throw refuse(edit.path, "the file holds no YAML document to edit")
            }
            insertLine(
                YAMLValueWriter.key(key, flow: false) + ":"
                    + YAMLValueWriter.afterKey(value, indent: 0, layout: layout), at: text.count
            )
        }
    }

    mutating func edit(entriesOf path: [ValuePath.Component], _ edits: [DocumentEdit]) throws {
        let located = try locate(path)
        let node = located.node
        try checkNotShared(node, at: path)
        var removed: [Int] = []
        var added: [(before: Int, value: JSONValue, key: String?)] = []
        let merged = node.isMapping ? mergedKeys(of: node) : []
        for edit in edits {
            switch edit {
            case .removeMember(_, let key):
                guard let index = node.isMapping ? node.keys[key] : nil else {
                    throw refuse(
                        path + [.key(key)],
                        merged.contains(key)
                            ? "it comes from a YAML merge key (<<), which would bring it in again if it were taken out here; take it out of the merged mapping, by hand"
                            : "Loupe's YAML editor does not find it in the file as it reads it; nothing was written")
                }
                if merged.contains(key) {
                    throw refuse(
                        path + [.key(key)],
                        "a YAML merge key (<<) brings in this key too, and would show its value if this one went; edit the file by hand"
                    )
                }
                try checkHoldsNoSharedAnchor(node.entries[index].value, at: path + [.key(key)])
                removed.append(index)
            case .removeElement(_, let index):
                guard node.isSequence, index < node.entries.count else {
                    throw refuse(
                        path + [.index(index)],
                        "Loupe's YAML editor does not find it in the file as it reads it; nothing was written")
                }
                try checkHoldsNoSharedAnchor(node.entries[index].value, at: path + [.index(index)])
                removed.append(index)
            case .addMember(_, let key, let value):
                guard node.isMapping else {
                    throw refuse(path, "Loupe's YAML editor does not read a mapping here; nothing was written")
                }
                added.append((node.entries.count, value, key))
            case .addElement(_, let before, let value):
                guard node.isSequence else {
                    throw refuse(path, "Loupe's YAML editor does not read a sequence here; nothing was written")
                }
                added.append((before, value, nil))
            case .replace:
                break
            }
        }
        let removedSet = Set(removed)
        if removedSet.count == node.entries.count {
            try rewrite(located, with: added)
        } else if node.isFlow {
            editFlow(node, removed: removedSet, added: added)
        } else {
            editBlock(node, at: path, removed: removedSet, added: added)
        }
    }

    /// A container all of whose entries go, written anew with the entries it gains (`{}`, `[]` if none).
    private mutating func rewrite(
        _ located: Located, with added: [(before: Int, value: JSONValue, key: String?)]
    ) throws {
        let node = located.node
        let value: JSONValue =
            node.isMapping
            ? .object(Dictionary(added.map { ($0.key!, $0.value) }, uniquingKeysWith: { $1 }))
            : .array(added.map(\.value))
        if node.isFlow || located.container?.isFlow == true {
            splices.append(TextSplice(node.range, YAMLValueWriter.scalarOrFlow(value)))
        } else if let entry = located.entry, let container = located.container {
            let written =
                entry.key == nil
                ? YAMLValueWriter.afterDash(value, indent: container.column, layout: layout)
                : YAMLValueWriter.afterKey(value, indent: container.column, layout: layout)
            splices.append(TextSplice(entry.slot..<node.range.upperBound, written))
        } else {
            splices.append(TextSplice(node.range, YAMLValueWriter.document(value, layout: layout)))
        }
    }

    private mutating func editBlock(
        _ node: YAMLSyntaxNode, at path: [ValuePath.Component], removed: Set<Int>,
        added: [(before: Int, value: JSONValue, key: String?)]
    ) {
        let entries = node.entries
        var covered = -1
        for index in removed.sorted() where index > covered {
            let entry = entries[index]
            if !lines.startsLine(entry.start),
                let kept = entries.indices.first(where: { $0 > index && !removed.contains($0) })
            {
                // The first entry of a compact mapping (`- name: x`): the next kept entry's key (or its
                // comment) takes its place on the dash's line.
                let next = entries[kept]
                let end = next.span.lowerBound == lines.lineStart(of: next.start) ? next.start : next.span.lowerBound
                splices.append(.remove(entry.start..<end))
                covered = kept
            } else {
                splices.append(.remove(entry.span))
            }
        }
        let padding = String(repeating: " ", count: node.column)
        for addition in added {
            let line: String
            if let key = addition.key {
                line =
                    padding + YAMLValueWriter.key(key, flow: false) + ":"
                    + (ownTexts[path + [.key(key)]]
                        ?? YAMLValueWriter.afterKey(addition.value, indent: node.column, layout: layout))
            } else {
                line = padding + "-" + YAMLValueWriter.afterDash(addition.value, indent: node.column, layout: layout)
            }
            let offset =
                addition.before < entries.count
                ? entries[addition.before].span.lowerBound : entries.last!.span.upperBound
            insertLine(line, at: offset)
        }
    }

    private mutating func editFlow(
        _ node: YAMLSyntaxNode, removed: Set<Int>, added: [(before: Int, value: JSONValue, key: String?)]
    ) {
        let entries = node.entries
        let kept = entries.indices.filter { !removed.contains($0) }
        for index in removed { splices.append(.remove(entries[index].span)) }
        // The separator after a kept entry stays when another kept entry follows; every other goes.
        for index in entries.indices.dropLast() {
            if removed.contains(index) || index >= (kept.last ?? -1) {
                splices.append(.remove(entries[index].span.upperBound..<entries[index + 1].span.lowerBound))
            }
        }
        var wroteFirst = !kept.isEmpty
        for addition in added {
            let written =
                (addition.key.map { YAMLValueWriter.key($0, flow: true) + ": " } ?? "")
                + YAMLValueWriter.scalarOrFlow(addition.value)
            if let next = kept.first(where: { $0 >= addition.before }) {
                splices.append(.insert(Array((written + ", ").utf8), at: entries[next].span.lowerBound))
            } else if let last = kept.last {
                splices.append(.insert(Array((", " + written).utf8), at: entries[last].span.upperBound))
            } else {
                // An empty collection (`[]`, `{}`): after its opening bracket.
                splices.append(.insert(Array(((wroteFirst ? ", " : "") + written).utf8), at: node.range.lowerBound + 1))
                wroteFirst = true
            }
        }
    }
}
#endif
