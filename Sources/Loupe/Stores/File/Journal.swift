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
/// under the settings file's lock with each write.
///
/// The first line holds the document before the oldest change kept and that document's revision:
/// `{"format":"loupe-history","version":1,"revision":0,"document":{…},"digest":"…"}`. Each further line is
/// one change: its revision, time, author (none for an outside edit), the merge patches forward
/// (`patch`) and back (`back`), and a digest of the settings file's bytes it left (`digest`; empty when
/// it left none). A write that finds the file other than the last record left it first records what
/// changed meanwhile as an outside edit. A record a purge took values out of names their paths
/// (`"purged":["token"]`), the first line too.
///
/// A record is made on a thread of its own while the settings file is written (see ``PendingRecord``):
/// appended to the journal, or the journal written whole (new, or compacted) under a temporary name, and
/// in the journal's place before the settings file changes; flushed while the settings file is, and the
/// write returns once both are durable. A record whose write failed is taken out again; one whose write a
/// crash cut short is found by the next write (the file is as the record before it left it) and dropped.
///
/// The journal is bounded: when a change would pass ``maximumChanges`` or ``maximumBytes``, the oldest
/// changes are folded into the first line until a quarter of either bound is free, as etcd compacts. A
/// torn last line (a writer killed mid-append) is ignored and cut off by the next append; a journal that
/// does not read is reported and started afresh. ``purge(_:at:store:)`` rewrites it whole, without the
/// values at a path. The settings file is never touched by any of it.
final class Journal: Sendable {
    let maximumChanges: Int
    let maximumBytes: Int
    private let logger: Logger
    /// The journal as this process last read or wrote it, valid while the file's identity is the same.
    private let lastSeen = Locked<Known?>(nil)
    /// Where records are made and flushed: a queue of its own, which always gets a thread, so a record is
    /// made even when every thread of Dispatch's shared pool is waiting (on this file's lock, say).
    private let queue = DispatchQueue(label: "loupe.history", qos: .userInitiated)

    init(maximumChanges: Int, maximumBytes: Int, logger: Logger) {
        self.maximumChanges = max(1, maximumChanges)
        self.maximumBytes = max(1, maximumBytes)
        self.logger = logger
    }

    static let format = "loupe-history"
    static let version = 1

    /// The journal of the settings file at `target` (a resolved path).
    static func path(for target: String) -> String {
        FileSystem.historyPath(for: target)
    }

    /// The digest a record keeps of a settings file's bytes; empty for no file.
    static func digest(of text: Data?) -> String {
        text.map { String(StableDigest.of($0), radix: 16) } ?? ""
    }

    /// What a journal's file holds, as read.
    fileprivate struct Contents {
        var baseRevision = 0
        var base: JSONValue?
        /// The digest of the settings file the base was read from.
        var baseDigest = ""
        /// The paths whose values were purged from the base.
        var basePurged: [ValuePath] = []
        var records: [Record] = []
        /// The bytes up to the end of the last whole record.
        var length = 0

        /// One change, as its line in the file says it.
        struct Record {
            var change: SettingsChange
            /// The digest of the settings file's bytes the change left.
            var digest: String
            /// The record's line, newline included, as a journal written whole writes it again.
            var line: String
            /// The line's length in the file.
            var length: Int

            init(_ change: SettingsChange, digest: String) {
                self.change = change
                self.digest = digest
                line = Journal.line(change, digest: digest)
                length = line.utf8.count
            }

            init(_ change: SettingsChange, digest: String, line: String, length: Int) {
                self.change = change
                self.digest = digest
                self.line = line
                self.length = length
            }
        }

        var lastRevision: Int { records.last?.change.revision ?? baseRevision }
        var lastDigest: String { records.last?.digest ?? baseDigest }
        /// The digest of the file before the last record's change.
        var digestBeforeLast: String? {
            records.isEmpty ? nil : records.count == 1 ? baseDigest : records[records.count - 2].digest
        }

        var history: SettingsHistory {
            SettingsHistory(
                baseRevision: baseRevision, base: base, changes: records.map(\.change), basePurgedPaths: basePurged)
        }

        /// The document after the last record.
        func lastDocument() throws -> JSONValue? {
            records.isEmpty ? base : try history.document(after: lastRevision)
        }
    }

    private struct Known {
        var path: String
        var identity: FileIdentity
        var contents: Contents
    }

