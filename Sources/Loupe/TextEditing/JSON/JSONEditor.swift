/// The JSON and JSONC editor: turns a document's edits into splices of the text that holds it, in the style
/// of the place each lands in, so that every byte an edit does not concern stays as the file has it.
///
/// - A replaced value is written where the old one stood; an array or object written anew is on one line
///   where its container is on one line, and pretty otherwise, at its line's indentation plus the file's
///   indentation unit.
/// - A removed entry goes with its own trivia: the comment lines directly above it, its comma and the
///   comments on its line. The comments of its neighbours stay where they are; when the last entry goes,
///   the comma of the one before it goes too, unless the file ends its entries with a comma.
/// - A new member or element goes after the last entry (an element may also go before another), in the
///   siblings' style: on their line in a one-line container, on a line of its own at their indentation
///   otherwise. It gets no comment; its comma goes right after the value before it, before that value's
///   comment.
///
/// Strict JSON (``allowsComments`` false) never gains a comment, and a comma after the last entry only
/// where the file already writes one (which strict JSON cannot).
struct JSONEditor: TextEditor {
    /// Whether the text is JSONC: comments and trailing commas are read (and kept).
    var allowsComments: Bool
    /// The syntax of the text its codec wrote last, used when `text` is that text byte for byte.
    var lastWritten: SyntaxMemo<JSONSyntax>? = nil

    func splices(for edits: [DocumentEdit], in text: [UInt8], holding old: JSONValue) throws -> [TextSplice] {
        let syntax = try self.syntax(of: text, lookingUp: edits.count)
        let writer = JSONEditWriter(syntax: syntax)
        var plans: [Int: ContainerPlan] = [:]
        var order: [Int] = []
        func plan(for path: [ValuePath.Component]) throws -> Int {
            let node = try syntax.node(at: path)
            guard let container = node.container else {
                throw TextEditRefusal(path: path, reason: "the JSON text holds no array or object at this path")
            }
            if plans[container.open] == nil {
                plans[container.open] = ContainerPlan(
                    container: container, inMultilineContext: try writer.isMultilineContext(of: path))
                order.append(container.open)
            }
            return container.open
        }
        var splices: [TextSplice] = []
        for edit in edits {
            switch edit {
            case .replace(let path, let value):
                let node = try syntax.node(at: path)
                let text = try writer.fresh(
                    value, indentation: Array(JSONSyntax.indentation(in: syntax.text, lineStart: node.lineStart)),
                    multiline: try writer.isMultilineContext(of: path))
                splices.append(TextSplice(node.range, text))
            case .addMember(let path, let key, let value):
                plans[try plan(for: path)]!.appended.append((key, value))
            case .addElement(let path, let before, let value):
                let open = try plan(for: path)
                if before >= plans[open]!.container.entries.count {
                    plans[open]!.appended.append((nil, value))
                } else {
                    plans[open]!.insertedBefore[before, default: []].append(value)
                }
            case .removeMember(let path, let key):
                let open = try plan(for: path)
                guard let index = plans[open]!.container.index(ofKey: key) else {
                    throw TextEditRefusal(
                        path: path + [.key(key)], reason: "the JSON text holds no member at this path")
                }
                plans[open]!.removed.insert(index)
            case .removeElement(let path, let index):
                let open = try plan(for: path)
                guard plans[open]!.container.entries.indices.contains(index) else {
                    throw TextEditRefusal(
                        path: path + [.index(index)], reason: "the JSON text holds no element at this path")
                }
                plans[open]!.removed.insert(index)
            }
        }
        for open in order {
            splices += try writer.splices(for: plans[open]!)
        }
        return splices
    }
}

extension JSONEditor {
    /// The syntax tree of `text` for `edits` edits: a few edits look their keys up in the entries (of the
    /// tree the codec's read-back kept, where it read this very text), many in an index of every object's keys.
    private func syntax(of text: [UInt8], lookingUp edits: Int) throws -> JSONSyntax {
        let indexingKeys = edits > 8
        if !indexingKeys, let remembered = lastWritten?.syntax(of: text) { return remembered }
        return try JSONSyntax(text, comments: allowsComments, indexingKeys: indexingKeys)
    }
}

