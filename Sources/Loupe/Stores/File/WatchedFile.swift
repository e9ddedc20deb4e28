#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// One file named by a path that may pass through symbolic links: the one way every store and layer reads,
/// writes, locks and watches a file.
///
/// - It follows the path through its links afresh on every access, so a retargeted link (`ln -sfn`) or a
///   Kubernetes `..data` swap is read, written and locked where the path points now.
/// - It reads the file whole and settled (a writer still writing in place is waited for), only a regular
///   file, at most ``maximumSize`` bytes, and knows the identity and the digest of what it read: a read of
///   a file whose identity has not changed since well before it was last read returns what was parsed
///   then, without reading it again (``read()`` says when the identity is not enough).
/// - Its lock (`flock` on `.NAME.lock` beside the file the path resolves to) is worked out when it is
///   taken, and checked again once held: if the link was retargeted meanwhile, it locks the new target's.
/// - It maps every system error to a ``SettingsError`` naming the file, one way.
///
/// It reads and watches through a ``ReadableFileSystem`` (the disk, unless a logic test gives it an
/// `InMemoryFileSystem` (in `LoupeTesting`)); it writes, deletes and locks on the disk: only ``FileStore`` writes.
final class WatchedFile<Content: Sendable>: Sendable {
    /// The path as given.
    let path: String
    /// The file's name in errors: `JSON file /etc/app/settings.json`.
    let name: String
    /// The largest file read, in bytes.
    let maximumSize: Int
    private let parse: @Sendable (Data) throws -> Content
    private let fileSystem: any ReadableFileSystem
    /// What the file held when last read or written, by identity: a read of an unchanged file is a `stat`.
    private let lastRead = Locked<Version?>(nil)
    /// The lock beside the target the path resolved to last, which the next write most likely locks again.
    private let lastLock = Locked<(target: String, lock: FileLock)?>(nil)
    /// What this process's checked writes did lately: the versions they took from the path (oldest first),
    /// and the last file they put there, with its bytes.
    private let writes = Locked<
        (replaced: [ReplacedFile], last: (identity: FileIdentity, bytes: Data)?, checkScheduled: Bool)
    >(([], nil, false))
    /// Told when a check between writes put back a save someone made into a version a write took from the
    /// path, or found it superseded.
    private let onSaveIntoReplacedFile: (@Sendable (SaveIntoReplacedFile) -> Void)?

    /// How long a file written in place must have been left alone before it is read as finished.
    let settleTime: Duration
    /// Whether saves in place of the file are watched for (``InPlaceWrites``): for a file this process
    /// writes.
    private let watchingSavesInPlace: Bool

    init(
        path: String, name: String, maximumSize: Int = FileSystem.defaultMaximumSize,
        settleTime: Duration = .milliseconds(50),
        fileSystem: any ReadableFileSystem = LocalFileSystem(), watchingSavesInPlace: Bool = false,
        onSaveIntoReplacedFile: (@Sendable (SaveIntoReplacedFile) -> Void)? = nil,
        parse: @escaping @Sendable (Data) throws -> Content
    ) {
        self.onSaveIntoReplacedFile = onSaveIntoReplacedFile
        self.watchingSavesInPlace = watchingSavesInPlace
        self.path = path
        self.name = name
        self.maximumSize = maximumSize
        self.settleTime = settleTime
        self.fileSystem = fileSystem
        self.parse = parse
    }

    /// The path the file's links resolve to now.
    func resolved() throws -> String {
        try mapping(.unreadable) { try fileSystem.resolvingSymlinks(path) }
    }

    /// The identity of the file now; nil when there is none.
    func identity() throws -> FileIdentity? {
        try identity(at: resolved())
    }

    /// The identity of the file at `target` (the path resolved, as ``withLock(timeout:_:)`` gives it) now;
    /// nil when there is none.
    func identity(at target: String) throws -> FileIdentity? {
        try mapping(.unreadable) { try fileSystem.identity(of: target) }
    }

    /// The token of the file now: its identity, or ``ChangeToken/absent``.
    func token() throws -> ChangeToken {
        try identity()?.token ?? .absent
    }

    /// One version of the file, as read or written: what it holds, its identity, the digest of its bytes,
    /// and who can change it.
    struct Version: Sendable {
        let content: Content
        let identity: FileIdentity
        /// ``StableDigest/of(_:)`` of the file's bytes.
        let digest: UInt64
        let writers: DocumentWriters
        /// The clock (`CLOCK_REALTIME`, as modification times are) just before the bytes were read or written.
        fileprivate let seen: Duration

