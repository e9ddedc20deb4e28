#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CLoupeSystem
import Foundation
import Synchronization

/// A failed system call: which operation, on which path, and the system's reason.
package struct SystemCallError: Error, Sendable, CustomStringConvertible {
    let operation: String
    let path: String
    let code: Int32
    /// What went wrong, when the system's words for `code` would mislead (`/dev/zero` is not "a
    /// directory").
    let explanation: String?

    package init(_ operation: String, _ path: String, code: Int32 = errno, explanation: String? = nil) {
        self.operation = operation
        self.path = path
        self.code = code
        self.explanation = explanation
    }

    /// The reason, in words: the explanation, or the system's message for the code.
    var reason: String { explanation ?? String(cString: strerror(code)) }

    package var description: String { "\(operation) \(path): \(reason)" }
}

/// What identifies one version of a file: a rename-replace gives a new inode, an in-place write a new size
/// or modification time. The change time is left out because `rename` may touch it.
package struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modifiedSeconds: Int
    let modifiedNanoseconds: Int
    /// The version's owner and permission bits, as it was found: who may change it (``DocumentWriters``).
    /// They are not part of the identity: a `chmod` makes no new version of the content.
    let owner: UInt32
    let mode: UInt32

    package init(
        device: UInt64, inode: UInt64, size: Int64, modifiedSeconds: Int, modifiedNanoseconds: Int, owner: UInt32 = 0,
        mode: UInt32 = 0o600
    ) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedSeconds = modifiedSeconds
        self.modifiedNanoseconds = modifiedNanoseconds
        self.owner = owner
        self.mode = mode
    }

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        #if canImport(Darwin)
        modifiedSeconds = info.st_mtimespec.tv_sec
        modifiedNanoseconds = info.st_mtimespec.tv_nsec
        #else
        modifiedSeconds = info.st_mtim.tv_sec
        modifiedNanoseconds = info.st_mtim.tv_nsec
        #endif
        owner = UInt32(info.st_uid)
        mode = UInt32(info.st_mode)
    }

    package static func == (lhs: FileIdentity, rhs: FileIdentity) -> Bool {
        lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.size == rhs.size
            && lhs.modifiedSeconds == rhs.modifiedSeconds && lhs.modifiedNanoseconds == rhs.modifiedNanoseconds
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(device)
        hasher.combine(inode)
        hasher.combine(size)
        hasher.combine(modifiedSeconds)
        hasher.combine(modifiedNanoseconds)
    }
}

