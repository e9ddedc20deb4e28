#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Whether someone is saving a file in place right now, as inotify tells it: the file at a name was
/// changed (`IN_MODIFY`, which a truncating `open` gives as well as each `write`) and its writer has not
/// closed it yet (`IN_CLOSE_WRITE`).
///
/// An editor that saves without renaming (nano, vim with `backupcopy=yes`, a shell redirection) truncates
/// the file and writes it, and may be descheduled between the two for longer than any settle time: a
/// writer that took the file then would take a prefix of it, and replace the rest. A ``FileStore`` asks,
/// holding its lock, before it takes the file it read as the one to replace; a save in progress is waited
/// for (at most a bound), and then read.
///
/// It watches the directories the files are in, so every file at a name is watched, whichever inode it
/// is, through one inotify instance for the process (instances are few: 128 a user by default).
/// What happened before it started watching a directory, it cannot know: the time-based settle covers
/// that. On systems without inotify it knows nothing, and says no one is writing.
final class InPlaceWrites: Sendable {
    /// The process's one watch of in-place writes.
    static let shared = InPlaceWrites()

    #if os(Linux)
    /// The inotify instance; -1 when none could be made.
    private let fd: Int32
    /// The watched directories by their watch's descriptor, each with the names in it written and not
    /// yet closed.
    private let state = Locked<[Int32: (directory: String, writing: Set<String>)]>([:])

    private init() {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    }
    #else
    private init() {}
    #endif

    /// Starts watching the directory `target` is in, when it is not watched yet.
    func follow(_ target: String) {
        #if os(Linux)
        guard fd >= 0 else { return }
        let directory = FileSystem.directory(of: target)
        state.withLock { watched in
            guard !watched.values.contains(where: { $0.directory == directory }) else { return }
            let descriptor = inotify_add_watch(
                fd, directory, UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE))
            if descriptor >= 0 { watched[descriptor] = (directory, watched[descriptor]?.writing ?? []) }
        }
        #endif
    }

    /// Waits while the file at `target` (whose directory ``follow(_:)`` watches) is being written in place,
    /// at most `limit`; returns whether it was being written (and so waited for).
    func waitWhileWritten(_ target: String, atMost limit: Duration) -> Bool {
        #if os(Linux)
        guard fd >= 0 else { return false }
        let (directory, name) = (FileSystem.directory(of: target), FileSystem.fileName(of: target))
        let deadline = ContinuousClock.now + limit
        var waited = false
        while isWritten(name, in: directory) {
            waited = true
            let left = deadline - ContinuousClock.now
            guard left > .zero else { break }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            _ = poll(&ready, 1, Int32(max(1, min(milliseconds, 1000))))
        }
        return waited
        #else
        return false
        #endif
    }

    #if os(Linux)
    /// Whether `name` in `directory` was written and not yet closed, with every event so far taken in.
    private func isWritten(_ name: String, in directory: String) -> Bool {
        state.withLock { watched in
            var buffer = [UInt8](repeating: 0, count: 4096)
            for event in FileWatcher.pendingEvents(of: fd, into: &buffer) {
                if event.mask & UInt32(IN_IGNORED) != 0 {
                    watched[event.descriptor] = nil  // the directory is gone
                } else if event.mask & UInt32(IN_MODIFY) != 0 {
                    watched[event.descriptor]?.writing.insert(event.name)
                } else if event.mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE) != 0 {
                    // Closed, or another file at the name: whole, as far as anyone writing it in place goes.
                    watched[event.descriptor]?.writing.remove(event.name)
                }
            }
            return watched.values.contains { $0.directory == directory && $0.writing.contains(name) }
        }
    }
    #endif
}