        /// The version's change token: its identity and the digest of its bytes.
        var token: ChangeToken { ChangeToken(file: identity, digest: digest) }

        /// Whether another save of the file could have left it this identity: a file changed in place keeps
        /// its inode, often its size, and its modification time moves in the kernel's coarse ticks (up to
        /// 10 ms; a network file system's server keeps its own clock). A version modified a second or more
        /// before it was seen is told from any later one by its identity alone.
        var identityIsAmbiguous: Bool {
            seen - identity.modified < .seconds(1)
        }
    }

    /// What the file holds now and the identity and digest of exactly that version, and who can change it;
    /// nil when there is no file.
    ///
    /// A file whose identity is that of the version last read returns that version without being read
    /// again, unless the identity is ambiguous (``Version/identityIsAmbiguous``): then its bytes are read,
    /// and parsed only if they differ.
    ///
    /// - Throws: ``SettingsError`` naming the file when it cannot be read, is not a regular file, is too
    ///   large, or does not parse (and stays that way while it is read again).
    func read() throws -> Version? {
        let target = try resolved()
        if watchingSavesInPlace { InPlaceWrites.shared.follow(target) }
        let known = lastRead.withLock { $0 }
        let current = try mapping(.unreadable) { try fileSystem.identity(of: target) }
        if let known, current == known.identity, !known.identityIsAmbiguous {
            return known
        }
        // A file whose identity is still the version known (its bytes read again only because that identity
        // is ambiguous) is not being written: a save in place under way has changed its size.
        if let current, current != known?.identity { try waitUntilSettled(target, current, known: known?.identity) }
        let seen = FileIdentity.now
        guard
            let ((content, digest), identity) = try mapping(
                .unreadable,
                {
                    try fileSystem.readSettled(target, maximumSize: maximumSize) { data in
                        let digest = StableDigest.of(data)
                        // The same bytes as the version last read: what they parsed to then.
                        if let known, known.digest == digest {
                            return (known.content, digest)
                        }
                        return (try parse(data), digest)
                    }
                })
        else {
            return nil
        }
        let writers = fileSystem.writers(of: path, target: target, identity: identity)
        let version = Version(content: content, identity: identity, digest: digest, writers: writers, seen: seen)
        lastRead.withLock { $0 = version }
        return version
    }

    /// Waits while the file at `target` (now `current`) is being written in place: a save that truncates the
    /// file and writes it in several steps (an editor that saves without renaming, a shell redirection) has
    /// a prefix that may well parse (any YAML or TOML prefix that ends at a line does), and an update
    /// applied to that prefix would replace the rest.
    ///
    /// A file is taken as written in place when it is the file last read (the same inode) in another
    /// version, or one never read; a file renamed into place (as Loupe and most editors save) is whole, and
    /// read at once. Such a file is read once it has not changed for ``settleTime``, waiting at most twenty
    /// times that.
    private func waitUntilSettled(_ target: String, _ current: FileIdentity, known: FileIdentity?) throws {
        guard settleTime > .zero, known == nil || known?.inode == current.inode && known?.device == current.device
        else { return }
        let deadline = ContinuousClock.now + settleTime * 20
        var current = current
        while ContinuousClock.now < deadline {
            let age = current.age
            guard age < settleTime else { return }
            let pause = settleTime - age
            usleep(
                UInt32(
                    max(1_000, pause.components.seconds * 1_000_000 + pause.components.attoseconds / 1_000_000_000_000))
            )
            guard let now = try mapping(.unreadable, { try fileSystem.identity(of: target) }) else { return }
            current = now
        }
    }

    /// Waits while someone saves the file at `target` (the resolved path) in place, at most twenty times
    /// ``settleTime``; returns whether it waited. A writer asks holding the lock, before it takes the
    /// version it read as the one it replaces: a save whose writer was descheduled between its truncation
    /// and its last write is then read whole, however long the pause.
    func waitWhileSavedInPlace(_ target: String) -> Bool {
        guard watchingSavesInPlace, settleTime > .zero else { return false }
        InPlaceWrites.shared.follow(target)
        return InPlaceWrites.shared.waitWhileWritten(target, atMost: settleTime * 20)
    }

    /// What the file held when this process last read or wrote it; nil when it has not yet.
    func lastReadVersion() -> Version? {
        lastRead.withLock { $0 }
    }

    /// Remembers that the file's version `identity` at `target` (the resolved path) holds `content`, written
    /// as `data` just now by this process, so that the next read of it is a `stat`; returns that version.
    @discardableResult
    func remember(_ content: Content, written data: Data, as identity: FileIdentity, at target: String) -> Version {
        let writers = fileSystem.writers(of: path, target: target, identity: identity)
        let version = Version(
            content: content, identity: identity, digest: StableDigest.of(data), writers: writers,
            seen: FileIdentity.now)
        lastRead.withLock { $0 = version }
        return version
    }

