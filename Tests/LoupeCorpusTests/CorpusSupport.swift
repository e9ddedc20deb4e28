import Foundation
import Loupe
import LoupeTestSupport
@testable import LoupeYAML
import Testing

/// A format of the corpus: its folder, its codec, and the reader that checks what the codec writes.
enum CorpusFormat: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case json, jsonc, toml
    #if YAML
    case yaml
    #endif

    var testDescription: String { rawValue }

    var codec: any DocumentCodec {
        switch self {
        case .json: JSONCodec()
        case .jsonc: JSONCCodec()
        case .toml: TOMLCodec()
        #if YAML
        case .yaml: YAMLCodec()
        #endif
        }
    }

    var independentParser: IndependentParser {
        switch self {
        case .json: .json
        case .jsonc: .json5
        case .toml: .tomllib
        #if YAML
        case .yaml: .yaml
        #endif
        }
    }

    /// The marker of a comment that fills a line, and of one after a value.
    var commentMarkers: [String] {
        switch self {
        case .json: []
        case .jsonc: ["//", "/*"]
        case .toml: ["#"]
        #if YAML
        case .yaml: ["#"]
        #endif
        }
    }

    /// Whether this format refuses an edit of an alias, of a value with an anchor, or of a merged key.
    var refusesAliases: Bool {
        #if YAML
        self == .yaml
        #else
        false
        #endif
    }

    /// Whether this format can hold `null` (TOML cannot).
    var holdsNull: Bool { self != .toml }
}

/// One file of the corpus, as its bytes are.
struct CorpusFile: Sendable {
    let name: String
    let format: CorpusFormat
    let data: Data
    var text: String { String(decoding: data, as: UTF8.self) }

    /// The seed of this file's edits: the same edits on every run (FNV-1a of the name).
    var seed: UInt64 {
        name.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    /// Every file of `format`, by name.
    static func all(of format: CorpusFormat) throws -> [CorpusFile] {
        let folder = try #require(Bundle.module.url(forResource: "Corpus", withExtension: nil)).appendingPathComponent(
            format.rawValue)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasSuffix("." + format.rawValue)
        }.sorted()
        return try names.map { name in
            CorpusFile(
                name: format.rawValue + "/" + name, format: format,
                data: try Data(contentsOf: folder.appendingPathComponent(name)))
        }
    }
}

/// What a format's edits came to.
struct CorpusTally: CustomStringConvertible {
    var edits = 0
    var kept = 0
    var changedOtherBytes = 0
    var wrongValue = 0
    var refused = 0
    var failed = 0
    /// The edits of each kind that were not kept (refusals aside).
    var notKept: [CorpusEdit.Kind: Int] = [:]

    var description: String {
        let kinds = CorpusEdit.Kind.allCases.compactMap { kind in notKept[kind].map { "\(kind.rawValue) \($0)" } }
        return "edits \(edits), kept \(kept), changed-other-bytes \(changedOtherBytes), wrong-value \(wrongValue), "
            + "refused \(refused) (allowed), failed \(failed)"
            + (kinds.isEmpty ? "" : "; not kept: " + kinds.joined(separator: ", "))
    }
}

/// A write the codec made, to be checked.
struct WrittenEdit {
    let file: CorpusFile
    let old: JSONValue
    let edit: CorpusEdit
    let text: String
}

/// One random change of a document at one path, and the document it makes.
struct CorpusEdit: CustomStringConvertible {
    enum Kind: String, CaseIterable {
        case replaceSame = "set to a value of its type"
        case replaceOther = "set to a value of another type"
        case removeMember = "remove a member"
        case removeElement = "remove an element"
        case addMember = "add a member"
        case addElement = "add an element"
    }

    let kind: Kind
    /// Where the edit is: the value replaced or removed, or the member or element added (the new index).
    let path: [ValuePath.Component]
    /// The whole document after the edit.
    let document: JSONValue

    var description: String { "\(kind.rawValue) at \(ValuePath(path))" }

    /// The value at `path` after the edit (nil for a removal).
    var newValue: JSONValue? { document.valueIfAny(at: path) }

    /// Edit number `number` of a file: the kinds take turns (a kind with no place in the document gives its
    /// turn to the next), at a random place of that kind.
    static func random(
        in document: JSONValue, number: Int, format: CorpusFormat, using generator: inout SeededGenerator
    ) -> CorpusEdit? {
        var places = Places()
        places.collect(document, at: [])
        let kinds = Kind.allCases
        for offset in kinds.indices {
            let kind = kinds[(number + offset) % kinds.count]
            if let edit = make(kind, in: document, places: places, format: format, using: &generator) { return edit }
        }
        return nil
    }

