#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Logging

/// A store that keeps the document in one file, as pretty JSON (the default), a property list, or any
/// other ``DocumentCodec``'s format.
///
/// ```swift
/// let root = try RootLens(default: Settings(), store: FileStore(path: "/etc/app/settings.json"))
/// ```
///
/// - **Atomic and durable.** Each save writes a new temporary file beside the target (created exclusively,
///   with the mode of the existing file or ``permissions``), flushes it to disk, renames it over the
///   target and flushes the directory. Readers, crashes and power cuts see the old file or the new one.
///   Missing parent directories are created; a symbolic link is followed and its target replaced. The new
///   file keeps the owner and group of the one it replaces where the process may give them (root always
///   may): `sudo` editing a service's settings leaves them the service's.
/// - **Safe between processes.** Every save holds an advisory lock (`flock` on `.NAME.lock` beside the
///   file the path resolves to when the lock is taken, checked again once held) and writes only if the
///   file is still the version the update read (its device, inode, size and modification time); else the
///   root re-runs the update on the file's current contents. Processes that update the same file, even
///   through a link retargeted meanwhile, never lose each other's changes. Reading, reloading and watching take no lock and write nothing, so a process
///   that may only read the file (a daemon reading a root-owned `/etc` file) follows every change and
///   leaves nothing in its directory. A lock file deleted or replaced while a writer runs is noticed and
///   locked afresh, so exclusion survives it.
/// - **Safe with people's editors**, which take no lock. A save in place still being written is waited for
///   (``settleTime``, and inotify, holding the lock), never taken for the whole file. The new file is
///   swapped in (`renameat2(RENAME_EXCHANGE)`) and what came out compared with the version read, identity
///   and bytes: a save that landed meanwhile is swapped back and the update runs again on it. A save an
///   editor wrote into the file it looked up just before the swap is found in the version taken out (kept
///   open for a second after the last write) and put back at the path.
/// - **Bounded.** Only a regular file is read: a FIFO, a device or a socket at the path is an error saying
///   what it is (never a wait for a writer that never comes). A file larger than
///   ``maximumDocumentSize`` (16 MiB by default), or growing past it while it is read, is an error.
/// - **Watched.** The root lens picks up outside edits (another process, an editor, `mv`, `sed -i`) and
///   notifies observers; an edit that does not decode is reported and ignored. The watch follows the path
///   as given through every symbolic link, so a retargeted link (`ln -sfn`) and a Kubernetes ConfigMap's
///   `..data` swap are seen every time.
/// - **Never overwritten by mistake.** A file that exists but cannot be read or parsed is an error naming
///   the file; one that parses but does not fit the type is an error naming the file and the coding path.
///   Neither is ever replaced by a default unless you ask for ``CorruptFileRecovery/moveAside`` (which
///   moves aside a file that does not parse).
/// - **A history.** Each write appends one record to `.NAME.history` beside the file (when, who, and the
///   merge patches both ways; see ``HistoryPolicy``), for `RootLens.history()` and
///   `RootLens.rollback(to:)`. An edit made without Loupe is recorded, as an outside edit, by the next
///   write.
public final class FileStore: DocumentStore {
    /// When saves reach the disk.
    public enum WritePolicy: Sendable, Equatable {
        /// Each update returns after its data is durable on disk (the default).
        case immediate
        /// Updates change memory at once; the latest document is written durably at most once per
        /// interval, on `RootLens.flush()`, and when the root or the store is released. For settings that
        /// change many times a second; a crash loses at most one interval of changes.
        ///
        /// The store is then a ``CoalescingStore`` around the file: updates cost what an in-memory update
        /// costs, and do not take the file's lock or look at the file. Changes other processes make are
        /// picked up through the watch (or `RootLens.reload()`); changes of this process not yet written
        /// are applied again over them (as their merge patch: where both changed one part, this process's
        /// change wins), never dropped.
        case coalesced(Duration)
    }

