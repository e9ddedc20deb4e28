#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CLoupeSystem

/// Opening a secret file without asking the kernel afterwards where it is.
///
/// A secret reference may not read a file under `/proc`, `/sys` or `/dev`, where its path is written or
/// where it leads (``FileSystem/readReferenced(_:readableBy:maximumSize:)``). Where the path leads is the
/// kernel's path of the file opened, a `readlink` of `/proc/self/fd/N`, which costs about as much as the
/// rest of the read. An absolute path with no `.`, `..` or `//` in it, opened by `openat2(2)` refusing every
/// symbolic link on the way (`RESOLVE_NO_SYMLINKS`), leads where it is written, and the check on the path
/// as written is the whole check; opening and checking are then one step, with no link to swap in between.
/// Anything else (a link on the way, no `openat2`, a sandbox that refuses it) takes the ordinary open and
/// the `readlink`.
///
/// Row it holds (`Benchmarks/README.md`, "Fast paths"): a load with 100 environment variables, 20
/// credential files and 5 secret references vs the same load without them (target ≤ 1.30×): 1.27–1.29×
/// with it, 1.29–1.30× without it, in runs of the loading area on the 2-core machine.
extension FileSystem {
    /// The file at `path` opened for reading with `flags`, when `path` is absolute and plain (no `.`,
    /// `..` or `//`) and no component of it is a link; nil otherwise, or when the open fails for any
    /// reason (the caller then opens it as usual and learns why).
    static func openWithoutLinks(_ path: String, flags: Int32, isPlain: Bool) -> Int32? {
        guard isPlain else { return nil }
        let fd = loupe_open_without_links(path, flags)
        return fd >= 0 ? fd : nil
    }
}