    private static func make(
        _ kind: Kind, in document: JSONValue, places: Places, format: CorpusFormat,
        using generator: inout SeededGenerator
    ) -> CorpusEdit? {
        switch kind {
        case .replaceSame:
            guard let path = places.scalars.randomElement(using: &generator), let old = document.valueIfAny(at: path),
                let value = CorpusValues.sameType(as: old, format: format, using: &generator)
            else { return nil }
            return CorpusEdit(kind: kind, path: path, document: document.setting(value, at: path))
        case .replaceOther:
            guard let path = places.scalars.randomElement(using: &generator), let old = document.valueIfAny(at: path)
            else { return nil }
            let value = CorpusValues.otherType(than: old, format: format, using: &generator)
            return CorpusEdit(kind: kind, path: path, document: document.setting(value, at: path))
        case .removeMember:
            guard let path = places.leafMembers.randomElement(using: &generator) else { return nil }
            return CorpusEdit(kind: kind, path: path, document: document.removing(at: path))
        case .removeElement:
            guard let path = places.elements.randomElement(using: &generator) else { return nil }
            return CorpusEdit(kind: kind, path: path, document: document.removing(at: path))
        case .addMember:
            guard let object = places.objects.randomElement(using: &generator),
                case .object(let members)? = document.valueIfAny(at: object)
            else {
                // An empty file: its document is nothing yet, and takes a first key.
                guard document == .null || document == .object([:]) else { return nil }
                let key = CorpusValues.newKey(avoiding: [], using: &generator)
                return CorpusEdit(
                    kind: kind, path: [.key(key)],
                    document: .object([key: CorpusValues.newScalar(format: format, using: &generator)]))
            }
            let key = CorpusValues.newKey(avoiding: Set(members.keys), using: &generator)
            let value = CorpusValues.newScalar(format: format, using: &generator)
            let path = object + [.key(key)]
            return CorpusEdit(kind: kind, path: path, document: document.setting(value, at: path))
        case .addElement:
            guard let array = places.arrays.randomElement(using: &generator),
                case .array(let elements)? = document.valueIfAny(at: array)
            else { return nil }
            let index = Int.random(in: 0...elements.count, using: &generator)
            let value = CorpusValues.newElement(like: elements, format: format, using: &generator)
            var grown = elements
            grown.insert(value, at: index)
            return CorpusEdit(
                kind: kind, path: array + [.index(index)], document: document.setting(.array(grown), at: array))
        }
    }
}

/// The places of a document where each kind of edit can be made.
struct Places {
    var scalars: [[ValuePath.Component]] = []
    var leafMembers: [[ValuePath.Component]] = []
    var elements: [[ValuePath.Component]] = []
    var objects: [[ValuePath.Component]] = []
    var arrays: [[ValuePath.Component]] = []

    mutating func collect(_ value: JSONValue, at path: [ValuePath.Component]) {
        switch value {
        case .object(let members):
            objects.append(path)
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                let memberPath = path + [.key(key)]
                if !member.isContainer { leafMembers.append(memberPath) }
                collect(member, at: memberPath)
            }
        case .array(let values):
            arrays.append(path)
            for (index, element) in values.enumerated() {
                elements.append(path + [.index(index)])
                collect(element, at: path + [.index(index)])
            }
        default:
            if !path.isEmpty { scalars.append(path) }
        }
    }
}

/// The values the random edits write.
enum CorpusValues {
    /// Strings a reader may take for another type, or that need quoting, beside plain ones.
    static let trickyStrings = [
        "yes", "no", "on", "1", "3.5", "null", "true", "", "a: b", "a #b", "- x", "[x]", "{x}", "it's \"quoted\"",
        "naïve 日本",
    ]

    static func newString(using generator: inout SeededGenerator) -> String {
        if Int.random(in: 0..<4, using: &generator) == 0 { return trickyStrings.randomElement(using: &generator)! }
        return "corpus edit \(Int.random(in: 100...999, using: &generator))"
    }