/// The entries one array or object gains and loses.
private struct ContainerPlan {
    let container: JSONSyntax.Container
    /// Whether the container's own container spans lines (for the root, whether the text does): an empty
    /// container that gains entries is written over lines then.
    let inMultilineContext: Bool
    var removed: Set<Int> = []
    /// New elements before old element `index`, in order.
    var insertedBefore: [Int: [JSONValue]] = [:]
    /// New entries after the last (a member's key, or nil for an element), in order.
    var appended: [(key: String?, value: JSONValue)] = []
}

/// Writes the splices of edits in the style of the text around them.
private struct JSONEditWriter {
    let syntax: JSONSyntax
    /// Whether the text spans lines: a root written anew is written over lines then.
    private let textHasLines: Bool

    init(syntax: JSONSyntax) {
        self.syntax = syntax
        textHasLines = syntax.text.contains(UInt8(ascii: "\n"))
    }

    private var text: [UInt8] { syntax.text }

    /// Whether what stands at `path` stands in a container that spans lines (for the root, in a text that
    /// does): a value written anew there is written over lines.
    func isMultilineContext(of path: [ValuePath.Component]) throws -> Bool {
        guard !path.isEmpty else { return textHasLines }
        return try syntax.node(at: Array(path.dropLast())).container?.spansLines ?? false
    }

    // MARK: Entries gained and lost

    func splices(for plan: ContainerPlan) throws -> [TextSplice] {
        let container = plan.container
        let entries = container.entries
        guard !entries.isEmpty else { return try filling(plan) }
        var splices: [TextSplice] = []
        let trailingComma = entries[entries.count - 1].comma != nil
        let lastKept = plan.removed.isEmpty ? entries.count - 1 : entries.indices.last { !plan.removed.contains($0) }

        if plan.removed.count == entries.count, plan.appended.isEmpty, !holdsComments(container) {
            return [TextSplice((container.open + 1)..<container.close, [])]
        }
        for run in runs(of: plan.removed) {
            splices.append(.remove(removal(of: run, in: container)))
        }
        for (index, values) in plan.insertedBefore {
            splices += try insertions(of: values, before: index, in: container)
        }
        guard let lastKept else {
            // Every entry goes and new ones come: they take the place of the old ones.
            if !plan.appended.isEmpty {
                splices = try replacingAll(plan)
            }
            return splices
        }
        let anchor = entries[lastKept]
        if plan.appended.isEmpty {
            if lastKept < entries.count - 1, !trailingComma, let comma = anchor.comma {
                splices.append(.remove(comma..<(comma + 1)))
            }
            return splices
        }
        if anchor.comma == nil {
            splices.append(.insert([UInt8(ascii: ",")], at: anchor.value.range.upperBound))
        }
        let ownLine = startsLine(lastKept, in: container)
        let indentation = Array(JSONSyntax.indentation(in: text, lineStart: anchor.lineStart))
        let lead: [UInt8] = ownLine ? [UInt8(ascii: "\n")] + indentation : oneLineLead(of: lastKept, in: container)
        let separator = keySeparator(of: anchor)
        var added: [UInt8] = []
        for (position, entry) in plan.appended.enumerated() {
            added += lead
            added += try entryText(
                entry, separator: separator, indentation: indentation, multiline: ownLine || container.spansLines)
            if position < plan.appended.count - 1 || trailingComma { added.append(UInt8(ascii: ",")) }
        }
        splices.append(.insert(added, at: anchor.tailEnd))
        return splices
    }

