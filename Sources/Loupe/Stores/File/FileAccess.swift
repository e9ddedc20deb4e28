#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Who may change a file and who may read one, as the permission bits say: the two questions behind the
/// trust boundary of secret references (``DocumentWriters``).
extension FileSystem {
    /// Who can change the file at `path`, which resolves to `target`, in the version `identity` found.
    ///
    /// Users other than the owner and root can change it when the file is writable by its group or by
    /// others, or when a directory it is reached through (`path`'s, `target`'s) is writable by others
    /// without the sticky bit, or is owned by another user. A group that holds only the owner (a user
    /// private group, as Debian's `umask 002` makes files) counts as the owner.
    static func writers(of path: String, target: String, identity: FileIdentity) -> DocumentWriters {
        var reasons: [String] = []
        let mode = mode_t(identity.mode)
        if mode & S_IWOTH != 0 {
            reasons.append("it is writable by others")
        } else if mode & S_IWGRP != 0, let gid = owningGroup(of: target), !isPrivateGroup(gid, of: identity.owner) {
            reasons.append("it is writable by its group (gid \(gid))")
        }
        var seen: Set<String> = []
        for folder in [directory(of: path), directory(of: target)] where seen.insert(folder).inserted {
            var info = stat()
            guard stat(folder, &info) == 0 else { continue }
            let sticky = info.st_mode & S_ISVTX != 0
            if info.st_uid != 0, info.st_uid != identity.owner {
                reasons.append("its directory \(folder) belongs to another user (uid \(info.st_uid))")
            } else if !sticky, info.st_mode & S_IWOTH != 0 {
                reasons.append("its directory \(folder) is writable by others")
            } else if !sticky, info.st_mode & S_IWGRP != 0, !isPrivateGroup(UInt32(info.st_gid), of: identity.owner) {
                reasons.append("its directory \(folder) is writable by its group (gid \(info.st_gid))")
            }
        }
        return DocumentWriters(
            file: path, owner: identity.owner, openToOthers: reasons.isEmpty ? nil : reasons.joined(separator: "; "))
    }

    /// The directories whose files are the kernel's and the devices', never a secret a reference may name.
    static let systemTrees = ["/proc", "/sys", "/dev"]

    /// The contents of the regular file at `path`, read for a secret reference whose settings file belongs
    /// to `owner` (nil: to the program itself): the file must be one `owner` may read (root may read any),
    /// and never one under `/proc`, `/sys` or `/dev`, where the path is written or where it leads.
    ///
    /// The checks are made on the file opened, so a link swapped between a check and the read cannot lead
    /// elsewhere. Returns nil when there is no file.
    ///
    /// - Throws: ``SystemCallError`` naming `path` and why, never the content.
    static func readReferenced(_ path: String, readableBy owner: UInt32?, maximumSize: Int) throws -> Data? {
        guard !path.isEmpty else { throw SystemCallError("open", path, code: ENOENT, explanation: "the path is empty") }
        // Where the path leads as written: made absolute, and `.` and `..` taken out (by `URL`, where the
        // path has any to take out).
        let isPlain = isPlain(path)
        try checkNotSystemTree(
            normalized: isPlain ? path : URL(fileURLWithPath: path).standardizedFileURL.path, as: path)
        let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY
        let withoutLinks = openWithoutLinks(path, flags: flags, isPlain: isPlain)
        let fd = withoutLinks ?? open(path, flags)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw SystemCallError("open", path)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemCallError("stat", path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw SystemCallError("read", path, code: EINVAL, explanation: "it is not a regular file")
        }
        // Where it leads: opened with no link on the way, where it is written; else the kernel's path of the
        // file opened, which is absolute and has no `.`, `..` or links left in it (nil where the system does
        // not say: the path as written is all there is to check).
        let kernelPath = withoutLinks == nil ? openedPath(fd) : nil
        if let kernelPath { try checkNotSystemTree(normalized: kernelPath, as: path) }
        let opened = kernelPath ?? path
        if let owner, owner != 0 {
            guard mayRead(info, owner: owner), mayReach(opened, owner: owner) else {
                throw SystemCallError(
                    "read", path, code: EACCES,
                    explanation:
                        "the settings file's owner (uid \(owner)) may not read it, so a reference in that file may not either"
                )
            }
        }
        return try read(fd, path: path, info: info, maximumSize: maximumSize)
    }

