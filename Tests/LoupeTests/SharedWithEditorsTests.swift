#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// A file a program updates while people edit it with editors that take no lock: a person's save is never
/// lost to the program's write, a save still being written is not taken for the whole file, and writers stay
/// exclusive whatever a cleanup job removes. Stress tests with real processes: they count, they do not time.
@Suite("Sharing a file with people's editors")
struct SharedWithEditorsTests {
    enum Format: String, CaseIterable, Sendable {
        case json, yaml, toml

        /// The file a person writes: the counter as they last saw it, their note, and `extra` lines of their own.
        func text(counter: Int, note: String, extra: Int = 0) -> String {
            let keys = (0..<extra).map { (name: "hand_\($0)", value: "written by hand, line \($0)") }
            switch self {
            case .json:
                let members =
                    [#""counter": \#(counter)"#, #""note": "\#(note)""#]
                    + keys.map { #""\#($0.name)": "\#($0.value)""# }
                return "{\n  " + members.joined(separator: ",\n  ") + "\n}\n"
            case .yaml:
                return (["counter: \(counter)", "note: \(note)"] + keys.map { "\($0.name): \($0.value)" }).joined(
                    separator: "\n") + "\n"
            case .toml:
                return
                    (["counter = \(counter)", #"note = "\#(note)""#] + keys.map { #"\#($0.name) = "\#($0.value)""# })
                    .joined(separator: "\n") + "\n"
            }
        }
    }

    /// How a person's editor saves: a new file renamed over the old one, or the old one truncated and written
    /// again in place (nano, vim with `backupcopy=yes`, a shell redirection).
    enum Save: String, CaseIterable, Sendable {
        case rename, truncate
    }

    /// What the file says of `key` (a number or a string), read as a person reads it: line by line.
    static func value(of key: String, in text: String) -> String? {
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            for prefix in ["\"\(key)\": ", "\(key): ", "\(key) = "] where trimmed.hasPrefix(prefix) {
                var value = trimmed.dropFirst(prefix.count)
                if value.hasSuffix(",") { value = value.dropLast() }
                return value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }

    static func write(_ text: String, to path: String, by save: Save, pausingAfter firstPart: Int? = nil) throws {
        let bytes = Array(text.utf8)
        func writeAll(_ fd: Int32, _ part: ArraySlice<UInt8>) {
            part.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if written <= 0 { return }
                    offset += written
                }
            }
        }
        switch save {
        case .rename:
            let temporary = path + ".person-save"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            writeAll(fd, bytes[...])
            close(fd)
            rename(temporary, path)
        case .truncate:
            let fd = open(path, O_WRONLY | O_TRUNC)
            if let firstPart {
                writeAll(fd, bytes[..<firstPart])
                usleep(30_000)
                writeAll(fd, bytes[firstPart...])
            } else {
                writeAll(fd, bytes[...])
            }
            close(fd)
        }
    }

    /// A person saves a new note `saves` times while a program increments the file's counter every 2 ms;
    /// after each save, once the program has written again, the note must still be there. Returns how many
    /// saves were lost.
    static func lostSaves(
        _ format: Format, _ save: Save, saves: Int, extraLines: Int = 0, slow: Bool = false
    ) throws -> (lost: Int, detail: [String]) {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.\(format.rawValue)")
        try Data(format.text(counter: 0, note: "first", extra: extraLines).utf8).write(to: URL(fileURLWithPath: path))
        let program = try ChildProcess(testHelper, ["tick", path])
        defer {
            program.kill(SIGKILL)
            _ = program.wait(limit: .seconds(10))
        }
        var lost = 0
        var detail: [String] = []
        func current() -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        #expect(eventually { (value(of: "counter", in: current()).flatMap { Int($0) } ?? 0) > 0 }, "the program runs")
        for index in 0..<saves {
            let counter = value(of: "counter", in: current()).flatMap { Int($0) } ?? 0
            let note = "save \(index)"
            let text = format.text(counter: counter, note: note, extra: extraLines)
            try write(text, to: path, by: save, pausingAfter: slow ? text.utf8.count / 2 : nil)
            // The program writes twice more after the save: the note, and every line of the person's, must be
            // there. (Twice: a write that found the save in its place when it swapped its file in swaps it back,
            // and a reader may see that write for the instant between.)
            let wroteAgain = eventually(deadline: .seconds(20)) {
                (value(of: "counter", in: current()).flatMap { Int($0) } ?? 0) > counter + 1
            }
            let after = current()
            let keptLines = (0..<extraLines).allSatisfy { value(of: "hand_\($0)", in: after) != nil }
            if !wroteAgain || value(of: "note", in: after) != note || !keptLines {
                lost += 1
                if detail.count < 3 {
                    detail.append(
                        "save \(index): \(wroteAgain ? "" : "(the program did not write again) ")\(after.prefix(300))")
                }
            }
        }
        return (lost, detail)
    }

    @Test(
        "a person's save that lands while a program writes is never lost (100 saves, each format, each way of saving)",
        arguments: Format.allCases, Save.allCases)
    func aSaveDuringAWriteIsKept(format: Format, save: Save) throws {
        let result = try Self.lostSaves(format, save, saves: 100)
        #expect(result.lost == 0, "\(result.lost) of 100 saves lost: \(result.detail)")
    }

    /// The settings of `aSaveThatKeepsTheIdentityIsSeenAndKept`: the program's counter, and a note people write.
    struct Noted: Codable, Sendable, Equatable {
        var counter = 0
        var note = ""
    }

    /// A file of `Noted` settings in `directory` (counter 0, note "first"), and a root over it.
    static func notedFile(
        _ format: Format, in directory: TemporaryDirectory, watch: Bool
    ) throws -> (path: String, root: RootLens<Noted>) {
        let path = directory.file("settings.\(format.rawValue)")
        try Data(format.text(counter: 0, note: "first").utf8).write(to: URL(fileURLWithPath: path))
        let codec: any DocumentCodec = format == .toml ? TOMLCodec() : JSONCodec()
        let root = try RootLens(
            default: Noted(), store: FileStore(path: path, format: codec, history: .off), watch: watch)
        return (path, root)
    }

    /// A file of `Noted` settings the program wrote once (counter 1, note "first"), and a person's editor
    /// that has opened it to save in place: its descriptor, and the status of the version it opened.
    static func fileAnEditorOpened(
        _ format: Format, in directory: TemporaryDirectory
    ) throws -> (path: String, root: RootLens<Noted>, editor: Int32, opened: stat) {
        let (path, root) = try notedFile(format, in: directory, watch: false)
        try root.update { $0.counter += 1 }
        let editor = open(path, O_WRONLY)
        #expect(editor >= 0)
        var opened = stat()
        #expect(fstat(editor, &opened) == 0)
        return (path, root, editor, opened)
    }

    /// A person saves the file in place, as an editor that truncates does, at the size it had, and leaves it
    /// the modification time it had: as a save within the same tick of the kernel's clock as the program's
    /// write leaves it (the tick is up to 10 ms; the stress tests above meet it once in a few hundred saves).
    /// A watching root sees the save; the program's next write, watching or not, keeps it.
    @Test(
        "a save in place that leaves the file's identity as it was (the same size, the same clock tick) reaches the root and is kept by the program's next write",
        arguments: [Format.json, .toml], [false, true])
    func aSaveThatKeepsTheIdentityIsSeenAndKept(format: Format, watch: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let (path, root) = try Self.notedFile(format, in: directory, watch: watch)
        try root.update { $0.counter += 1 }  // the program writes: counter 1, note "first"
        var before = stat()
        #expect(stat(path, &before) == 0)
        try Self.write(format.text(counter: 1, note: "other"), to: path, by: .truncate)
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        var after = stat()
        #expect(stat(path, &after) == 0)
        #expect(
            after.st_ino == before.st_ino && after.st_size == before.st_size
                && after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec,
            "the person's save left the file the identity of the program's write")

        if watch { #expect(eventually { root.value.note == "other" }, "the root holds \(root.value)") }
        try root.update { $0.counter += 1 }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(Self.value(of: "note", in: text) == "other", "\(text)")
        #expect(Self.value(of: "counter", in: text) == "2", "\(text)")
        #expect(root.value == Noted(counter: 2, note: "other"))
    }

    /// An editor that saves in place looks the file up by its name, then truncates and writes it. A
    /// program's write that replaces the file between the two (its check of what it replaced comes before
    /// the truncation) leaves that save in a file no longer at the path: the program's next write puts it
    /// back and runs again on it. A save at the path since then is later, and stays.
    @Test(
        "a save into the file a program's write took from the path (looked up just before, written just after) is put back by its next write",
        arguments: [Format.json, .toml], [false, true])
    func aSaveIntoAReplacedFileIsPutBack(format: Format, savedAgainSince: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        // The person's editor finds the file by its name...
        let (path, root, editor, opened) = try Self.fileAnEditorOpened(format, in: directory)
        // ...the program writes, replacing it...
        try root.update { $0.counter += 1 }
        var now = stat()
        #expect(stat(path, &now) == 0)
        #expect(now.st_ino != opened.st_ino, "the program's write took the editor's file from the path")
        // ...and the editor truncates it and writes the person's save into it.
        let save = Array(format.text(counter: 2, note: "other").utf8)
        #expect(ftruncate(editor, 0) == 0)
        #expect(save.withUnsafeBytes { Glibc.write(editor, $0.baseAddress, $0.count) } == save.count)
        close(editor)
        if savedAgainSince {
            try Self.write(format.text(counter: 2, note: "later"), to: path, by: .rename)
        }

        try root.update { $0.counter += 1 }
        let note = savedAgainSince ? "later" : "other"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(Self.value(of: "note", in: text) == note, "\(text)")
        #expect(Self.value(of: "counter", in: text) == "3", "\(text)")
        #expect(root.value == Noted(counter: 3, note: note))
    }

    /// The same save, with no write after it: a check a little after the program's write puts it back, and
    /// a watching root sees it.
    @Test(
        "a save into the file a program's write took from the path is put back within moments, with no write after it",
        arguments: [Format.json, .toml])
    func aSaveIntoAReplacedFileIsPutBackWithoutAnotherWrite(format: Format) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let (path, root) = try Self.notedFile(format, in: directory, watch: true)
        let editor = open(path, O_WRONLY)
        #expect(editor >= 0)
        try root.update { $0.counter += 1 }
        let save = Array(format.text(counter: 1, note: "other").utf8)
        #expect(ftruncate(editor, 0) == 0)
        #expect(save.withUnsafeBytes { Glibc.write(editor, $0.baseAddress, $0.count) } == save.count)
        close(editor)

        #expect(
            eventually {
                Self.value(of: "note", in: (try? String(contentsOfFile: path, encoding: .utf8)) ?? "") == "other"
            },
            "the save is at the path again")
        #expect(eventually { root.value == Noted(counter: 1, note: "other") }, "the root holds \(root.value)")
    }