    /// What making a record did to the journal's file.
    fileprivate enum Outcome {
        /// The record was appended after the journal's first `lengthBefore` bytes, and is flushed; the
        /// flush's error, if it failed.
        case appended(lengthBefore: Int, flushFailure: SystemCallError?)
        /// The journal was written whole (and flushed) under a temporary name, to be renamed into place;
        /// `contents` is what it holds.
        case staged(FileSystem.StagedFile, contents: Contents)
        /// Nothing was recorded, or making the record failed (logged).
        case none
    }

    /// A record being made while the settings file is written: on a thread of its own, so that working
    /// out the patches and writing the journal overlap the settings file's write rather than come before
    /// it. ``Journal/place(_:)`` waits for it just before the settings file changes, ``Journal/finish(_:)``
    /// after, ``Journal/abandon(_:)`` when the settings file's write fails.
    final class PendingRecord: Sendable {
        let path: String
        /// The settings file.
        let settings: String
        /// Signalled once the record is in the journal's file, or staged beside it.
        private let made = DispatchSemaphore(value: 0)
        /// Signalled once it is flushed.
        private let flushed = DispatchSemaphore(value: 0)
        private let outcome = Locked<Outcome?>(nil)
        /// Whether a staged journal was renamed into place or removed: each happens once.
        private let settled = Locked<Bool>(false)

        fileprivate init(
            path: String, settings: String, on queue: DispatchQueue,
            making: @escaping @Sendable () -> (Outcome, fd: Int32?)
        ) {
            self.path = path
            self.settings = settings
            queue.async { [self] in
                let (result, fd) = making()
                outcome.withLock { $0 = result }
                made.signal()
                if let fd {
                    if fdatasync(fd) != 0, case .appended(let length, _) = result {
                        let failure = SystemCallError("fdatasync", path)
                        outcome.withLock { $0 = .appended(lengthBefore: length, flushFailure: failure) }
                    }
                    close(fd)
                }
                flushed.signal()
            }
        }

        /// What making the record did, once it is in the journal's file or staged.
        fileprivate func waitMade() -> Outcome {
            made.wait()
            made.signal()  // for the next wait
            return outcome.withLock { $0! }
        }

        /// What making the record did, once it is flushed too.
        fileprivate func waitFlushed() -> Outcome {
            flushed.wait()
            flushed.signal()
            return outcome.withLock { $0! }
        }

        /// Whether this is the first to place or remove a staged journal.
        fileprivate func settle() -> Bool {
            settled.withLock { settled in
                defer { settled = true }
                return !settled
            }
        }
    }

    // MARK: Reading

    /// The history the journal beside `target` holds; empty when there is none or it does not read (which
    /// is logged).
    func history(of target: String, store: String) throws -> SettingsHistory {
        try contents(at: Self.path(for: target), settings: target, store: store)?.history
            ?? SettingsHistory()
    }

