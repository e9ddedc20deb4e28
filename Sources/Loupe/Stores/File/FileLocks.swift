#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// An advisory lock on a sidecar file (`.settings.json.lock`), shared by every process that uses Loupe on
/// the same file, and by every store instance in this process.
///
/// `flock` locks belong to an open file description, so the lock also holds an in-process mutex: two
/// threads of one process using one store exclude each other too. The thread holding it passes through
/// (``Locked``'s rule: a load that moves a corrupt file aside inside a reload). A process that dies
/// releases its lock.
///
/// A lock on a sidecar that someone then deletes or replaces would exclude nobody: a later writer would
/// create a new file and lock that. So after locking, the lock checks that its file is still the one at
/// the path (and locks afresh if not), and then, in a directory nobody else may open, also locks the
/// directory itself, which cannot be deleted from under it while it holds the file: a writer that got a
/// fresh sidecar while another held the deleted one still waits there (``DirectoryLock``). A sidecar the
/// process may not write (another user's) is locked through a read-only descriptor, which `flock` allows;
/// one the process creates belongs to the owner of its directory, so that `sudo` leaves nothing a service
/// cannot lock, and only its owner (and its group, for a group-writable settings file) may open it:
/// anyone who can open a lock can hold it.
final class FileLock: Sendable {
    private static let all = Locked<[String: FileLock]>([:])

    /// The lock of the file at `target` (a resolved path: the lock is beside the file itself, not beside
    /// a link to it), one per sidecar in the process.
    static func beside(_ target: String) -> FileLock {
        at(
            FileSystem.directory(of: target) + "/"
                + FileSystem.sidecarName(for: FileSystem.fileName(of: target), suffix: ".lock"), guarding: target)
    }

    /// The lock whose sidecar is the file at `path`, one per path in the process.
    static func at(_ path: String, guarding target: String? = nil) -> FileLock {
        all.withLock { locks in
            if let known = locks[path] { return known }
            let lock = FileLock(path: path, target: target)
            locks[path] = lock
            return lock
        }
    }

    let path: String
    /// The file the lock guards, when it is a settings file's sidecar: its group may share the lock.
    let target: String?
    /// The sidecar's descriptor, opened on first use; held, with the in-process exclusion, while locked.
    private let descriptor = Locked<Int32>(-1)
    /// Whether this process has cleared the temporary files a killed writer left beside the file.
    private let cleaned = Atomic<Bool>(false)

    private init(path: String, target: String?) {
        self.path = path
        self.target = target
    }

    deinit {
        descriptor.withLock { if $0 >= 0 { close($0) } }
    }

    /// Runs `body` holding the lock, waiting for another process to release it at most until `deadline`.
    func withLock<R>(until deadline: ContinuousClock.Instant, _ body: () throws -> R) throws -> R {
        if descriptor.isHeldByCurrentThread { return try body() }  // see `Locked`: already held, so run
        return try descriptor.withLock { fd in
            while true {
                if fd < 0 { fd = try openSidecar() }
                try lockExclusively(fd, path, "the file", until: deadline)
                if isStillAtPath(fd) { break }
                // Deleted or replaced while unlocked: the lock excludes nobody. Lock the file now there.
                flock(fd, LOCK_UN)
                close(fd)
                fd = -1
            }
            defer { flock(fd, LOCK_UN) }
            return try DirectoryLock.of(FileSystem.directory(of: path)).withLock(until: deadline, body)
        }
    }

    /// Removes the temporary files a killed writer left beside `target`, the first time this process
    /// holds the lock. Call it holding the lock, so that no live writer's file is touched.
    func removeStaleTemporaryFilesOnce(for target: String) {
        guard !cleaned.exchange(true, ordering: .relaxed) else { return }
        FileSystem.removeStaleTemporaryFiles(for: target)
    }

    /// Opens the sidecar, creating it (owned as its directory) if need be. Someone may delete it between
    /// finding it there and opening it; then it is created afresh.
    private func openSidecar() throws -> Int32 {
        let directory = FileSystem.directory(of: path)
        try FileSystem.createDirectory(directory)
        var fd: Int32 = -1
        while fd < 0 {
            let created = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if created >= 0 {
                var owner = stat()
                if stat(directory, &owner) == 0, owner.st_uid != geteuid() || owner.st_gid != getegid() {
                    _ = fchown(created, owner.st_uid, owner.st_gid)
                }
                _ = fchmod(created, sidecarMode())
                return created
            }
            guard errno == EEXIST else { throw SystemCallError("open lock file", path) }
            fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            if fd < 0, errno == EACCES { fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
            guard fd >= 0 || errno == ENOENT else { throw SystemCallError("open lock file", path) }
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw SystemCallError("open lock file", path, code: EINVAL, explanation: "it is not a regular file")
        }
        // A lock file others may open (Loupe 2 made them 0644) is one anyone can hold: closed to them.
        if info.st_uid == geteuid(), info.st_mode & 0o007 != 0 { _ = fchmod(fd, sidecarMode()) }
        return fd
    }

    /// The lock file's mode: only its owner may open it, and its group too when the settings file is
    /// group-writable (writers that share a group). Nobody else: anyone who can open a lock file can hold
    /// it, and stop every writer.
    private func sidecarMode() -> mode_t {
        var info = stat()
        let shared = target.map { stat($0, &info) == 0 && info.st_mode & S_IWGRP != 0 } ?? false
        return shared ? 0o660 : 0o600
    }

    /// Whether `fd` is still the file at the sidecar's path.
    private func isStillAtPath(_ fd: Int32) -> Bool {
        var held = stat()
        var named = stat()
        guard fstat(fd, &held) == 0, lstat(path, &named) == 0 else { return false }
        return held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }
}

/// Takes `flock`'s exclusive lock on `fd` (the `what` at `path`), polling with growing pauses until
/// `deadline`: a timeout says that another process holds it.
private func lockExclusively(
    _ fd: Int32, _ path: String, _ what: String, until deadline: ContinuousClock.Instant
) throws {
    var pause = Duration.microseconds(50)
    while flock(fd, LOCK_EX | LOCK_NB) != 0 {
        guard errno == EWOULDBLOCK || errno == EINTR else { throw SystemCallError("lock", path) }
        guard ContinuousClock.now < deadline else {
            throw SystemCallError(
                "lock", path, code: ETIMEDOUT,
                explanation: "another process holds the lock on \(what) (\(path)) and did not release it in time")
        }
        usleep(UInt32(pause.components.attoseconds / 1_000_000_000_000))
        pause = min(pause * 2, .milliseconds(5))
    }
}

/// An advisory lock on a directory, which every ``FileLock`` in it takes after its sidecar: a directory
/// cannot be deleted from under its lock the way a sidecar can. One per directory per process, with an
/// in-process mutex (as ``FileLock``); the thread holding it passes through (``Locked``'s rule), so that an
/// update of one root may update another root whose file is in the same directory.
final class DirectoryLock: Sendable {
    private static let all = Locked<[String: DirectoryLock]>([:])

