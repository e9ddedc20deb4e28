import Foundation
import Testing

/// A small seeded generator (SplitMix64), for property tests that replay.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `text` written by `codec` as an edit into `change` of the document it holds. Records an issue (at the
/// caller) when the edited text does not hold the new document, as `same` compares documents (`==` by
/// default; a format with NaN needs one that takes a NaN for itself).
public func editedText(
    _ text: String, with codec: some DocumentCodec, same: (JSONValue, JSONValue) -> Bool = (==),
    sourceLocation: SourceLocation = #_sourceLocation, _ change: (inout JSONValue) throws -> Void
) throws -> String {
    let previous = try codec.parse(Data(text.utf8))
    var document = previous
    try change(&document)
    let data = try codec.serialize(document, editing: Data(text.utf8), holding: previous)
    #expect(
        same(try codec.parse(data), document), "the edited text holds the new document", sourceLocation: sourceLocation)
    return String(decoding: data, as: UTF8.self)
}

/// Sets each of `changes` in turn, starting from `text`, with one codec that `make` makes (which remembers
/// what it wrote and read back last, as a write reads it back) and, beside it, a codec made afresh for each step: records an issue (at the caller)
/// where the two write different bytes, or where the text does not hold the step's document (as `same`
/// compares documents). Returns the last text.
public func editsOfRememberedText<Codec: DocumentCodec>(
    _ make: () -> Codec, from text: String, changes: [(ValuePath, JSONValue)],
    same: (JSONValue, JSONValue) -> Bool = (==),
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> String {
    let remembering = make()
    var text = text
    var document = try remembering.parse(Data(text.utf8))
    for (step, (path, value)) in changes.enumerated() {
        let previous = document
        try document.set(value, at: path)
        let remembered = try remembering.serialize(document, editing: Data(text.utf8), holding: previous)
        _ = try remembering.parseWritten(remembered)  // as a write reads its text back (the codec may keep its tree)
        let fresh = try make().serialize(document, editing: Data(text.utf8), holding: previous)
        #expect(remembered == fresh, "step \(step) (\(path))", sourceLocation: sourceLocation)
        #expect(same(try make().parse(remembered), document), "step \(step) (\(path))", sourceLocation: sourceLocation)
        text = String(decoding: remembered, as: UTF8.self)
    }
    return text
}

/// The texts a codec wrote through a seeded random walk of sets and removals, and the document each holds.
public struct RandomEditWalk: Sendable {
    /// The text after each step.
    public var texts: [String] = []
    /// The document each step wrote.
    public var models: [JSONValue] = []
}

/// Sets and removes the values at `keys`, at random (seeded), `steps` times, starting from `text`; each
/// step is written by `codec` as an edit of the text before it. Records an issue for a step whose text this
/// codec does not read back as the step's document.
///
/// - Parameter values: the values a set may write at a step, given the step and the generator.
public func randomEditWalk(
    codec: some DocumentCodec, from text: String, keys: [String], steps: Int, seed: UInt64,
    values: (Int, inout SeededGenerator) -> [JSONValue]
) throws -> RandomEditWalk {
    var generator = SeededGenerator(seed: seed)
    var walk = RandomEditWalk()
    var text = text
    var model = try codec.parse(Data(text.utf8))
    for step in 0..<steps {
        let key = try ValuePath(parsing: keys.randomElement(using: &generator)!)
        let previous = model
        if Bool.random(using: &generator), (try? model.value(at: key)) != nil {
            try? model.remove(at: key)
        } else {
            let choices = values(step, &generator)
            try? model.set(choices.randomElement(using: &generator)!, at: key)
        }
        let data = try codec.serialize(model, editing: Data(text.utf8), holding: previous)
        text = String(decoding: data, as: UTF8.self)
        #expect(try codec.parse(data) == model, "step \(step) (\(key)) wrote:\n\(text)")
        walk.texts.append(text)
        walk.models.append(model)
    }
    return walk
}

/// The full-line comments of `text`: its lines that start, after indentation, with `marker`.
public func commentLines(of text: String, marker: String) -> [String] {
    text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix(marker) }
}

/// A parser that is not Loupe's, to check what Loupe writes: Python's `json`, `json5` (JSONC's comments and
/// trailing commas), PyYAML, and `tomllib`.
public enum IndependentParser: String, Sendable {
    case json, json5, yaml, tomllib

    /// What the parser reads from each of `texts` (nil where it refuses the text), from one Python process:
    /// a process per text would hold a thread of the cooperative pool that other tests' tasks need. TOML's
    /// date-times come back as their RFC 3339 text, with `Z` for `+00:00`, and its non-finite floats as
    /// `"nan"`, `"inf"`, `"-inf"`.
    public func parse(_ texts: [String]) throws -> [JSONValue?] {
        try answers(texts).map { try? $0.get() }
    }

    /// Why the parser refused a text.
    public struct Refusal: Error, Equatable, Sendable {
        public let reason: String
        public init(reason: String) { self.reason = reason }
    }

    /// What the parser reads from each of `texts`, or why it refuses it, from one Python process.
    public func answers(_ texts: [String]) throws -> [Result<JSONValue, Refusal>] {
        let load =
            switch self {
            case .json: "json.loads(text)"
            case .json5: "json5.loads(text)"
            case .yaml: "yaml.safe_load(text)"
            case .tomllib: "tomllib.loads(text)"
            }
        let script = """
            import sys, json, math, datetime, importlib
            for name in ("json5", "yaml", "tomllib"):
                if name in sys.argv[1]: globals()[name] = importlib.import_module(name)
            def convert(v):
                if isinstance(v, dict): return {k: convert(x) for k, x in v.items()}
                if isinstance(v, list): return [convert(x) for x in v]
                if isinstance(v, float) and (math.isnan(v) or math.isinf(v)): return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
                if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
                    text = v.isoformat()
                    return text[:-6] + "Z" if text.endswith("+00:00") else text
                return v
            answers = []
            for text in json.loads(sys.stdin.read()):
                try:
                    answers.append({"document": convert(eval(sys.argv[1]))})
                except Exception as e:
                    answers.append({"refused": str(e)})
            print(json.dumps(answers))
            """
        let result = try run(
            "/usr/bin/env", ["python3", "-c", script, load],
            input: JSONValue.array(texts.map(JSONValue.string)).jsonText())
        guard result.status == 0, case .array(let answers) = try JSONValue(parsing: result.output) else {
            throw Refusal(reason: "python3 (\(rawValue)) failed: \(result.error)")
        }
        return answers.map { answer in
            if case .string(let reason)? = answer[path: "refused"] { return .failure(Refusal(reason: reason)) }
            return .success(answer[path: "document"] ?? .null)
        }
    }
}