    /// The journal at `path`, from memory when its file is the one this process last read or wrote; nil
    /// when there is none, or it does not read (a warning).
    private func contents(at path: String, settings: String, store: String) throws -> Contents? {
        let read: (data: Data, identity: FileIdentity)?
        do {
            guard let identity = try FileSystem.identity(of: path) else { return nil }
            if let known = lastSeen.withLock({ $0 }), known.path == path, known.identity == identity {
                return known.contents
            }
            var info = stat()
            guard lstat(path, &info) != 0 || Self.isOwnJournal(owner: info.st_uid, settings: settings) else {
                logger.warning(
                    "the settings history belongs to another user: it is not read or appended to, and starts afresh with the next change",
                    metadata: ["history": "\(path)"])
                return nil
            }
            // A journal is bounded, but one written with larger bounds (or by hand) may be larger.
            read = try FileSystem.read(path, maximumSize: maximumBytes + (16 << 20))
        } catch let error as SystemCallError where error.code == EFBIG {
            // A journal grown past any bound (written by hand, or by another program) is not the settings
            // file's fault: it is reported by its own name and started afresh, as one that does not read.
            logger.warning(
                "the settings history is too large to read: it starts afresh with the next change; the settings file is untouched",
                metadata: [
                    "history": "\(path)", "error": "\(error)",
                ])
            return nil
        } catch let error as SystemCallError {
            throw SettingsError(.unreadable, store: "settings history \(path)", path: path, error)
        }
        guard let (data, identity) = read else { return nil }
        guard let contents = Self.parse(data) else {
            logger.warning(
                "the settings history does not read: it starts afresh with the next change; the settings file is untouched",
                metadata: [
                    "history": "\(path)"
                ])
            return nil
        }
        lastSeen.withLock { $0 = Known(path: path, identity: identity, contents: contents) }
        return contents
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
        guard let first = lines.first, first.whole,
            case .object(let header)? = try? JSONReader.document(from: Array(first.bytes)),
            header["format"] == .string(format), header["version"] == .integer(version),
            case .integer(let baseRevision)? = header["revision"], case .string(let baseDigest)? = header["digest"]
        else { return nil }
        var contents = Contents()
        contents.baseRevision = baseRevision
        contents.base = header["document"].flatMap { $0 == .null ? nil : $0 }
        contents.baseDigest = baseDigest
        contents.basePurged = purgedPaths(header["purged"])
        contents.length = first.end
        for (index, line) in lines.enumerated().dropFirst() {
            let isLast = index == lines.count - 1
            guard line.whole, let (change, digest) = record(line.bytes), change.revision > contents.lastRevision else {
                if isLast { break }  // torn
                return nil
            }
            // A line kept as it reads, unless its bytes are not UTF-8 (it is then written again as new).
            let text =
                String(validating: line.bytes, as: UTF8.self).map { $0 + "\n" } ?? Self.line(change, digest: digest)
            contents.records.append(
                Contents.Record(change, digest: digest, line: text, length: line.end - contents.length))
            contents.length = line.end
        }
        return contents
    }

    private static func record(_ line: ArraySlice<UInt8>) -> (SettingsChange, digest: String)? {
        guard case .object(let record)? = try? JSONReader.document(from: Array(line)),
            case .integer(let revision)? = record["revision"], case .integer(let milliseconds)? = record["time"],
            let patch = record["patch"], let back = record["back"], case .string(let digest)? = record["digest"]
        else { return nil }
        var author: SettingsChange.Author?
        if case .object(let who)? = record["author"] {
            guard case .integer(let uid)? = who["uid"], case .integer(let pid)? = who["pid"],
                case .string(let program)? = who["program"], case .string(let host)? = who["host"]
            else { return nil }
            var name: String?
            if case .string(let user)? = who["user"] { name = user }
            author = SettingsChange.Author(
                userID: UInt32(truncatingIfNeeded: uid), userName: name, processID: Int32(truncatingIfNeeded: pid),
                program: program, host: host)
        }
        let change = SettingsChange(
            revision: revision, time: time(milliseconds: milliseconds), author: author, patch: patch,
            reversePatch: back,
            purgedPaths: purgedPaths(record["purged"]))
        return (change, digest)
    }

    /// The paths a record's `purged` names (none when it has none; one that does not parse is left out).
    private static func purgedPaths(_ value: JSONValue?) -> [ValuePath] {
        guard case .array(let paths)? = value else { return [] }
        return paths.compactMap { if case .string(let text) = $0 { try? ValuePath(parsing: text) } else { nil } }
    }

    /// A record's `purged`: the paths as text.
    private static func purgedText(_ paths: [ValuePath]) -> JSONValue {
        .array(paths.map { .string($0.description) })
    }

    // MARK: Writing

    /// Starts recording the settings file at `target` going from `old` to `new` (their documents and
    /// bytes; nil: no file) by `author`, while the file is written. Call it holding the settings file's
    /// lock, and ``place(_:)``, then ``finish(_:)`` or ``abandon(_:)``, before letting go of it. A failure
    /// is logged, never thrown: the history must never stop a write.
    func begin(
        from old: (document: JSONValue?, text: Data?), to new: (document: JSONValue?, text: Data?), at target: String,
        author: SettingsChange.Author?, store: String
    ) -> PendingRecord {
        let path = Self.path(for: target)
        return PendingRecord(path: path, settings: target, on: queue) { [self] in
            do {
                return try append(from: old, to: new, path: path, settings: target, author: author, store: store)
            } catch {
                logger.warning(
                    "cannot record the change in the settings history",
                    metadata: [
                        "history": "\(path)", "error": "\(logDescription(of: error))",
                    ])
                return (.none, nil)
            }
        }
    }

