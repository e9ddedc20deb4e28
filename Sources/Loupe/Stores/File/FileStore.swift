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
/// - **Safe between processes.** Every update holds an advisory lock (`flock` on `.NAME.lock` beside the
///   file) and applies to the file's current contents, so processes that update the same file never lose
///   each other's changes. Reading, reloading and watching take no lock and write nothing, so a process
///   that may only read the file (a daemon reading a root-owned `/etc` file) follows every change and
///   leaves nothing in its directory. A lock file deleted or replaced while a writer runs is noticed and
///   locked afresh, so exclusion survives it.
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
public final class FileStore: WritableDocumentStore, LockingStore, WatchingStore, DeferredWriteStore {
    /// When saves reach the disk.
    public enum WritePolicy: Sendable, Equatable {
        /// Each update returns after its data is durable on disk (the default).
        case immediate
        /// Updates change memory at once; the latest document is written durably at most once per
        /// interval, on `RootLens.flush()`, and when the root or the store is released. For settings that
        /// change many times a second; a crash loses at most one interval of changes.
        ///
        /// Updates then cost what an in-memory update costs: they do not take the file's lock or look at
        /// the file. Changes other processes make are picked up through the watch (or
        /// `RootLens.reload()`); changes of this process not yet written are applied again over them (as
        /// their merge patch: where both changed one part, this process's change wins), never dropped.
        /// The write at the end of an interval replaces the file, so it suits a file one process writes
        /// most of.
        case coalesced(Duration)
    }

    /// What to do when the file exists but does not parse as it is loaded.
    public enum CorruptFileRecovery: Sendable, Equatable {
        /// Fail with a ``StoreError`` naming the file and what is wrong; leave the file alone (the default).
        case fail
        /// Rename the file to `NAME.corrupt-TIMESTAMP`, log a warning saying so, and start from the default.
        case moveAside
    }

    /// The file's path as given (a symbolic link is followed on every access).
    public let path: String
    /// The format of the file.
    public let codec: any DocumentCodec
    /// When saves reach the disk.
    public let writePolicy: WritePolicy
    /// The mode of a newly created file; an existing file keeps its own.
    public let permissions: mode_t
    /// What to do with a file that does not parse as it is loaded.
    public let recovery: CorruptFileRecovery
    /// How long an update waits for another process to release the file's lock.
    public let lockTimeout: Duration
    /// The largest file read, in bytes: a larger one (or one that grows past it while it is read) is a
    /// ``StoreError`` rather than all of memory.
    public let maximumDocumentSize: Int

    private let logger: Logger
    private let lock: FileLock
    private let state = Locked(State())
    private let flushQueue = DispatchQueue(label: "loupe.file-store.flush")

    private struct State {
        /// The version of the file this instance last read or wrote; nil: none (no file).
        var lastSeen: FileIdentity?
        /// With a coalescing write policy, the document saved but not yet written (encoded when written).
        var pending: (@Sendable () throws -> JSONValue)?
        /// With a coalescing write policy: the document last read or written, which pending changes are
        /// changes of.
        var lastDocument: JSONValue?
        var flushScheduled = false
        var cleanedTemporaryFiles = false
        /// With a coalescing write policy: the watch reported a change the store has not looked at yet.
        var outsideChangeReported = false
    }

    private var coalesces: Bool {
        if case .coalesced = writePolicy { true } else { false }
    }

    /// Creates a store for the file at `path`.
    ///
    /// - Parameters:
    ///   - path: The file. It need not exist; it is created, with its parent directories, by the first update.
    ///   - format: JSON (the default), ``PropertyListCodec`` or any other ``DocumentCodec``.
    ///   - writePolicy: ``WritePolicy/immediate`` (the default) or ``WritePolicy/coalesced(_:)``.
    ///   - permissions: The mode of a newly created file, 0600 by default (settings often hold tokens).
    ///   - recovery: ``CorruptFileRecovery/fail`` (the default) or ``CorruptFileRecovery/moveAside``.
    ///   - lockTimeout: How long an update waits for another process's lock (10 seconds by default).
    ///   - maximumDocumentSize: The largest file read, 16 MiB by default. Settings are kilobytes.
    ///   - logger: Where loads and saves (debug), outside changes, recoveries and background write failures
    ///     are logged. Values are never logged.
    public init(
        path: String,
        format: any DocumentCodec = JSONCodec(),
        writePolicy: WritePolicy = .immediate,
        permissions: mode_t = 0o600,
        recovery: CorruptFileRecovery = .fail,
        lockTimeout: Duration = .seconds(10),
        maximumDocumentSize: Int = 16 << 20,
        logger: Logger = Logger(label: "loupe.file")
    ) {
        self.maximumDocumentSize = maximumDocumentSize
        self.path = path
        self.codec = format
        self.writePolicy = writePolicy
        self.permissions = permissions
        self.recovery = recovery
        self.lockTimeout = lockTimeout
        self.logger = logger
        let target = (try? FileSystem.resolvingSymlinks(path)) ?? path
        self.lock = FileLock(
            path: FileSystem.directory(of: target) + "/" + FileSystem.sidecarName(for: FileSystem.fileName(of: target), suffix: ".lock"))
    }