    /// Consecutive indices of `removed`, as closed ranges in order.
    private func runs(of removed: Set<Int>) -> [ClosedRange<Int>] {
        var runs: [ClosedRange<Int>] = []
        for index in removed.sorted() {
            if let last = runs.last, last.upperBound == index - 1 {
                runs[runs.count - 1] = last.lowerBound...index
            } else {
                runs.append(index...index)
            }
        }
        return runs
    }

    /// The bytes that go with the entries `run`: on lines of their own (a comment before an entry on its
    /// line is its own), those lines and the comment lines directly above; first on a line that others
    /// share, the entries, their tails and the spaces after (the next entry takes their place on the line);
    /// elsewhere on a line, their leads and tails.
    private func removal(of run: ClosedRange<Int>, in container: JSONSyntax.Container) -> Range<Int> {
        let first = container.entries[run.lowerBound]
        let last = container.entries[run.upperBound]
        if startsLine(run.lowerBound, in: container), endsLine(at: last.tailEnd) {
            return ownComments(of: run.lowerBound, in: container)..<lineBreakEnd(at: last.tailEnd)
        }
        // The first on their line, with entries after them there: those move to the start of the line.
        if run.lowerBound == 0 || startsLine(run.lowerBound, in: container) {
            guard run.upperBound < container.entries.count - 1 else {
                return run.lowerBound == 0
                    ? first.start..<last.tailEnd : container.leadStart(of: run.lowerBound)..<last.tailEnd
            }
            var end = last.tailEnd
            while end < text.count, text[end] == UInt8(ascii: " ") || text[end] == UInt8(ascii: "\t") { end += 1 }
            return first.start..<end
        }
        return container.leadStart(of: run.lowerBound)..<last.tailEnd
    }

    /// Elements written before old element `index`: on lines of their own above it (and its comments) when
    /// it starts a line, before it on its line otherwise.
    private func insertions(
        of values: [JSONValue], before index: Int, in container: JSONSyntax.Container
    ) throws -> [TextSplice] {
        let entry = container.entries[index]
        let indentation = Array(JSONSyntax.indentation(in: text, lineStart: entry.lineStart))
        if startsLine(index, in: container) {
            let at = ownComments(of: index, in: container)
            return try values.map { value in
                .insert(
                    indentation + (try fresh(value, indentation: indentation, multiline: true)) + Array(",\n".utf8),
                    at: at)
            }
        }
        let lead = oneLineLead(of: index, in: container)
        return try values.map { value in
            .insert(
                try fresh(value, indentation: indentation, multiline: container.spansLines) + [UInt8(ascii: ",")]
                    + lead, at: entry.start)
        }
    }

    /// An array or object whose entries all go and others come: the new ones in the place of the old (and
    /// of the comment lines directly above the first, which were its own).
    private func replacingAll(_ plan: ContainerPlan) throws -> [TextSplice] {
        let entries = plan.container.entries
        let first = entries[0]
        let ownLine = startsLine(0, in: plan.container)
        let indentation = Array(JSONSyntax.indentation(in: text, lineStart: first.lineStart))
        let between: [UInt8] =
            ownLine
            ? Array(",\n".utf8) + indentation
            : [UInt8(ascii: ",")] + oneLineLead(of: entries.count - 1, in: plan.container)
        let multiline = ownLine || plan.container.spansLines
        var replacement: [UInt8] = ownLine ? indentation : []
        for (position, entry) in plan.appended.enumerated() {
            if position > 0 { replacement += between }
            replacement += try entryText(
                entry, separator: keySeparator(of: first), indentation: indentation, multiline: multiline)
        }
        if entries[entries.count - 1].comma != nil { replacement.append(UInt8(ascii: ",")) }
        let from = ownLine ? ownComments(of: 0, in: plan.container) : first.start
        return [TextSplice(from..<entries[entries.count - 1].tailEnd, replacement)]
    }