    /// Puts the record in the journal, just before the settings file changes: waits until it is
    /// appended, or renames the journal written whole into place (the directory's flush that follows
    /// makes that durable).
    func place(_ pending: PendingRecord?) {
        guard let pending else { return }
        place(pending, durable: false)
    }

    private func place(_ pending: PendingRecord, durable: Bool) {
        guard case .staged(let file, let contents) = pending.waitMade(), pending.settle() else { return }
        do {
            try FileSystem.place(file, durable: durable)
            lastSeen.withLock { $0 = Known(path: pending.path, identity: file.identity, contents: contents) }
        } catch {
            logger.warning(
                "cannot record the change in the settings history",
                metadata: [
                    "history": "\(pending.path)", "error": "\(logDescription(of: error))",
                ])
        }
    }

    /// Waits until a record is durable, once the settings file is written; a journal written whole takes
    /// the settings file's mode and owner then (the file may be new).
    func finish(_ pending: PendingRecord?) {
        guard let pending else { return }
        // Not placed yet when no settings file was written (an outside edit's record).
        place(pending, durable: true)
        switch pending.waitFlushed() {
        case .appended(_, let failure?):
            logger.warning(
                "cannot flush the settings history", metadata: ["history": "\(pending.path)", "error": "\(failure)"])
        case .staged:
            matchOwnerAndMode(of: pending.path, to: pending.settings)
        case .appended, .none:
            break
        }
    }

    /// Takes a record out again when the settings file's write failed: an appended record is cut off, and
    /// a journal written whole is removed unless it is in place already (the next write then finds that its
    /// last record never landed).
    func abandon(_ pending: PendingRecord?) {
        guard let pending else { return }
        switch pending.waitFlushed() {
        case .appended(let length, _):
            if truncate(pending.path, off_t(length)) == 0 { lastSeen.withLock { $0 = nil } }
        case .staged(let file, _):
            if pending.settle() { FileSystem.discard(file) }
        case .none:
            break
        }
    }

    /// Records an outside edit of the settings file at `target`, which now holds `current`, unless the
    /// journal's last record left it so. Call it holding the settings file's lock.
    func recordOutsideEdit(to current: (document: JSONValue?, text: Data?), at target: String, store: String) {
        finish(begin(from: current, to: current, at: target, author: nil, store: store))
    }

    /// Whether the journal beside `target` may lack a record of the settings file whose bytes have
    /// `digest`: false when it is not there or this process may not write it, or when its last record, as
    /// this process last read or wrote it, left those bytes.
    func mayHaveMissed(digest: String, at target: String) -> Bool {
        let path = Self.path(for: target)
        guard access(path, W_OK) == 0 else { return false }
        guard let seen = lastSeen.withLock({ $0 }), seen.path == path,
            (try? FileSystem.identity(of: path)) == seen.identity
        else { return true }
        return seen.contents.lastDigest != digest
    }

    private func append(
        from old: (document: JSONValue?, text: Data?), to new: (document: JSONValue?, text: Data?), path: String,
        settings: String,
        author: SettingsChange.Author?, store: String
    ) throws -> (Outcome, fd: Int32?) {
        let oldDigest = Self.digest(of: old.text)
        // The settings file is as this process's last record left it: the journal is too, unless a writer
        // died between its record and its write (which the append checks for, and cuts off).
        // Taken out while the record is appended, so that its records are appended to in place rather than
        // copied; put back once the journal is written (a journal that fails is read again next time).
        let trusted = lastSeen.withLock { seen -> Known? in
            guard let known = seen, known.path == path, known.contents.lastDigest == oldDigest else { return nil }
            seen = nil
            return known
        }
        do {
            return try append(
                from: old, to: new, path: path, settings: settings, author: author, store: store, oldDigest: oldDigest,
                trusting: trusted)
        } catch is StaleJournal {
            lastSeen.withLock { $0 = nil }
            return try append(
                from: old, to: new, path: path, settings: settings, author: author, store: store, oldDigest: oldDigest,
                trusting: nil)
        }
    }

    /// The journal's file is not the one this process last wrote: it is read again.
    private struct StaleJournal: Error {}

    /// The journal's file belongs to another user: it is written afresh, never appended to.
    private struct ForeignJournal: Error {}

