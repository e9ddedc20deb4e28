#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The file operations a read-only layer uses: reading a file whole and settled, knowing the identity of
/// what was read, listing a drop-in directory, and watching. The seam between the layers' logic (which
/// file is a layer, in which order, what a broken layer does) and the disk.
///
/// ``LocalFileSystem`` is the disk, through ``FileSystem`` and ``FileWatcher``. `InMemoryFileSystem` (in `LoupeTesting`) is a
/// double for logic tests: its writes are atomic and it reports them to its watches before the write
/// returns, so a test needs neither a disk nor a wait. What only a disk shows (atomic renames, permissions,
/// inotify, symbolic link swaps, other processes) is tested on a disk.
package protocol ReadableFileSystem: Sendable {
    /// The path `path` ends at after following symbolic links; `path` itself when it is not a link.
    func resolvingSymlinks(_ path: String) throws -> String

    /// The identity of the file at `path` (following links); nil when there is none.
    func identity(of path: String) throws -> FileIdentity?

    /// Reads and parses the regular file at `path` (at most `maximumSize` bytes), allowing for a writer
    /// still writing it in place; nil when there is no file.
    func readSettled<T>(_ path: String, maximumSize: Int, parse: (Data) throws -> T) throws -> (T, FileIdentity)?

    /// The names in `directory` (without `.` and `..`); nil when there is no such directory.
    func entries(of directory: String) throws -> [String]?

    /// Who can change the file at `path`, which resolves to `target`, in the version `identity`:
    /// the trust boundary of the secret references it holds.
    func writers(of path: String, target: String, identity: FileIdentity) -> DocumentWriters

    /// Whether `path` names a regular file, following symbolic links.
    func isRegularFile(_ path: String) -> Bool

    /// Whether `path` names a directory, following symbolic links.
    func isDirectory(_ path: String) -> Bool

    /// Starts reporting changes to the file at `path` (through the links on its path), or with `contents`,
    /// to the names in the directory it names. A report may be spurious; a change is never missed.
    /// `pollingReason` says why the watch checks by polling, when it cannot be told of changes.
    func watch(
        _ path: String, contents: Bool, onChange: @escaping @Sendable () -> Void
    ) throws -> (watch: any StoreWatch, pollingReason: String?)
}

/// The file system on disk.
package struct LocalFileSystem: ReadableFileSystem {
    package init() {}

    package func resolvingSymlinks(_ path: String) throws -> String {
        try FileSystem.resolvingSymlinks(path)
    }

    package func identity(of path: String) throws -> FileIdentity? {
        try FileSystem.identity(of: path)
    }

    package func readSettled<T>(
        _ path: String, maximumSize: Int, parse: (Data) throws -> T
    ) throws -> (T, FileIdentity)? {
        try FileSystem.readSettled(path, maximumSize: maximumSize, parse: parse)
    }

    package func entries(of directory: String) throws -> [String]? {
        try FileSystem.entries(of: directory)
    }

    package func writers(of path: String, target: String, identity: FileIdentity) -> DocumentWriters {
        FileSystem.writers(of: path, target: target, identity: identity)
    }

    package func isRegularFile(_ path: String) -> Bool {
        FileSystem.isRegularFile(path)
    }

    package func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    package func watch(
        _ path: String, contents: Bool, onChange: @escaping @Sendable () -> Void
    ) throws -> (watch: any StoreWatch, pollingReason: String?) {
        let watcher = try FileWatcher(path: path, contents: contents, onChange: onChange)
        return (watcher, watcher.pollingReason.map { "\($0)" })
    }
}