    /// The lock of `directory`, made on first use.
    static func of(_ directory: String) -> DirectoryLock {
        all.withLock { locks in
            if let known = locks[directory] { return known }
            let lock = DirectoryLock(path: directory)
            locks[directory] = lock
            return lock
        }
    }

    let path: String
    private let descriptor = Locked<Int32>(-1)

    private init(path: String) {
        self.path = path
    }

    /// Runs `body` holding the directory's lock, waiting for another process at most until `deadline`.
    ///
    /// Anyone who can open a directory can hold its lock, and an unprivileged reader of `/etc/app` must
    /// not be able to stop root's writers. So a directory that others may open is not locked itself: its
    /// writers lock `.loupe.lock.d` inside it, a directory only its owner may open (made, like a lock
    /// file, owned as the directory). A writer that may not open it (another user sharing a group-writable
    /// file) relies on the lock file alone.
    func withLock<R>(until deadline: ContinuousClock.Instant, _ body: () throws -> R) throws -> R {
        if descriptor.isHeldByCurrentThread { return try body() }  // see `Locked`: already held, so run
        return try descriptor.withLock { fd in
            if fd < 0 { fd = openLockDirectory() }
            guard fd >= 0 else { return try body() }
            try lockExclusively(fd, path, "the directory", until: deadline)
            defer { flock(fd, LOCK_UN) }
            return try body()
        }
    }
}

extension DirectoryLock {
    /// The name of the directory locked in a directory that others may open.
    static let privateName = ".loupe.lock.d"

    /// A descriptor of the directory to lock: the directory itself when only its owner may open it, else
    /// its private lock directory (created 0700, owned as the directory); -1 when neither can be opened.
    fileprivate func openLockDirectory() -> Int32 {
        var info = stat()
        guard stat(path, &info) == 0 else { return -1 }
        if info.st_mode & 0o055 == 0 { return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        let lockDirectory = path + "/" + Self.privateName
        if mkdir(lockDirectory, 0o700) == 0 {
            if info.st_uid != geteuid() || info.st_gid != getegid() {
                _ = chown(lockDirectory, info.st_uid, info.st_gid)
            }
        }
        var made = stat()
        // Only a real directory that nobody else may open: one planted by another user is not used.
        guard lstat(lockDirectory, &made) == 0, (made.st_mode & S_IFMT) == S_IFDIR, made.st_mode & 0o077 == 0,
            made.st_uid == info.st_uid || made.st_uid == geteuid()
        else { return -1 }
        return open(lockDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
    }
}

/// Runs `body` holding an exclusive lock on the file at `path` (created if need be) against every process
/// and every other thread of this one, waiting at most `timeout`: for the stores of other modules, which
/// make their own checks and writes atomic with it (the keyring's lock in the user's runtime directory).
/// `store` names the store in errors.
package func withLockFile<R>(at path: String, timeout: Duration, store: String, _ body: () throws -> R) throws -> R {
    let result: Result<R, any Error>
    do {
        result = try FileLock.at(path).withLock(until: ContinuousClock.now + timeout) { Result { try body() } }
    } catch let error as SystemCallError {
        throw SettingsError(
            error.code == ETIMEDOUT ? .timeout : .unwritable, store: store, reason: error.description, cause: error,
            errno: error.code)
    }
    return try result.get()
}

/// A directory of the user's own for lock files: `$XDG_RUNTIME_DIR/loupe`, or where there is none,
/// `loupe-UID` in the temporary directory. Created with mode 0700; one that another user owns, or that
/// others may write, is refused, so nobody else can plant or hold this user's locks.
package func userLockDirectory(store: String) throws -> String {
    let environment = ProcessInfo.processInfo.environment
    let path: String
    if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty, FileManager.default.fileExists(atPath: runtime) {
        path = runtime + "/loupe"
    } else {
        path = (environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp") + "/loupe-\(geteuid())"
    }
    if mkdir(path, 0o700) != 0, errno != EEXIST {
        throw SettingsError(
            .unwritable, store: store,
            reason: "cannot create the lock directory \(path): \(String(cString: strerror(errno)))", errno: errno)
    }
    var info = stat()
    guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == geteuid(),
        info.st_mode & 0o022 == 0
    else {
        throw SettingsError(
            .unwritable, store: store,
            reason: "the lock directory \(path) is not a directory of this user's that only it may write")
    }
    return path
}