    private func append(
        from old: (document: JSONValue?, text: Data?), to new: (document: JSONValue?, text: Data?), path: String,
        settings: String,
        author: SettingsChange.Author?, store: String, oldDigest: String, trusting trusted: consuming Known?
    ) throws -> (Outcome, fd: Int32?) {
        let expected = trusted?.identity
        var contents = try (consume trusted)?.contents ?? contents(at: path, settings: settings, store: store)
        var lines: [String] = []
        // Whether the journal's file, cut to `contents.length`, is what `contents` says (so that lines can
        // be appended to it), and whether anything changed.
        var appendable = contents != nil
        var changed = false
        let now = Self.time(milliseconds: Self.milliseconds(of: Date()))  // as a record says it
        if var journal = contents, journal.lastDigest != oldDigest {
            changed = true
            if journal.digestBeforeLast == oldDigest {
                // The file is as it was before the last record: that record's write never landed (a crash
                // between the two).
                journal.length -= journal.records.removeLast().length
            } else if !(try journal.lastDocument() ?? .null).isSameDocument(as: old.document ?? .null) {
                // Changed since the last record by something that keeps no history.
                let last = try journal.lastDocument()
                let change = SettingsChange(
                    revision: journal.lastRevision + 1, time: now, author: nil,
                    patch: SettingsHistory.patch(from: last, to: old.document),
                    reversePatch: SettingsHistory.patch(from: old.document, to: last))
                let record = Contents.Record(change, digest: oldDigest)
                journal.records.append(record)
                lines.append(record.line)
            } else {
                // The same document in other bytes (a file reformatted by hand): the last record stands for it.
                if let last = journal.records.last {
                    journal.records[journal.records.count - 1] = Contents.Record(last.change, digest: oldDigest)
                } else {
                    journal.baseDigest = oldDigest
                }
                appendable = false
            }
            contents = journal
        }
        if author != nil {
            changed = true
            let change = SettingsChange(
                revision: (contents?.lastRevision ?? 0) + 1, time: now, author: author,
                patch: SettingsHistory.patch(from: old.document, to: new.document),
                reversePatch: SettingsHistory.patch(from: new.document, to: old.document))
            let record = Contents.Record(change, digest: Self.digest(of: new.text))
            if contents == nil { contents = Contents(baseRevision: 0, base: old.document, baseDigest: oldDigest) }
            contents!.records.append(record)
            lines.append(record.line)
        }
        guard changed, var journal = contents else {
            // Nothing to record: the journal taken out is put back as it was.
            if let contents, let expected {
                lastSeen.withLock { $0 = Known(path: path, identity: expected, contents: contents) }
            }
            return (.none, nil)
        }
        let appended = lines.reduce(0) { $0 + $1.utf8.count }
        if appendable, journal.records.count <= maximumChanges, journal.length + appended <= maximumBytes {
            let keeping = journal.length
            journal.length += appended
            let (identity, fd) = try appendLines(
                lines.joined(), to: path, settings: settings, keeping: keeping, expecting: expected)
            lastSeen.withLock { $0 = Known(path: path, identity: identity, contents: journal) }
            return (.appended(lengthBefore: keeping, flushFailure: nil), fd)
        }
        // A new journal, one that did not read, one past a bound, or one whose last digest changed: written
        // whole, staged beside the journal until the settings file is written. Until it is in place, the
        // journal is read from its file.
        compact(&journal)
        let text = Self.header(journal) + journal.records.map(\.line).joined()
        journal.length = text.utf8.count
        // Each line's length as the file now holds it (a line read as other bytes is written anew).
        for index in journal.records.indices { journal.records[index].length = journal.records[index].line.utf8.count }
        // Another user's journal at the path is taken away first, so that the journal written in its place
        // does not take its owner (as a file replaced otherwise keeps its owner).
        var found = stat()
        if lstat(path, &found) == 0, !Self.isOwnJournal(owner: found.st_uid, settings: settings), unlink(path) != 0 {
            throw SystemCallError("remove another user's file at", path)
        }
        let staged = try FileSystem.stage(
            Data(text.utf8), for: path, permissions: FileSystem.permissions(of: settings) ?? 0o600)
        return (.staged(staged, contents: journal), nil)
    }

    // MARK: Purging

