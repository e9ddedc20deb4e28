#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Reports changes to one file by calling `onChange` on a thread of its own.
///
/// On Linux it watches the file's *directory* with inotify, because editors and Loupe itself replace
/// files by renaming a new one over them, which a watch on the file would lose. It reacts to a finished
/// write, a rename onto or away from the name, and a deletion; not to each partial write. Elsewhere it
/// checks the file's identity every 100 ms.
final class FileWatcher: StoreWatch, @unchecked Sendable {
    /// A pipe: writing to `stopSignal.write` wakes the watching thread to stop.
    private let stopSignal: (read: Int32, write: Int32)
    private let watcherFD: Int32
    private let finished = DispatchSemaphore(value: 0)
    private let thread = Locked<(id: UInt, cancelled: Bool)>((0, false))

    /// Starts watching `path`; its directory must exist.
    init(path: String, onChange: @escaping @Sendable () -> Void) throws {
        let directory = FileSystem.directory(of: path)
        let name = FileSystem.fileName(of: path)
        #if os(Linux)
        watcherFD = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard watcherFD >= 0 else { throw SystemCallError("watch", directory) }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF)
        guard inotify_add_watch(watcherFD, directory, mask) >= 0 else {
            let error = SystemCallError("watch", directory)
            close(watcherFD)
            throw error
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            let error = SystemCallError("watch", directory)
            close(watcherFD)
            throw error
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        stopSignal = (ends[0], ends[1])
        #else
        watcherFD = -1
        stopSignal = (-1, -1)
        #endif
        let started = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [self] in
            thread.withLock { $0.id = currentThreadID() }
            started.signal()
            #if os(Linux)
            watchWithInotify(name: name, onChange: onChange)
            #else
            watchByPolling(path: path, onChange: onChange)
            #endif
            finished.signal()
        }
        started.wait()
    }

    deinit {
        #if os(Linux)
        close(watcherFD)
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

    #if os(Linux)
    private func watchWithInotify(name: String, onChange: @Sendable () -> Void) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var descriptors = [
            pollfd(fd: watcherFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stopSignal.read, events: Int16(POLLIN), revents: 0),
        ]
        while !isCancelled {
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || descriptors[1].revents != 0 { return }
            var relevant = false
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(watcherFD, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let (length, eventName) = buffer.withUnsafeBytes { raw -> (Int, String) in
                        let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                        let nameStart = offset + MemoryLayout<inotify_event>.size
                        let nameBytes = raw[nameStart..<(nameStart + Int(event.len))].prefix { $0 != 0 }
                        let isSelf = event.mask & UInt32(IN_DELETE_SELF) != 0
                        return (Int(event.len), isSelf ? name : String(decoding: nameBytes, as: UTF8.self))
                    }
                    if eventName == name { relevant = true }
                    offset += MemoryLayout<inotify_event>.size + length
                }
            }
            if relevant && !isCancelled { onChange() }
        }
    }
    #endif

    private func watchByPolling(path: String, onChange: @Sendable () -> Void) {
        var last = try? FileSystem.identity(of: path)
        while !isCancelled {
            usleep(100_000)
            let now = try? FileSystem.identity(of: path)
            if now != last {
                last = now
                if !isCancelled { onChange() }
            }
        }
    }
}
