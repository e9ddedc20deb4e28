#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Loupe

/// Files, directories and symbolic links in memory: the double of `ReadableFileSystem` that the layers
/// logic tests run on.
///
/// Every change is atomic, gives the file a new identity, and is reported to the watches it concerns
/// before the call that made it returns, on the caller's thread: a root watching a layer has taken the
/// change when ``write(_:to:)`` returns. Directories exist implicitly, as the parents of what is in them,
/// or explicitly through ``createDirectory(_:)``. Errors are the disk's, with the same words.
package final class InMemoryFileSystem: ReadableFileSystem {
    private enum Node {
        case file(Data, FileIdentity)
        case link(String)
        case directory
    }

    private struct Watch {
        let path: String
        let contents: Bool
        let onChange: @Sendable () -> Void
    }

    private struct State {
        var nodes: [String: Node] = [:]
        var watches: [Int: Watch] = [:]
        var nextWatch = 0
        /// Each new version of a file gets the next number as its inode and modification time.
        var version = 0
    }

    private let state = Locked(State())

    package init() {}

    // MARK: Changing it, as a test does

    /// Writes `text` (UTF-8) as the whole file at `path`, creating its parents.
    package func write(_ text: String, to path: String) {
        write(Data(text.utf8), to: path)
    }

    /// Writes `data` as the whole file at `path` (through a link at `path`), creating its parents.
    package func write(_ data: Data, to path: String) {
        change(path) { state in
            let target = (try? Self.resolve(path, in: state.nodes)) ?? path
            state.version += 1
            let identity = FileIdentity(
                device: 1, inode: UInt64(state.version), size: Int64(data.count),
                modifiedSeconds: state.version, modifiedNanoseconds: 0)
            state.nodes[target] = .file(data, identity)
            return target
        }
    }

    /// Makes `path` a symbolic link to `target` (relative to the link's directory unless absolute),
    /// replacing what was there, as `ln -sfn` does.
    package func link(_ path: String, to target: String) {
        change(path) { state in
            state.nodes[path] = .link(target)
            return path
        }
    }

    /// Makes `path` an (empty) directory.
    package func createDirectory(_ path: String) {
        change(path) { state in
            state.nodes[path] = .directory
            return path
        }
    }

    /// Removes the file, link or directory (and everything in it) at `path`.
    package func remove(_ path: String) {
        change(path) { state in
            state.nodes = state.nodes.filter { $0.key != path && !$0.key.hasPrefix(path + "/") }
            return path
        }
    }

    /// Applies `body` to the state and reports the change of `path` (and of the path `body` returns) to
    /// the watches it concerns, outside the lock: a watch of a file whose path, or a link on its way, or
    /// a directory above it, changed; a watch of a directory's contents, also when a name in it changed.
    private func change(_ path: String, _ body: (inout State) -> String) {
        let watches = state.withLock { state -> [Watch] in
            let before = state.watches.mapValues { Self.chain($0.path, in: state.nodes) }
            let changed = body(&state)
            return state.watches.filter { id, watch in
                let after = Self.chain(watch.path, in: state.nodes)
                let followed = Set(before[id, default: after].paths + after.paths + [watch.path])
                let targets = [before[id, default: after].resolved, after.resolved]
                return [path, changed].contains { name in
                    followed.contains(name) || targets.contains { $0.hasPrefix(name + "/") }
                        || (watch.contents && targets.contains(FileSystem.directory(of: name)))
                }
            }.map(\.value)
        }
        for watch in watches { watch.onChange() }
    }

    // MARK: ReadableFileSystem

    /// As on disk: links in the last component are followed, and the path is returned as they leave it
    /// (links in the directories above stay, for the kernel to follow on each access).
    package func resolvingSymlinks(_ path: String) throws -> String {
        try state.withLock { state in
            var current = path
            for _ in 0..<40 {
                let parent = try Self.resolve(FileSystem.directory(of: current), in: state.nodes)
                guard
                    case .link(let target) = state.nodes[
                        (parent == "/" ? "" : parent) + "/" + FileSystem.fileName(of: current)]
                else { return current }
                current = target.hasPrefix("/") ? target : FileSystem.directory(of: current) + "/" + target
            }
            throw SystemCallError("resolve", path, code: ELOOP)
        }
    }

    /// Files in memory are the program's own: the process's user owns them, and no one else changes them.
    package func writers(of path: String, target: String, identity: FileIdentity) -> DocumentWriters {
        DocumentWriters(file: path, owner: UInt32(geteuid()))
    }

    package func identity(of path: String) throws -> FileIdentity? {
        try state.withLock { state in
            let target = try Self.resolve(path, in: state.nodes)
            switch state.nodes[target] {
            case .file(_, let identity): return identity
            case .directory:
                return FileIdentity(device: 1, inode: 0, size: 0, modifiedSeconds: 0, modifiedNanoseconds: 0)
            case .link, nil:
                guard Self.isImplicitDirectory(target, in: state.nodes) else { return nil }
                return FileIdentity(device: 1, inode: 0, size: 0, modifiedSeconds: 0, modifiedNanoseconds: 0)
            }
        }
    }

    package func readSettled<T>(
        _ path: String, maximumSize: Int, parse: (Data) throws -> T
    ) throws -> (T, FileIdentity)? {
        let node = try state.withLock { state -> Node? in
            guard !path.isEmpty else {
                throw SystemCallError("open", "", code: ENOENT, explanation: "the path is empty; name a file")
            }
            let target = try Self.resolve(path, in: state.nodes)
            return state.nodes[target] ?? (Self.isImplicitDirectory(target, in: state.nodes) ? .directory : nil)
        }
        switch node {
        case nil, .link:
            return nil
        case .directory:
            throw SystemCallError("read", path, code: EISDIR, explanation: "it is a directory, not a regular file")
        case .file(let data, let identity):
            guard data.count <= maximumSize else {
                throw SystemCallError(
                    "read", path, code: EFBIG,
                    explanation:
                        "it is larger than the maximum document size, \(FileSystem.describe(bytes: maximumSize))")
            }
            // Writes here are atomic: there is no writer to wait for.
            return (try parse(data), identity)
        }
    }

    package func entries(of directory: String) throws -> [String]? {
        state.withLock { state in
            let target = (try? Self.resolve(directory, in: state.nodes)) ?? directory
            guard
                state.nodes[target].map({ if case .directory = $0 { true } else { false } })
                    ?? Self.isImplicitDirectory(target, in: state.nodes)
            else { return nil }
            let prefix = target + "/"
            let names = state.nodes.keys.compactMap { key -> String? in
                guard key.hasPrefix(prefix) else { return nil }
                return key.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
            }
            return Array(Set(names))
        }
    }

    package func isRegularFile(_ path: String) -> Bool {
        state.withLock { state in
            guard let target = try? Self.resolve(path, in: state.nodes), case .file = state.nodes[target] else {
                return false
            }
            return true
        }
    }

    package func isDirectory(_ path: String) -> Bool {
        state.withLock { state in
            guard let target = try? Self.resolve(path, in: state.nodes) else { return false }
            if case .directory = state.nodes[target] { return true }
            return state.nodes[target] == nil && Self.isImplicitDirectory(target, in: state.nodes)
        }
    }

    package func watch(
        _ path: String, contents: Bool, onChange: @escaping @Sendable () -> Void
    ) throws -> (watch: any StoreWatch, pollingReason: String?) {
        let id = state.withLock { state in
            state.nextWatch += 1
            state.watches[state.nextWatch] = Watch(path: path, contents: contents, onChange: onChange)
            return state.nextWatch
        }
        return (Cancellation { [weak self] in self?.state.withLock { _ = $0.watches.removeValue(forKey: id) } }, nil)
    }

    /// A watch of the in-memory file system; cancelling it stops its reports.
    private struct Cancellation: StoreWatch {
        let cancelWatch: @Sendable () -> Void
        init(_ cancelWatch: @escaping @Sendable () -> Void) { self.cancelWatch = cancelWatch }
        func cancel() { cancelWatch() }
    }

    // MARK: Paths

    /// `path` after following links, in every component, as the kernel does.
    private static func resolve(_ path: String, in nodes: [String: Node]) throws -> String {
        let followed = chain(path, in: nodes)
        guard !followed.loops else { throw SystemCallError("resolve", path, code: ELOOP) }
        return followed.resolved
    }

    /// `path` resolved, and every path met on the way (the links followed and the resolved path); `loops`
    /// when there were more than 40 links, as the kernel refuses.
    private static func chain(
        _ path: String, in nodes: [String: Node]
    ) -> (resolved: String, paths: [String], loops: Bool) {
        var components = path.split(separator: "/").map(String.init)
        var resolved = ""
        var links: [String] = []
        while !components.isEmpty {
            let component = components.removeFirst()
            if component == "." { continue }
            if component == ".." {
                resolved = resolved.isEmpty ? "" : FileSystem.directory(of: resolved)
                if resolved == "/" { resolved = "" }
                continue
            }
            let next = resolved + "/" + component
            guard case .link(let target) = nodes[next] else {
                resolved = next
                continue
            }
            links.append(next)
            guard links.count <= 40 else { return (next, links, true) }
            let absolute = target.hasPrefix("/") ? target : resolved + "/" + target
            components = absolute.split(separator: "/").map(String.init) + components
            resolved = ""
        }
        let end = resolved.isEmpty ? "/" : resolved
        return (end, links + [end], false)
    }

    /// Whether something is stored under `path`, which makes it a directory.
    private static func isImplicitDirectory(_ path: String, in nodes: [String: Node]) -> Bool {
        nodes.keys.contains { $0.hasPrefix(path + "/") }
    }
}
