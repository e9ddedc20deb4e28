#if YAML
import Foundation
import Loupe
import Yams

/// YAML for a `FileStore`, through Yams: block style, keys sorted, so files diff well and people can
/// edit them.
///
/// ```swift
/// import LoupeYAML
/// let store = FileStore(path: "/etc/app/settings.yaml", format: YAMLCodec())
/// ```
///
/// Scalars take the types Yams's resolver gives them (`8080` is a number, `"8080"` a string, `~` null,
/// and, as in YAML 1.1, `on`, `off`, `yes` and `no` booleans); strings that would read as another type
/// are written quoted. Aliases are expanded, up to ``maximumValues`` values in all, so a small file
/// cannot expand into an unbounded document, and merge keys (`<<: *defaults`) merge as YAML 1.1 has it:
/// the mapping's own keys win, then the merged mappings in order. A file with several YAML documents is
/// refused when read.
///
/// A write edits the file in place: only the bytes of what changed are written, in the
/// style of the container they land in; comments, order, quoting, `---` and the spelling of unchanged
/// values stay. A key a merge key brings in that a write changes becomes the mapping's own (YAML takes it
/// over the merged one), so the anchor and every other mapping that merges it keep their values. A change
/// through an alias writes that alias out in full; a change of an anchored value is made in place, and
/// every alias or merging mapping that is not to show it keeps what it showed (written out, or given the
/// changed keys as its own). Taking out a key a merge key brings in, or an anchored value whole, is
/// refused, naming the path. An empty file (or one
/// with only comments) holds an empty mapping. `.inf`, `-.inf` and `.nan` are doubles.
public struct YAMLCodec: DocumentCodec {
    /// How the typed value maps to documents: date and key strategies; an infinite or NaN `Double` is
    /// YAML's `.inf`, `-.inf` or `.nan`.
    public var coding: DocumentCoding {
        get { strategies.encodingNonFiniteNumbers }
        set { strategies = newValue }
    }
    private var strategies: DocumentCoding
    /// The most values (scalars, mappings, sequences) a document may expand to, aliases included.
    public var maximumValues: Int

    /// Creates a YAML codec.
    public init(coding: DocumentCoding = DocumentCoding(), maximumValues: Int = 1_000_000) {
        strategies = coding
        self.maximumValues = maximumValues
    }

    public var formatName: String { "YAML" }

    public var fileExtensions: [String] { ["yaml", "yml"] }

    /// Where the part at `path` is written in `data`: its value's first character, or the nearest part
    /// above it the text writes; nil when Loupe's YAML reader cannot follow the text.
    public func position(of path: ValuePath, in data: Data) -> TextPosition? {
        positions(of: [path], in: data)[0]
    }

    /// Where the parts at `paths` are written in `data`, the text read once: see ``position(of:in:)``.
    public func positions(of paths: [ValuePath], in data: Data) -> [TextPosition?] {
        let text = Array(data)
        guard let tree = try? YAMLSyntaxReader.read(text), let root = tree.root else { return paths.map { _ in nil } }
        let lines = TextLines(text)
        return paths.map { path in
            var node = root
            for component in path.components {
                let entry: YAMLSyntaxEntry? =
                    switch component {
                    case .key(let key): node.isMapping ? node.member(key) : nil
                    case .index(let index):
                        node.isSequence && node.entries.indices.contains(index) ? node.entries[index] : nil
                    }
                guard let entry else { break }
                node = entry.value
            }
            return lines.position(of: node.range.lowerBound)
        }
    }

