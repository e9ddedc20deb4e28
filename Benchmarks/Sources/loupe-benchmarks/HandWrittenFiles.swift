import Foundation
import Loupe
import LoupeYAML
import TOMLKit

/// Files people write by hand: a one-value update of a 2,000-line commented TOML file and of a YAML file
/// of the same settings, each edited in place, against a durable write of the same bytes; and TOML parsing
/// against TOMLKit (toml++).
func measureHandWrittenFiles(_ bench: Bench, _ report: Report) throws {
    let scale = bench.scale
    let scratch = bench.scratch
    let stored = try JSONValue(encoding: Wide.stored)

    for (codec, name) in [(TOMLCodec() as any DocumentCodec, "toml"), (YAMLCodec(), "yaml")] {
        let path = scratch + "/hand-written." + name
        let text = commented(String(decoding: try codec.serialize(stored), as: UTF8.self), format: name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        // No history journal, as in the other durable rows: its cost has a row of its own.
        let root = try RootLens(default: Wide(), store: FileStore(path: path, format: codec, history: .off), watch: false)
        precondition(root.value == Wide.stored, "the \(name) file holds the stored value")
        let limit = root[\.groups["group-100"]].limit
        let n = 100 / scale
        // The by-hand baseline writes the bytes of a file with one value changed, the way Loupe's edit does.
        let edited = text.replacingOccurrences(of: "limit = 100\n", with: "limit = 101\n")
            .replacingOccurrences(of: "limit: 100\n", with: "limit: 101\n")
        var step = 0
        let updates = try compare(repetitions: 25, operations: n,
            loupe: {
                for _ in 0..<n {
                    step += 1
                    try limit.set(100 + step % 2)
                }
            },
            baseline: { for _ in 0..<n { writeByHand(Data(edited.utf8), to: scratch + "/hand-written-by-hand." + name) } })
        let after = try String(contentsOfFile: path, encoding: .utf8)
        precondition(after.contains("# group 100: what it serves"), "the edit kept the comments")
        report.add("one-value update of a \(lines)-line commented \(name == "toml" ? "TOML" : "YAML") file, edited in place (no history journal), vs a durable write of the same bytes",
                   updates, .atMost(1.3))
    }

    do {
        // ~100 KB of TOML: the stored value's groups, repeated under 3 more parents.
        var document = JSONValue.object([:])
        for copy in 0..<4 { document[path: ValuePath([.key("copy-\(copy)")])] = stored }
        let text = commented(String(decoding: try TOMLCodec().serialize(document), as: UTF8.self), format: "toml")
        let data = Data(text.utf8)
        let codec = TOMLCodec()
        let ours = try codec.parse(data)
        let theirs = try JSONValue(parsing: try TOMLTable(string: text).convert(to: .json))
        precondition(ours == theirs, "TOMLKit reads the same document")
        let n = 20 / max(1, scale / 5)
        let parses = try compare(operations: n,
            loupe: { for _ in 0..<n { blackHole(try codec.parse(data)) } },
            baseline: { for _ in 0..<n { blackHole(try TOMLTable(string: text)) } })
        report.add("parse \(data.count / 1024) KB of commented TOML vs TOMLKit (toml++) parsing the same text", parses, .atMost(1.5))
    }
}

/// `text` with a comment line before each group's section or key, as an administrator documents a file.
func commented(_ text: String, format: String) -> String {
    var lines: [Substring] = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        let trimmed = line.drop { $0 == " " }
        let indentation = line.prefix { $0 == " " }
        if format == "toml", line.hasPrefix("["), let range = line.range(of: "group-") {
            let number = line[range.upperBound...].prefix { $0.isNumber }
            lines.append("# group \(number): what it serves")
        } else if format == "yaml", trimmed.hasPrefix("group-"), trimmed.hasSuffix(":") {
            let number = trimmed.dropFirst("group-".count).prefix { $0.isNumber }
            lines.append(indentation + "# group \(number): what it serves")
        }
        lines.append(line)
    }
    return lines.joined(separator: "\n")
}