/// The POSIX file operations behind ``FileStore``.
package enum FileSystem {
    /// The largest document read when a store does not say: 16 MiB. Settings are kilobytes; a file that
    /// is larger, or keeps growing while it is read, is an error rather than all of memory.
    static let defaultMaximumSize = 16 << 20

    /// The error for a path that names something other than a regular file, saying what it is:
    /// `it is a FIFO (named pipe), not a regular file`.
    private static func notARegularFile(_ operation: String, _ path: String, mode: mode_t) -> SystemCallError {
        let kind: String? =
            switch mode & S_IFMT {
            case S_IFDIR: "a directory"
            case S_IFIFO: "a FIFO (named pipe)"
            case S_IFCHR: "a character device"
            case S_IFBLK: "a block device"
            case S_IFSOCK: "a socket"
            case S_IFLNK: "a symbolic link"
            default: nil
            }
        return SystemCallError(
            operation, path, code: (mode & S_IFMT) == S_IFDIR ? EISDIR : EINVAL,
            explanation: kind.map { "it is \($0), not a regular file" } ?? "not a regular file")
    }

    /// The error for an empty path (`--file ''`).
    private static func emptyPath(_ operation: String) -> SystemCallError {
        SystemCallError(operation, "", code: ENOENT, explanation: "the path is empty; name a file")
    }

    /// `size` bytes as people read them: `16 MiB`, `512 KiB`, `300 bytes`.
    package static func describe(bytes size: Int) -> String {
        if size >= 1 << 20, size % (1 << 20) == 0 { return "\(size >> 20) MiB" }
        if size >= 1 << 10, size % (1 << 10) == 0 { return "\(size >> 10) KiB" }
        return "\(size) bytes"
    }

    /// The name of a file that goes beside `name` (a lock, a temporary file): `.NAME` + `suffix`, or, when
    /// that is longer than a file name may be, a shortened name with a digest of the whole one, so that a
    /// file whose name is near the limit can still be written.
    static func sidecarName(for name: String, suffix: String) -> String {
        let whole = "." + name + suffix
        guard whole.utf8.count > 255 else { return whole }
        let tag = "~" + String(StableDigest.fnv1a(name), radix: 16)
        var prefix = Substring(name)
        while ("." + prefix + tag + suffix).utf8.count > 255 { prefix = prefix.dropLast() }
        return "." + prefix + tag + suffix
    }

    /// The path `path` ends at after following symbolic links (the link's target, even if it does not
    /// exist yet). A path that is not a link is returned unchanged.
    ///
    /// Loupe follows links itself, so it applies the kernel's `protected_symlinks` rule itself: a link in a
    /// sticky directory that others may write (`/tmp`, a shared drop box) is followed only when the
    /// process or the directory's owner owns it; a link another user planted there would otherwise lead a
    /// privileged writer to a file it must not touch.
    static func resolvingSymlinks(_ path: String) throws -> String {
        var found: stat?
        return try resolvingSymlinks(path, found: &found)
    }

    /// ``resolvingSymlinks(_:)``, and in `found` the status of what the path ends at, as `lstat` gave it
    /// there (for anything but a link, what `stat` gives): nil when `lstat` found nothing, or failed.
    /// A writer holding the file's lock has then asked once for what it needs: its identity, its mode and
    /// its owner.
    static func resolvingSymlinks(_ path: String, found: inout stat?) throws -> String {
        var current = path
        found = nil
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0 else { return current }
            guard (info.st_mode & S_IFMT) == S_IFLNK else {
                found = info
                return current
            }
            try checkFollowable(link: current, owner: info.st_uid)
            let target = try linkTarget(of: current)
            current = target.hasPrefix("/") ? target : directory(of: current) + "/" + target
        }
        throw SystemCallError("resolve", path, code: ELOOP)
    }

    /// Throws when the link at `path`, owned by `owner`, is one the kernel's `protected_symlinks` rule would
    /// not follow: in a sticky, world-writable directory, owned by neither the process nor the directory's
    /// owner.
    private static func checkFollowable(link path: String, owner: uid_t) throws {
        let folder = directory(of: path)
        var info = stat()
        guard stat(folder, &info) == 0, info.st_mode & S_ISVTX != 0, info.st_mode & S_IWOTH != 0 else { return }
        guard owner != geteuid(), owner != info.st_uid else { return }
        throw SystemCallError(
            "follow", path, code: EACCES,
            explanation:
                "it is a symbolic link owned by another user (uid \(owner)) in \(folder), a sticky directory anyone may write to; such a link is not followed (as the kernel's protected_symlinks rule would not)"
        )
    }

    /// What the symbolic link at `path` points to, as written in the link (relative or absolute).
    static func linkTarget(of path: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { throw SystemCallError("readlink", path) }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package static func directory(of path: String) -> String {
        guard let slash = lastSlash(in: path) else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    package static func fileName(of path: String) -> String {
        guard let slash = lastSlash(in: path) else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// Where the last `/` of `path` is, found among its bytes (a search by `Character` breaks the whole
    /// path into graphemes, on every save).
    private static func lastSlash(in path: String) -> String.Index? {
        path.utf8.lastIndex(of: UInt8(ascii: "/"))
    }

    /// The identity of the file at `path` (following links), or nil if there is none.
    static func identity(of path: String) throws -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw SystemCallError("stat", path)
        }
        return FileIdentity(info)
    }

    /// The contents of the file at `path` and the identity of exactly the version read, or nil if there is
    /// no file.
    ///
    /// Only a regular file is read: anything else (a FIFO, whose `open` would wait for a writer forever, a
    /// device, a socket, a directory) is an error saying what it is. A file larger than `maximumSize`
    /// bytes, or that grows past it while it is read, is an error too.
    static func read(
        _ path: String, maximumSize: Int = defaultMaximumSize
    ) throws -> (data: Data, identity: FileIdentity)? {
        guard !path.isEmpty else { throw emptyPath("open") }
        // Non-blocking, so that opening a FIFO returns at once (to be refused below) instead of waiting.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            // A socket cannot be opened (ENXIO, "No such device or address"): say what it is.
            let failure = SystemCallError("open", path)
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
                throw notARegularFile("read", path, mode: info.st_mode)
            }
            throw failure
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemCallError("stat", path) }
        return (try read(fd, path: path, info: info, maximumSize: maximumSize), FileIdentity(info))
    }

    /// The contents of the file open at `fd` (whose status is `info`; `path` names it in errors), read
    /// whole from where it stands: only a regular file, at most `maximumSize` bytes.
    static func read(_ fd: Int32, path: String, info: stat, maximumSize: Int) throws -> Data {
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw notARegularFile("read", path, mode: info.st_mode) }
        func tooLarge() -> SystemCallError {
            SystemCallError(
                "read", path, code: EFBIG,
                explanation: "it is larger than the maximum document size, \(describe(bytes: maximumSize))")
        }
        let size = Int(info.st_size)
        guard size <= maximumSize else { throw tooLarge() }
        // Read into a buffer of the file's size and one byte more: one read sees all of it, and that it
        // ends there, unless the file grew. The buffer grows as needed, and a file that keeps growing is
        // cut off at the bound, not read into all of memory.
        var data = Data(count: min(max(size, 0), maximumSize) + 1)
        var filled = 0
        while true {
            if filled == data.count {
                guard filled <= maximumSize else { throw tooLarge() }
                data.count = min(filled * 2, maximumSize + 1)
            }
            let count = data.withUnsafeMutableBytes { buffer in
                systemRead(fd, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemCallError("read", path)
            }
            if count == 0 { break }
            filled += count
            // The size it had when opened, short of the buffer: a regular file's end, with no read that
            // returns nothing to say so. (A read cut short of that size, as a signal may cut one on some
            // file systems, reads on.)
            if filled == size, filled < data.count { break }
        }
        data.count = filled
        return data
    }

    /// Reads and parses the file at `path`, allowing for a writer that is still writing it in place (a shell
    /// redirection, an editor that saves without renaming): contents that do not parse are read again, a
    /// few times, while the file keeps changing. A file that does not parse and stays as it is, is an
    /// error. Returns nil when there is no file.
    static func readSettled<T>(
        _ path: String, maximumSize: Int = defaultMaximumSize, parse: (Data) throws -> T
    ) throws -> (T, FileIdentity)? {
        var attempt = 0
        while true {
            guard let (data, identity) = try read(path, maximumSize: maximumSize) else { return nil }
            do {
                return (try parse(data), identity)
            } catch {
                attempt += 1
                usleep(50_000)
                let now = try? FileSystem.identity(of: path)
                guard now != identity, attempt < 5 else { throw error }
            }
        }
    }

    /// The names in `directory` (without `.` and `..`), or nil when there is no such directory.
    static func entries(of directory: String) throws -> [String]? {
        guard let stream = opendir(directory) else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw SystemCallError("list", directory)
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Whether `path` names a regular file, following symbolic links.
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Writes `data` to `path` so that a reader, a crash or a power cut sees the old file or the new one,
    /// never a mixture: a new temporary file in the same directory (created exclusively), written and
    /// flushed to disk, renamed over `path`, and the directory flushed. Missing parent directories are
    /// created. Returns the identity of the new file.
    ///
    /// The new file keeps the owner and group of the file it replaces where the process may give them
    /// (root always may), so that `sudo` editing a service's settings leaves them the service's. A path
    /// that names something other than a regular file (a FIFO, a device) is an error, and left alone.
    ///
    /// The new file's mode is `permissions`, less the process's umask for a file that did not exist; with
    /// `keepingMode`, a file replaced keeps its own mode instead. `found`, when the caller holding the
    /// file's lock has just asked for it, is the status of the file at `path` (see
    /// ``stage(_:for:replacing:permissions:keepingMode:durable:)``).
    ///
    /// With `durable` false nothing is flushed to disk: readers still see the old file or the new one,
    /// never a mixture, and a crash may lose the write (what `UserDefaults` promises of a suite).
    ///
    /// `beforeReplacing` runs once the new file is written and flushed, just before it replaces the old
    /// one: what must be in place before the file changes (its history's record) goes there, and the
    /// directory's flush that follows carries both.
    ///
    /// Returns the identity of the new file and, for a write `expecting` a version, that version as it
    /// left the path (``ReplacedFile``).
    static func writeAtomically(
        _ data: Data, to path: String, replacing found: stat? = nil, expecting expected: Expected? = nil,
        permissions: mode_t,
        keepingMode: Bool = false, durable: Bool = true, beforeReplacing: () -> Void = {}
    ) throws -> (identity: FileIdentity, replaced: ReplacedFile?) {
        let staged = try stage(
            data, for: path, replacing: found, permissions: permissions, keepingMode: keepingMode, durable: durable)
        beforeReplacing()
        guard let expected else {
            try place(staged, durable: durable)
            return (staged.identity, nil)
        }
        return (staged.identity, try place(staged, expecting: expected, durable: durable))
    }

    /// A file's next version, written and flushed beside it under a temporary name, not yet in its place.
    struct StagedFile: Sendable {
        /// The file it is to replace.
        let path: String
        let temporary: String
        /// The identity the file will have in its place.
        let identity: FileIdentity
    }

    /// The first half of ``writeAtomically(_:to:replacing:permissions:keepingMode:durable:beforeReplacing:)``: `data`
    /// in a new temporary file beside `path`, with the mode and owner it will have there, written and (when
    /// `durable`) flushed. ``place(_:durable:)`` puts it in its place; ``discard(_:)`` removes it.
    ///
    /// `found` is the status of the file at `path`, when the caller has just asked for it (holding the
    /// file's lock); when nil, it is asked for here.
    static func stage(
        _ data: Data, for path: String, replacing found: stat? = nil, permissions: mode_t, keepingMode: Bool = false,
        durable: Bool = true
    ) throws -> StagedFile {
        guard !path.isEmpty else { throw emptyPath("write") }
        var existing = found ?? stat()
        let exists = found != nil || stat(path, &existing) == 0
        if exists, (existing.st_mode & S_IFMT) != S_IFREG {
            throw notARegularFile("write", path, mode: existing.st_mode)
        }
        let directory = directory(of: path)
        // A file's directory is there already.
        if !exists { try createDirectory(directory) }
        // Created with the mode it is to have: a new file gets `permissions` as open(2) gives them (less the
        // umask); a file replaced keeps its own mode (`keepingMode`) or gets `permissions`, and what the
        // umask took from it is given back.
        let mode = exists && keepingMode ? existing.st_mode & 0o7777 : permissions
        let (fd, temporary) = try createTemporaryFile(
            named: directory + "/" + temporaryPrefix(for: fileName(of: path)), in: directory, mode: mode)
        var staged = false
        defer {
            if !staged { unlink(temporary) }
        }
        defer { close(fd) }
        if exists {
            var created = stat()
            guard fstat(fd, &created) == 0 else { throw SystemCallError("stat", temporary) }
            if created.st_mode & 0o7777 != mode {
                guard fchmod(fd, mode) == 0 else { throw SystemCallError("chmod", temporary) }
            }
            if created.st_uid != existing.st_uid || created.st_gid != existing.st_gid {
                // Where the process may not (not root, another user's file), the new file is its own.
                _ = fchown(fd, existing.st_uid, existing.st_gid)
            }
        }
        try writeAll(data, to: fd, path: temporary)
        guard !durable || fsync(fd) == 0 else { throw SystemCallError("fsync", temporary) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemCallError("stat", temporary) }
        staged = true
        return StagedFile(path: path, temporary: temporary, identity: FileIdentity(info))
    }

    /// Creates a new file named `prefix` and six random letters or digits, with `mode` less the umask (as
    /// open(2) gives it), closed on exec (a process another thread starts meanwhile does not inherit it):
    /// what `mkostemp(3)` does with `O_CLOEXEC`, which Swift's Glibc module does not declare, with a mode.
    static func createTemporaryFile(
        named prefix: String, in directory: String, mode: mode_t
    ) throws -> (fd: Int32, path: String) {
        let characters = temporaryNameCharacters
        for _ in 0..<100 {
            var random = UInt64.random(in: .min ... .max)
            var path = prefix
            for _ in 0..<6 {
                path.unicodeScalars.append(Unicode.Scalar(characters[Int(random % UInt64(characters.count))]))
                random /= UInt64(characters.count)
            }
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
            if fd >= 0 { return (fd, path) }
            guard errno == EEXIST else { throw SystemCallError("create a temporary file in", directory) }
        }
        throw SystemCallError("create a temporary file in", directory, code: EEXIST)
    }

    /// The letters and digits of a temporary file's random suffix.
    private static let temporaryNameCharacters = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

    /// Renames a staged file over the file it replaces, and (when `durable`) flushes the directory; the
    /// staged file is removed when the rename fails.
    static func place(_ staged: StagedFile, durable: Bool = true) throws {
        guard rename(staged.temporary, staged.path) == 0 else {
            let error = SystemCallError("rename over", staged.path)
            discard(staged)
            throw error
        }
        if durable { try syncDirectory(directory(of: staged.path)) }
    }

    /// What a checked placement expects to find at the path, as the update that wrote the staged file read it.
    enum Expected: Sendable, Equatable {
        /// No file.
        case nothing
        /// This version of the file; with its bytes, where the update read them.
        case version(FileIdentity, bytes: Data? = nil)
    }

    /// The file at the path was not the version expected when the staged file was to replace it: someone
    /// (a person's editor, which takes no lock) saved it meanwhile. Their file is at the path, as they left it,
    /// and the staged file is gone.
    struct ChangedMeanwhile: Error {}

    /// Puts a staged file in its place only if the file there is still `expected`, so that a save that
    /// landed meanwhile (by an editor, which takes no lock) is never replaced unseen.
    ///
    /// The file there is checked first (its identity, and its bytes where the update read them). Then the new
    /// file is swapped in with `renameat2(RENAME_EXCHANGE)`, and what came out is looked at again: when it is
    /// not the version expected (a save that landed between the check and the swap), it is swapped back, so
    /// that the other save is at the path again, and ``ChangedMeanwhile`` is thrown for the update to run
    /// again on it. For that instant a reader may see the new file in its place. For a new file, `RENAME_NOREPLACE`
    /// refuses to replace one created meanwhile. Where the file system cannot swap (ENOSYS, EINVAL), the
    /// version is checked immediately before a plain rename: a save that lands between the two is replaced.
    ///
    /// A writer that looked the old file up by its name before the swap and truncates and writes it only
    /// after the check writes into a file no longer at the path: the version taken out is returned, open
    /// (``ReplacedFile``), for the next write to look at (nil for a new file).
    @discardableResult
    static func place(_ staged: StagedFile, expecting expected: Expected, durable: Bool = true) throws -> ReplacedFile?
    {
        // Checked once before the swap too: a save found there is never swapped out, not even for the
        // instant until it is swapped back (when a reader could see the new file in its place).
        if case .version(let identity, let bytes) = expected, !isStill(staged.path, identity, holding: bytes) {
            discard(staged)
            throw ChangedMeanwhile()
        }
        let flags = expected == .nothing ? LOUPE_RENAME_NOREPLACE : LOUPE_RENAME_EXCHANGE
        if loupe_renameat2(AT_FDCWD, staged.temporary, AT_FDCWD, staged.path, flags) != 0 {
            let failure = errno
            guard failure == EINVAL || failure == ENOSYS else {
                discard(staged)
                // ENOENT: the file expected is gone, or the staged one (another writer's clean-up): either
                // way the update runs again.
                if failure == EEXIST || failure == ENOENT { throw ChangedMeanwhile() }
                throw SystemCallError("rename over", staged.path, code: failure)
            }
            // No swap here: the version, checked as late as can be.
            switch expected {
            case .nothing:
                guard try identity(of: staged.path) == nil else {
                    discard(staged)
                    throw ChangedMeanwhile()
                }
                try place(staged, durable: durable)
                return nil
            case .version(let identity, let bytes):
                guard let replaced = openIfStill(staged.path, identity, holding: bytes) else {
                    discard(staged)
                    throw ChangedMeanwhile()
                }
                try place(staged, durable: durable)
                return replaced
            }
        }
        guard case .version(let identity, let bytes) = expected else {
            if durable { try syncDirectory(directory(of: staged.path)) }
            return nil
        }
        guard let replaced = openIfStill(staged.temporary, identity, holding: bytes) else {
            // Someone's save, not the version read: back at the path, and the new file gone.
            if loupe_renameat2(AT_FDCWD, staged.temporary, AT_FDCWD, staged.path, LOUPE_RENAME_EXCHANGE) != 0 {
                // It cannot be swapped back: put back by name, which replaces only the file just written.
                guard rename(staged.temporary, staged.path) == 0 else {
                    throw SystemCallError(
                        "put back the file saved meanwhile at", staged.path,
                        explanation: "it was saved while Loupe wrote, and is now at \(staged.temporary)")
                }
            } else {
                unlink(staged.temporary)
            }
            if durable { try syncDirectory(directory(of: staged.path)) }
            throw ChangedMeanwhile()
        }
        unlink(staged.temporary)
        if durable { try syncDirectory(directory(of: staged.path)) }
        return replaced
    }

    /// Whether the file at `path` is the version `identity` names and, where the update read them, holds
    /// `bytes`: a save in place may leave the size as it was, and the modification time moves in the
    /// kernel's coarse ticks (milliseconds).
    private static func isStill(_ path: String, _ identity: FileIdentity, holding bytes: Data?) -> Bool {
        openIfStill(path, identity, holding: bytes) != nil
    }

    /// The file at `path`, open, when it is the version `identity` names holding `bytes` (where known, as
    /// ``isStill(_:_:holding:)`` checks); else nil.
    private static func openIfStill(_ path: String, _ identity: FileIdentity, holding bytes: Data?) -> ReplacedFile? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, FileIdentity(info) == identity,
            bytes.map({ (try? read(fd, path: path, info: info, maximumSize: $0.count + 1)) == $0 }) ?? true
        else {
            close(fd)
            return nil
        }
        return ReplacedFile(fd: fd, info: info, bytes: bytes)
    }

    /// Removes a staged file that will not be placed.
    static func discard(_ staged: StagedFile) {
        unlink(staged.temporary)
    }

    /// The prefix of the temporary files written next to `name`; hidden, and tied to the file's name so
    /// that leftovers of a killed writer can be found and removed.
    static func temporaryPrefix(for name: String) -> String {
        String(sidecarName(for: name, suffix: ".tmp-XXXXXX").dropLast(6))
    }

    /// Removes temporary files that a writer killed mid-write left next to `path`, its own and its history
    /// journal's (written under the same lock). Call only while holding the file's lock, so no live
    /// writer's temporary file is touched.
    static func removeStaleTemporaryFiles(for path: String) {
        let prefixes = [
            temporaryPrefix(for: fileName(of: path)), temporaryPrefix(for: fileName(of: historyPath(for: path))),
        ]
        let directory = directory(of: path)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where prefixes.contains(where: name.hasPrefix) {
            unlink(directory + "/" + name)
        }
    }

    /// The history journal of the file at `path` (a resolved path): `.NAME.history` beside it.
    static func historyPath(for path: String) -> String {
        directory(of: path) + "/" + sidecarName(for: fileName(of: path), suffix: ".history")
    }

    /// Deletes `path` durably; `beforeRemoving` runs just before, as ``writeAtomically(_:to:replacing:permissions:keepingMode:durable:beforeReplacing:)``'s
    /// `beforeReplacing` does.
    static func remove(_ path: String, beforeRemoving: () -> Void = {}) throws {
        beforeRemoving()
        guard unlink(path) == 0 || errno == ENOENT else { throw SystemCallError("remove", path) }
        try syncDirectory(directory(of: path))
    }

    /// Creates `directory` and any missing parents (`mkdir -p`), with mode 0755 less the umask.
    static func createDirectory(_ directory: String) throws {
        var info = stat()
        if stat(directory, &info) == 0 { return }
        let parent = self.directory(of: directory)
        if parent != directory, parent != "." { try createDirectory(parent) }
        guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
            throw SystemCallError("create directory", directory)
        }
    }

    /// The mode of the file at `path` (following links); nil when there is none.
    static func permissions(of path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o7777
    }

    private static func writeAll(_ data: Data, to fd: Int32, path: String) throws {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw SystemCallError("write", path)
                }
                offset += count
            }
        }
    }

    private static func syncDirectory(_ directory: String) throws {
        let fd = open(directory, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError("open directory", directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 || errno == EINVAL else { throw SystemCallError("fsync directory", directory) }
    }
}

// The C `read`, named by its module: `FileSystem.read` would be called in its place.
@inline(__always)
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.read(fd, buffer, count)
    #elseif canImport(Musl)
    Musl.read(fd, buffer, count)
    #else
    Darwin.read(fd, buffer, count)
    #endif
}