    /// What Yams says is wrong, with what it was reading (`did not find expected ',' or ']', while
    /// parsing a flow sequence from line 2, column 9`), and where.
    private static func problem(of error: any Error, in text: String) -> (String, TextPosition)? {
        switch error as? YamlError {
        case .scanner(let context, let problem, let mark, _)?, .parser(let context, let problem, let mark, _)?,
            .composer(let context, let problem, let mark, _)?:
            let reading = context.map { ", \($0.text) from line \($0.mark.line), column \($0.mark.column)" } ?? ""
            return (problem + reading, TextPosition(line: mark.line, column: mark.column))
        case .duplicatedKeysInMapping(let keys, let context)?:
            // Yams's message quotes the whole text (settings may hold secrets): the key, and where it is
            // written again, as the JSON and TOML readers say it.
            let first = TextPosition(line: context.mark.line, column: context.mark.column)
            if keys.count == 1, let again = writtenAgain(keys[0], after: first, in: text) {
                return (
                    "the key '\(keys[0])' is written a second time in one mapping (first at line \(first.line), column \(first.column))",
                    again
                )
            }
            let named = keys.map { "'\($0)'" }.joined(separator: ", ")
            let what = keys.count == 1 ? "the key \(named) is" : "the keys \(named) are"
            return ("\(what) written more than once in one mapping (the first time here)", first)
        default:
            return nil
        }
    }

    /// Where a block mapping's key `key`, first written at `first`, is written again: the next line that
    /// writes it plainly at the same column, with nothing but spaces before it (nil: written otherwise, in a
    /// flow mapping or quoted, say).
    private static func writtenAgain(_ key: String, after first: TextPosition, in text: String) -> TextPosition? {
        let indentation = String(repeating: " ", count: max(0, first.column - 1))
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where offset >= first.line {
            guard line.hasPrefix(indentation + key) else { continue }
            let rest = line.dropFirst(indentation.count + key.count).drop { $0 == " " || $0 == "\t" }
            if rest.hasPrefix(":") { return TextPosition(line: offset + 1, column: first.column) }
        }
        return nil
    }

    public func parse(_ data: Data) throws -> JSONValue {
        guard let text = String(data: data, encoding: .utf8) else { throw DocumentSyntaxError("it is not UTF-8 text") }
        let node: Node?
        do {
            node = try Self.parser(of: text).singleRoot()
        } catch {
            // Yams quotes the offending line, which may be a whole document on one line: its first line, shortened.
            if let (problem, position) = Self.problem(of: error, in: text) {
                throw DocumentSyntaxError(problem, at: position)
            }
            let message = "\(error)".prefix { $0 != "\n" }
            throw DocumentSyntaxError(message.count > 200 ? message.prefix(200) + "…" : String(message))
        }
        // A file with nothing in it (or only comments) holds an empty document, which a write fills in.
        guard let node else { return .object([:]) }
        var budget = maximumValues
        return try document(node, budget: &budget)
    }

    public func serialize(_ document: JSONValue) throws -> Data {
        Data(try Yams.serialize(node: node(document), sortKeys: true).utf8)
    }

    /// `document` as an edit of the YAML text `previous`, which holds `previousDocument`: only the bytes of
    /// what changed are written; comments, order, quoting, layout and the spelling of
    /// every value that stays are kept. A key a merge key brings in that changes (or a value inside it) becomes
    /// the mapping's own; an edit that would change what an alias shows, or removing a key a merge key brings
    /// in, is refused, naming the path.
    public func serialize(
        _ document: JSONValue, editing previous: Data, holding previousDocument: JSONValue
    ) throws -> Data {
        try TextEngine.edit(previous, from: previousDocument, to: document, with: YAMLEditor(document: document))
    }

    /// A parser of `text`, told that it is UTF-8 (a Swift string's encoding, which Yams' default finds
    /// too): the default looks for `YAMS_DEFAULT_ENCODING` in a copy of the whole environment on every
    /// parse.
    ///
    /// Its nodes resolve one type, the merge key's (`<<`): ``ScalarTags`` resolves each value's, as Yams's
    /// default resolver does. Yams checks every mapping for duplicate keys by hashing its keys, and hashing
    /// a scalar resolves its tag, once and for good: with the default resolver, seven regular expressions
    /// over every key, which cost a sops file's load (`Benchmarks/`, the sops rows) more than the rest of the
    /// parse. The check finds the same duplicates either way (two keys are the same key when their texts
    /// are), and a key's only type Loupe reads is whether it is the merge key.
    static func parser(of text: String) throws -> Parser {
        try Parser(yaml: text, resolver: keyResolver, encoding: .utf8)
    }

