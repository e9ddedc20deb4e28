import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// Real configuration files (`Corpus/`, sources in `Corpus/SOURCES.md`) edited at random, one path at a time,
/// as a person's program would edit them: each write must hold the new document as another reader reads it,
/// and change only the lines of what changed.
///
/// For every file of a format, the suite makes ``CorpusEdits/editsPerFile`` seeded edits of the text as it is
/// (not a chain): a scalar set to another value of its type, a value set to one of another type, a leaf member
/// or an array element removed, a key added to an object, an element added to an array. Each write goes through
/// `serializeDocument`, as a store writes. Then:
/// - a reader that is not Loupe's (Python's `json`, `json5`, `tomllib`, PyYAML; one process per format) reads
///   the written text, and must see the new document;
/// - the text must differ from the old one only where the edit is (see ``LineChange/judge(_:of:markers:)``):
///   other lines, and the comments of other entries, stay as they were; a removed entry takes its own comment
///   lines with it; a new entry gets none;
/// - a refusal is allowed only for YAML, where the edit touches an alias, an anchor or a merge key.
///
/// Each format prints a summary line (`corpus toml: 20 files, edits 240, kept …`); `LOUPE_CORPUS_VERBOSE=1`
/// prints the diff of every edit that passed, too, and `LOUPE_CORPUS_REFUSALS=1` each refusal allowed, with its
/// reason.
@Suite("A corpus of real files, edited at random")
struct CorpusEditTests {
    @Test("every file of the corpus reads", arguments: CorpusFormat.allCases)
    func reads(_ format: CorpusFormat) throws {
        let files = try CorpusFile.all(of: format)
        #expect(!files.isEmpty, "the corpus has \(format.rawValue) files")
        for file in files {
            #expect(throws: Never.self, "\(file.name) reads as \(format.rawValue)") {
                try format.codec.parse(file.data)
            }
        }
    }

    @Test("random one-path edits of every file change only what changed", arguments: CorpusFormat.allCases)
    func edits(_ format: CorpusFormat) throws {
        var tally = CorpusTally()
        let files = try CorpusFile.all(of: format)
        // A file the reader refuses is reported by `reads`; there is nothing here to edit.
        let originals = files.compactMap { file in
            (try? format.codec.parse(file.data)).map { (file: file, document: $0) }
        }
        var written: [WrittenEdit] = []
        for (file, document) in originals {
            written += write(editsOf: file, holding: document, as: format, tally: &tally)
        }

        // One process of the other reader for every text of the format: the originals, then what was written.
        // A byte order mark is the encoding's, not the document's: Python's readers take text without it.
        let texts = (originals.map(\.file.text) + written.map(\.text)).map(\.withoutByteOrderMark)
        let readings = try format.independentParser.parse(texts)
        let otherOriginals = Dictionary(
            uniqueKeysWithValues: zip(originals.map(\.file.name), readings.prefix(originals.count)))
        for (write, reading) in zip(written, readings.dropFirst(originals.count)) {
            check(
                write, readBack: reading, otherOld: otherOriginals[write.file.name] ?? nil, format: format,
                tally: &tally)
        }
        print("corpus \(format.rawValue): \(files.count) files (\(files.count - originals.count) unread), \(tally)")
    }

    /// Makes the seeded edits of `file` through the codec, as a store writes; records and counts those that
    /// throw (a YAML alias refusal is counted, not recorded), and returns those written.
    private func write(
        editsOf file: CorpusFile, holding document: JSONValue, as format: CorpusFormat, tally: inout CorpusTally
    ) -> [WrittenEdit] {
        var generator = SeededGenerator(seed: file.seed)
        var written: [WrittenEdit] = []
        for number in 0..<CorpusEdits.editsPerFile {
            guard let edit = CorpusEdit.random(in: document, number: number, format: format, using: &generator) else {
                continue
            }
            tally.edits += 1
            do {
                let data = try format.codec.serializeDocument(
                    edit.document, editing: (text: file.data, document: document), store: "corpus file \(file.name)")
                written.append(
                    WrittenEdit(file: file, old: document, edit: edit, text: String(decoding: data, as: UTF8.self)))
            } catch let error as SettingsError
                where format.refusesAliases && CorpusEdits.isAliasRefusal(error, of: edit, in: file)
            {
                tally.refused += 1
                if ProcessInfo.processInfo.environment["LOUPE_CORPUS_REFUSALS"] != nil {
                    print("corpus refusal (allowed) \(file.name): \(edit): \(error)")
                }
            } catch {
                tally.failed += 1
                tally.notKept[edit.kind, default: 0] += 1
                let verb = (error as? SettingsError)?.cause is TextEditRefusal ? "refused" : "failed"
                Issue.record("\(file.name): \(edit) \(verb): \(error)")
            }
        }
        return written
    }

    /// Judges one written edit: what the other reader read of it (nil where it refused the text), and its lines.
    private func check(
        _ write: WrittenEdit, readBack reading: JSONValue?, otherOld: JSONValue?, format: CorpusFormat,
        tally: inout CorpusTally
    ) {
        let change = LineChange(old: write.file.text, new: write.text)
        let wrongValue =
            reading.map { CorpusEdits.readBackProblem($0, of: write, loupeOld: write.old, otherOld: otherOld) }
            ?? "the other reader refuses the written text"
        let otherBytes =
            write.text.hasByteOrderMark != write.file.text.hasByteOrderMark
            ? "the byte order mark is \(write.file.text.hasByteOrderMark ? "lost" : "added")"
            : change.judge(write.edit, of: write.old, markers: format.commentMarkers)
        if let problem = wrongValue ?? otherBytes {
            if wrongValue != nil { tally.wrongValue += 1 } else { tally.changedOtherBytes += 1 }
            tally.notKept[write.edit.kind, default: 0] += 1
            Issue.record("\(write.file.name): \(write.edit): \(problem)\n\(change.unifiedDiff)")
        } else {
            tally.kept += 1
            if CorpusEdits.verbose { print("\(write.file.name): \(write.edit): kept\n\(change.unifiedDiff)") }
        }
    }
}

extension String {
    /// Whether the text starts with U+FEFF, a UTF-8 byte order mark in the file.
    var hasByteOrderMark: Bool { unicodeScalars.first == "\u{FEFF}" }

    /// The text without its byte order mark.
    var withoutByteOrderMark: String { hasByteOrderMark ? String(unicodeScalars.dropFirst()) : self }
}
