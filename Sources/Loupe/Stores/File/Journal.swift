#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Logging

/// A file store's history: `.NAME.history` beside the settings file, one JSON line a record, appended
/// under the settings file's lock after each write.
///
/// The first line holds the document before the oldest change kept and that document's revision:
/// `{"format":"loupe-history","version":1,"revision":0,"document":{…},"file":"…"}`. Each further line is
/// one change: its revision, time, author (none for an outside edit), the merge patches forward
/// (`patch`) and back (`back`), and the identity of the settings file it left (`file`). A write that
/// finds the file other than the last record left it first records what changed meanwhile as an outside
/// edit.
///
/// The journal is bounded: when a change would pass ``maximumChanges`` or ``maximumBytes``, the oldest
/// changes are folded into the first line until a quarter of either bound is free, as etcd compacts. A
/// torn last line (a writer killed mid-append) is ignored and cut off by the next append; a journal that
/// does not read is reported and started afresh. The settings file is never touched by any of it.
final class Journal: Sendable {
    let maximumChanges: Int
    let maximumBytes: Int
    private let logger: Logger
    /// The journal as this process last read or wrote it, valid while the file's identity is the same.
    private let lastSeen = Locked<Known?>(nil)

    init(maximumChanges: Int, maximumBytes: Int, logger: Logger) {
        self.maximumChanges = max(1, maximumChanges)
        self.maximumBytes = max(1, maximumBytes)
        self.logger = logger
    }

    static let format = "loupe-history"
    static let version = 1

    /// The journal of the settings file at `target` (a resolved path).
    static func path(for target: String) -> String {
        FileSystem.directory(of: target) + "/" + FileSystem.sidecarName(for: FileSystem.fileName(of: target), suffix: ".history")
    }

    /// What a journal's file holds, as read.
    private struct Contents {
        var baseRevision = 0
        var base: JSONValue?
        /// The settings file's identity when the base was written.
        var baseFile = ChangeToken.absent.description
        var records: [(change: SettingsChange, file: String, length: Int)] = []
        /// The bytes up to the end of the last whole record.
        var length = 0

        var lastRevision: Int { records.last?.change.revision ?? baseRevision }
        var lastFile: String { records.last?.file ?? baseFile }

        var history: SettingsHistory {
            SettingsHistory(baseRevision: baseRevision, base: base, changes: records.map(\.change))
        }
    }

    private struct Known {
        var path: String
        var identity: FileIdentity
        var contents: Contents
    }

    // MARK: Reading

    /// The history the journal beside `target` holds; empty when there is none or it does not read (which
    /// is logged).
    func history(of target: String, store: String) throws -> SettingsHistory {
        try contents(at: Self.path(for: target), store: store)?.contents.history ?? SettingsHistory(baseRevision: 0, base: nil, changes: [])
    }

    /// The journal at `path`, from memory when its file is the one this process last read or wrote; nil
    /// when there is none, or it does not read (a warning).
    private func contents(at path: String, store: String) throws -> (contents: Contents, identity: FileIdentity)? {
        let read: (data: Data, identity: FileIdentity)?
        do {
            guard let identity = try FileSystem.identity(of: path) else { return nil }
            if let known = lastSeen.withLock({ $0 }), known.path == path, known.identity == identity { return (known.contents, identity) }
            // A journal is bounded, but one written with larger bounds (or by hand) may be larger.
            read = try FileSystem.read(path, maximumSize: maximumBytes + (16 << 20))
        } catch let error as SystemCallError {
            throw SettingsError(.unreadable, store: store, path: path, error)
        }
        guard let (data, identity) = read else { return nil }
        guard let contents = Self.parse(data) else {
            logger.warning("the settings history does not read: it starts afresh with the next change; the settings file is untouched", metadata: [
                "history": "\(path)",
            ])
            return nil
        }
        lastSeen.withLock { $0 = Known(path: path, identity: identity, contents: contents) }
        return (contents, identity)
    }

    /// A journal's records; nil when its first line is not a journal's of this format, or a record before
    /// the last does not read. The last line, when it does not read or does not end, is a torn append and
    /// left out.
    private static func parse(_ data: Data) -> Contents? {
        let bytes = [UInt8](data)
        var lines: [(bytes: ArraySlice<UInt8>, end: Int, whole: Bool)] = []
        var start = 0
        while start < bytes.count {
            let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n"))
            let end = newline.map { $0 + 1 } ?? bytes.count
            lines.append((bytes[start..<(newline ?? bytes.count)], end, newline != nil))
            start = end
        }
        guard let first = lines.first, first.whole, case .object(let header)? = try? JSONReader.document(from: Array(first.bytes)),
              header["format"] == .string(format), header["version"] == .integer(version),
              case .integer(let baseRevision)? = header["revision"], case .string(let baseFile)? = header["file"] else { return nil }
        var contents = Contents()
        contents.baseRevision = baseRevision
        contents.base = header["document"].flatMap { $0 == .null ? nil : $0 }
        contents.baseFile = baseFile
        contents.length = first.end
        for (index, line) in lines.enumerated().dropFirst() {
            let isLast = index == lines.count - 1
            guard line.whole, let (change, file) = record(line.bytes), change.revision > contents.lastRevision else {
                if isLast { break }  // torn
                return nil
            }
            contents.records.append((change, file, line.end - (contents.length)))
            contents.length = line.end
        }
        return contents
    }