    /// A version a write took from the path is read and compared only until a look finds it unchanged after
    /// the file system's clock has passed its modification time; from then on its identity tells, since a
    /// save into it is stamped later. A save that keeps the version's size, made after such a look, is still
    /// put back by the next write.
    @Test(
        "a save into a replaced file after a write found it unchanged, at the size it had, is put back by the next write",
        arguments: [Format.json, .toml])
    func aSaveIntoAReplacedFileFoundUnchangedIsPutBack(format: Format) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let (path, root, editor, opened) = try Self.fileAnEditorOpened(format, in: directory)
        // The file system's clock passes the version's time: a new file there is stamped later.
        let probe = directory.file("probe")
        #expect(
            eventually {
                var info = stat()
                return FileManager.default.createFile(atPath: probe, contents: Data("x".utf8))
                    && stat(probe, &info) == 0
                    && (info.st_mtim.tv_sec, info.st_mtim.tv_nsec) > (opened.st_mtim.tv_sec, opened.st_mtim.tv_nsec)
            }, "the clock passes")
        // The program writes twice: the first takes the editor's version from the path, and the second looks
        // at it after a write stamped later than it, and finds it unchanged.
        try root.update { $0.counter += 1 }
        try root.update { $0.counter += 1 }
        // The editor writes the person's save into it, at the size it had.
        let save = Array(format.text(counter: 1, note: "fresh").utf8)
        #expect(save.count == opened.st_size, "the save keeps the version's size")
        #expect(pwrite(editor, save, save.count, 0) == save.count)
        close(editor)

