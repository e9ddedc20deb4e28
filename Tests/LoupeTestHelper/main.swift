// A second process for Loupe's tests. Each command prints one line the test reads, and exits 0 when the
// behaviour it checks held.
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Loupe
#if Etcd
import LoupeEtcd
#endif
import LoupeKeyring
import LoupeYAML

/// A record whose payload is derived from its count, so a torn or mixed file is detectable.
struct Record: Codable, Sendable, Equatable {
    var count = 0
    var payload: [String] = []

    static func written(_ count: Int) -> Record {
        Record(count: count, payload: (0..<64).map { "entry \($0) of update \(count)" })
    }
}

func root(_ path: String) throws -> RootLens<Record> {
    try RootLens(default: Record(), store: FileStore(path: path), watch: false)
}

/// Tries an update that must fail, and checks that memory and file are as before.
func expectCleanFailure(_ path: String, _ update: (RootLens<Record>) throws -> Void) throws -> Never {
    let lens = try root(path)
    let before = lens.value
    let fileBefore = try? Data(contentsOf: URL(fileURLWithPath: path))
    do {
        try update(lens)
        print("unexpectedly succeeded")
        exit(1)
    } catch {
        let fileAfter = try? Data(contentsOf: URL(fileURLWithPath: path))
        let clean = lens.value == before && fileAfter == fileBefore
        print("\(clean ? "clean" : "NOT CLEAN"): \(error)")
        exit(clean ? 0 : 1)
    }
}

/// Prints `started N`, then each value of `count` it sees and each outside change's error; returns after
/// `changes` changes, or exits with status 1 when none comes for 20 seconds.
func follow(_ lens: RootLens<Record>, changes: Int) {
    let seen = DispatchSemaphore(value: 0)
    let errors = lens.observeErrors { say("error: \($0)") }
    let token = lens.count.observe { value in
        say("count \(value)")
        seen.signal()
    }
    defer {
        token.cancel()
        errors.cancel()
    }
    say("started \(lens.value.count)")
    for _ in 0..<changes {
        guard seen.wait(timeout: .now() + 20) == .success else {
            say("timed out")
            exit(1)
        }
    }
}

/// Prints `line` at once (stdout is a file, which `print` would buffer).
@Sendable func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "increment":
    // increment PATH COUNT: COUNT read-modify-write increments through a fresh root lens.
    let lens = try root(arguments[2])
    for _ in 0..<Int(arguments[3])! {
        try lens.update { $0 = Record.written($0.count + 1) }
    }
    print("done \(lens.value.count)")

case "defaults-increment":
    // defaults-increment SUITE COUNT: COUNT read-modify-write increments of one suite's key.
    struct Counter: Codable, Sendable { var count = 0 }
    let lens = try RootLens(default: Counter(), store: DefaultsStore(suite: arguments[2], key: "counter"), watch: false)
    for _ in 0..<Int(arguments[3])! {
        try lens.update { $0.count += 1 }
    }
    print("done \(lens.value.count)")

#if Etcd
case "etcd-increment":
    // etcd-increment ENDPOINTS KEY COUNT: COUNT increments of `count` through a root lens over etcd
    // (ENDPOINTS comma-separated), racing whoever else writes the key.
    struct Counter: Codable, Sendable { var count = 0 }
    let store = try EtcdStore(endpoints: arguments[2].split(separator: ",").map(String.init), key: arguments[3])
    let lens = try RootLens(default: Counter(), store: store, watch: false)
    for _ in 0..<Int(arguments[4])! {
        try lens.update { $0.count += 1 }
    }
    print("done \(lens.value.count)")

#endif
case "tick":
    // tick PATH: as a daemon whose settings a program updates, increments `counter` in the file at PATH
    // (its format by its extension) every 2 ms, forever, until killed or until the test process that
    // started it is gone. Keys it does not know (what a person adds) are carried through.
    struct Ticker: Codable, Sendable { var counter = 0 }
    let path = arguments[2]
    let codec: any DocumentCodec =
        if path.hasSuffix(".toml") { TOMLCodec() } else if path.hasSuffix(".yaml") { YAMLCodec() } else { JSONCodec() }
    let parent = getppid()
    let lens = try RootLens(default: Ticker(), store: FileStore(path: path, format: codec, history: .off), watch: false)
    say("started")
    while getppid() == parent {
        try lens.update { $0.counter += 1 }
        usleep(2_000)
    }
    exit(1)