    static func sameType(as old: JSONValue, format: CorpusFormat, using generator: inout SeededGenerator) -> JSONValue?
    {
        switch old {
        case .bool(let value): return .bool(!value)
        case .integer(let value):
            var new = Int.random(in: -1000...100_000, using: &generator)
            if new == value { new += 1 }
            return .integer(new)
        case .double, .exactNumber:
            return .double(Double(Int.random(in: 1...99_999, using: &generator)) / 100 + 0.25)
        case .string(let value):
            var new = newString(using: &generator)
            if new == value { new += "!" }
            return .string(new)
        case .null: return nil
        case .array, .object: return nil
        }
    }

    static func otherType(
        than old: JSONValue, format: CorpusFormat, using generator: inout SeededGenerator
    ) -> JSONValue {
        var choices: [JSONValue] = [
            .integer(Int.random(in: 0...9999, using: &generator)), .bool(Bool.random(using: &generator)),
            .string(newString(using: &generator)), .double(12.5), .array([.string("corpus"), .integer(7)]),
            .object(["corpus": .string("edit"), "n": .integer(2)]),
        ]
        if format.holdsNull { choices.append(.null) }
        let kind = old.kind
        choices.removeAll { $0.kind == kind || (old == .null && $0 == .null) }
        return choices.randomElement(using: &generator)!
    }

    static func newScalar(format: CorpusFormat, using generator: inout SeededGenerator) -> JSONValue {
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: .integer(Int.random(in: 0...9999, using: &generator))
        case 1: .bool(Bool.random(using: &generator))
        default: .string(newString(using: &generator))
        }
    }

    /// An element for an array: an object for an array of objects (a table, a task), else a scalar of the
    /// first element's type.
    static func newElement(
        like elements: [JSONValue], format: CorpusFormat, using generator: inout SeededGenerator
    ) -> JSONValue {
        switch elements.first {
        case .object?: return .object(["name": .string(newString(using: &generator))])
        case .array?: return .array([.string(newString(using: &generator))])
        case let first?:
            return sameType(as: first, format: format, using: &generator)
                ?? newScalar(format: format, using: &generator)
        case nil: return .string(newString(using: &generator))
        }
    }

    static func newKey(avoiding keys: Set<String>, using generator: inout SeededGenerator) -> String {
        let candidates =
            Int.random(in: 0..<5, using: &generator) == 0
            ? ["yes", "1", "on", "key with space", "dotted.key", "null"]
            : ["corpus_key_\(Int.random(in: 100...999, using: &generator))"]
        let key = candidates.randomElement(using: &generator)!
        return keys.contains(key) ? key + "_new" : key
    }
}

enum CorpusEdits {
    static let editsPerFile = 12

    /// Whether to print every edit that kept the rest of its file, with its diff (`LOUPE_CORPUS_VERBOSE=1`).
    static let verbose = ProcessInfo.processInfo.environment["LOUPE_CORPUS_VERBOSE"] == "1"

    /// Whether a refusal is one YAML must make: it names an alias, an anchor or a merge key, the file has one,
    /// and the path it names (where it names one) is on the way to the edit's path or under it.
    static func isAliasRefusal(_ error: SettingsError, of edit: CorpusEdit, in file: CorpusFile) -> Bool {
        let reason = error.reason.lowercased()
        guard ["alias", "anchor", "merge"].contains(where: reason.contains), !reason.contains("does not read back"),
            file.text.range(of: #"(^|[\s\[{,:-])[&*][A-Za-z0-9_.-]+"#, options: .regularExpression) != nil
                || file.text.contains("<<:")
        else { return false }
        guard let path = error.path?.components else { return true }
        return path.starts(with: edit.path) || edit.path.starts(with: path)
    }

    /// Why the other reader's `reading` of the written text is not the edit's document, or nil when it is.
    ///
    /// Where the other reader sees the original as Loupe does, it must see the written text as the new
    /// document. Where they differ on the original (YAML 1.1's `on:` key, a date), the written text must differ
    /// from the other reader's original only by the edit.
    static func readBackProblem(
        _ reading: JSONValue, of write: WrittenEdit, loupeOld: JSONValue, otherOld: JSONValue?
    ) -> String? {
        // An empty YAML file: no document to PyYAML (None), an empty mapping to Loupe, which a write fills.
        let emptyToBoth = otherOld == .null && loupeOld == .object([:])
        if let otherOld, otherOld.isSameValue(as: loupeOld) || emptyToBoth {
            if reading.isSameValue(as: write.edit.document) { return nil }
            let path = reading.firstDifferingPath(from: write.edit.document) ?? []
            return
                "the other reader sees another value at \(ValuePath(path)): \(reading.valueIfAny(at: path).map { "\($0)" } ?? "nothing") for \(write.edit.document.valueIfAny(at: path).map { "\($0)" } ?? "nothing")"
        }
        guard let otherOld else { return nil }
        // The readers disagree on the original: apply the edit to the other reader's view of it.
        let expected: JSONValue
        switch write.edit.kind {
        case .removeMember, .removeElement:
            guard otherOld.valueIfAny(at: write.edit.path) != nil else { return nil }
            expected = otherOld.removing(at: write.edit.path)
        case .addElement:
            let array = Array(write.edit.path.dropLast())
            guard case .array(var elements)? = otherOld.valueIfAny(at: array),
                case .index(let index)? = write.edit.path.last,
                index <= elements.count, let value = write.edit.newValue
            else { return nil }
            elements.insert(value, at: index)
            expected = otherOld.setting(.array(elements), at: array)
        default:
            guard otherOld.valueIfAny(at: Array(write.edit.path.dropLast())) != nil, let value = write.edit.newValue
            else { return nil }
            expected = otherOld.setting(value, at: write.edit.path)
        }
        if reading.isSameValue(as: expected) { return nil }
        let path = reading.firstDifferingPath(from: expected) ?? []
        return
            "the other reader sees another value at \(ValuePath(path)) (its reading of the original differs from Loupe's)"
    }
}

/// How a written text differs from the old one, by lines: the lines both share at the start and at the end,
/// and the run of lines between them that the write replaced.
struct LineChange {
    let oldLines: [String]
    let newLines: [String]
    /// Lines equal at the start.
    let prefix: Int
    /// Lines equal at the end (not overlapping the prefix).
    let suffix: Int

