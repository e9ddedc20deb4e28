import Foundation
import Loupe
import LoupeYAML
import TOMLKit

/// Files people write by hand: a one-value update of a 2,000-line commented TOML file, of a YAML file of the
/// same settings, and of a 40,000-key JSON object, each edited in place; and TOML parsing against TOMLKit
/// (toml++).
///
/// Every write reads its text back with the format's own reader before it replaces the file (the promise
/// that no write lands that does not read back as what was meant), so the in-place rows are measured
/// against the floor that check sets: a durable write of the same bytes, one read of them by the reader
/// the check runs, and the compare of what it read with the document meant. The ratios against the write
/// alone, and against the write and a plain parse, are printed beside it.
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
        let root = try RootLens(
            default: Wide(), store: FileStore(path: path, format: codec, history: .off), watch: false)
        precondition(root.value == Wide.stored, "the \(name) file holds the stored value")
        let limit = root[\.groups["group-100"]].limit
        // The by-hand baseline writes the bytes of a file with one value changed, the way Loupe's edit does.
        let edited = Data(
            text.replacingOccurrences(of: "limit = 100\n", with: "limit = 101\n")
                .replacingOccurrences(of: "limit: 100\n", with: "limit: 101\n").utf8)
        var step = 0
        try measureInPlaceUpdate(
            "one-value update of a \(lines)-line commented \(name == "toml" ? "TOML" : "YAML") file, edited in place (no history journal)",
            operations: 100 / scale, codec: codec, edited: edited, byHand: scratch + "/hand-written-by-hand." + name,
            report: report
        ) {
            step += 1
            try limit.set(100 + step % 2)
        }
        let after = try String(contentsOfFile: path, encoding: .utf8)
        precondition(after.contains("# group 100: what it serves"), "the edit kept the comments")
    }

    do {
        // A 40,000-key JSON object (about 0.7 MB), one key of it set.
        let keys = 40_000
        var members: [String: Int] = [:]
        for index in 0..<keys { members["key-\(index)"] = index }
        let path = scratch + "/wide.json"
        let codec = JSONCodec()
        let text = try codec.serialize(try JSONValue(encoding: members))
        try text.write(to: URL(fileURLWithPath: path))
        let root = try RootLens(
            default: [String: Int](), store: FileStore(path: path, format: codec, history: .off), watch: false)
        precondition(root.value.count == keys, "the JSON file holds every key")
        let entry = root[\.["key-20000"]]
        let edited = Data(
            String(decoding: text, as: UTF8.self)
                .replacingOccurrences(of: "\"key-20000\" : 20000,", with: "\"key-20000\" : 20001,").utf8)
        var step = 0
        try measureInPlaceUpdate(
            "one-value update of a \(keys)-key JSON object (\(text.count / 1024) KB), edited in place (no history journal)",
            operations: max(2, 20 / scale), codec: codec, edited: edited, byHand: scratch + "/wide-by-hand.json",
            report: report
        ) {
            step += 1
            try entry.set(20000 + step % 2)
        }
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
        let parses = try compare(
            operations: n,
            loupe: { for _ in 0..<n { blackHole(try codec.parse(data)) } },
            baseline: { for _ in 0..<n { blackHole(try TOMLTable(string: text)) } })
        report.add(
            "parse \(data.count / 1024) KB of commented TOML vs TOMLKit (toml++) parsing the same text", parses,
            .atMost(1.5))
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

/// Compares `update` with the floor it sets: a durable write of `edited` (the same bytes an update writes)
/// plus one read-back of them by `codec` (`parseWritten`, the format's reader as every write runs it to check
/// that its text reads back as meant; TOML's notes the syntax the next edit starts from as it reads). The
/// row's note gives the ratios against the write alone and against the write and a plain `parse`.
private func measureInPlaceUpdate(
    _ name: String, operations n: Int, codec: any DocumentCodec, edited: Data, byHand path: String, report: Report,
    update: () throws -> Void
) throws {
    // The check reads the bytes back with the format's reader and compares what it read with the
    // document meant, whole (`isSameValue`): the floor does the same, against a document read apart (no
    // storage shared).
    let meant = try codec.parse(edited)
    let floor = try compare(
        repetitions: 25, operations: n,
        loupe: { for _ in 0..<n { try update() } },
        baseline: {
            for _ in 0..<n {
                writeByHand(edited, to: path)
                let readBack = try codec.parseWritten(edited)
                precondition(readBack.isSameValue(as: meant), "the bytes read back as meant")
            }
        })
    let writeAlone = try compare(
        repetitions: 9, operations: n,
        loupe: { for _ in 0..<n { try update() } },
        baseline: { for _ in 0..<n { writeByHand(edited, to: path) } })
    let plainParse = try compare(
        repetitions: 9, operations: n,
        loupe: { for _ in 0..<n { try update() } },
        baseline: {
            for _ in 0..<n {
                writeByHand(edited, to: path)
                blackHole(try codec.parse(edited))
            }
        })
    report.add(
        "\(name), vs a durable write of the same bytes plus their read-back, parsed and compared (the check's floor)",
        floor, .atMost(1.3),
        baselineNote:
            " (vs the write alone: \(String(format: "%.2f", writeAlone.ratio))×; with a plain parse: \(String(format: "%.2f", plainParse.ratio))×)"
    )
}