    /// Whether `path` is absolute with no `.`, `..` or `//` in it: no `/.` and no `//` (by its bytes:
    /// Foundation's `contains` goes through `NSString` on Linux).
    private static func isPlain(_ path: String) -> Bool {
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
        guard path.utf8.first == slash else { return false }
        var previous: UInt8 = 0
        for byte in path.utf8 {
            if previous == slash && (byte == dot || byte == slash) { return false }
            previous = byte
        }
        return true
    }

    /// Throws when `normalized` (an absolute path without `.` or `..`, what `name` leads to) is under
    /// `/proc`, `/sys` or `/dev`.
    private static func checkNotSystemTree(normalized: String, as name: String) throws {
        for tree in systemTrees where normalized == tree || normalized.hasPrefix(tree + "/") {
            throw SystemCallError(
                "read", name, code: EACCES, explanation: "it is under \(tree), which secret references may not name")
        }
    }

    /// The path of the file open at `fd`, as the kernel knows it (Linux's `/proc/self/fd`); nil elsewhere.
    private static func openedPath(_ fd: Int32) -> String? {
        #if os(Linux)
        return try? linkTarget(of: "/proc/self/fd/\(fd)")
        #else
        return nil
        #endif
    }

    /// Whether `owner` may read the file whose status is `info`, as its permission bits say.
    private static func mayRead(_ info: stat, owner: UInt32) -> Bool {
        permits(info, owner: owner, user: S_IRUSR, group: S_IRGRP, other: S_IROTH)
    }

    /// Whether `owner` may pass through every directory above `path` (search permission).
    private static func mayReach(_ path: String, owner: UInt32) -> Bool {
        var folder = directory(of: path)
        while true {
            var info = stat()
            guard stat(folder, &info) == 0, permits(info, owner: owner, user: S_IXUSR, group: S_IXGRP, other: S_IXOTH)
            else { return false }
            guard folder != "/", folder != "." else { return true }
            folder = directory(of: folder)
        }
    }

    /// Whether the permission bits of `info` give `owner` the access the user, group and other bits name.
    private static func permits(_ info: stat, owner: UInt32, user: mode_t, group: mode_t, other: mode_t) -> Bool {
        if UInt32(info.st_uid) == owner { return info.st_mode & user != 0 }
        if groups(of: owner).contains(UInt32(info.st_gid)) { return info.st_mode & group != 0 }
        return info.st_mode & other != 0
    }

    /// The group that owns the file at `path`.
    private static func owningGroup(of path: String) -> UInt32? {
        var info = stat()
        return stat(path, &info) == 0 ? UInt32(info.st_gid) : nil
    }

    /// Whether the group `gid` is `owner`'s alone: root's group for root, or the owner's primary group with no
    /// other member listed.
    private static func isPrivateGroup(_ gid: UInt32, of owner: UInt32) -> Bool {
        if gid == 0 && owner == 0 { return true }
        guard let account = account(of: owner), account.group == gid else { return false }
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 65_536)
        guard getgrgid_r(gid_t(gid), &entry, &buffer, buffer.count, &result) == 0, result != nil else { return false }
        var members = entry.gr_mem
        while let member = members?.pointee {
            if String(cString: member) != account.name { return false }
            members = members?.advanced(by: 1)
        }
        return true
    }

    /// The name and primary group of the user `uid`, as the password database has them.
    private static func account(of uid: UInt32) -> (name: String, group: UInt32)? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwuid_r(uid_t(uid), &entry, &buffer, buffer.count, &result) == 0, result != nil,
            let name = entry.pw_name
        else { return nil }
        return (String(cString: name), UInt32(entry.pw_gid))
    }

    /// The groups `uid` is a member of: its primary group and those the group database lists it in.
    private static func groups(of uid: UInt32) -> Set<UInt32> {
        guard let account = account(of: uid) else { return [] }
        var count: Int32 = 64
        var found = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(account.name, gid_t(account.group), &found, &count) < 0 {
            found = [gid_t](repeating: 0, count: Int(count))
            guard getgrouplist(account.name, gid_t(account.group), &found, &count) >= 0 else { return [account.group] }
        }
        return Set(found[0..<Int(count)].map { UInt32($0) })
    }
}
