#if canImport(Glibc)
import Glibc
#endif
import Foundation
@_exported import Loupe
// `eventually(deadline:)`, the one way the tests wait.
@_exported import LoupeTesting
import Testing

/// A fresh directory under the system's temporary directory, removed by `cleanUp()`.
///
/// Its name is random and spelled with letters only: a test that checks a message naming a file in it
/// for a number (a secret that must not be quoted, a value that must be) finds the number, never a
/// run of a random name's digits.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init() throws {
        let name = String((0..<24).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
        path = NSTemporaryDirectory() + "loupe-tests-" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func file(_ name: String) -> String { path + "/" + name }

    public func cleanUp() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// What a finished process printed, and how it ended.
public struct ProcessOutput: Sendable {
    public let status: Int32
    public let output: String
    public let error: String
}

/// Runs `executable` with `arguments` and waits for it, at most `limit`; a process still running then
/// is killed and its output so far returned with status -1.
@discardableResult
public func run(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil,
    limit: Duration = .seconds(120)
) throws -> ProcessOutput {
    let child = try ChildProcess(executable, arguments, environment: environment, input: input)
    let status = child.wait(limit: limit)
    if status == nil { child.kill(SIGKILL); _ = child.wait(limit: .seconds(10)) }
    return ProcessOutput(status: status ?? -1, output: child.output, error: child.errorOutput)
}

/// A process started for a test, with a clean signal state, its output in files, and its lifetime bounded.
///
/// Foundation's `Process` starts children with the signal mask of the thread that starts them, and the
/// test runner's threads block most signals: such a child, and every daemon it starts (a D-Bus bus, a
/// keyring), would ignore SIGTERM. `ChildProcess` starts the program with no signal blocked and default
/// handlers, so SIGTERM and SIGHUP work as they do from a shell. Output goes to files, not pipes: a daemon
/// the process starts may keep a pipe open long after the process has exited, and a test must not wait
/// for that.
public final class ChildProcess: @unchecked Sendable {
    /// The process ID.
    public let pid: pid_t
    private let directory: TemporaryDirectory
    private let exitStatus = Locked<Int32?>(nil)

    /// Starts `executable` with `arguments`, the test's environment plus `environment`, and `input` as
    /// its standard input (none by default).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil
    ) throws {
        directory = try TemporaryDirectory()
        let inPath = directory.file("in")
        _ = FileManager.default.createFile(atPath: inPath, contents: Data((input ?? "").utf8))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input == nil ? "/dev/null" : inPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory.file("out"), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, directory.file("err"), O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let variables = ProcessInfo.processInfo.environment.merging(environment ?? [:]) { $1 }.map { "\($0)=\($1)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw NSError(
                domain: NSPOSIXErrorDomain, code: Int(status),
                userInfo: [NSLocalizedDescriptionKey: "cannot start \(executable)"])
        }
        self.pid = pid
    }

    deinit {
        if wait(limit: .zero) == nil {
            kill(SIGKILL)
            _ = wait(limit: .seconds(10))
        }
        directory.cleanUp()
    }

    /// Sends `signal` to the process.
    public func kill(_ signal: Int32) {
        _ = Glibc.kill(pid, signal)
    }

    /// Waits at most `limit` for the process to exit; returns its exit status (128 + the signal's number
    /// if a signal ended it), or nil if it is still running.
    public func wait(limit: Duration) -> Int32? {
        exitStatus.withLock { exitStatus in
            if let exitStatus { return exitStatus }
            let deadline = ContinuousClock.now + limit
            repeat {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid {
                    let signal = status & 0x7F
                    exitStatus = signal == 0 ? (status >> 8) & 0xFF : 128 + signal
                    return exitStatus
                }
                usleep(5_000)
            } while ContinuousClock.now < deadline
            return nil
        }
    }

    /// What the process has written to its standard output so far.
    public var output: String { (try? String(contentsOfFile: directory.file("out"), encoding: .utf8)) ?? "" }
    /// What the process has written to its standard error so far.
    public var errorOutput: String { (try? String(contentsOfFile: directory.file("err"), encoding: .utf8)) ?? "" }
}

/// The directory the test binary was built into, where the package's executables are too.
public let buildProductsDirectory: String = {
    let executable =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: executable).deletingLastPathComponent().path
}()

/// The path of the test helper executable built with the tests.
public let testHelper = buildProductsDirectory + "/LoupeTestHelper"

/// Writes `text` to `path` as an executable script, from a process of its own: a file this process had
/// open for writing would leak into a child another test starts meanwhile, and running the script would
/// then fail with "text file busy".
public func writeExecutable(_ path: String, _ text: String) throws {
    let written = try run("/bin/sh", ["-c", "cat > \"$0\" && chmod 755 \"$0\"", path], input: text)
    guard written.status == 0 else { throw POSIXError(.EIO) }
}

/// Runs a Python 3 snippet with `arguments` as `sys.argv[1:]` and returns what it printed.
public func python(_ script: String, _ arguments: [String] = []) throws -> String {
    let result = try run("/usr/bin/env", ["python3", "-c", script] + arguments)
    guard result.status == 0 else {
        Issue.record("python3 failed: \(result.error)")
        return ""
    }
    return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Collects values from callbacks on any thread.
public final class Recorder<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])
    public init() {}
    public func append(_ item: Element) { items.withLock { $0.append(item) } }
    public var all: [Element] { items.withLock { $0 } }
    public var count: Int { items.withLock { $0.count } }
}

/// Runs `body(i)` for i in 0..<count on `count` threads at once and waits for all of them.
public func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    DispatchQueue.concurrentPerform(iterations: count, execute: body)
}

/// The process's umask, as Linux reports it in `/proc/self/status` (read, not set: tests run in parallel).
public func processUmask() throws -> mode_t {
    let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
        let mask = mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8)
    else { throw CocoaError(.fileReadCorruptFile) }
    return mask
}