    private static func record(_ line: ArraySlice<UInt8>) -> (SettingsChange, file: String)? {
        guard case .object(let record)? = try? JSONReader.document(from: Array(line)),
              case .integer(let revision)? = record["revision"], case .integer(let milliseconds)? = record["time"],
              let patch = record["patch"], let back = record["back"], case .string(let file)? = record["file"] else { return nil }
        var author: SettingsChange.Author?
        if case .object(let who)? = record["author"] {
            guard case .integer(let uid)? = who["uid"], case .integer(let pid)? = who["pid"],
                  case .string(let program)? = who["program"], case .string(let host)? = who["host"] else { return nil }
            var name: String?
            if case .string(let user)? = who["user"] { name = user }
            author = SettingsChange.Author(userID: UInt32(truncatingIfNeeded: uid), userName: name, processID: Int32(truncatingIfNeeded: pid), program: program, host: host)
        }
        let change = SettingsChange(revision: revision, time: Self.time(milliseconds: milliseconds), author: author, patch: patch, reversePatch: back)
        return (change, file)
    }

    // MARK: Writing

    /// Records that the settings file at `target` went from `old` (the file `before` identifies) to `new`
    /// (the file `after` identifies; nil: removed), by `author`. Call it holding the settings file's lock,
    /// after the write. A failure is logged, never thrown: the settings are written by then.
    func record(
        from old: JSONValue?, before: ChangeToken, to new: JSONValue?, after: ChangeToken, at target: String,
        author: SettingsChange.Author?, store: String
    ) {
        let path = Self.path(for: target)
        do {
            try append(from: old, before: before, to: new, after: after, path: path, settings: target, author: author, store: store)
        } catch {
            logger.warning("cannot record the change in the settings history", metadata: [
                "history": "\(path)", "error": "\(logDescription(of: error))",
            ])
        }
    }

    /// Whether the journal beside `target` may lack a record of the settings file `fileToken` identifies:
    /// false when it is not there or this process may not write it, or when its last record, as this
    /// process last read or wrote it, left that file.
    func mayHaveMissed(fileToken: ChangeToken, at target: String) -> Bool {
        let path = Self.path(for: target)
        guard access(path, W_OK) == 0 else { return false }
        guard let seen = lastSeen.withLock({ $0 }), seen.path == path, (try? FileSystem.identity(of: path)) == seen.identity else { return true }
        return seen.contents.lastFile != fileToken.description
    }

    /// Records an outside edit of the settings file at `target`, which now holds `current` (the file
    /// `identity` identifies), unless the journal's last record left it so. Call it holding the settings
    /// file's lock.
    func recordOutsideEdit(to current: JSONValue?, file identity: ChangeToken, at target: String, store: String) {
        record(from: current, before: identity, to: current, after: identity, at: target, author: nil, store: store)
    }

    private func append(
        from old: JSONValue?, before: ChangeToken, to new: JSONValue?, after: ChangeToken, path: String, settings: String,
        author: SettingsChange.Author?, store: String
    ) throws {
        var contents = try contents(at: path, store: store)?.contents
        var lines: [String] = []
        let now = Self.time(milliseconds: Self.milliseconds(of: Date()))  // as a record says it
        if var journal = contents {
            if journal.lastFile != before.description {
                // Changed since the last record: by something that keeps no history.
                let last = journal.records.isEmpty ? journal.base : try journal.history.document(after: journal.lastRevision)
                if !(last ?? .null).isSameDocument(as: old ?? .null) {
                    let change = SettingsChange(
                        revision: journal.lastRevision + 1, time: now, author: nil,
                        patch: SettingsHistory.patch(from: last, to: old), reversePatch: SettingsHistory.patch(from: old, to: last))
                    let line = Self.line(change, file: before.description)
                    journal.records.append((change, before.description, line.utf8.count))
                    lines.append(line)
                }
            }
            contents = journal
        }
        if author != nil || new != old {
            let revision = contents?.lastRevision ?? 0
            let change = SettingsChange(
                revision: revision + 1, time: now, author: author,
                patch: SettingsHistory.patch(from: old, to: new), reversePatch: SettingsHistory.patch(from: new, to: old))
            let line = Self.line(change, file: after.description)
            if contents == nil { contents = Contents(baseRevision: 0, base: old, baseFile: before.description) }
            contents!.records.append((change, after.description, line.utf8.count))
            lines.append(line)
        }
        guard var journal = contents, !lines.isEmpty else { return }
        let appended = lines.reduce(0) { $0 + $1.utf8.count }
        let mode = FileSystem.permissions(of: settings)
        if let known = lastSeen.withLock({ $0 }), known.path == path, try FileSystem.identity(of: path) == known.identity,
           journal.records.count <= maximumChanges, known.contents.length + appended <= maximumBytes {
            journal.length = known.contents.length + appended
            let identity = try appendLines(lines.joined(), to: path, keeping: known.contents.length)
            lastSeen.withLock { $0 = Known(path: path, identity: identity, contents: journal) }
            return
        }
        // A new journal, one that did not read, or one past a bound: written whole.
        compact(&journal)
        let text = Self.header(journal) + journal.records.map { Self.line($0.change, file: $0.file) }.joined()
        journal.length = text.utf8.count
        let identity = try FileSystem.writeAtomically(Data(text.utf8), to: path, permissions: mode ?? 0o600)
        matchOwnerAndMode(of: path, to: settings)
        lastSeen.withLock { $0 = Known(path: path, identity: identity, contents: journal) }
    }

