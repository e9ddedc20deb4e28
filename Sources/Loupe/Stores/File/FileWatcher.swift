#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Reports changes to one file, named by a path that may pass through symbolic links, by calling
/// `onChange` on a thread of its own.
///
/// On Linux it watches, with inotify, every directory where a change can change what the path names: the
/// file's directory (editors and Loupe itself replace files by renaming a new one over them, which a watch
/// on the file itself would lose) and, for each symbolic link on the way, the directory holding the link.
/// So a link retargeted (`ln -sfn b.json settings.json`) or a linked directory swapped (Kubernetes swaps
/// `..data` to a new `..TIMESTAMP` directory on each ConfigMap update) is seen every time: after each
/// relevant event the chain is resolved again and the watches follow it. A directory on the way that does
/// not exist yet is waited for in its nearest existing parent. A check of the file's identity every
/// second backs the watches up. It reacts to a finished write, a rename onto or away from a watched name,
/// a creation and a deletion; not to each partial write. Elsewhere it checks the file's identity every
/// 100 ms.
///
/// Watching a directory's contents (a drop-in directory such as `/etc/app/settings.d`), it also reports
/// each file written, created, renamed or deleted in the directory the path ends at.
///
/// When inotify cannot watch (the user's inotify instances or watches are used up), it checks every
/// 100 ms instead, and says why in ``pollingReason``: a watch never silently stops.
final class FileWatcher: StoreWatch, @unchecked Sendable {
    /// A pipe: writing to `stopSignal.write` wakes the watching thread to stop.
    private let stopSignal: (read: Int32, write: Int32)
    private let watcherFD: Int32
    private let finished = DispatchSemaphore(value: 0)
    private let thread = Locked<(id: UInt, cancelled: Bool)>((0, false))
    /// How often the identity check runs, on Linux.
    static let backupInterval: Int32 = 1000
    /// Why the watch checks the file every 100 ms rather than through inotify; nil when inotify watches.
    let pollingReason: SystemCallError?