    /// An empty array or object that gains entries: over lines (at its indentation plus one unit) when it
    /// spans lines or stands in a container that does, on one line otherwise; comments inside it stay.
    private func filling(_ plan: ContainerPlan) throws -> [TextSplice] {
        let container = plan.container
        guard !plan.appended.isEmpty else { return [] }
        let outer = Array(JSONSyntax.indentation(in: text, lineStart: container.openLineStart))
        let inner = outer + syntax.indentUnit
        let multiline = container.spansLines || plan.inMultilineContext
        let interior = (container.open + 1)..<container.close
        let hasComments = text[interior].contains(UInt8(ascii: "/"))
        var items: [[UInt8]] = []
        for entry in plan.appended {
            items.append(try entryText(entry, separator: syntax.keySeparator, indentation: inner, multiline: multiline))
        }
        if multiline {
            let closeLine = lineStart(of: container.close)
            let joined = Array(items.joined(separator: Array(",\n".utf8) + inner))
            if !hasComments {
                return [TextSplice(interior, [UInt8(ascii: "\n")] + inner + joined + [UInt8(ascii: "\n")] + outer)]
            }
            if closeLine > container.open, text[closeLine..<container.close].allSatisfy(JSONSyntax.isBlank) {
                return [.insert(inner + joined + [UInt8(ascii: "\n")], at: closeLine)]
            }
        }
        let joined = Array(items.joined(separator: syntax.isCompact ? [UInt8(ascii: ",")] : Array(", ".utf8)))
        if !hasComments { return [TextSplice(interior, joined)] }
        let space: [UInt8] = JSONSyntax.isBlank(text[container.close - 1]) ? [] : [UInt8(ascii: " ")]
        return [.insert(space + joined + (space.isEmpty ? [] : [UInt8(ascii: " ")]), at: container.close)]
    }

    // MARK: Reading the layout

    /// Whether entry `index` is on another line than the entry before it (or the opening bracket): a line
    /// break in its lead.
    private func startsLine(_ index: Int, in container: JSONSyntax.Container) -> Bool {
        container.entries[index].lineStart > container.leadStart(of: index)
    }

    /// Whether only spaces and tabs stand between `offset` and the end of its line (or of the text).
    private func endsLine(at offset: Int) -> Bool {
        var position = offset
        while position < text.count, text[position] == UInt8(ascii: " ") || text[position] == UInt8(ascii: "\t") {
            position += 1
        }
        return position == text.count || text[position] == UInt8(ascii: "\n") || text[position] == UInt8(ascii: "\r")
    }

    /// The start of the next line after `offset`, which ends a line (the end of the text on the last).
    private func lineBreakEnd(at offset: Int) -> Int {
        var position = offset
        while position < text.count, text[position] != UInt8(ascii: "\n") { position += 1 }
        return min(position + 1, text.count)
    }

    /// Where the line `offset` is on starts.
    private func lineStart(of offset: Int) -> Int {
        var position = offset
        while position > 0, text[position - 1] != UInt8(ascii: "\n") { position -= 1 }
        return position
    }

    /// Where the comment lines directly above entry `index` (on lines of their own, no blank line between
    /// them and it) start; the start of the entry's line where there are none.
    private func ownComments(of index: Int, in container: JSONSyntax.Container) -> Int {
        let entry = container.entries[index]
        // The rest of the line the lead starts on belongs to the entry before (or the opening bracket).
        var position = endOfLine(from: container.leadStart(of: index), before: entry.lineStart) + 1
        var block: Int?
        while position < entry.lineStart {
            let line = position
            while position < entry.lineStart, JSONSyntax.isBlank(text[position]), text[position] != UInt8(ascii: "\r") {
                position += 1
            }
            if position >= entry.lineStart || text[position] == UInt8(ascii: "\r")
                || text[position] == UInt8(ascii: "\n")
            {
                block = nil  // a blank line
            } else if block == nil {
                block = line
            }
            position = endOfLine(from: position, before: entry.lineStart) + 1
        }
        return block ?? entry.lineStart
    }