    /// Folds the oldest changes into the base until a quarter of each bound is free (keeping at least the
    /// newest change).
    private func compact(_ journal: inout Contents) {
        guard journal.records.count > maximumChanges || Self.header(journal).utf8.count + journal.records.reduce(0, { $0 + $1.length }) > maximumBytes else { return }
        var bytes = journal.records.reduce(0) { $0 + $1.length }
        var dropped = 0
        while journal.records.count - dropped > 1,
              journal.records.count - dropped > maximumChanges * 3 / 4 || bytes > maximumBytes * 3 / 4 {
            bytes -= journal.records[dropped].length
            dropped += 1
        }
        guard dropped > 0 else { return }
        var base: JSONValue = journal.base ?? .null
        for record in journal.records.prefix(dropped) { base = base.merging(patch: record.change.patch) }
        journal.base = base == .null ? nil : base
        journal.baseRevision = journal.records[dropped - 1].change.revision
        journal.baseFile = journal.records[dropped - 1].file
        journal.records.removeFirst(dropped)
    }

    /// Appends `text` to the journal at `path`, first cutting off whatever follows its first `length`
    /// bytes (a torn record), and makes it durable; returns the journal's new identity.
    private func appendLines(_ text: String, to path: String, keeping length: Int) throws -> FileIdentity {
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw SystemCallError("open", path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemCallError("stat", path) }
        if Int(info.st_size) != length, ftruncate(fd, off_t(length)) != 0 { throw SystemCallError("truncate", path) }
        try Array(text.utf8).withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = pwrite(fd, bytes.baseAddress! + offset, bytes.count - offset, off_t(length + offset))
                if written < 0 {
                    if errno == EINTR { continue }
                    // What was written of the record is cut off by the next append.
                    throw SystemCallError("write", path)
                }
                offset += written
            }
        }
        guard fdatasync(fd) == 0 else { throw SystemCallError("fdatasync", path) }
        guard fstat(fd, &info) == 0 else { throw SystemCallError("stat", path) }
        return FileIdentity(info)
    }

    /// Gives the journal the settings file's mode and, where the process may, its owner and group.
    private func matchOwnerAndMode(of path: String, to settings: String) {
        var info = stat()
        guard stat(settings, &info) == 0 else { return }
        _ = chmod(path, info.st_mode & 0o7777)
        if info.st_uid != geteuid() || info.st_gid != getegid() { _ = chown(path, info.st_uid, info.st_gid) }
    }

    /// A record's time: milliseconds since 1970.
    private static func milliseconds(of time: Date) -> Int { Int((time.timeIntervalSince1970 * 1000).rounded()) }

    private static func time(milliseconds: Int) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    private static func header(_ journal: Contents) -> String {
        let header: JSONValue = .object([
            "format": .string(format), "version": .integer(version), "revision": .integer(journal.baseRevision),
            "document": journal.base ?? .null, "file": .string(journal.baseFile),
        ])
        return header.jsonText() + "\n"
    }

    private static func line(_ change: SettingsChange, file: String) -> String {
        var record: [String: JSONValue] = [
            "revision": .integer(change.revision), "time": .integer(Self.milliseconds(of: change.time)),
            "patch": change.patch, "back": change.reversePatch, "file": .string(file),
        ]
        if let author = change.author {
            var who: [String: JSONValue] = [
                "uid": .integer(Int(author.userID)), "pid": .integer(Int(author.processID)),
                "program": .string(author.program), "host": .string(author.host),
            ]
            if let name = author.userName { who["user"] = .string(name) }
            record["author"] = .object(who)
        }
        return JSONValue.object(record).jsonText() + "\n"
    }
}