    /// What to do when the file exists but does not parse.
    public enum CorruptFileRecovery: Sendable, Equatable {
        /// Fail with a ``SettingsError`` naming the file and what is wrong; leave the file alone (the default).
        case fail
        /// Start from the default, log a warning saying so, and before the first write over the file,
        /// rename it to `NAME.corrupt-TIMESTAMP` (a load never moves it: a reader changes nothing).
        case moveAside
    }

    /// What the store keeps of its changes.
    public enum HistoryPolicy: Sendable, Equatable {
        /// No history: nothing is written beside the file but its lock.
        case off
        /// A journal beside the file (`.NAME.history`) of at most `changes` changes in at most `bytes`
        /// bytes; when a change would pass either, the oldest are dropped until a quarter of each is free,
        /// as etcd compacts. Written durably, with the settings file's mode and owner.
        case kept(changes: Int = 100, bytes: Int = 1 << 20)
    }

    /// The file's path as given (a symbolic link is followed on every access).
    public let path: String
    /// The format of the file.
    public let codec: any DocumentCodec
    /// When saves reach the disk.
    public let writePolicy: WritePolicy
    /// The mode of a newly created file; an existing file keeps its own.
    public let permissions: mode_t
    /// What to do with a file that does not parse.
    public let recovery: CorruptFileRecovery
    /// How long an update waits for another process to release the file's lock.
    public let lockTimeout: Duration
    /// The largest file read, in bytes: a larger one (or one that grows past it while it is read) is a
    /// ``SettingsError`` rather than all of memory.
    public let maximumDocumentSize: Int
    /// What the store keeps of its changes.
    public let historyPolicy: HistoryPolicy
    /// How long a file written in place (by an editor that saves without renaming, a shell redirection)
    /// must have been left alone before it is read as finished.
    public let settleTime: Duration

    private let file: WatchedFile<Parsed>
    private let logger: Logger
    /// The history beside the file; nil when none is kept (or when ``deferred`` keeps it).
    private let journal: Journal?
    /// With ``WritePolicy/coalesced(_:)``, the store that answers loads, saves, removes and watches: a
    /// ``CoalescingStore`` around a store of the same file written at once. Nil: this store writes at once.
    private let deferred: CoalescingStore?

    /// A file's content as read: a document and the text that holds it (which the next write edits), or
    /// (with ``CorruptFileRecovery/moveAside``) the reason it does not parse.
    private enum Parsed: Sendable {
        case document(JSONValue, text: Data)
        case corrupt(SettingsError)
    }

    /// Creates a store for the file at `path`.
    ///
    /// - Parameters:
    ///   - path: The file. It need not exist; it is created, with its parent directories, by the first update.
    ///   - format: JSON (the default), ``PropertyListCodec`` or any other ``DocumentCodec``.
    ///   - writePolicy: ``WritePolicy/immediate`` (the default) or ``WritePolicy/coalesced(_:)``.
    ///   - permissions: The mode of a newly created file, less the process's umask: 0600 by default
    ///     (settings often hold tokens). A file that exists keeps its mode.
    ///   - recovery: ``CorruptFileRecovery/fail`` (the default) or ``CorruptFileRecovery/moveAside``.
    ///   - lockTimeout: How long an update waits for another process's lock (10 seconds by default).
    ///   - maximumDocumentSize: The largest file read, 16 MiB by default. Settings are kilobytes.
    ///   - history: What the store keeps of its changes: the last 100, in at most 1 MiB, by default.
    ///   - settleTime: How long a file written in place must have been left alone before it is read as
    ///     finished (50 ms by default): a save still being written is not taken for the whole file. A file
    ///     renamed into place is read at once.
    ///   - logger: Where loads and saves (debug), recoveries and background write failures are logged.
    ///     Values are never logged.
    public init(
        path: String,
        format: any DocumentCodec = JSONCodec(),
        writePolicy: WritePolicy = .immediate,
        permissions: mode_t = 0o600,
        recovery: CorruptFileRecovery = .fail,
        lockTimeout: Duration = .seconds(10),
        maximumDocumentSize: Int = 16 << 20,
        history: HistoryPolicy = .kept(),
        settleTime: Duration = .milliseconds(50),
        logger: Logger = Logger(label: "loupe.file")
    ) {
        self.maximumDocumentSize = maximumDocumentSize
        historyPolicy = history
        self.settleTime = settleTime
        self.path = path
        self.codec = format
        self.writePolicy = writePolicy
        self.permissions = permissions
        self.recovery = recovery
        self.lockTimeout = lockTimeout
        self.logger = logger
        let name = "\(format.formatName) file \(path)"
        file = WatchedFile(
            path: path, name: name, maximumSize: maximumDocumentSize, settleTime: settleTime,
            watchingSavesInPlace: true,
            onSaveIntoReplacedFile: { Self.log($0, of: path, to: logger) }
        ) { data in
            do {
                return .document(try format.parseDocument(data, store: name), text: data)
            } catch let error as SettingsError where recovery == .moveAside {
                return .corrupt(error)
            }
        }
        switch (writePolicy, history) {
        case (.coalesced(let interval), _):
            journal = nil
            let immediate = FileStore(
                path: path, format: format, permissions: permissions, recovery: recovery, lockTimeout: lockTimeout,
                maximumDocumentSize: maximumDocumentSize, history: history, settleTime: settleTime, logger: logger)
            deferred = CoalescingStore(immediate, interval: interval, logger: logger)
        case (.immediate, .off):
            journal = nil
            deferred = nil
        case (.immediate, .kept(let changes, let bytes)):
            journal = Journal(maximumChanges: changes, maximumBytes: bytes, logger: logger)
            deferred = nil
        }
    }

