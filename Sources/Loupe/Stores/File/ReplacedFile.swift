#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// A version of a file that a checked write took from the file's path, held open for a while: someone
/// who was opening it to save in place when it was replaced (an editor that truncates, a shell
/// redirection) writes into it after it left the path, and that save would be lost with it.
///
/// `open(2)` finds the file by its name before it truncates it; a write that swaps its file in between the
/// two, and checks what it swapped out before the truncation, cannot see that save coming. The file's next
/// write, and a check a little after each write, look at the versions taken out
/// (``WatchedFile/putBackSaveIntoReplacedFile(at:permissions:)``): one changed since holds a save, which
/// goes back to the path.
final class ReplacedFile: Sendable {
    /// The version, open for reading; closed with this object.
    private let fd: Int32
    /// Its identity when it left the path, as the write checked it.
    let identity: FileIdentity
    /// Its bytes then, where the write read them: a save in place at the same size within the same tick of
    /// the kernel's clock leaves the identity as it was.
    private let bytes: Data?
    /// Whether the bytes were found unchanged after the file system's clock had passed the version's
    /// modification time (``isChanged(fileSystemClockPassed:)``): its identity alone tells from then on.
    private let settled = Atomic<Bool>(false)
    /// When it left the path.
    let replaced: ContinuousClock.Instant

    /// Takes `fd` (the version taken out, whose status is `info`, and whose bytes are `bytes` where known).
    init(fd: Int32, info: stat, bytes: Data?) {
        self.fd = fd
        identity = FileIdentity(info)
        self.bytes = bytes
        replaced = .now
    }

    deinit {
        close(fd)
    }

    /// How long a version no one wrote into is kept after it left the path: an `open(2)` is not held up
    /// longer between the lookup of the name and the truncation.
    static let kept = Duration.seconds(1)
    /// At most this many are kept, the newest (a program writing a file many times a second).
    static let keptAtMost = 8

    /// Whether someone wrote into the version since it left the path.
    ///
    /// - Parameter passed: A modification time the file system gave a file of the same file system (the
    ///   one this process wrote last) before this look, if any.
    func isChanged(fileSystemClockPassed passed: Duration?) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        let now = FileIdentity(info)
        if now != identity { return true }
        // The same identity: the bytes tell, while a save could still have left it that identity.
        guard let bytes, !settled.load(ordering: .relaxed), FileIdentity.now - now.modified < .seconds(1) else {
            return false
        }
        if contents(size: bytes.count) != bytes { return true }
        // Unchanged now, and the file system's clock had passed the version's time before this look: a save
        // into it from now on is stamped later, and its identity tells from then on.
        if let passed, passed > identity.modified { settled.store(true, ordering: .relaxed) }
        return false
    }

    /// What someone saved into the version, once they have left it alone for `settleTime` (at most twenty
    /// times that): nil when it is empty (emptied, or its writing not begun within the bound), larger than
    /// `maximumSize`, or unreadable.
    func save(settleTime: Duration, maximumSize: Int) -> Data? {
        let deadline = ContinuousClock.now + settleTime * 20
        while ContinuousClock.now < deadline {
            var info = stat()
            guard fstat(fd, &info) == 0 else { return nil }
            let age = FileIdentity(info).age
            if age >= settleTime, info.st_size > 0 { break }
            usleep(UInt32(clamping: max(1_000, Int((settleTime - min(age, settleTime)).timeInterval * 1_000_000))))
        }
        // Read at the size it has; again (a few times) if it grew meanwhile.
        for _ in 0..<3 {
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_size > 0, info.st_size <= maximumSize,
                let data = contents(size: Int(info.st_size))
            else { return nil }
            if data.count == info.st_size { return data }
        }
        return nil
    }

    /// Up to `size` bytes from the version's start, and one more where it has them (so that a longer
    /// version reads as other bytes); nil when it cannot be read.
    private func contents(size: Int) -> Data? {
        var data = Data(count: size + 1)
        var filled = 0
        while filled < data.count {
            let count = data.withUnsafeMutableBytes {
                pread(fd, $0.baseAddress! + filled, $0.count - filled, off_t(filled))
            }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            filled += count
        }
        data.count = filled
        return data
    }
}