    /// Creates a store for the file at `url`; see ``init(path:format:writePolicy:permissions:recovery:lockTimeout:maximumDocumentSize:logger:)``.
    public convenience init(
        url: URL,
        format: any DocumentCodec = JSONCodec(),
        writePolicy: WritePolicy = .immediate,
        permissions: mode_t = 0o600,
        recovery: CorruptFileRecovery = .fail,
        lockTimeout: Duration = .seconds(10),
        maximumDocumentSize: Int = 16 << 20,
        logger: Logger = Logger(label: "loupe.file")
    ) {
        self.init(
            path: url.path, format: format, writePolicy: writePolicy, permissions: permissions,
            recovery: recovery, lockTimeout: lockTimeout, maximumDocumentSize: maximumDocumentSize, logger: logger)
    }

    deinit {
        do {
            try flush()
        } catch {
            logger.error("could not write pending settings", metadata: ["file": "\(path)", "error": "\(error)"])
        }
    }

    public var description: String { "\(codec.formatName) file \(path)" }

    /// The codec's date and key strategies.
    public var coding: DocumentCoding { codec.coding }

    // MARK: DocumentStore

    public func load() throws -> JSONValue? {
        let target = try resolvedPath()
        guard let (data, identity) = try readFile(target) else {
            state.withLock { $0.lastSeen = nil }
            logger.debug("no settings file yet; starting from the default", metadata: ["file": "\(path)"])
            return nil
        }
        do {
            let document = try parse(data)
            state.withLock { state in
                state.lastSeen = identity
                if coalesces { state.lastDocument = document }
            }
            logger.debug("loaded settings", metadata: ["file": "\(path)", "bytes": "\(data.count)"])
            return document
        } catch let failure as StoreError where recovery == .moveAside {
            try withExclusiveAccess { try moveAside(target, because: failure) }
            state.withLock { $0.lastSeen = nil }
            return nil
        }
    }

    public func save(_ document: JSONValue) throws {
        try save(encoding: { document })
    }

    public func save(encoding encode: @escaping @Sendable () throws -> JSONValue) throws {
        switch writePolicy {
        case .immediate:
            try write(encode())
        case .coalesced(let interval):
            let schedule = state.withLock { state -> Bool in
                state.pending = encode
                defer { state.flushScheduled = true }
                return !state.flushScheduled
            }
            if schedule {
                flushQueue.asyncAfter(deadline: .now() + interval.timeInterval) { [weak self] in
                    self?.writeScheduledFlush()
                }
            }
        }
    }

    public func remove() throws {
        let target = try resolvedPath()
        state.withLock { $0.pending = nil }
        do {
            try FileSystem.remove(target)
        } catch let error as SystemCallError {
            throw storeError(.unwritable, error)
        }
        state.withLock { $0.lastSeen = nil }
    }

    public func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R {
        if coalesces { return try lock.withProcessLock(body) }
        return try withFileLock(body)
    }

    /// Runs `body` holding the file's lock against every process, after clearing what a killed writer left.
    private func withFileLock<R>(_ body: () throws -> R) throws -> R {
        let result: Result<R, any Error>
        do {
            result = try lock.withLock(timeout: lockTimeout) {
                let target = try resolvedPath()
                let clean = state.withLock { state -> Bool in
                    defer { state.cleanedTemporaryFiles = true }
                    return !state.cleanedTemporaryFiles
                }
                if clean { FileSystem.removeStaleTemporaryFiles(for: target) }
                return Result { try body() }
            }
        } catch let error as SystemCallError {
            throw storeError(error.code == ETIMEDOUT ? .timeout : .unwritable, error)
        }
        return try result.get()
    }