case "churn":
    // churn PATH: updates forever, until killed, or until the test process that started it is gone (a
    // crashed test run must not leave it writing).
    let parent = getppid()
    let lens = try root(arguments[2])
    FileHandle.standardOutput.write(Data("started\n".utf8))
    while getppid() == parent {
        try lens.update { $0 = Record.written($0.count + 1) }
    }
    exit(1)

case "readonly-update":
    // readonly-update PATH: as an unprivileged user, an update in a directory it cannot write fails cleanly.
    if geteuid() == 0 {
        guard setgid(65534) == 0, setuid(65534) == 0 else {
            print("cannot drop privileges")
            exit(2)
        }
    }
    try expectCleanFailure(arguments[2]) { try $0.update { $0 = Record.written($0.count + 1) } }

case "follow":
    // follow PATH COUNT: as whoever runs it (an unprivileged user, through setpriv), watches the file and
    // prints each value of `count` it sees, then reloads and prints the value again; exits after COUNT
    // changes, or with status 1 when none comes for 20 seconds.
    let lens = try RootLens(default: Record(), store: FileStore(path: arguments[2]))
    follow(lens, changes: Int(arguments[3])!)
    try lens.reload()
    say("reloaded \(lens.value.count)")

case "follow-past-inotify-limit":
    // follow-past-inotify-limit PATH COUNT: as a user of its own (through setpriv, so no other process's
    // watches are touched), uses up that user's inotify instances, opens a root over PATH (its warnings go
    // to stderr), gives the instances back, and follows COUNT changes as `follow` does.
    var held: [Int32] = []
    while held.count < 65_536 {
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        if fd < 0 { break }
        held.append(fd)
    }
    guard errno == EMFILE else {
        say("could not reach the inotify limit: \(String(cString: strerror(errno))) after \(held.count)")
        exit(2)
    }
    let logger = Logger(label: "loupe") { StreamLogHandler.standardError(label: $0) }
    let lens = try RootLens(default: Record(), store: FileStore(path: arguments[2], logger: logger))
    held.forEach { close($0) }
    follow(lens, changes: Int(arguments[3])!)

case "follow-layers":
    // follow-layers ETC USERFILE COUNT: as whoever runs it, a layered root over ETC/settings.json and the
    // drop-ins in ETC/settings.d, locked by ETC/locks, under USERFILE; prints each value of `count` it
    // sees; after COUNT changes, tries a write to the locked `payload` and one to `count`, then exits.
    let store = LayeredStore(
        layers: [.file(arguments[2] + "/settings.json"), .directory(arguments[2] + "/settings.d")],
        top: FileStore(path: arguments[3]), locks: [arguments[2] + "/locks"])
    let lens = try RootLens(default: Record(), store: store)
    follow(lens, changes: Int(arguments[4])!)
    do {
        try lens.payload.set(["mine"])
        say("locked write succeeded")
    } catch let error as SettingsError where error.code == .locked {
        say("locked write refused: \(error)")
    }
    try lens.count.set(1000)
    say("wrote \(try lens.provenance(ofPath: "count").source)")

case "fsize-update":
    // fsize-update PATH BYTES: with files limited to BYTES, a large update fails cleanly (as on a full disk).
    signal(SIGXFSZ, SIG_IGN)
    var limit = rlimit(rlim_cur: rlim_t(arguments[3])!, rlim_max: rlim_t(arguments[3])!)
    setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
    try expectCleanFailure(arguments[2]) { lens in
        try lens.update { $0.payload = Array(repeating: String(repeating: "x", count: 1_000), count: 100) }
    }

case "keyring-save", "keyring-load":
    // keyring-save|keyring-load SERVICE ACCOUNT TIMEOUT_SECONDS: one call to the keyring; prints what
    // happened. The secret it saves is "hunter2-helper-secret"; it must never appear in an error.
    struct Credentials: Codable, Sendable { var user: String; var token: String }
    let store = KeyringStore(
        service: arguments[2], account: arguments[3], timeout: .seconds(Int(arguments[4])!))
    do {
        if arguments[1] == "keyring-save" {
            let token = try store.load().token
            _ = try store.save(
                .object(["user": .string("helper"), "token": .string("hunter2-helper-secret")]), replacing: token)
            print("saved")
        } else {
            let credentials = try store.load().document.map { try DocumentCoding().decode(Credentials.self, from: $0) }
            print(credentials.map { "user \($0.user)" } ?? "nothing")
        }
    } catch {
        print("error: \(error)")
        exit(1)
    }

default:
    print("usage: LoupeTestHelper increment|churn|readonly-update|follow|fsize-update|keyring-save|keyring-load ...")
    exit(2)
}