    /// Starts watching `path` (as given: its symbolic links are followed afresh after every change), and
    /// with `contents`, every name in the directory it names.
    init(path: String, contents: Bool = false, onChange: @escaping @Sendable () -> Void) throws {
        let path = Self.absolute(path)
        #if os(Linux)
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SystemCallError("watch", path) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        stopSignal = (ends[0], ends[1])
        var inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        var following = Watches(fd: inotify, contents: contents)
        var reason: SystemCallError?
        if inotify < 0 {
            reason = SystemCallError("watch with inotify", path)
        } else {
            do {
                try following.follow(path)
            } catch let error as SystemCallError {
                reason = error
                close(inotify)
                inotify = -1
            }
        }
        watcherFD = inotify
        pollingReason = reason
        let watches = following
        #else
        watcherFD = -1
        stopSignal = (-1, -1)
        pollingReason = nil
        #endif
        let started = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [self] in
            thread.withLock { $0.id = currentThreadID() }
            started.signal()
            #if os(Linux)
            if watcherFD >= 0 {
                watchWithInotify(path: path, watches: watches, onChange: onChange)
            } else {
                watchByPolling(path: path, contents: contents, onChange: onChange)
            }
            #else
            watchByPolling(path: path, contents: contents, onChange: onChange)
            #endif
            finished.signal()
        }
        started.wait()
    }

    deinit {
        #if os(Linux)
        if watcherFD >= 0 { close(watcherFD) }
        close(stopSignal.read)
        close(stopSignal.write)
        #endif
    }

    /// Stops the watch and waits until `onChange` can no longer be called (unless called from `onChange`
    /// itself, which cannot wait for itself).
    func cancel() {
        let (id, alreadyCancelled) = thread.withLock { state -> (UInt, Bool) in
            defer { state.cancelled = true }
            return (state.id, state.cancelled)
        }
        guard !alreadyCancelled else { return }
        #if os(Linux)
        var byte: UInt8 = 1
        _ = Glibc.write(stopSignal.write, &byte, 1)
        #endif
        if id != currentThreadID() { finished.wait() }
    }

    private var isCancelled: Bool { thread.withLock { $0.cancelled } }

    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return FileManager.default.currentDirectoryPath + "/" + path
    }

    /// Where a change can change what `path` names: for each directory, the names in it that matter (the
    /// file's own name, each symbolic link followed on the way, or the first missing part of the path).
    /// With `contents`, the directory `path` names, with every name in it (``anyName``).
    static func watchPoints(of path: String, contents: Bool = false) -> [String: Set<String>] {
        var points: [String: Set<String>] = [:]
        var pending = absolute(path)
        var hops = 0
        resolving: while hops <= 40 {
            let components = pending.split(separator: "/").map(String.init).filter { $0 != "." }
            var current = "/"
            for (index, component) in components.enumerated() {
                if component == ".." {
                    current = FileSystem.directory(of: current)
                    continue
                }
                let next = current == "/" ? "/" + component : current + "/" + component
                var info = stat()
                guard lstat(next, &info) == 0 else {
                    points[current, default: []].insert(component)  // wait for it to appear
                    break resolving
                }
                if (info.st_mode & S_IFMT) == S_IFLNK {
                    points[current, default: []].insert(component)
                    guard let target = try? FileSystem.linkTarget(of: next) else { break resolving }
                    let rest = components[(index + 1)...].joined(separator: "/")
                    let base = target.hasPrefix("/") ? target : current + "/" + target
                    pending = rest.isEmpty ? base : base + "/" + rest
                    hops += 1
                    continue resolving
                }
                if index == components.count - 1 {
                    points[current, default: []].insert(component)
                    if contents, (info.st_mode & S_IFMT) == S_IFDIR { points[next, default: []].insert(anyName) }
                }
                current = next
            }
            break
        }
        return points
    }

    /// In ``watchPoints(of:contents:)``: every name in the directory matters.
    static var anyName: String { "*" }

    #if os(Linux)
    /// The inotify watches on the directories of ``watchPoints(of:)``.
    private struct Watches {
        let fd: Int32
        /// Whether the contents of the directory the path names matter too.
        let contents: Bool
        /// Watch descriptor → the directory and the names in it that matter.
        var byDescriptor: [Int32: (directory: String, names: Set<String>)] = [:]

        init(fd: Int32, contents: Bool) {
            self.fd = fd
            self.contents = contents
        }

        /// Watches the directories `path` now passes through, and stops watching the others.
        mutating func follow(_ path: String) throws {
            let points = FileWatcher.watchPoints(of: path, contents: contents)
            let mask = UInt32(
                IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)
            var next: [Int32: (directory: String, names: Set<String>)] = [:]
            var failure: SystemCallError?
            for (directory, names) in points {
                // Watching a directory twice gives its descriptor again, so a kept one simply carries on.
                let descriptor = inotify_add_watch(fd, directory, mask)
                if descriptor < 0 {
                    failure = failure ?? SystemCallError("watch", directory)
                    continue
                }
                next[descriptor, default: (directory, [])].names.formUnion(names)
            }
            for descriptor in byDescriptor.keys where next[descriptor] == nil {
                inotify_rm_watch(fd, descriptor)
            }
            byDescriptor = next
            if next.isEmpty, let failure { throw failure }
        }
    }

    private func watchWithInotify(path: String, watches initial: Watches, onChange: @Sendable () -> Void) {
        var watches = initial
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var descriptors = [
            pollfd(fd: watcherFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stopSignal.read, events: Int16(POLLIN), revents: 0),
        ]
        var lastIdentity = try? FileSystem.identity(of: path)
        while !isCancelled {
            let ready = poll(&descriptors, 2, Self.backupInterval)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || descriptors[1].revents != 0 { return }
            var relevant = false
            if ready == 0 {
                // The backup check: what the path names now, against what it named at the last change.
                let identity = try? FileSystem.identity(of: path)
                let points = Self.watchPoints(of: path, contents: watches.contents)
                let watched = Dictionary(
                    watches.byDescriptor.values.map { ($0.directory, $0.names) }, uniquingKeysWith: { $0.union($1) })
                relevant = identity != lastIdentity || points != watched
            }
            for event in Self.pendingEvents(of: watcherFD, into: &buffer) {
                let selfChanged = event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0
                // (A watch this thread removed reports IN_IGNORED too; it no longer matters.)
                if let watched = watches.byDescriptor[event.descriptor],
                    selfChanged || watched.names.contains(event.name) || watched.names.contains(Self.anyName)
                {
                    relevant = true
                }
            }
            guard relevant, !isCancelled else { continue }
            try? watches.follow(path)
            lastIdentity = try? FileSystem.identity(of: path)
            onChange()
        }
    }

    /// One inotify event: the watch it came from, what happened, and the name in a watched directory it
    /// happened to (empty for the watched thing itself).
    struct Event {
        let descriptor: Int32
        let mask: UInt32
        let name: String
    }

    /// The events waiting on the inotify instance `fd` (non-blocking), read with `buffer`.
    static func pendingEvents(of fd: Int32, into buffer: inout [UInt8]) -> [Event] {
        var events: [Event] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { return events }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let (event, name) = buffer.withUnsafeBytes { raw -> (inotify_event, String) in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    let nameBytes = raw[nameStart..<(nameStart + Int(event.len))].prefix { $0 != 0 }
                    return (event, String(decoding: nameBytes, as: UTF8.self))
                }
                events.append(Event(descriptor: event.wd, mask: event.mask, name: name))
                offset += MemoryLayout<inotify_event>.size + Int(event.len)
            }
        }
    }
    #endif

    private func watchByPolling(path: String, contents: Bool, onChange: @Sendable () -> Void) {
        // A directory's identity changes as names come and go; its files' identities, as they are written.
        func identities() -> [FileIdentity?] {
            let own = try? FileSystem.identity(of: path)
            guard contents, let names = try? FileSystem.entries(of: path) else { return [own] }
            return [own] + names.sorted().map { try? FileSystem.identity(of: path + "/" + $0) }
        }
        var last = identities()
        while !isCancelled {
            usleep(100_000)
            let now = identities()
            if now != last {
                last = now
                if !isCancelled { onChange() }
            }
        }
    }
}