    public func loadIfChanged() throws -> StoreChange {
        if coalesces {
            let reported = state.withLock { state in
                defer { state.outsideChangeReported = false }
                return state.outsideChangeReported
            }
            guard reported else { return .unchanged }
        }
        let target = try resolvedPath()
        let current: FileIdentity?
        do {
            current = try FileSystem.identity(of: target)
        } catch let error as SystemCallError {
            throw storeError(.unreadable, error)
        }
        let lastSeen = state.withLock { $0.lastSeen }
        if current == lastSeen { return .unchanged }
        logger.debug("the settings file changed outside this process", metadata: ["file": "\(path)"])
        let read = try readSettledFile(target)
        // Local changes not written yet are never lost: their patch is applied again over the outside
        // change (where both changed one part, the local change wins, as it would have written last).
        let (pending, before) = state.withLock { ($0.pending, $0.lastDocument) }
        var document = read?.0
        if let pending {
            let patch = (before ?? .object([:])).mergePatch(to: try pending())
            let merged = (document ?? .object([:])).merging(patch: patch)
            logger.notice("re-applied changes not yet written over an outside change", metadata: ["file": "\(path)"])
            state.withLock { $0.pending = { merged } }
            document = merged
        }
        state.withLock { state in
            state.lastSeen = read?.1
            if coalesces { state.lastDocument = read?.0 }
        }
        return .changed(document)
    }

    public func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        do {
            // The path as given: the watch follows its symbolic links afresh after every change.
            let watcher = try FileWatcher(path: path) { [weak self] in
                self?.state.withLock { $0.outsideChangeReported = true }
                onChange()
            }
            if let reason = watcher.pollingReason {
                logger.warning(
                    "inotify cannot watch the settings file; checking it every 100 ms instead",
                    metadata: ["file": "\(path)", "error": "\(reason)"])
            }
            return watcher
        } catch {
            logger.warning("cannot watch the settings file for outside changes", metadata: ["file": "\(path)", "error": "\(error)"])
            return nil
        }
    }

    public func flush() throws {
        // Nothing pending, nothing to lock: a reader that never saved never touches the lock file.
        guard state.withLock({ $0.pending != nil }) else { return }
        try withFileLock {
            guard let pending = state.withLock({ $0.pending }) else { return }
            try write(pending())
            state.withLock { state in
                state.pending = nil
            }
        }
    }

    // MARK: Reading and writing

    private func resolvedPath() throws -> String {
        do {
            return try FileSystem.resolvingSymlinks(path)
        } catch let error as SystemCallError {
            throw storeError(.unreadable, error)
        }
    }

    private func readFile(_ target: String) throws -> (Data, FileIdentity)? {
        do {
            return try FileSystem.read(target, maximumSize: maximumDocumentSize)
        } catch let error as SystemCallError {
            throw storeError(.unreadable, error)
        }
    }

    /// Reads and parses the file, allowing for a writer still writing it in place; nil when there is none.
    private func readSettledFile(_ target: String) throws -> (JSONValue, FileIdentity)? {
        do {
            return try FileSystem.readSettled(target, maximumSize: maximumDocumentSize, parse: parse)
        } catch let error as SystemCallError {
            throw storeError(.unreadable, error)
        }
    }

    private func parse(_ data: Data) throws -> JSONValue {
        try codec.parseDocument(data, store: description)
    }

    private func write(_ document: JSONValue) throws {
        let data = try codec.serializeDocument(document, store: description)
        let target = try resolvedPath()
        let mode = FileSystem.permissions(of: target) ?? permissions
        do {
            let identity = try FileSystem.writeAtomically(data, to: target, permissions: mode)
            state.withLock { state in
                state.lastSeen = identity
                if coalesces { state.lastDocument = document }
            }
            logger.debug("saved settings", metadata: ["file": "\(path)", "bytes": "\(data.count)"])
        } catch let error as SystemCallError {
            throw storeError(.unwritable, error)
        }
    }

    private func writeScheduledFlush() {
        state.withLock { $0.flushScheduled = false }
        do {
            try flush()
        } catch {
            logger.error("could not write coalesced settings", metadata: ["file": "\(path)", "error": "\(error)"])
        }
    }

    private func moveAside(_ target: String, because failure: StoreError) throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let aside = target + ".corrupt-" + formatter.string(from: Date())
        guard rename(target, aside) == 0 else {
            throw storeError(.unwritable, SystemCallError("move aside", target))
        }
        logger.warning(
            "moved an unreadable settings file aside and started from the default",
            metadata: ["file": "\(target)", "moved-to": "\(aside)", "error": "\(failure)"])
    }

    private func storeError(_ code: StoreError.Code, _ error: SystemCallError) -> StoreError {
        StoreError(code, store: description, path: path, error)
    }
}

extension StoreError {
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
    public var debugDescription: String { "FileStore(\(codec.formatName), \(path), \(writePolicy), recovery: \(recovery))" }
}