    /// Creates a store for the file at `url`: the store for its path,
    /// ``init(path:format:writePolicy:permissions:recovery:lockTimeout:maximumDocumentSize:history:settleTime:logger:)``,
    /// whose parameters these are.
    public convenience init(
        url: URL, format: any DocumentCodec = JSONCodec(), writePolicy: WritePolicy = .immediate,
        permissions: mode_t = 0o600, recovery: CorruptFileRecovery = .fail, lockTimeout: Duration = .seconds(10),
        maximumDocumentSize: Int = 16 << 20, history: HistoryPolicy = .kept(), settleTime: Duration = .milliseconds(50),
        logger: Logger = Logger(label: "loupe.file")
    ) {
        self.init(
            path: url.path, format: format, writePolicy: writePolicy, permissions: permissions,
            recovery: recovery, lockTimeout: lockTimeout, maximumDocumentSize: maximumDocumentSize, history: history,
            settleTime: settleTime, logger: logger)
    }

    public var description: String { file.name }

    /// The codec's date and key strategies.
    public var coding: DocumentCoding { codec.coding }

    public func load() throws -> StoredDocument {
        try loadWithText().stored
    }

    /// What ``load()`` returns, and the text its document was read from, from one read of the file: a store
    /// built on this one (sops's, whose MAC follows the order of the text's keys) gets the very text of the
    /// document it got, whatever another thread reads meanwhile. The text is nil where there is no document
    /// read from a file: no file, a corrupt one set aside, or a store with ``WritePolicy/coalesced(_:)``.
    package func loadWithText() throws -> (stored: StoredDocument, text: Data?) {
        if let deferred { return (try deferred.load(), nil) }
        guard let read = try file.read() else {
            logger.debug("no settings file yet; starting from the default", metadata: ["file": "\(path)"])
            return (StoredDocument(nil, token: .absent, source: path), nil)
        }
        switch read.content {
        case .document(let document, let text):
            return (StoredDocument(document, token: read.token, source: path, writers: read.writers), text)
        case .corrupt(let failure):
            logger.warning(
                "the settings file does not parse: starting from the default; it is moved aside before the first write over it",
                metadata: ["file": "\(path)", "error": "\(failure)"])
            return (StoredDocument(nil, token: read.token, source: path), nil)
        }
    }