    /// Writes `data` atomically over the file at `target` (the resolved path), keeping the mode of the file
    /// it replaces or giving a new one `permissions`; returns the identity of the new file.
    /// `found` is the status of the file there, when the lock's holder found it (nil: asked for again).
    /// `beforeReplacing` runs just before the new file replaces the old one.
    func write(
        _ data: Data, to target: String, replacing found: stat? = nil, expecting expected: FileSystem.Expected? = nil,
        permissions: mode_t, durable: Bool = true, beforeReplacing: () -> Void = {}
    ) throws -> FileIdentity {
        try mapping(.unwritable) {
            // What could not be read back is not written: a file over the read limit would be refused by
            // every later read, this program's and every other's.
            guard data.count <= maximumSize else {
                throw SystemCallError(
                    "write", target, code: EFBIG,
                    explanation:
                        "it would be \(FileSystem.describe(bytes: data.count)), larger than the maximum document size, \(FileSystem.describe(bytes: maximumSize)); nothing was written"
                )
            }
            let (identity, replaced) = try FileSystem.writeAtomically(
                data, to: target, replacing: found, expecting: expected, permissions: permissions, keepingMode: true,
                durable: durable, beforeReplacing: beforeReplacing)
            let scheduling = writes.withLock { writes in
                writes.last = (identity, data)
                guard let replaced else { return false }
                writes.replaced.append(replaced)
                writes.replaced.removeFirst(max(0, writes.replaced.count - ReplacedFile.keptAtMost))
                defer { writes.checkScheduled = true }
                return !writes.checkScheduled
            }
            if scheduling { scheduleReplacedFilesCheck(permissions: permissions) }
            return identity
        }
    }

    /// What became of a save someone made into a version of the file that a write of this process took
    /// from the path (``ReplacedFile``).
    enum SaveIntoReplacedFile {
        /// It is at the path again, in place of this process's last write.
        case putBack
        /// The path holds another version than this process's last write: that one stays.
        case superseded
    }