    /// Takes the values at `path`, and under it, out of every record of the journal beside `target`: out
    /// of the first line's document and out of each change's patches both ways (the value a change set and
    /// the one it replaced or removed), naming `path` in each record that held one. Returns how many
    /// records did (the first line counts as one); 0 changes nothing, unless a torn last record is there to
    /// cut off. Call it holding the settings file's lock.
    ///
    /// The journal is written whole as a compaction writes it: under a temporary name beside it, with the
    /// settings file's mode, flushed, renamed over the old one (whose bytes go with its name), and the
    /// directory flushed; then it takes the settings file's owner. The root path purges every value.
    ///
    /// - Throws: ``SettingsError/Code/corrupt`` when there is a journal that does not read or is another
    ///   user's (it cannot be purged, and is named so that it can be removed by hand);
    ///   ``SettingsError/Code/unwritable`` when it cannot be written (it is then as it was).
    func purge(_ path: ValuePath, at target: String, store: String) throws -> Int {
        let location = Self.path(for: target)
        let found: FileIdentity?
        do {
            found = try FileSystem.identity(of: location)
        } catch let error as SystemCallError {
            throw SettingsError(.unreadable, store: "settings history \(location)", path: location, error)
        }
        guard let found else { return 0 }
        guard var journal = try contents(at: location, settings: target, store: store) else {
            throw SettingsError(
                .corrupt, store: "settings history \(location)",
                reason:
                    "it does not read, or belongs to another user, so nothing could be purged from it: remove it by hand (the history starts afresh with the next change)"
            )
        }
        var purged = 0
        if let base = journal.base, let kept = Self.purging(path, from: base) {
            journal.base = kept
            if !journal.basePurged.contains(path) { journal.basePurged.append(path) }
            purged += 1
        }
        for index in journal.records.indices {
            var change = journal.records[index].change
            let patch = Self.purging(path, from: change.patch), back = Self.purging(path, from: change.reversePatch)
            guard patch != nil || back != nil else { continue }
            change.patch = patch ?? change.patch
            change.reversePatch = back ?? change.reversePatch
            if !change.purgedPaths.contains(path) { change.purgedPaths.append(path) }
            journal.records[index] = Contents.Record(change, digest: journal.records[index].digest)
            purged += 1
        }
        // A torn last record (which no history shows) is cut off too, whatever it held.
        guard purged > 0 || Int(found.size) != journal.length else { return 0 }
        let text = Self.header(journal) + journal.records.map(\.line).joined()
        journal.length = text.utf8.count
        for index in journal.records.indices { journal.records[index].length = journal.records[index].line.utf8.count }
        do {
            let staged = try FileSystem.stage(
                Data(text.utf8), for: location, permissions: FileSystem.permissions(of: target) ?? 0o600)
            try FileSystem.place(staged, durable: true)
            matchOwnerAndMode(of: location, to: target)
            lastSeen.withLock { $0 = Known(path: location, identity: staged.identity, contents: journal) }
        } catch let error as SystemCallError {
            lastSeen.withLock { $0 = nil }
            throw SettingsError(.unwritable, store: "settings history \(location)", path: location, error)
        }
        return purged
    }

    /// `value` (a document or a merge patch) without what it holds at `path`; nil when it holds nothing
    /// there. For the root path, an empty object: a document that holds nothing, a patch that changes
    /// nothing.
    private static func purging(_ path: ValuePath, from value: JSONValue) -> JSONValue? {
        guard !path.components.isEmpty else { return value == .object([:]) ? nil : .object([:]) }
        var value = value
        return value.removeValue(at: path) == nil ? nil : value
    }

    /// Folds the oldest changes into the base until a quarter of each bound is free (keeping at least the
    /// newest change).
    private func compact(_ journal: inout Contents) {
        var bytes = journal.records.reduce(0) { $0 + $1.length }
        guard journal.records.count > maximumChanges || Self.header(journal).utf8.count + bytes > maximumBytes else {
            return
        }
        var dropped = 0
        while journal.records.count - dropped > 1,
            journal.records.count - dropped > maximumChanges * 3 / 4 || bytes > maximumBytes * 3 / 4
        {
            bytes -= journal.records[dropped].length
            dropped += 1
        }
        guard dropped > 0 else { return }
        var base: JSONValue = journal.base ?? .null
        for record in journal.records.prefix(dropped) {
            base = base.merging(patch: record.change.patch)
            journal.basePurged += record.change.purgedPaths.filter { !journal.basePurged.contains($0) }
        }
        journal.base = base == .null ? nil : base
        journal.baseRevision = journal.records[dropped - 1].change.revision
        journal.baseDigest = journal.records[dropped - 1].digest
        journal.records.removeFirst(dropped)
    }