    /// The text of the version of the file that `token` names, as this store last read or wrote it; nil
    /// when it has read another version since (or `token` names none). ``save(_:replacing:)`` returns the
    /// token of the text it wrote: a store built on this one asks for that text here.
    package func text(of token: ChangeToken) -> Data? {
        guard let version = file.lastReadVersion(), version.token == token,
            case .document(_, let text) = version.content
        else { return nil }
        return text
    }

    /// Writes `document` as an edit of the file's text as last read, when that is what the file holds:
    /// a format people edit by hand changes only what changed. An edit that changes nothing writes nothing.
    public func save(_ document: JSONValue, replacing token: ChangeToken) throws -> ChangeToken {
        if let deferred { return try deferred.save(document, replacing: token) }
        return try file.withLock(timeout: lockTimeout) { target, found in
            try putBackSaveIntoReplacedFile(at: target)
            let replaced = try checkUnchanged(target, found: found, since: token)
            var previous: (text: Data, document: JSONValue)?
            if case .version = replaced.expected, case .document(let held, let text)? = try read(token)?.content {
                previous = (text, held)
            }
            let data = try codec.serializeDocument(document, editing: previous, store: description)
            if let previous, data == previous.text { return token }
            // The history's record goes first: it is flushed, or its journal staged, while the file is
            // written, and in the journal before the file changes.
            let old =
                journal == nil
                ? nil : previous.map { (document: .some($0.document), text: .some($0.text)) } ?? held(token)
            let record = old.flatMap {
                journal?.begin(from: $0, to: (document, data), at: target, author: .thisProcess, store: description)
            }
            let identity: FileIdentity
            do {
                // The bytes the update read, where it read them, are what the file must still hold.
                var expected = replaced.expected
                if case .version(let identity, _) = expected, let previous {
                    expected = .version(identity, bytes: previous.text)
                }
                identity = try file.write(
                    data, to: target, replacing: replaced.found, expecting: expected, permissions: permissions
                ) {
                    journal?.place(record)
                }
            } catch is FileSystem.ChangedMeanwhile {
                journal?.abandon(record)
                // What was read of the file is not what it holds, whatever its identity says: read it again.
                file.forgetLastRead()
                throw savedMeanwhile()
            } catch {
                journal?.abandon(record)
                throw error
            }
            journal?.finish(record)
            let saved = file.remember(.document(document, text: data), written: data, as: identity, at: target)
            logger.debug("saved settings", metadata: ["file": "\(path)", "bytes": "\(data.count)"])
            return saved.token
        }
    }

    /// The version of the file that `token` names (its identity is the file's now, as ``checkUnchanged``
    /// found it), as this process last read or wrote it, or else read again now (a read outside the update,
    /// the watch's, may have taken its place); nil for a token without the digest of its bytes.
    ///
    /// - Throws: a conflict when the file holds other bytes, whatever its identity says: a save in place
    ///   at the same size in the same tick of the kernel's clock leaves the identity as it was.
    private func read(_ token: ChangeToken) throws -> WatchedFile<Parsed>.Version? {
        guard token.fileDigest != nil else { return nil }
        if let version = file.lastReadVersion(), version.token == token { return version }
        guard let version = try file.read(), version.token == token else {
            throw changedSinceRead()
        }
        return version
    }

    /// What the file that `token` identifies holds, read again (an update the root made without reading
    /// the file through this store): no document for no file; nil when it does not read.
    private func held(_ token: ChangeToken) -> (document: JSONValue?, text: Data?)? {
        guard token != .absent else { return (nil, nil) }
        guard case .document(let document, let text)? = (try? file.read())?.content else { return nil }
        return (document, text)
    }

