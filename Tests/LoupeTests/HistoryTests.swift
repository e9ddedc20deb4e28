#if canImport(Glibc)
import Glibc
#endif
import Foundation
import InMemoryLogging
import Logging
import Loupe
import LoupeTestSupport
import Testing

/// A file store's history: the journal beside a real file, written by real roots (and edited by hand in
/// between), read back, bounded, torn, corrupted, and rolled back.
@Suite("History: what changed, who changed it, and taking it back")
struct HistoryTests {
    struct Settings: Codable, Sendable, Equatable {
        struct Upstream: Codable, Sendable, Equatable {
            var url = "http://127.0.0.1:9000"
            var timeoutSeconds = 5
        }
        var logLevel = "info"
        var port = 8080
        var upstream = Upstream()
        var features: [String: Bool] = [:]
    }

    /// The same settings, with a rule this program's version added.
    struct Strict: Codable, Sendable, Equatable, Validated {
        var logLevel = "info"
        var port = 8080
        var upstream = Settings.Upstream()
        var features: [String: Bool] = [:]
        static let rules: [Rule<Strict>] = [Rule(\.port, .within(1...1024))]
    }

    /// JSON text as a document.
    func json(_ text: String) -> JSONValue? { try? JSONValue(parsing: text) }

    static func journal(of path: String) -> String {
        (path as NSString).deletingLastPathComponent + "/." + (path as NSString).lastPathComponent + ".history"
    }