    /// What ``parser(of:)`` resolves: the merge key.
    private static let keyResolver = Resolver.basic.appending(Resolver.Rule.merge)

    private func document(_ node: Node, budget: inout Int) throws -> JSONValue {
        budget -= 1
        guard budget >= 0 else {
            throw DocumentSyntaxError("it expands to more than \(maximumValues) values (aliases nested too deeply?)")
        }
        switch node {
        case .scalar(let scalar):
            switch ScalarTags.tag(of: node) {
            case .null: return .null
            case .bool: return node.bool.map(JSONValue.bool) ?? .string(scalar.string)
            // A number JSON can spell is read as JSON reads it: kept as written when no Swift type holds it.
            case .int, .float:
                if let number = Self.jsonNumber(scalar.string) { return number }
                return node.int.map(JSONValue.integer) ?? node.float.map(JSONValue.double) ?? .string(scalar.string)
            default: return .string(scalar.string)
            }
        case .mapping(let mapping):
            var object: [String: JSONValue] = [:]
            // The mappings merge keys (`<<: *name`, or a sequence of them) bring in, in order.
            var merged: [[String: JSONValue]] = []
            for (key, value) in mapping {
                if case .scalar = key, ScalarTags.tag(of: key) == .merge {
                    let sources: [Node] = if case .sequence(let sequence) = value { Array(sequence) } else { [value] }
                    for source in sources {
                        guard case .object(let members) = try document(source, budget: &budget) else {
                            throw Self.problem(
                                "a merge key (<<) holds something other than a mapping or a sequence of mappings",
                                at: source)
                        }
                        merged.append(members)
                    }
                    continue
                }
                guard let name = key.string else { throw Self.problem("a mapping key is not a string", at: key) }
                object[name] = try document(value, budget: &budget)
            }
            // A key the mapping writes wins over a merged one, and an earlier merged mapping over a later.
            for members in merged {
                for (key, value) in members where object[key] == nil { object[key] = value }
            }
            return .object(object)
        case .sequence(let sequence):
            return .array(try sequence.map { try document($0, budget: &budget) })
        case .alias:
            throw DocumentSyntaxError("an alias that does not refer to an anchor")
        }
    }

    /// `problem`, at where `node` starts in the text when the parser marked it.
    private static func problem(_ problem: String, at node: Node) -> DocumentSyntaxError {
        guard let mark = node.mark else { return DocumentSyntaxError(problem) }
        return DocumentSyntaxError(problem, at: TextPosition(line: mark.line, column: mark.column))
    }

    /// `text` as a JSON number, when it is spelled as one.
    private static func jsonNumber(_ text: String) -> JSONValue? {
        guard let first = text.first, first == "-" || first.isNumber, let number = try? JSONValue(parsing: text) else {
            return nil
        }
        switch number {
        case .integer, .double, .exactNumber: return number
        default: return nil
        }
    }

    private func node(_ document: JSONValue) -> Node {
        switch document {
        case .null: return Node("null", Tag(.null))
        case .bool(let value): return Node(value ? "true" : "false", Tag(.bool))
        case .integer(let value): return Node(String(value), Tag(.int))
        case .double(let value): return Node(YAMLValueWriter.double(value), Tag(.float))
        case .exactNumber(let text):
            return Node(text, Tag(text.contains(where: { ".eE".contains($0) }) ? .float : .int))
        case .string(let value):
            // Plain text that would read back as a number, a boolean or null is written in quotes.
            let readsAsString = !value.isEmpty && ScalarTags.readsAsString(value)
            return Node(value, Tag(.str), readsAsString ? .any : .doubleQuoted)
        case .array(let values): return Node(values.map(node))
        case .object(let values): return Node(values.map { (Node($0.key, Tag(.str)), node($0.value)) })
        }
    }
}

extension DocumentCodec where Self == YAMLCodec {
    /// YAML, keys sorted.
    public static var yaml: YAMLCodec { YAMLCodec() }
}
#endif