    /// Records an edit made without Loupe, which the watch just reported, in the history: when there is
    /// one this process may write, and the file is not what its last record left. A process that may only
    /// read (a daemon reading a root-owned file) leaves it to the next writer.
    private func recordOutsideEdit() {
        guard let journal, let target = try? file.resolved(), let current = try? file.read()?.content ?? .none else {
            return
        }
        let text: Data? = if case .document(_, let text) = current { text } else { nil }
        guard journal.mayHaveMissed(digest: Journal.digest(of: text), at: target) else { return }
        do {
            try file.withLock(timeout: .milliseconds(200)) { target in
                switch try file.read()?.content {
                case .document(let document, let text)?:
                    journal.recordOutsideEdit(to: (document, text), at: target, store: description)
                case nil: journal.recordOutsideEdit(to: (nil, nil), at: target, store: description)
                case .corrupt?: break  // recorded once it reads
                }
            }
        } catch {
            logger.debug(
                "did not record an outside edit in the settings history",
                metadata: ["file": "\(path)", "error": "\(logDescription(of: error))"])
        }
    }

    /// The file's lock; the journal beside the file as its history (none with ``HistoryPolicy/off``): a
    /// purge writes the journal again whole, atomically and durably, with the settings file's mode and owner,
    /// under the file's lock, and leaves the file itself alone; deferred writes with
    /// ``WritePolicy/coalesced(_:)``; where values stand in the file's text.
    public var capabilities: StoreCapabilities {
        if let deferred { return deferred.capabilities }
        return StoreCapabilities(
            history: journal.map { JournalHistory(journal: $0, store: self) },
            exclusiveAccess: FileLockAccess(store: self), textPositions: TextPositions(store: self))
    }

    /// Where values are written in the file's text as this store last read or wrote it.
    private struct TextPositions: StoreTextPositions {
        let store: FileStore

        func positions(of paths: [ValuePath], inFile source: String) -> [TextPosition?] {
            guard source == store.path || source == store.description,
                case .document(_, let text)? = store.file.lastReadVersion()?.content
            else {
                return paths.map { _ in nil }
            }
            return store.codec.positions(of: paths, in: text)
        }
    }

    /// The journal beside the file, read and purged where the file's path resolves now.
    private struct JournalHistory: StoreHistory {
        let journal: Journal
        let store: FileStore

        func history() throws -> SettingsHistory {
            try journal.history(of: store.file.resolved(), store: store.description)
        }

        func purgeHistory(of path: ValuePath) throws -> Int {
            try store.file.withLock(timeout: store.lockTimeout) { target in
                try journal.purge(path, at: target, store: store.description)
            }
        }
    }

    public func remove(replacing token: ChangeToken) throws -> ChangeToken {
        if let deferred { return try deferred.remove(replacing: token) }
        return try file.withLock(timeout: lockTimeout) { target, found in
            try checkUnchanged(target, found: found, since: token)
            let old = journal == nil ? nil : held(token)
            let record = old.flatMap {
                journal?.begin(from: $0, to: (nil, nil), at: target, author: .thisProcess, store: description)
            }
            do {
                try file.remove(at: target) { journal?.place(record) }
            } catch {
                journal?.abandon(record)
                throw error
            }
            journal?.finish(record)
            return .absent
        }
    }

    /// The file's lock, held around `body`.
    private struct FileLockAccess: StoreExclusiveAccess {
        let store: FileStore

        func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R {
            try store.file.withLock(timeout: store.lockTimeout) { _ in try body() }
        }
    }