    /// The settings values a journal holds: each line's document and patches, without what the lines
    /// keep about a change (revision, time, author, digest), whose digits could spell any number.
    static func journalValues(of path: String) throws -> String {
        let metadata: Set = ["format", "version", "revision", "time", "author", "digest"]
        return try String(contentsOfFile: journal(of: path), encoding: .utf8).split(separator: "\n").map { line in
            let record = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "a journal line: \(line)")
            let values = record.filter { !metadata.contains($0.key) }
            return String(
                decoding: try JSONSerialization.data(withJSONObject: values, options: .sortedKeys), as: UTF8.self)
        }.joined(separator: "\n")
    }

    @Test("each write records its revision, time, author and the patches both ways")
    func recordsWrites() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        // Watching: the echo of its own writes is not taken for an outside edit.
        let root = try RootLens(default: Settings(), store: FileStore(path: path), watch: true)
        let before = Date()
        try root.port.set(9000)
        try root.upstream.url.set("https://eu.example")
        try root.update {
            $0.features["beta"] = true; $0.port = 9001
        }

        let history = try root.history()
        #expect(history.baseRevision == 0 && history.base == nil, "the file did not exist before the first write")
        #expect(history.changes.map(\.revision) == [1, 2, 3])
        #expect(history.changes.map(\.changedPaths) == [["port"], ["upstream.url"], ["features.beta", "port"]])
        let first = try #require(history.changes.first)
        #expect(first.patch == json(#"{"port": 9000}"#) && first.reversePatch == .null, "the first write made the file")
        #expect(history.changes[2].reversePatch == json(#"{"features": null, "port": 9000}"#))
        let author = try #require(first.author)
        #expect(author.userID == UInt32(geteuid()) && author.processID == getpid())
        #expect(!author.host.isEmpty && !author.program.isEmpty && author.userName != nil)
        #expect(
            history.changes.allSatisfy { $0.time.map { $0 >= before.addingTimeInterval(-1) && $0 <= Date() } == true })
        #expect(try history.document(after: 2) == json(#"{"port": 9000, "upstream": {"url": "https://eu.example"}}"#))
        #expect(try history.document(after: 3) == root.storedDocument())
        #expect(try history.document(after: 0) == nil)
        #expect(history.changes[1].touches("upstream") && !history.changes[1].touches("port"))

        // A second process's view: a fresh root reads the same journal from the file.
        let other = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        #expect(try other.history() == history)
    }

    @Test("an edit made by hand between two writes is recorded as an outside edit, author unknown")
    func recordsOutsideEdits() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        try root.port.set(9000)
        // An editor's atomic save.
        try replaceFile(path, with: #"{"port": 9000, "logLevel": "debug"}"#)
        try root.reload()
        try root.upstream.timeoutSeconds.set(30)

        let changes = try root.history().changes
        #expect(changes.map(\.revision) == [1, 2, 3])
        #expect(
            changes[1].isOutsideEdit && changes[1].patch == json(#"{"logLevel": "debug"}"#)
                && changes[1].reversePatch == json(#"{"logLevel": null}"#))
        #expect(!changes[2].isOutsideEdit && changes[2].patch == json(#"{"upstream": {"timeoutSeconds": 30}}"#))
        #expect(try root.history().document(after: 3) == root.storedDocument())
    }

    @Test("a record whose write never landed (a crash between the two) is dropped by the next write")
    func recordThatNeverLanded() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        try root.port.set(9000)
        let landed = try Data(contentsOf: URL(fileURLWithPath: path))
        try root.port.set(9001)
        // The file as the crash left it: revision 2's record written, its file not.
        try replaceFile(path, with: String(decoding: landed, as: UTF8.self))
        let next = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        try next.logLevel.set("debug")
        let changes = try next.history().changes
        #expect(changes.map(\.revision) == [1, 2] && changes.allSatisfy { !$0.isOutsideEdit }, "\(changes)")
        #expect(changes.last?.patch == json(#"{"logLevel": "debug"}"#))
        #expect(try next.history().document(after: 2) == next.storedDocument())
    }

    @Test("a watching root records an edit made by hand when it sees it, once, with no write of its own")
    func watchingRootRecordsOutsideEdits() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let writer = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        try writer.port.set(9000)
        let watching = try RootLens(default: Settings(), store: FileStore(path: path), watch: true)
        let other = try RootLens(default: Settings(), store: FileStore(path: path), watch: true)
        try replaceFile(path, with: #"{"port": 9000, "logLevel": "debug"}"#)
        #expect(eventually { watching.value.logLevel == "debug" && other.value.logLevel == "debug" })
        let changes = try writer.history().changes
        #expect(
            changes.map(\.revision) == [1, 2] && changes[1].isOutsideEdit
                && changes[1].patch == json(#"{"logLevel": "debug"}"#), "\(changes)")
    }

    @Test("rollback writes the document a revision left as a new change, editing the file in place")
    func rollsBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.toml")
        try Data(
            """
            # The site's settings.
            port = 9000   # the public port

            [upstream]
            # Where requests go.
            url = "https://eu.example"

            """.utf8
        ).write(to: URL(fileURLWithPath: path))
        let root = try RootLens(default: Settings(), store: FileStore(path: path, format: TOMLCodec()), watch: false)
        let observed = Locked<[Int]>([])
        let token = root.port.observe { port in observed.withLock { $0.append(port) } }
        defer { token.cancel() }
        try root.port.set(9443)
        try root.upstream.url.set("https://us.example")
        #expect(try root.history().changes.map(\.revision) == [1, 2])

        try root.rollback(to: 0)
        #expect(root.value.port == 9000 && root.value.upstream.url == "https://eu.example")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(
            text == """
                # The site's settings.
                port = 9000   # the public port

                [upstream]
                # Where requests go.
                url = "https://eu.example"

                """, "the comments, the order and the spacing are the file's own")
        let changes = try root.history().changes
        #expect(changes.map(\.revision) == [1, 2, 3], "a rollback is a change of its own")
        #expect(
            changes[2].patch == json(#"{"port": 9000, "upstream": {"url": "https://eu.example"}}"#)
                && changes[2].author != nil)
        #expect(observed.withLock { $0 } == [9443, 9000])

        // And forward again: to what revision 1 left.
        try root.rollback(to: 1)
        #expect(root.value.port == 9443 && root.value.upstream.url == "https://eu.example")
    }

    @Test("a rollback the type, a rule or a lock refuses, or to a revision not kept, changes nothing")
    func refusedRollbacks() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let old = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        try old.port.set(5000)
        try old.port.set(80)
        let strict = try RootLens(default: Strict(), store: FileStore(path: path), watch: false)
        let stored = try Data(contentsOf: URL(fileURLWithPath: path))

        let ruled = #expect(throws: SettingsError.self) { try strict.rollback(to: 1) }
        #expect(ruled?.code == .invalidValue && "\(ruled!)".contains("port"), "\(String(describing: ruled))")
        let missing = #expect(throws: SettingsError.self) { try strict.rollback(to: 7) }
        #expect(missing?.code == .notFound && "\(missing!)".contains("revisions 0–2"), "\(String(describing: missing))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == stored && strict.value.port == 80)
        #expect(try strict.history().changes.count == 2)

        // An administrator locks the port after it changed: taking the change back would move a locked value.
        let locks = directory.file("locks")
        try FileManager.default.createDirectory(atPath: locks, withIntermediateDirectories: true)
        try Data("port\n".utf8).write(to: URL(fileURLWithPath: locks + "/00-admin"))
        let locked = try RootLens(
            default: Settings(), store: LayeredStore(layers: [], top: FileStore(path: path), locks: [locks]),
            watch: false)
        let refused = #expect(throws: SettingsError.self) { try locked.rollback(to: 1) }
        #expect(refused?.code == .locked, "\(String(describing: refused))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == stored)
    }

    @Test("the journal is bounded: the oldest changes are dropped, and every kept revision still replays")
    func bounded() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(
            default: Settings(), store: FileStore(path: path, history: .kept(changes: 8, bytes: 1 << 20)), watch: false)
        var documents: [Int: JSONValue?] = [:]
        for port in 1...30 {
            try root.port.set(port)
            documents[port] = try root.storedDocument()
        }
        var history = try root.history()
        #expect((6...8).contains(history.changes.count), "\(history.changes.count)")
        #expect(history.changes.last?.revision == 30 && history.baseRevision == history.changes[0].revision - 1)
        for change in history.changes {
            #expect(try history.document(after: change.revision) == documents[change.revision]!)
        }
        #expect(throws: SettingsError.self) { try history.document(after: 3) }

        // By size: records of about 2 KB each, in at most 8 KB.
        let sized = directory.file("sized.json")
        let large = try RootLens(
            default: Settings(), store: FileStore(path: sized, history: .kept(changes: 100, bytes: 8 << 10)),
            watch: false)
        for index in 0..<20 { try large.logLevel.set(String(repeating: "\(index % 10)", count: 1_000)) }
        history = try large.history()
        let size = try FileManager.default.attributesOfItem(atPath: Self.journal(of: sized))[.size] as? Int ?? 0
        #expect(size <= 8 << 10 && history.changes.count >= 2, "\(size) bytes, \(history.changes.count) changes")
        #expect(try history.document(after: 20) == large.storedDocument())
    }

    @Test(
        "a journal read back from its file is compacted with its records as they were written; a file saved again in other bytes is no outside edit"
    )
    func readBackThenCompacted() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let journal = Self.journal(of: path)
        let policy = FileStore.HistoryPolicy.kept(changes: 8, bytes: 1 << 20)
        var documents: [Int: JSONValue?] = [:]
        let first = try RootLens(default: Settings(), store: FileStore(path: path, history: policy), watch: false)
        for port in 1...5 {
            try first.port.set(port)
            documents[port] = try first.storedDocument()
        }
        let firstLines = try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n")

        // Another store reads the journal from its file, and passes the bound at revision 9: the oldest
        // changes are folded into the first line, and the records kept are written again as they were.
        let second = try RootLens(default: Settings(), store: FileStore(path: path, history: policy), watch: false)
        for port in 6...9 {
            try second.port.set(port)
            documents[port] = try second.storedDocument()
        }
        let lines = try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 7, "a header and revisions 4 to 9: \(lines)")
        #expect(
            Array(lines[1...2]) == Array(firstLines[4...5]),
            "revisions 4 and 5 byte for byte as the first store wrote them")

        // The same document saved again in other bytes, by hand: the next record follows the last with no
        // outside edit between them.
        let stored = try #require(try second.storedDocument())
        try replaceFile(path, with: "  " + stored.jsonText() + "\n\n")
        let third = try RootLens(default: Settings(), store: FileStore(path: path, history: policy), watch: false)
        try third.port.set(10)
        documents[10] = try third.storedDocument()
        let history = try RootLens(default: Settings(), store: FileStore(path: path, history: policy), watch: false)
            .history()
        #expect(history.changes.map(\.revision) == Array(4...10) && history.changes.allSatisfy { !$0.isOutsideEdit })
        for change in history.changes {
            #expect(try history.document(after: change.revision) == documents[change.revision]!)
        }
        // A fourth store finds the journal as the third left it, and records one change more.
        let fourth = try RootLens(default: Settings(), store: FileStore(path: path, history: policy), watch: false)
        try fourth.port.set(11)
        #expect(try fourth.history().changes.map(\.revision) == Array(4...11))
    }

    @Test(
        "a journal written whole is in place before the file changes: a write that fails leaves no trace, and an outside edit's compaction with no write of its own lands"
    )
    func journalWrittenWhole() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let journal = Self.journal(of: path)
        let policy = FileStore.HistoryPolicy.kept(changes: 2, bytes: 1 << 20)
        func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() }

        // The first write makes the journal, written whole; the settings file's write fails after it began.
        let small = try RootLens(
            default: Settings(), store: FileStore(path: path, maximumDocumentSize: 200, history: policy), watch: false)
        #expect(throws: SettingsError.self) { try small.logLevel.set(String(repeating: "x", count: 300)) }
        #expect(!FileManager.default.fileExists(atPath: journal) && !FileManager.default.fileExists(atPath: path))
        let left = try names()
        #expect(left.allSatisfy { $0.contains(".lock") }, "no temporary file is left: \(left)")
        try small.port.set(9000)
        #expect(try small.history().changes.map(\.revision) == [1])

        // Past the bound (three changes), the oldest are folded away and the journal is written whole.
        try small.port.set(9001)
        try small.port.set(9002)
        #expect(
            try RootLens(default: Settings(), store: FileStore(path: path, history: policy), watch: false).history()
                .changes.map(\.revision) == [3])
        try small.port.set(9003)

        // An edit by hand that a watching root records, past the bound: the journal is written whole with no
        // write of the settings file, and is in place (and read back by another store) once it is recorded.
        let watching = try RootLens(default: Settings(), store: FileStore(path: path, history: policy), watch: true)
        try replaceFile(path, with: #"{"port": 9003, "logLevel": "debug"}"#)
        var changes: [SettingsChange] = []
        _ = try eventually {
            changes = try RootLens(default: Settings(), store: FileStore(path: path, history: policy), watch: false)
                .history().changes
            return changes.last?.isOutsideEdit == true
        }
        // The watch records the edit first, then hands it to the root.
        #expect(eventually { watching.value.logLevel == "debug" })
        #expect(
            changes.map(\.revision) == [5] && changes[0].isOutsideEdit
                && changes[0].patch == json(#"{"logLevel": "debug"}"#), "\(changes)")
        let now = try names()
        #expect(now.allSatisfy { !$0.contains(".tmp-") }, "no temporary file is left: \(now)")
    }

    @Test("a torn last record is ignored and cut off by the next write; a corrupt journal starts afresh")
    func tornAndCorrupt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        try root.port.set(9000)
        try root.port.set(9001)
        let journal = Self.journal(of: path)
        // A writer killed mid-append.
        let handle = try #require(FileHandle(forWritingAtPath: journal))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"revision":3,"time":1764099000000,"patch":{"po"#.utf8))
        try handle.close()
        let fresh = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        #expect(try fresh.history().changes.map(\.revision) == [1, 2])
        try fresh.port.set(9002)
        #expect(try fresh.history().changes.map(\.revision) == [1, 2, 3])
        let lines = try String(contentsOfFile: journal, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 5 && lines.last == "", "a header, three records, and nothing torn left: \(lines)")

        // Corrupt (or a format this version does not know): a warning naming it; the settings are untouched.
        try Data("not a journal\n".utf8).write(to: URL(fileURLWithPath: journal))
        let logs = InMemoryLogHandler()
        let reader = try RootLens(
            default: Settings(), store: FileStore(path: path, logger: Logger(label: "test") { _ in logs }), watch: false
        )
        #expect(try reader.history().changes.isEmpty && reader.value.port == 9002)
        #expect(
            logs.entries.contains { "\($0.message)".contains("does not read") && "\($0.metadata)".contains(journal) },
            "\(logs.entries)")
        try reader.port.set(9003)
        let history = try reader.history()
        #expect(
            history.changes.map(\.revision) == [1] && history.base == json(#"{"port": 9002}"#),
            "started afresh from what the file held")
    }

    @Test("the journal has the settings file's mode; none is kept when the store is told so")
    func modeAndOff() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path, permissions: 0o640), watch: false)
        try root.port.set(9000)
        var info = stat()
        #expect(stat(Self.journal(of: path), &info) == 0 && info.st_mode & 0o777 == 0o640)

        let off = directory.file("off.json")
        let quiet = try RootLens(default: Settings(), store: FileStore(path: off, history: .off), watch: false)
        try quiet.port.set(9000)
        #expect(!FileManager.default.fileExists(atPath: Self.journal(of: off)))
        let error = #expect(throws: SettingsError.self) { try quiet.history() }
        #expect(error?.code == .unavailable)
        #expect(throws: SettingsError.self) { try RootLens(Settings()).history() }
    }

    @Test("values from override layers and secret references never reach the journal")
    func noSecretsInTheJournal() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let credentials = directory.file("credentials")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        try Data("https://user:hunter2@internal.example".utf8).write(
            to: URL(fileURLWithPath: credentials + "/upstream.url"))
        let root = try RootLens(
            default: Settings(),
            store: LayeredStore(layers: [.directory(credentials: credentials)], top: FileStore(path: path)),
            watch: false)
        #expect(root.value.upstream.url.contains("hunter2"))
        try root.port.set(9000)
        try root.upstream.timeoutSeconds.set(9)
        let journal = try String(contentsOfFile: Self.journal(of: path), encoding: .utf8)
        #expect(try !journal.contains("hunter2") && root.history().changes.count == 2)
    }

    @Test("the journal takes the settings file's mode at every append: a file made private keeps its history private")
    func journalFollowsTheModeAtEveryAppend() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("m.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path, permissions: 0o644), watch: false)
        try root.port.set(9000)
        let journal = Self.journal(of: path)
        var info = stat()
        #expect(stat(journal, &info) == 0 && info.st_mode & 0o777 == 0o644)
        #expect(chmod(path, 0o600) == 0)
        try root.upstream.url.set("https://token@upstream.example")
        #expect(
            stat(journal, &info) == 0 && info.st_mode & 0o777 == 0o600, "mode \(String(info.st_mode & 0o777, radix: 8))"
        )
        #expect(try root.history().changes.count == 2, "appended, not started afresh")
    }

    @Test(
        "a journal another user planted in a shared directory is never appended to: the history starts afresh, Loupe's own",
        .enabled(if: getuid() == 0, "planting a file as another user takes root (setpriv)"))
    func aPlantedJournalReceivesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let shared = directory.file("pub")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        #expect(chmod(shared, 0o1777) == 0)
        let path = shared + "/s.json"
        let journal = Self.journal(of: path)
        let planted = try run(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", "--", "/bin/sh", "-c",
                ": > \"$0\"; chmod 666 \"$0\"", journal,
            ])
        #expect(planted.status == 0, "\(planted.error)")
        let logs = InMemoryLogHandler()
        let root = try RootLens(
            default: Settings(), store: FileStore(path: path, logger: Logger(label: "test") { _ in logs }), watch: false
        )
        try root.upstream.url.set("https://s3cr3t@upstream.example")
        var info = stat()
        #expect(
            lstat(journal, &info) == 0 && info.st_uid == 0,
            "the journal at the path is root's own now (owner \(info.st_uid))")
        let asNobody = try run(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/bin/cat", journal])
        #expect(!asNobody.output.contains("s3cr3t"), "nobody reads nothing of root's record")
        #expect(
            logs.entries.contains { "\($0.message)".contains("another user") && "\($0.metadata)".contains(journal) },
            "\(logs.entries)")
        #expect(try root.history().changes.count == 1)
    }

    @Test(
        "a journal too large to read is named as the journal, and the history starts afresh (the settings file is not blamed)"
    )
    func anOversizedJournalStartsAfresh() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("j.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        try root.port.set(9000)
        let journal = Self.journal(of: path)
        // 20 MB: past the bound a journal is read up to (its own bound and 16 MiB more).
        try Data(repeating: UInt8(ascii: "x"), count: 20 << 20).write(to: URL(fileURLWithPath: journal))
        let logs = InMemoryLogHandler()
        let reader = try RootLens(
            default: Settings(), store: FileStore(path: path, logger: Logger(label: "test") { _ in logs }), watch: false
        )
        #expect(try reader.history().changes.isEmpty && reader.value.port == 9000)
        #expect(
            logs.entries.contains { "\($0.message)".contains("too large") && "\($0.metadata)".contains(journal) },
            "\(logs.entries)")
        try reader.port.set(9001)
        #expect(try reader.history().changes.map(\.revision) == [1], "started afresh, and history goes on")
        #expect(try Data(contentsOf: URL(fileURLWithPath: journal)).count < 4096)
    }
}