    /// The line break that ends the line `offset` is on, through the comments on it (a block comment may
    /// span lines); `limit` at the latest.
    private func endOfLine(from offset: Int, before limit: Int) -> Int {
        var position = offset
        while position < limit, text[position] != UInt8(ascii: "\n") {
            if text[position] == UInt8(ascii: "/"), let end = try? JSONSyntax.commentEnd(in: text, at: position) {
                position = end
            } else {
                position += 1
            }
        }
        return min(position, limit)
    }

    /// What stands between entries on one line, as entry `index`'s lead shows it (`", "` without the
    /// comma: a space, or nothing in a compact file).
    private func oneLineLead(of index: Int, in container: JSONSyntax.Container) -> [UInt8] {
        if index > 0 {
            let lead = text[container.leadStart(of: index)..<container.entries[index].start]
            if lead.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { return Array(lead) }
        }
        return syntax.isCompact ? [] : [UInt8(ascii: " ")]
    }

    /// How a member separates its key from its value, or the file's way where it holds a comment.
    private func keySeparator(of entry: JSONSyntax.Entry) -> [UInt8] {
        let separator = text[entry.keyEnd..<entry.value.range.lowerBound]
        return separator.contains(UInt8(ascii: "/")) || separator.contains(UInt8(ascii: "\n"))
            ? syntax.keySeparator : Array(separator)
    }

    /// Whether a comment stands anywhere in the container outside its values.
    private func holdsComments(_ container: JSONSyntax.Container) -> Bool {
        var position = container.open + 1
        for entry in container.entries {
            if text[position..<entry.start].contains(UInt8(ascii: "/")) { return true }
            if text[entry.keyEnd..<entry.value.range.lowerBound].contains(UInt8(ascii: "/")) { return true }
            position = entry.value.range.upperBound
        }
        return text[position..<container.close].contains(UInt8(ascii: "/"))
    }

    // MARK: Writing anew

    /// A new entry: a member's key and separator, then the value.
    private func entryText(
        _ entry: (key: String?, value: JSONValue), separator: [UInt8], indentation: [UInt8], multiline: Bool
    ) throws -> [UInt8] {
        var bytes: [UInt8] = []
        if let key = entry.key {
            bytes += try JSONWriter.bytes(of: .string(key), pretty: false)
            bytes += separator
        }
        bytes += try fresh(entry.value, indentation: indentation, multiline: multiline)
        return bytes
    }

    /// `value` as JSON text: an array or object over lines (each entry on a line of its own at
    /// `indentation` plus the file's unit) when `multiline`, on one line otherwise; keys in order.
    func fresh(_ value: JSONValue, indentation: [UInt8], multiline: Bool) throws -> [UInt8] {
        let items: [[UInt8]]
        let brackets: (UInt8, UInt8)
        let inner = indentation + syntax.indentUnit
        switch value {
        case .array(let elements):
            brackets = (UInt8(ascii: "["), UInt8(ascii: "]"))
            items = try elements.map { try fresh($0, indentation: inner, multiline: multiline) }
        case .object(let members):
            brackets = (UInt8(ascii: "{"), UInt8(ascii: "}"))
            items = try members.sorted { $0.key < $1.key }.map { member in
                try entryText(
                    (member.key, member.value), separator: syntax.keySeparator, indentation: inner, multiline: multiline
                )
            }
        default:
            return try JSONWriter.bytes(of: value, pretty: false)
        }
        guard !items.isEmpty else { return [brackets.0, brackets.1] }
        if multiline {
            let newline = [UInt8(ascii: "\n")]
            return [brackets.0] + newline + inner
                + Array(items.joined(separator: [UInt8(ascii: ",")] + newline + inner))
                + newline + indentation + [brackets.1]
        }
        let between: [UInt8] = syntax.isCompact ? [UInt8(ascii: ",")] : Array(", ".utf8)
        return [brackets.0] + Array(items.joined(separator: between)) + [brackets.1]
    }
}

extension JSONSyntax {
    /// Whether `byte` is a space, a tab or a carriage return.
    static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}
