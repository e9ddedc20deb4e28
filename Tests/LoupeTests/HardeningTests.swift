#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// What a hostile user or a careless administrator puts at a settings path, and what the file store does
/// with it: never hang, never read without bound, never lose exclusion, never take a file from its owner.
@Suite("Hardening: files that are not what they should be")
struct HardeningTests {
    struct Settings: Codable, Sendable, Equatable {
        var name = "default"
        var count = 0
    }

    /// Runs `body` on a thread of its own and waits at most `limit` for it: a test of a call that used to
    /// block forever fails rather than hangs the run.
    func withinLimit<R: Sendable>(seconds limit: Int = 10, _ body: @escaping @Sendable () -> R) -> R? {
        let result = Locked<R?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + .seconds(limit)) == .success else { return nil }
        return result.withLock { $0 }
    }

    /// The error of opening a root over `path`, as text; nil when it opened or did not return in time.
    func loadError(_ path: String, maximumSize: Int = 16 << 20) -> String? {
        withinLimit {
            do {
                _ = try RootLens(
                    default: Settings(), store: FileStore(path: path, maximumDocumentSize: maximumSize), watch: false)
                return "opened"
            } catch {
                return "\(error)"
            }
        } ?? nil
    }

    @Test func aFIFOAtThePathIsAnErrorSayingSoNotAWaitForAWriter() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        #expect(mkfifo(path, 0o644) == 0)
        let error = loadError(path)
        #expect(
            error?.contains("\(path)") == true
                && error?.contains("it is a FIFO (named pipe), not a regular file") == true,
            "\(error ?? "no answer in 10 s: open() waited for a writer")")

        // A write is refused too, and leaves the FIFO as it was.
        let written = withinLimit { () -> String in
            do {
                try FileStore(path: path).overwrite(with: JSONValue(parsing: #"{"count": 1}"#))
                return "saved"
            } catch {
                return "\(error)"
            }
        }
        #expect(
            written?.contains("it is a FIFO (named pipe), not a regular file") == true,
            "\(written ?? "no answer in 10 s")")
        var info = stat()
        #expect(stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO)
    }

    /// A socket cannot be opened at all (`open` says "No such device or address"): the error says what it is.
    @Test func aSocketAtThePathIsNamedForWhatItIs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        _ = try python("import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", [path])
        var info = stat()
        #expect(stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK, "a socket was made")
        let error = loadError(path)
        #expect(
            error?.contains("\(path)") == true && error?.contains("it is a socket, not a regular file") == true,
            "\(error ?? "no answer")")
        #expect(error?.contains("No such device or address") == false)
    }

    @Test func aDeviceOrADirectoryAtThePathIsNamedForWhatItIs() throws {
        let zero = loadError("/dev/zero")
        #expect(zero?.contains("it is a character device, not a regular file") == true, "\(zero ?? "no answer")")
        #expect(zero?.contains("Is a directory") == false)
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let folder = directory.file("settings.json")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let error = loadError(folder)
        #expect(error?.contains("it is a directory, not a regular file") == true, "\(error ?? "no answer")")
    }

    @Test func aFileLargerThanTheMaximumOrOneThatKeepsGrowingIsAnError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let large = directory.file("large.json")
        try Data(#"{"name": "\#(String(repeating: "x", count: 2_000))"}"#.utf8).write(to: URL(fileURLWithPath: large))
        let error = loadError(large, maximumSize: 1024)
        #expect(
            error?.contains("it is larger than the maximum document size, 1 KiB") == true, "\(error ?? "no answer")")
        #expect(loadError(large) == "opened", "within the default maximum")

        // A file another process keeps appending to: read up to the bound, then refused.
        let growing = directory.file("growing.json")
        try Data("{\"name\": \"".utf8).write(to: URL(fileURLWithPath: growing))
        let writer = try ChildProcess(
            "/bin/sh",
            [
                "-c",
                "while :; do printf 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'; done >> '\(growing)'",
            ])
        defer {
            writer.kill(SIGKILL)
            _ = writer.wait(limit: .seconds(10))
        }
        // Given time: on a loaded machine (the whole suite at once, under a sanitizer) the shell writes slowly.
        #expect(
            eventually(deadline: .seconds(60)) {
                ((try? FileManager.default.attributesOfItem(atPath: growing)[.size] as? Int) ?? 0) > 2 << 20
            })
        let grown = loadError(growing, maximumSize: 1 << 20)
        #expect(
            grown?.contains("it is larger than the maximum document size, 1 MiB") == true, "\(grown ?? "no answer")")
    }

    /// A write that every later read would refuse (over the read limit) is refused before anything is
    /// written, and the value is not applied.
    @Test func aWriteLargerThanTheReadLimitIsRefusedAndNothingIsWritten() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(
            default: Settings(), store: FileStore(path: path, maximumDocumentSize: 1024), watch: false)
        try root.count.set(1)
        let before = try String(contentsOfFile: path, encoding: .utf8)
        #expect {
            try root.name.set(String(repeating: "x", count: 2_000))
        } throws: { error in
            guard let error = error as? SettingsError else { return false }
            return error.code == .unwritable && "\(error)".contains("larger than the maximum document size, 1 KiB")
                && "\(error)".contains(path) && !"\(error)".contains("xxxx")
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == before)
        #expect(root.value.name == Settings().name, "nothing was applied")
        #expect(
            try RootLens(default: Settings(), store: FileStore(path: path, maximumDocumentSize: 1024), watch: false)
                .value.count == 1)
    }

    /// The kernel's protected_symlinks rule, applied by Loupe (which follows links itself): another user's
    /// link in a sticky world-writable directory is not followed, so a root writer is not led to rewrite a
    /// root-only file; its own links there are followed.
    @Test(.enabled(if: getuid() == 0, "planting a link as another user takes root (setpriv)"))
    func aLinkAnotherUserPlantedInAStickySharedDirectoryIsNotFollowed() throws {
        let shared = try TemporaryDirectory()
        let secret = try TemporaryDirectory()
        defer { shared.cleanUp(); secret.cleanUp() }
        chmod(shared.path, 0o1777)
        chmod(secret.path, 0o700)
        let target = secret.file("conf.json")
        try replaceFile(target, with: #"{"name": "root only", "count": 7}"#)
        chmod(target, 0o600)
        let planted = shared.file("settings.json")
        let link = try run(
            "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/bin/ln", "-s", target, planted])
        #expect(link.status == 0, "\(link.error)")
        #expect {
            try RootLens(default: Settings(), store: FileStore(path: planted), watch: false)
        } throws: { error in
            "\(error)".contains("owned by another user (uid 65534)") && "\(error)".contains("protected_symlinks")
        }
        #expect(throws: SettingsError.self) {
            try FileStore(path: planted).overwrite(with: JSONValue(parsing: #"{"count": 1}"#))
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == #"{"name": "root only", "count": 7}"#)
        // A link the writer made itself is followed.
        let own = shared.file("own.json")
        #expect(symlink(target, own) == 0)
        #expect(try RootLens(default: Settings(), store: FileStore(path: own), watch: false).value.count == 7)
    }

    /// Nobody who may only read a settings directory can stop its writers: the directory is not locked
    /// where others may open it, and the lock file is not theirs to open (`flock -s /etc/app sleep 15` as
    /// nobody made root's set wait 10 s and exit 75).
    @Test(.enabled(if: getuid() == 0, "holding a lock as an unprivileged user takes root (setpriv)"))
    func anUnprivilegedReaderCannotHoldTheWritersLocks() throws {
        let etc = try TemporaryDirectory()
        defer { etc.cleanUp() }
        chmod(etc.path, 0o755)
        let path = etc.file("settings.json")
        let root = try RootLens(
            default: Settings(), store: FileStore(path: path, permissions: 0o644, lockTimeout: .seconds(2)),
            watch: false)
        try root.count.set(1)
        let lockFile = etc.file(".settings.json.lock")
        var info = stat()
        #expect(stat(lockFile, &info) == 0 && info.st_mode & 0o077 == 0, "the lock file is its owner's alone")
        // As nobody: a shared lock on the directory, held while root writes.
        let holder = try ChildProcess(
            "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/usr/bin/flock", "-s", etc.path, "sleep", "30"])
        defer { holder.kill(SIGKILL); _ = holder.wait(limit: .seconds(10)) }
        let lockFileHolder = try run(
            "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/usr/bin/flock", "-n", "-s", lockFile, "true"])
        #expect(lockFileHolder.status != 0, "nobody cannot open the lock file: \(lockFileHolder.error)")
        let privateHolder = try run(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", "--", "/usr/bin/flock", "-n", "-s",
                etc.file(".loupe.lock.d"), "true",
            ])
        #expect(privateHolder.status != 0, "nor the writers' private lock directory: \(privateHolder.error)")
        // Once nobody holds the directory's lock, a write must not wait for it: one that did would time
        // out (the store's lock timeout is 2 s) and throw.
        #expect(eventually { !Self.mayLockExclusively(etc.path) }, "nobody took the directory's lock")
        try root.count.set(2)
        #expect(try decodeStored(over: Settings(), Data(contentsOf: URL(fileURLWithPath: path))).count == 2)
    }

    /// Whether this process could take an exclusive `flock` on `path` now (nobody else holds one).
    private static func mayLockExclusively(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return flock(descriptor, LOCK_EX | LOCK_NB) == 0
    }

    @Test func anEmptyPathIsAClearError() throws {
        let error = loadError("")
        #expect(error?.contains("the path is empty; name a file") == true, "\(error ?? "no answer")")
        #expect(throws: SettingsError.self) { try FileStore(path: "").overwrite(with: JSONValue(parsing: "{}")) }
    }

    @Test func aFileWhoseNameIsNearTheLimitIsWritable() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let name = String(repeating: "n", count: 245) + ".json"
        let path = directory.file(name)
        let root = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        try root.count.set(3)
        try root.count.set(4)
        let reread = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        #expect(reread.value.count == 4)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.allSatisfy { $0.utf8.count <= 255 })
        #expect(names.filter { $0.contains(".tmp-") }.isEmpty, "\(names)")
    }

    // That exclusion survives the lock file being deleted while writers run is `SharedWithEditorsTests`'
    // `aCleanupLosesNoIncrement` (the lock file and the lock directory both).

    /// Runs in a process of its own, as a user of its own: the inotify limit is per user, and using it up
    /// in the test process would take inotify from every other test running meanwhile (and one of theirs
    /// giving an instance back would let this root have one after all).
    @Test(.enabled(if: getuid() == 0, "running the reader as a user of its own takes root (setpriv)"))
    func pastTheInotifyLimitTheWatchChecksByPollingAndSaysSo() throws {
        let etc = try TemporaryDirectory()
        let bin = try TemporaryDirectory()
        defer { etc.cleanUp(); bin.cleanUp() }
        chmod(etc.path, 0o755)
        chmod(bin.path, 0o755)
        let path = etc.file("record.json")
        try replaceFile(path, with: #"{"count": 1}"#)
        chmod(path, 0o644)
        let helper = try DeploymentTests.installHelper(in: bin)
        // A user no other test runs as.
        let reader = try ChildProcess(
            "/usr/bin/setpriv",
            [
                "--reuid=64990", "--regid=64990", "--clear-groups", "--", helper, "follow-past-inotify-limit", path,
                "2",
            ])
        defer {
            reader.kill(SIGKILL)
            _ = reader.wait(limit: .seconds(10))
        }
        #expect(
            eventually(deadline: .seconds(30)) { reader.output.contains("started 1") },
            "\(reader.output) \(reader.errorOutput)")
        #expect(
            reader.errorOutput.contains("checking it every 100 ms instead"),
            "the fallback is logged: \(reader.errorOutput)")
        for count in [2, 3] {
            try replaceFile(path, with: #"{"count": \#(count)}"#)
            chmod(path, 0o644)
            #expect(
                eventually { reader.output.contains("count \(count)") },
                "the root still follows its file: \(reader.output)")
        }
        #expect(reader.wait(limit: .seconds(30)) == 0, "\(reader.output) \(reader.errorOutput)")
    }

    @Test func aLockHeldByAnotherProcessIsNamedAsSuch() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let holder = try ChildProcess(
            "/usr/bin/flock", [directory.file(".settings.json.lock"), "-c", "echo held; sleep 30"])
        defer {
            holder.kill(SIGKILL)
            _ = holder.wait(limit: .seconds(10))
        }
        #expect(eventually { holder.output == "held\n" })
        let root = try RootLens(
            default: Settings(), store: FileStore(path: path, lockTimeout: .milliseconds(300)), watch: false)
        #expect {
            try root.count.set(1)
        } throws: { error in
            let text = "\(error)"
            return (error as? SettingsError)?.code == .timeout && text.contains("another process holds the lock")
                && !text.contains("Connection timed out")
        }
    }

    @Test(.enabled(if: getuid() == 0, "changing a file's owner takes root"))
    func aWriteAsRootKeepsTheFilesOwnerGroupAndModeAndTheServiceCanStillWrite() throws {
        let service = try TemporaryDirectory()
        let bin = try TemporaryDirectory()
        defer { service.cleanUp(); bin.cleanUp() }
        chmod(bin.path, 0o755)
        // The service's directory and file, as its user made them.
        #expect(chown(service.path, 65534, 65534) == 0)
        let path = service.file("record.json")
        try Data(#"{"count": 1}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(chown(path, 65534, 65534) == 0 && chmod(path, 0o640) == 0)

        // An administrator's `sudo` write.
        let root = try RootLens(default: Record(), store: FileStore(path: path), watch: false)
        try root.update { $0 = Record.written(2) }
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_uid == 65534 && info.st_gid == 65534, "the file keeps its owner and group")
        #expect(info.st_mode & 0o7777 == 0o640, "and its mode")
        var lock = stat()
        #expect(
            stat(service.file(".record.json.lock"), &lock) == 0 && lock.st_uid == 65534,
            "the lock file is the service's")

        // The service, as its own user, still reads and writes its settings.
        let helper = try DeploymentTests.installHelper(in: bin)
        let update = try ChildProcess(
            "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", "--", helper, "increment", path, "3"])
        #expect(update.wait(limit: .seconds(30)) == 0, "\(update.output) \(update.errorOutput)")
        let record = try decodeStored(over: Record(), Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(record.count == 5)
    }
}