    /// Checks the versions writes took from the path a little later (twice ``settleTime``, at least 100
    /// ms), holding the lock, and again while any is kept: a save someone made into one goes back to the
    /// path without waiting for the next write, and the versions are let go (closed) a second after the
    /// last write.
    private func scheduleReplacedFilesCheck(permissions: mode_t) {
        let delay = max(settleTime * 2, .milliseconds(100))
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay.timeInterval) { [weak self] in
            self?.checkReplacedFiles(permissions: permissions)
        }
    }

    private func checkReplacedFiles(permissions: mode_t) {
        do {
            let outcome = try withLock(timeout: .seconds(1)) { target in
                try putBackSaveIntoReplacedFile(at: target, permissions: permissions)
            }
            if let outcome { onSaveIntoReplacedFile?(outcome) }
        } catch {
            // The file's directory gone, or its lock held by another writer for a second: what is older
            // than a version is kept for is let go, unchecked, rather than checked again forever.
            let now = ContinuousClock.now
            writes.withLock { $0.replaced.removeAll { now - $0.replaced > ReplacedFile.kept } }
        }
        let again = writes.withLock { writes in
            writes.checkScheduled = !writes.replaced.isEmpty
            return writes.checkScheduled
        }
        if again { scheduleReplacedFilesCheck(permissions: permissions) }
    }

    /// Puts a save someone made into a version of the file that a write of this process took from the
    /// path back at `target` (the resolved path), once they have left it alone, when the path still holds
    /// what this process last wrote there; nil when there is no such save. Call it holding the lock.
    ///
    /// Versions no one wrote into and that left the path more than ``ReplacedFile/kept`` ago are let go.
    func putBackSaveIntoReplacedFile(at target: String, permissions: mode_t) throws -> SaveIntoReplacedFile? {
        let (replaced, last) = writes.withLock { ($0.replaced, $0.last) }
        guard !replaced.isEmpty else { return nil }
        let changed = replaced.map { $0.isChanged(fileSystemClockPassed: last?.identity.modified) }
        // The newest save wins, as it would at the path.
        for index in replaced.indices.reversed() where changed[index] {
            // Nil: emptied, or its writing not begun within the bound, or too large: not a save to put back.
            let save = replaced[index].save(settleTime: settleTime, maximumSize: maximumSize)
            let taken =
                save == nil ? [ObjectIdentifier(replaced[index])] : replaced[...index].map(ObjectIdentifier.init)
            writes.withLock { $0.replaced.removeAll { taken.contains(ObjectIdentifier($0)) } }
            guard let save else { continue }
            guard let last else { return .superseded }
            do {
                _ = try write(
                    save, to: target, expecting: .version(last.identity, bytes: last.bytes), permissions: permissions)
            } catch is FileSystem.ChangedMeanwhile {
                return .superseded
            }
            forgetLastRead()
            return .putBack
        }
        let now = ContinuousClock.now
        let letGo = replaced.indices.filter { !changed[$0] && now - replaced[$0].replaced > ReplacedFile.kept }
            .map { ObjectIdentifier(replaced[$0]) }
        if !letGo.isEmpty { writes.withLock { $0.replaced.removeAll { letGo.contains(ObjectIdentifier($0)) } } }
        return nil
    }

    /// Forgets what the file held when last read, so that the next read reads it whatever its identity: a
    /// save in place can keep a file's size, and its modification time moves in coarse ticks.
    func forgetLastRead() {
        lastRead.withLock { $0 = nil }
    }

    /// Deletes the file at `target` (the resolved path); deleting nothing is not an error. `beforeRemoving`
    /// runs just before.
    func remove(at target: String, beforeRemoving: () -> Void = {}) throws {
        try mapping(.unwritable) { try FileSystem.remove(target, beforeRemoving: beforeRemoving) }
        lastRead.withLock { $0 = nil }
    }

    /// Runs `body` with the resolved path, holding the lock beside it against every process (and every
    /// thread of this one), after clearing what a killed writer left there.
    ///
    /// The lock's file is worked out from where the path points when the lock is taken; once it is held,
    /// the path is resolved again, and if it points elsewhere now, the lock is released and the new
    /// target's taken, so two writers through one link always hold the same lock.
    func withLock<R>(timeout: Duration, _ body: (_ target: String) throws -> R) throws -> R {
        try withLock(timeout: timeout) { target, _ in try body(target) }
    }

    /// ``withLock(timeout:_:)``, giving `body` also the status of the file at the resolved path (nil when
    /// there is none), found while resolving it holding the lock: a write need not ask for it again.
    func withLock<R>(timeout: Duration, _ body: (_ target: String, _ found: stat?) throws -> R) throws -> R {
        let deadline = ContinuousClock.now + timeout
        while true {
            let target = try resolved()
            let lock = lastLock.withLock { last in
                if let last, last.target == target { return last.lock }
                let lock = FileLock.beside(target)
                last = (target, lock)
                return lock
            }
            let outcome: Result<R, any Error>?
            do {
                outcome = try lock.withLock(until: deadline) { () -> Result<R, any Error>? in
                    // On the disk, where the lock is taken and the file written.
                    var found: stat?
                    guard try mapping(.unreadable, { try FileSystem.resolvingSymlinks(path, found: &found) }) == target
                    else { return nil }
                    lock.removeStaleTemporaryFilesOnce(for: target)
                    return Result { try body(target, found) }
                }
            } catch let error as SystemCallError {
                throw SettingsError(error.code == ETIMEDOUT ? .timeout : .unwritable, store: name, path: path, error)
            }
            if let outcome { return try outcome.get() }
        }
    }

    /// Starts reporting changes to the file (through every link on its path), or with `contents`, to the
    /// names in the directory it names; `pollingReason` says why it checks by polling, if it does.
    func watch(
        contents: Bool = false, _ onChange: @escaping @Sendable () -> Void
    ) throws -> (watch: any StoreWatch, pollingReason: String?) {
        try mapping(.unreadable) { try fileSystem.watch(path, contents: contents, onChange: onChange) }
    }

    private func mapping<R>(_ code: SettingsError.Code, _ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as SystemCallError {
            throw SettingsError(code, store: name, path: path, error)
        }
    }
}

extension FileIdentity {
    /// The identity as a store's change token.
    var token: ChangeToken {
        ChangeToken(file: self)
    }
}

extension FileIdentity {
    /// The modification time, as a duration since the epoch.
    var modified: Duration {
        .seconds(modifiedSeconds) + .nanoseconds(modifiedNanoseconds)
    }

    /// `CLOCK_REALTIME` now, the clock modification times are taken from, as a duration since the epoch.
    static var now: Duration {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return .seconds(Int(now.tv_sec)) + .nanoseconds(Int(now.tv_nsec))
    }

    /// How long ago the file was last modified, by its modification time (zero for a time in the future).
    var age: Duration {
        max(Self.now - modified, .zero)
    }
}