        try root.update { $0.counter += 1 }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(Self.value(of: "note", in: text) == "fresh", "\(text)")
        #expect(Self.value(of: "counter", in: text) == "2", "\(text)")
        #expect(root.value == Noted(counter: 2, note: "fresh"))
    }

    /// The open files of this process that are versions of `directory`'s settings file taken from its path.
    static func replacedVersionsOpen(in directory: TemporaryDirectory) -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.filter { descriptor in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor))
            // A version taken out keeps the name the swap gave it, a temporary one (`.NAME.tmp-…`).
            return target.map {
                $0.hasPrefix(directory.path + "/.settings.") && $0.contains(".tmp-") && $0.hasSuffix(" (deleted)")
            } ?? false
        }.count
    }

    /// The versions a write takes from the path are kept open for a second after the last write, then
    /// closed: also when the file's directory is gone meanwhile.
    @Test(
        "the versions writes took from the path are let go a second after the last write, also once the directory is gone",
        arguments: [false, true])
    func replacedVersionsAreLetGo(directoryRemoved: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let (_, root) = try Self.notedFile(.json, in: directory, watch: false)
        for _ in 0..<3 { try root.update { $0.counter += 1 } }
        #expect(Self.replacedVersionsOpen(in: directory) == 3, "each write keeps the version it replaced")
        if directoryRemoved { directory.cleanUp() }
        #expect(
            eventually(deadline: .seconds(10)) { Self.replacedVersionsOpen(in: directory) == 0 },
            "\(Self.replacedVersionsOpen(in: directory)) still open")
    }

    @Test(
        "a slow save (truncated, half written, the rest 30 ms later) is not taken for the whole file (100 saves of 200 lines)",
        arguments: [Format.yaml, .toml])
    func aSlowSaveIsNotCutShort(format: Format) throws {
        let result = try Self.lostSaves(format, .truncate, saves: 100, extraLines: 200, slow: true)
        #expect(result.lost == 0, "\(result.lost) of 100 saves lost lines: \(result.detail)")
    }

    @Test(
        "writers stay exclusive while a cleanup job deletes the lock file and the lock directory: 3 × 1,000 increments, none lost"
    )
    func aCleanupLosesNoIncrement() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        chmod(directory.path, 0o755)  // others may open it: the writers lock `.loupe.lock.d` inside it too
        let path = directory.file("record.json")
        let writers = try (0..<3).map { _ in try ChildProcess(testHelper, ["increment", path, "1000"]) }
        let lockFile = directory.file(".record.json.lock")
        let lockDirectory = directory.file(".loupe.lock.d")
        var removals = 0
        var running = writers
        while !running.isEmpty {
            if unlink(lockFile) == 0 { removals += 1 }
            if rmdir(lockDirectory) == 0 { removals += 1 }
            usleep(500)
            running.removeAll { $0.wait(limit: .zero) != nil }
        }
        for writer in writers { #expect(writer.wait(limit: .seconds(120)) == 0, "\(writer.errorOutput.prefix(400))") }
        let count = try decodeStored(over: Record(), Data(contentsOf: URL(fileURLWithPath: path))).count
        #expect(count == 3000, "\(count) of 3,000 increments landed (\(removals) locks removed meanwhile)")
        #expect(removals > 0, "the cleanup removed locks while the writers ran")
    }
}