/// `RootLens.purgeHistory(of:)`: a value an `unset` removed is taken out of every record of the journal.
extension HistoryTests {
    /// The token the tests set, unset and purge.
    static let token = "tok-7f3a9c"

    @Test(
        "a purge takes an unset value out of every record and out of the journal's bytes; the other records, the mode and the owner stay"
    )
    func purgeTakesAnUnsetValueOutOfEveryRecord() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path, permissions: 0o640), watch: false)
        try root.port.set(9000)
        try root.upstream.url.set("https://ci:\(Self.token)@upstream.example")
        try root.logLevel.set("debug")
        try root.reset(atPath: "upstream.url")
        let journal = Self.journal(of: path)
        // What the issue found: the unset value stays readable in the history.
        #expect(try String(contentsOfFile: journal, encoding: .utf8).contains(Self.token))
        #expect(
            try root.history().changes[3].reversePatch[path: "upstream.url"]
                == .string("https://ci:\(Self.token)@upstream.example"))
        #expect(chmod(path, 0o600) == 0, "the settings file made private since")
        let before = try root.history()

        #expect(try root.purgeHistory(of: "upstream.url") == 2, "the change that set it, and the unset")
        #expect(try !String(contentsOfFile: journal, encoding: .utf8).contains(Self.token))
        var info = stat(), settings = stat()
        #expect(stat(journal, &info) == 0 && stat(path, &settings) == 0)
        #expect(
            info.st_mode & 0o777 == 0o600 && info.st_uid == settings.st_uid && info.st_gid == settings.st_gid,
            "mode \(String(info.st_mode & 0o777, radix: 8))")
        #expect(
            !(try FileManager.default.contentsOfDirectory(atPath: directory.path).contains { $0.contains(".tmp-") }),
            "no temporary file left")

        let history = try root.history()
        #expect(history.changes.map(\.revision) == [1, 2, 3, 4])
        #expect(history.changes.map(\.purgedPaths) == [[], ["upstream.url"], [], ["upstream.url"]])
        #expect(
            history.changes[0] == before.changes[0] && history.changes[2] == before.changes[2],
            "the other records are as they were")
        #expect(history.changes[1].changedPaths == ["upstream.url"] && history.changes[1].touches("upstream.url"))
        #expect(history.changes[3].changedPaths == ["upstream", "upstream.url"], "\(history.changes[3])")
        for revision in 0...4 {
            #expect(try history.document(after: revision)?[path: "upstream.url"] == nil, "revision \(revision)")
        }
        #expect(try history.document(after: 4) == root.storedDocument())
        // Another process reads the journal from its file alike.
        #expect(try RootLens(default: Settings(), store: FileStore(path: path), watch: false).history() == history)

        // Nothing left to purge: nothing is written.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: journal))
        #expect(try root.purgeHistory(of: "upstream.url") == 0 && root.purgeHistory(of: "features") == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: journal)) == bytes)
        // The next write appends to the purged journal.
        try root.port.set(9001)
        #expect(
            try root.history().changes.map(\.revision) == [1, 2, 3, 4, 5]
                && root.history().document(after: 5) == root.storedDocument())
    }

    @Test("a rollback leaves a purged path as it is now, rather than restoring it as nothing")
    func rollbackLeavesAPurgedPathAsItIs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        // The file held the token before the history began: the journal's first line holds it too.
        try Data(#"{"upstream": {"url": "https://ci:\#(Self.token)@upstream.example"}}"#.utf8).write(
            to: URL(fileURLWithPath: path))
        let root = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        try root.port.set(9000)
        try root.upstream.url.set("https://rotated.example")
        #expect(try root.purgeHistory(of: "upstream.url") == 2, "the first line and the change that replaced it")
        #expect(try !String(contentsOfFile: Self.journal(of: path), encoding: .utf8).contains(Self.token))
        let history = try root.history()
        #expect(history.basePurgedPaths == ["upstream.url"] && history.purgedPaths(through: 1) == ["upstream.url"])

        // Revision 0's value is not known any more: the value now stays, the rest is restored.
        try root.rollback(to: 0)
        #expect(root.value.port == 8080 && root.value.upstream.url == "https://rotated.example")
        // A value unset since stays unset.
        try root.reset(atPath: "upstream.url")
        try root.purgeHistory(of: "upstream.url")
        try root.rollback(to: 1)
        #expect(root.value.port == 9000 && root.value.upstream.url == Settings.Upstream().url)
        #expect(try !String(contentsOfFile: path, encoding: .utf8).contains("upstream"))
    }

    @Test(
        "the root path purges every value; a compaction keeps what was purged; a store without history, or a journal that does not read, says so"
    )
    func purgeEverythingAndRefusals() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(
            default: Settings(), store: FileStore(path: path, history: .kept(changes: 4)), watch: false)
        try root.upstream.url.set("https://ci:\(Self.token)@upstream.example")
        for port in 9000..<9004 { try root.port.set(port) }
        let compacted = try root.history()
        #expect(
            try root.purgeHistory(of: "upstream.url") == 1,
            "the first line, which the change that set it was folded into: \(compacted)")
        for port in 9004..<9008 { try root.port.set(port) }
        #expect(
            try root.history().basePurgedPaths == ["upstream.url"],
            "a change folded into the first line takes what was purged from it along")
        #expect(try !String(contentsOfFile: Self.journal(of: path), encoding: .utf8).contains(Self.token))

        #expect(try Self.journalValues(of: path).contains("9007"), "before the purge, the journal holds the value")
        #expect(try root.purgeHistory(of: "") > 0)
        let history = try root.history()
        #expect(
            history.changes.allSatisfy { $0.patch == .object([:]) && $0.purgedPaths == [""] }
                && history.base == .object([:]))
        let values = try Self.journalValues(of: path)
        #expect(!values.contains("9007") && values.contains(#""patch":{}"#), "\(values)")
        try root.rollback(to: history.baseRevision)
        #expect(root.value.port == 9007, "every path was purged: the settings stay as they are")

        let off = try RootLens(
            default: Settings(), store: FileStore(path: directory.file("off.json"), history: .off), watch: false)
        #expect(throws: SettingsError.self) { try off.purgeHistory(of: "port") }
        #expect((try? RootLens(Settings()).purgeHistory(of: "port")) == nil)
        #expect(
            try RootLens(default: Settings(), store: FileStore(path: directory.file("new.json")), watch: false)
                .purgeHistory(of: "port") == 0, "no journal yet")

        try Data("not a journal\n".utf8).write(to: URL(fileURLWithPath: Self.journal(of: path)))
        let error = #expect(throws: SettingsError.self) { try root.purgeHistory(of: "port") }
        #expect(
            error?.code == .corrupt && error?.description.contains(Self.journal(of: path)) == true,
            "\(String(describing: error))")
    }
}