    init(old: String, new: String, equal: (String, String) -> Bool = (==)) {
        // Split at "\n" as bytes: a Swift `Character` takes "\r\n" for one, which no "\n" matches.
        oldLines = Self.lines(of: old)
        newLines = Self.lines(of: new)
        var prefix = 0
        while prefix < oldLines.count, prefix < newLines.count, equal(oldLines[prefix], newLines[prefix]) {
            prefix += 1
        }
        var suffix = 0
        while suffix < oldLines.count - prefix, suffix < newLines.count - prefix,
            equal(oldLines[oldLines.count - 1 - suffix], newLines[newLines.count - 1 - suffix])
        {
            suffix += 1
        }
        self.prefix = prefix
        self.suffix = suffix
    }

    /// The lines of `text`, each with its "\r" where the text has CRLF line ends.
    static func lines(of text: String) -> [String] {
        text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// The old lines the write replaced.
    var removed: ArraySlice<String> { oldLines[prefix..<(oldLines.count - suffix)] }
    /// The lines the write put in their place.
    var inserted: ArraySlice<String> { newLines[prefix..<(newLines.count - suffix)] }

    /// Whether the change removes the first entry of a YAML sequence element written compactly
    /// (`- name: x` over `  run: y`): the removed lines go, and the entry after them moves up onto the dash,
    /// as the element's first entry (`- run: y`).
    var movesUpToItsDash: Bool {
        guard removed.count >= 2, inserted.count == 1, let first = removed.first, let last = removed.last else {
            return false
        }
        let indentation = first.prefix { $0 == " " }
        guard first.dropFirst(indentation.count).hasPrefix("- ") else { return false }
        return inserted.first == indentation + "- " + last.drop { $0 == " " }
    }

    /// Lines compared without the commas that separate entries: removing the last entry of a JSON object
    /// takes the comma off the line before, and adding one after it puts one there.
    static func sameButSeparators(_ a: String, _ b: String) -> Bool {
        a.filter { $0 != "," }.trimmingCharacters(in: .whitespacesAndNewlines)
            == b.filter { $0 != "," }.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Why this change is more than `edit` of `old` needs, or nil when it is no more:
    /// - a one-line scalar set to a one-line scalar: exactly one line differs, and its end-of-line comment stays;
    /// - another set: the old value's line(s) alone are replaced (a one-line value: one line);
    /// - a removal: one run of lines is removed, or one line changes (a container written on one line, or one
    ///   left empty), apart from separator commas;
    /// - an addition: one run of lines is inserted, or one line changes (a container written on one line),
    ///   apart from separator commas;
    /// and every comment line of the old text that is not in the removed lines is still there. A YAML edit
    /// through an alias, or of a value an anchor shares, is judged as ``sharedEditProblem(_:)`` says.
    func judge(_ edit: CorpusEdit, of old: JSONValue, markers: [String]) -> String? {
        #if YAML
        let shared = markers == ["#"] ? sharedEditProblem(edit) : .none
        if case .some(.some(let problem)) = shared { return problem }
        #else
        let shared: String?? = .none
        #endif
        if shared == nil { if let problem = kindProblem(edit, of: old, markers: markers) { return problem } }
        let isRemoval = edit.kind == .removeMember || edit.kind == .removeElement
        let oldComments = Self.commentLineIndices(of: oldLines, markers: markers)
        let kept = oldComments.filter { !isRemoval || $0 < prefix || $0 >= oldLines.count - suffix }.map {
            oldLines[$0].trimmingCharacters(in: .whitespacesAndNewlines)
        }
        var left = Self.commentLineIndices(of: newLines, markers: markers).map {
            newLines[$0].trimmingCharacters(in: .whitespacesAndNewlines)
        }
        for comment in kept {
            guard let index = left.firstIndex(of: comment) else { return "the comment line \"\(comment)\" is gone" }
            left.remove(at: index)
        }
        if !isRemoval, let added = left.first { return "a comment line \"\(added)\" was added" }
        if isRemoval, inserted.isEmpty, let problem = removalCommentProblem(markers: markers) { return problem }
        return nil
    }

    /// The lines `edit` of its kind may change, as ``judge(_:of:markers:)`` describes them: why more changed.
    private func kindProblem(_ edit: CorpusEdit, of old: JSONValue, markers: [String]) -> String? {
        switch edit.kind {
        case .replaceSame, .replaceOther:
            let oldValue = old.valueIfAny(at: edit.path)
            // A YAML string with no line break may still be written over several lines, as a folded block (`>-`).
            let oneLineOld =
                oldValue.map { !$0.isContainer && !($0.stringValue?.contains("\n") ?? false) } ?? false
                && !replacesBlockScalar && !replacesMultiLineString
            let oneLineNew =
                edit.newValue.map { !$0.isContainer && !($0.stringValue?.contains("\n") ?? false) } ?? false
            // A YAML key that a merge key (`<<`) brings in, changed (set, or edited inside): the mapping's own
            // entry, added (its key's line, and the lines of its value below it, further in), nothing removed.
            let madeOwn = markers == ["#"] && removed.isEmpty && madeOwnEntry(on: edit.path)
            if madeOwn {
                // Judged by its comments alone, below.
            } else if oneLineOld && oneLineNew {
                guard removed.count == 1, inserted.count == 1 else {
                    return "a one-line set changed \(removed.count) line(s) into \(inserted.count)"
                }
                if let comment = lostTrailingComment(markers: markers) {
                    return "the end-of-line comment \"\(comment)\" is lost"
                }
            } else if oneLineOld {
                guard removed.count == 1 else { return "setting a one-line value changed \(removed.count) line(s)" }
                if let comment = lostTrailingComment(markers: markers) {
                    return "the end-of-line comment \"\(comment)\" is lost"
                }
            }
        case .removeMember, .removeElement:
            let loose = LineChange(
                old: oldLines.joined(separator: "\n"), new: newLines.joined(separator: "\n"),
                equal: Self.sameButSeparators)
            let emptied = edit.document.valueIfAny(at: Array(edit.path.dropLast()))?.isEmptyContainer ?? false
            if !(loose.inserted.isEmpty || (loose.inserted.count == 1 && (loose.removed.count == 1 || emptied))
                || loose.movesUpToItsDash || loose.keepsTheLineOfItsBracket)
            {
                return "a removal replaced \(loose.removed.count) line(s) by \(loose.inserted.count)"
            }
            // A container left empty on the line of its one entry (`- uses: x # v1` made `- {}`) loses the
            // entry's own comment with it.
            if loose.removed.count == 1, loose.inserted.count == 1, !emptied,
                let comment = loose.lostTrailingComment(markers: markers)
            {
                return "the end-of-line comment \"\(comment)\" is lost"
            }
        case .addMember, .addElement:
            let loose = LineChange(
                old: oldLines.joined(separator: "\n"), new: newLines.joined(separator: "\n"),
                equal: Self.sameButSeparators)
            if !(loose.removed.isEmpty || loose.removed.count == 1) {
                return "an addition replaced \(loose.removed.count) line(s) by \(loose.inserted.count)"
            }
            if let comment = loose.lostTrailingComment(markers: markers) {
                return "the end-of-line comment \"\(comment)\" is lost"
            }
        }
        return nil
    }

    #if YAML
    /// For a YAML edit whose path goes through an alias, or through (or to) a value with an anchor that
    /// aliases or merge keys (`<<`) show: why the written text is more than that edit, or nil when it is no
    /// more. Nil (no verdict) for any other edit.
    ///
    /// Such an edit writes out in full each alias that is not to show the change, and gives each mapping that
    /// merges the anchored value, as its own, the keys whose values it keeps: lines are added in several
    /// places. What it may take away is the alias lines and the lines of the entry it edits; every other line
    /// of the old text is still there, in order.
    func sharedEditProblem(_ edit: CorpusEdit) -> String?? {
        let text = Array(oldLines.joined(separator: "\n").utf8)
        guard let tree = try? YAMLSyntaxReader.read(text), var node = tree.root else { return .none }
        func isShared(_ node: YAMLSyntaxNode) -> Bool {
            node.kind == .alias || node.anchor.map(tree.aliased.contains) == true
        }
        var shared = isShared(node)
        var entry: YAMLSyntaxEntry?
        var parent: YAMLSyntaxEntry?
        for component in edit.path {
            parent = entry
            let found: YAMLSyntaxEntry? =
                switch component {
                case .key(let key): node.isMapping ? node.member(key) : nil
                case .index(let index): node.isSequence && index < node.entries.count ? node.entries[index] : nil
                }
            guard let found else {
                entry = nil
                break
            }
            entry = found
            node = found.value
            shared = shared || isShared(node)
        }
        guard shared else { return .none }
        var lineStarts = [0]
        for (offset, byte) in text.enumerated() where byte == UInt8(ascii: "\n") { lineStarts.append(offset + 1) }
        func line(of offset: Int) -> Int { lineStarts.lastIndex { $0 <= offset } ?? 0 }
        // The lines that may go: every alias's, and the edited entry's (a value set or taken out).
        var mayGo = Set<Int>()
        func visit(_ node: YAMLSyntaxNode) {
            if node.kind == .alias { mayGo.insert(line(of: node.range.lowerBound)) }
            node.entries.forEach { visit($0.value) }
        }
        if let root = tree.root { visit(root) }
        // A container a removal leaves empty is written on its key's line (`volumes: []`).
        let emptied = edit.document.valueIfAny(at: Array(edit.path.dropLast()))?.isEmptyContainer ?? false
        if let parent, emptied { mayGo.insert(line(of: parent.start)) }
        if let entry, ![.addMember, .addElement].contains(edit.kind) {
            mayGo.formUnion(
                line(of: entry.span.lowerBound)...line(of: max(entry.span.lowerBound, entry.span.upperBound - 1)))
        }
        // A line that may change keeps its end-of-line comment, unless its entry is taken out.
        let removal = [.removeMember, .removeElement].contains(edit.kind)
        for index in mayGo.sorted() where !removal || oldLines[index].contains("*") {
            guard let comment = Self.trailingComment(of: oldLines[index], markers: ["#"]) else { continue }
            if !newLines.contains(where: { $0.contains(comment) }) {
                return .some("the end-of-line comment \"\(comment)\" is lost")
            }
        }
        var next = newLines.startIndex
        for (index, old) in oldLines.enumerated() where !mayGo.contains(index) {
            guard let found = newLines[next...].firstIndex(of: old) else {
                return .some("the line \"\(old.trimmingCharacters(in: .whitespaces))\" is gone or moved")
            }
            next = found + 1
        }
        return .some(nil)
    }
    #endif

    /// Why a removed run of lines does not hold just the removed entry with its own comments, or nil: a
    /// comment line directly above the entry (no blank line between) goes with it, and a comment line after
    /// it belongs to what follows, so the run neither ends with a comment line (blank lines aside) nor starts
    /// right below one. Lines that repeat let a removed run shift up (`# c`, `x`, `# c`, `y` less its first
    /// two lines can be read as `x`, `# c` removed), so each place the run can shift to is tried.
    func removalCommentProblem(markers: [String]) -> String? {
        let comments = Set(Self.commentLineIndices(of: oldLines, markers: markers))
        func isComment(_ index: Int) -> Bool { comments.contains(index) }
        var start = prefix
        var end = oldLines.count - suffix
        var problem: String?
        while true {
            let lastIndex = (start..<end).last { !oldLines[$0].trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
            if let lastIndex, isComment(lastIndex) {
                let last = oldLines[lastIndex]
                problem =
                    problem
                    ?? "the removal took the comment line \"\(last.trimmingCharacters(in: .whitespacesAndNewlines))\" of what follows"
            } else if start > 0, isComment(start - 1), !isComment(start) {
                problem =
                    problem
                    ?? "the removal left its own comment line \"\(oldLines[start - 1].trimmingCharacters(in: .whitespacesAndNewlines))\" behind"
            } else {
                return nil
            }
            guard start > 0, oldLines[start - 1] == oldLines[end - 1] else { return problem }
            start -= 1
            end -= 1
        }
    }

    /// Whether the inserted lines are one new YAML entry whose key is a key of `path`: its first line
    /// `key:`, the others indented further.
    func madeOwnEntry(on path: [ValuePath.Component]) -> Bool {
        guard let first = inserted.first else { return false }
        let trimmed = first.trimmingCharacters(in: .whitespaces)
        let column = first.prefix { $0 == " " }.count
        let keys = path.compactMap { component -> String? in
            if case .key(let key) = component { key } else { nil }
        }
        return keys.contains { trimmed.hasPrefix($0 + ":") }
            && inserted.dropFirst().allSatisfy { $0.prefix { $0 == " " }.count > column }
    }

    /// Whether `line` opens a YAML block scalar (`key: |`, `- >-`).
    static func isBlockScalarHeader(_ line: String) -> Bool {
        line.range(of: #"(^|[:-])\s*[>|][1-9]?[-+]?[1-9]?\s*(#.*)?\r?$"#, options: .regularExpression) != nil
    }

    /// Whether the replaced lines are (the header and) the lines of a YAML block scalar (`key: >-` and the
    /// lines indented under it).
    var replacesBlockScalar: Bool {
        let isHeader = Self.isBlockScalarHeader
        func indentation(_ line: String) -> Int { line.prefix { $0 == " " }.count }
        let header: String
        let body: ArraySlice<String>
        if let first = removed.first, isHeader(first) {
            (header, body) = (first, removed.dropFirst())
        } else if prefix > 0, isHeader(oldLines[prefix - 1]) {
            (header, body) = (oldLines[prefix - 1], removed)
        } else {
            return false
        }
        return !body.isEmpty
            && body.allSatisfy {
                $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || indentation($0) > indentation(header)
            }
    }

    /// Whether the replaced lines start with a TOML multi-line string (`key = """` or `'''`, whose lines may
    /// end in `\` and so hold a value with no line break).
    var replacesMultiLineString: Bool {
        guard let first = removed.first, removed.count > 1 else { return false }
        return [String(repeating: "\"", count: 3), "'''"].contains { first.components(separatedBy: $0).count % 2 == 0 }
    }

    /// Whether a removal kept the line of the bracket the removed element stood beside, less the element
    /// (`"configurations": [{` made `"configurations": [`, or `}]` made `]`), and took the element's other lines.
    var keepsTheLineOfItsBracket: Bool {
        guard inserted.count == 1, removed.count > 1, let first = removed.first, let last = removed.last else {
            return false
        }
        let kept = inserted[inserted.startIndex].trimmingCharacters(in: .whitespacesAndNewlines)
        guard !kept.isEmpty else { return false }
        return (kept.hasSuffix("[") && first.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix(kept))
            || (kept.hasPrefix("]") && last.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix(kept))
    }

    /// An end-of-line comment of the replaced lines that none of the lines put in their place holds.
    func lostTrailingComment(markers: [String]) -> String? {
        removed.lazy.compactMap { Self.trailingComment(of: $0, markers: markers) }.first { comment in
            !inserted.contains { $0.contains(comment) }
        }
    }

    /// A short unified diff of the run of lines that changed, with two lines of context.
    var unifiedDiff: String {
        let start = max(0, prefix - 2)
        let oldEnd = min(oldLines.count, oldLines.count - suffix + 2)
        let newEnd = min(newLines.count, newLines.count - suffix + 2)
        var lines = ["@@ -\(start + 1),\(oldEnd - start) +\(start + 1),\(newEnd - start) @@"]
        lines += oldLines[start..<prefix].map { " " + $0 }
        let shown = 24
        lines += removed.prefix(shown).map { "-" + $0 }
        if removed.count > shown { lines.append("-… \(removed.count - shown) more") }
        lines += inserted.prefix(shown).map { "+" + $0 }
        if inserted.count > shown { lines.append("+… \(inserted.count - shown) more") }
        lines += oldLines[(oldLines.count - suffix)..<oldEnd].map { " " + $0 }
        return lines.joined(separator: "\n")
    }

    /// The indices of the lines that are comments alone (after indentation), not counting the lines of a YAML
    /// block scalar (text that may start with `#`).
    static func commentLineIndices(of lines: [String], markers: [String]) -> [Int] {
        var indices: [Int] = []
        var blockIndentation: Int?
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            let indentation = line.prefix { $0 == " " }.count
            if let block = blockIndentation {
                if trimmed.isEmpty || indentation > block { continue }
                blockIndentation = nil
            }
            if markers.contains(where: { trimmed.hasPrefix($0) }) {
                indices.append(index)
            } else if markers.contains("#"), isBlockScalarHeader(line) {
                blockIndentation = indentation
            }
        }
        return indices
    }

    /// The comment after a value on a line (` # c`, `// c`, `/* c */`), when the line has one outside quotes.
    static func trailingComment(of line: String, markers: [String]) -> String? {
        var quote: Character?
        var index = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            if let open = quote {
                if character == "\\" && open == "\"" {
                    index = line.index(after: index)
                } else if character == open {
                    quote = nil
                }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if let marker = markers.first(where: { line[index...].hasPrefix($0) }),
                marker != "#" || index == line.startIndex || line[line.index(before: index)] == " "
                    || line[line.index(before: index)] == "\t"
            {
                let comment = line[index...].trimmingCharacters(in: .whitespacesAndNewlines)
                return line[..<index].trimmingCharacters(in: .whitespaces).isEmpty ? nil : comment
            }
            if index < line.endIndex { index = line.index(after: index) }
        }
        return nil
    }
}

extension JSONValue {
    var isContainer: Bool {
        switch self {
        case .array, .object: true
        default: false
        }
    }

    var isEmptyContainer: Bool {
        switch self {
        case .array(let values): values.isEmpty
        case .object(let members): members.isEmpty
        default: false
        }
    }

    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The value at `path`, or nil where there is none.
    func valueIfAny(at path: some Collection<ValuePath.Component>) -> JSONValue? {
        guard let first = path.first else { return self }
        switch (self, first) {
        case (.object(let members), .key(let key)): return members[key]?.valueIfAny(at: path.dropFirst())
        case (.array(let values), .index(let index)) where values.indices.contains(index):
            return values[index].valueIfAny(at: path.dropFirst())
        default: return nil
        }
    }

    /// This value with `value` at `path` (the parent must exist; an index past the end appends).
    func setting(_ value: JSONValue, at path: some Collection<ValuePath.Component>) -> JSONValue {
        guard let first = path.first else { return value }
        switch (self, first) {
        case (.object(var members), .key(let key)):
            members[key] = (members[key] ?? .null).setting(value, at: path.dropFirst())
            return .object(members)
        case (.array(var values), .index(let index)) where values.indices.contains(index):
            values[index] = values[index].setting(value, at: path.dropFirst())
            return .array(values)
        default: return self
        }
    }

    /// This value without what is at `path`.
    func removing(at path: some Collection<ValuePath.Component>) -> JSONValue {
        guard let first = path.first else { return self }
        switch (self, first) {
        case (.object(var members), .key(let key)):
            if path.count == 1 {
                members[key] = nil
            } else if let member = members[key] {
                members[key] = member.removing(at: path.dropFirst())
            }
            return .object(members)
        case (.array(var values), .index(let index)) where values.indices.contains(index):
            if path.count == 1 {
                values.remove(at: index)
            } else {
                values[index] = values[index].removing(at: path.dropFirst())
            }
            return .array(values)
        default: return self
        }
    }

    /// The first path (depth first, keys sorted) where this value and `other` differ, as readers see values.
    func firstDifferingPath(from other: JSONValue) -> [ValuePath.Component]? {
        if isSameValue(as: other) { return nil }
        switch (self, other) {
        case (.object(let a), .object(let b)):
            for key in Set(a.keys).union(b.keys).sorted() {
                guard let x = a[key], let y = b[key] else { return [.key(key)] }
                if let rest = x.firstDifferingPath(from: y) { return [.key(key)] + rest }
            }
            return []
        case (.array(let a), .array(let b)) where a.count == b.count:
            for index in a.indices {
                if let rest = a[index].firstDifferingPath(from: b[index]) { return [.index(index)] + rest }
            }
            return []
        default: return []
        }
    }
}