    public func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        if let deferred { return try deferred.watch(onChange) }
        do {
            // The path as given: the watch follows its symbolic links afresh after every change.
            let (watch, pollingReason) = try file.watch { [weak self] in
                self?.recordOutsideEdit()
                onChange()
            }
            if let pollingReason {
                logger.warning(
                    "inotify cannot watch the settings file; checking it every 100 ms instead",
                    metadata: ["file": "\(path)", "error": "\(pollingReason)"])
            }
            return watch
        } catch {
            logger.warning(
                "cannot watch the settings file for outside changes",
                metadata: ["file": "\(path)", "error": "\(logDescription(of: error))"])
            return nil
        }
    }

    /// Throws a conflict unless the file at `target` is the version `token` names; moves a file that does
    /// not parse aside (with ``FileStore/CorruptFileRecovery/moveAside``). Call it holding the lock, with
    /// `found`, the status of the file there as the lock found it (nil: asked for here). Returns the status
    /// of the file a write would replace: nil once it was moved aside.
    @discardableResult
    private func checkUnchanged(
        _ target: String, found: stat?, since token: ChangeToken
    ) throws -> (found: stat?, expected: FileSystem.Expected) {
        // A save in place under way is waited for: what it leaves is then another version, and a conflict.
        let found = file.waitWhileSavedInPlace(target) ? nil : found
        let current = try found.map(FileIdentity.init) ?? file.identity(at: target)
        // The identity only: the bytes, where the update read them, are checked when the file is replaced.
        guard current.map({ $0 == token.fileIdentity }) ?? (token == .absent) else { throw changedSinceRead() }
        if current != nil, recovery == .moveAside, case .corrupt(let failure)? = try? file.read()?.content {
            try moveAside(target, because: failure)
            return (nil, .nothing)
        }
        return (found, current.map { .version($0) } ?? .nothing)
    }

    /// Puts a person's save that landed in a version of the file an earlier write took from the path back
    /// at the path (an editor that looked the file up just before that write, and truncated and wrote it
    /// just after): the save is kept, and the update runs again on it (a conflict).
    private func putBackSaveIntoReplacedFile(at target: String) throws {
        guard let outcome = try file.putBackSaveIntoReplacedFile(at: target, permissions: permissions) else { return }
        Self.log(outcome, of: path, to: logger)
        if case .putBack = outcome {
            throw SettingsError(
                .conflict, store: description, reason: "another writer saved the file while it was written")
        }
    }

    private static func log(_ outcome: WatchedFile<Parsed>.SaveIntoReplacedFile, of path: String, to logger: Logger) {
        switch outcome {
        case .putBack:
            logger.info(
                "the settings file was saved by someone else into the version Loupe's last write replaced: their save is back in its place",
                metadata: ["file": "\(path)"])
        case .superseded:
            logger.warning(
                "the settings file was saved by someone else into the version Loupe's last write replaced, and saved again since: the later save stays",
                metadata: ["file": "\(path)"])
        }
    }

    /// The conflict a save meets when the file is not the version the update read.
    private func changedSinceRead() -> SettingsError {
        SettingsError(.conflict, store: description, reason: "another writer changed the file since it was read")
    }

    /// The conflict a save meets when a file was saved while it wrote (by an editor, which takes no lock):
    /// that save is at the path as it was left, and the update runs again on it.
    private func savedMeanwhile() -> SettingsError {
        logger.info(
            "the settings file was saved by someone else while Loupe wrote it: their save is kept, and the update runs again on it",
            metadata: ["file": "\(path)"])
        return SettingsError(
            .conflict, store: description, reason: "another writer saved the file while it was written")
    }

    private func moveAside(_ target: String, because failure: SettingsError) throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let aside = target + ".corrupt-" + formatter.string(from: Date())
        guard rename(target, aside) == 0 else {
            throw SettingsError(.unwritable, store: description, path: path, SystemCallError("move aside", target))
        }
        logger.warning(
            "moved an unreadable settings file aside before writing over it",
            metadata: ["file": "\(target)", "moved-to": "\(aside)", "error": "\(failure)"])
    }
}

extension SettingsError {
    /// The failure of a system call on the file at `path` (as given; a symbolic link is followed), which
    /// `store` keeps: `cannot read JSON file /etc/app/settings.json: open: Permission denied`.
    init(_ code: Code, store: String, path: String, _ error: SystemCallError) {
        let reason = error.reason
        let target = (try? FileSystem.resolvingSymlinks(path)) ?? path
        let place = error.path == target || error.path == path ? "" : " \(error.path)"
        self.init(code, store: store, reason: "\(error.operation)\(place): \(reason)", cause: error, errno: error.code)
    }
}

extension Duration {
    /// The duration in seconds, for Dispatch.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

extension FileStore: CustomDebugStringConvertible {
    /// The store's type, place and policy, for a debugger; never its value.
    public var debugDescription: String {
        "FileStore(\(codec.formatName), \(path), \(writePolicy), recovery: \(recovery))"
    }
}