    /// Appends `text` to the journal at `path`, first cutting off whatever follows its first `length`
    /// bytes (a torn record, or one that never landed); returns the journal's new identity, and the open
    /// file to flush and close.
    ///
    /// - Throws: ``StaleJournal`` when the file is not `expected` (nil: not checked) nor `expected` with
    ///   more after it (a record that never landed).
    private func appendLines(
        _ text: String, to path: String, settings: String, keeping length: Int, expecting expected: FileIdentity?
    ) throws -> (FileIdentity, Int32) {
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { throw SystemCallError("open", path) }
        var handedOver = false
        defer { if !handedOver { close(fd) } }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemCallError("stat", path) }
        // Only a regular file of this process's user (or the settings file's owner): a journal another user
        // planted (in a shared directory) would receive what this process records, so it is never appended
        // to; the journal is then written afresh, as Loupe's own.
        guard (info.st_mode & S_IFMT) == S_IFREG, Self.isOwnJournal(owner: info.st_uid, settings: settings) else {
            throw ForeignJournal()
        }
        // The journal holds what the settings file holds: it has the settings file's mode and owner at every
        // append, not only when it is written whole (a settings file made private since keeps its history
        // private too).
        var settingsInfo = stat()
        if stat(settings, &settingsInfo) == 0 {
            let mode = settingsInfo.st_mode & 0o0666
            if info.st_mode & 0o7777 != mode, fchmod(fd, mode) != 0 { throw SystemCallError("chmod", path) }
            if settingsInfo.st_uid != info.st_uid || settingsInfo.st_gid != info.st_gid {
                _ = fchown(fd, settingsInfo.st_uid, settingsInfo.st_gid)
            }
        }
        if let expected {
            let found = FileIdentity(info)
            guard found.device == expected.device, found.inode == expected.inode, found.size >= expected.size,
                found.size > expected.size || found == expected
            else { throw StaleJournal() }
        }
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
        guard fstat(fd, &info) == 0 else { throw SystemCallError("stat", path) }
        handedOver = true
        return (FileIdentity(info), fd)
    }

    /// Gives the journal the settings file's mode and, where the process may, its owner and group.
    private func matchOwnerAndMode(of path: String, to settings: String) {
        var info = stat()
        guard stat(settings, &info) == 0 else { return }
        _ = chmod(path, info.st_mode & 0o0666)
        if info.st_uid != geteuid() || info.st_gid != getegid() { _ = chown(path, info.st_uid, info.st_gid) }
    }

    /// Whether a journal that `owner` owns is one this process may read and append to: its own user's,
    /// root's, or the settings file's owner's (who may read what it records in the settings file itself). Any
    /// other user's journal (planted in a shared, sticky directory) would receive what this process records,
    /// as the kernel's `protected_symlinks` rule guards against for links.
    private static func isOwnJournal(owner: uid_t, settings: String) -> Bool {
        if owner == geteuid() || owner == 0 { return true }
        var info = stat()
        return stat(settings, &info) == 0 && info.st_uid == owner
    }

    /// A record's time: milliseconds since 1970.
    private static func milliseconds(of time: Date) -> Int { Int((time.timeIntervalSince1970 * 1000).rounded()) }

    private static func time(milliseconds: Int) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    private static func header(_ journal: Contents) -> String {
        var header: [String: JSONValue] = [
            "format": .string(format), "version": .integer(version), "revision": .integer(journal.baseRevision),
            "document": journal.base ?? .null, "digest": .string(journal.baseDigest),
        ]
        if !journal.basePurged.isEmpty { header["purged"] = purgedText(journal.basePurged) }
        return JSONValue.object(header).jsonText() + "\n"
    }

    fileprivate static func line(_ change: SettingsChange, digest: String) -> String {
        var record: [String: JSONValue] = [
            "revision": .integer(change.revision), "time": .integer(milliseconds(of: change.time ?? Date())),
            "patch": change.patch, "back": change.reversePatch, "digest": .string(digest),
        ]
        if !change.purgedPaths.isEmpty { record["purged"] = purgedText(change.purgedPaths) }
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
