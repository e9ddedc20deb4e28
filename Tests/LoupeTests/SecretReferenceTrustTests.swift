#if canImport(Glibc)
import Glibc
#endif
import Foundation
import InMemoryLogging
import Logging
import Loupe
import LoupeTestSupport
import Testing

/// The trust boundary of secret references: a reference is followed only where every user who could
/// have written it could have read what it names. Run on real files, with real owners and modes.
@Suite("Secret references: followed only as far as the file's writers could read")
struct SecretReferenceTrustTests {
    struct Settings: Codable, Sendable, Equatable {
        struct Ticker: Codable, Sendable, Equatable {
            var greeting = "hello"
        }
        var ticker = Ticker()
        var logLevel = "info"
    }

    static let nobody: uid_t = 65534

    /// A directory of root's (or the test user's), mode 0755, with a settings file in it.
    struct Site {
        let directory: TemporaryDirectory
        var file: String { directory.file("settings.json") }

        init() throws {
            directory = try TemporaryDirectory()
            #expect(chmod(directory.path, 0o755) == 0)
        }

        /// Writes the settings file with `reference` as the greeting.
        func write(reference: String, mode: mode_t = 0o644, owner: uid_t? = nil) throws {
            try replaceFile(file, with: #"{"ticker": {"greeting": {"$secret": "\#(reference)"}}}"#)
            #expect(chmod(file, mode) == 0)
            if let owner { #expect(chown(file, owner, gid_t(owner)) == 0) }
        }

        /// A file holding `text`, with `mode`.
        func secret(_ name: String, _ text: String, mode: mode_t = 0o600) throws -> String {
            let path = directory.file(name)
            try replaceFile(path, with: text)
            #expect(chmod(path, mode) == 0)
            return path
        }

        func root(logs: InMemoryLogHandler = InMemoryLogHandler()) throws -> RootLens<Settings> {
            try RootLens(default: Settings(), store: FileStore(path: file), logger: Logger(label: "test") { _ in logs })
        }
    }

    /// The message of the error a load of `site` throws; fails the test when it loads.
    func loadError(_ site: Site) -> String {
        let error = #expect(throws: SettingsError.self) { try site.root() }
        return error.map { "\($0)" } ?? "no error"
    }

    @Test(.enabled(if: getuid() == 0, "a file of another user's takes root to make (chown)"))
    func aFileAnotherUserOwnsReadsOnlyWhatThatUserMayRead() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let rootOnly = try site.secret("root-only", "s3cr3t-of-root", mode: 0o600)
        // nobody's file naming root's secret: refused, naming the reference and the file, never the content.
        try site.write(reference: "file:\(rootOnly)", owner: Self.nobody)
        var message = loadError(site)
        #expect(
            message.contains("secret reference file:\(rootOnly) in \(site.file)") && message.contains("uid 65534")
                && message.contains("may not read"), "\(message)")
        #expect(!message.contains("s3cr3t"))
        // The issue's case: /etc/shadow.
        try site.write(reference: "file:/etc/shadow", owner: Self.nobody)
        message = loadError(site)
        #expect(message.contains("file:/etc/shadow") && message.contains("may not read"), "\(message)")
        // A file nobody may read is followed.
        let shared = try site.secret("shared", "shared-greeting", mode: 0o644)
        try site.write(reference: "file:\(shared)", owner: Self.nobody)
        #expect(try site.root().value.ticker.greeting == "shared-greeting")
        // Root's own file may name root's secret.
        try site.write(reference: "file:\(rootOnly)", owner: 0)
        #expect(try site.root().value.ticker.greeting == "s3cr3t-of-root")
    }

    @Test(.enabled(if: getuid() == 0, "a file of another user's takes root to make (chown)"))
    func theProcesssOwnSecretsAreNotFollowedFromAnotherUsersFile() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        setenv("LOUPE_TRUST_TEST_TOKEN", "s3cr3t-env", 1)
        defer { unsetenv("LOUPE_TRUST_TEST_TOKEN") }
        try site.write(reference: "env:LOUPE_TRUST_TEST_TOKEN", owner: Self.nobody)
        let message = loadError(site)
        #expect(
            message.contains("env:LOUPE_TRUST_TEST_TOKEN") && message.contains("belongs to another user (uid 65534)"),
            "\(message)")
        #expect(!message.contains("s3cr3t"))
        try site.write(reference: "env:LOUPE_TRUST_TEST_TOKEN", owner: 0)
        #expect(try site.root().value.ticker.greeting == "s3cr3t-env")
    }

    @Test func aFileOthersCanChangeHasNoReferenceFollowed() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        let token = try site.secret("token", "s3cr3t-token", mode: 0o644)
        // Writable by others.
        try site.write(reference: "file:\(token)", mode: 0o666)
        var message = loadError(site)
        #expect(
            message.contains("secret reference file:\(token) in \(site.file)")
                && message.contains("it is writable by others"), "\(message)")
        #expect(!message.contains("s3cr3t"))
        // In a directory anyone may write to, without the sticky bit: anyone may replace the file.
        try site.write(reference: "file:\(token)", mode: 0o644)
        #expect(chmod(site.directory.path, 0o777) == 0)
        message = loadError(site)
        #expect(message.contains("its directory \(site.directory.path) is writable by others"), "\(message)")
        // With the sticky bit (as /tmp), only the file's owner may replace it: followed.
        #expect(chmod(site.directory.path, 0o1777) == 0)
        #expect(try site.root().value.ticker.greeting == "s3cr3t-token")
        #expect(chmod(site.directory.path, 0o755) == 0)
        #expect(try site.root().value.ticker.greeting == "s3cr3t-token")
    }

    @Test func theKernelsTreesAreNeverRead() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        for target in [
            "/proc/self/environ", "/proc/self/status", "/sys/kernel/hostname", "/dev/null", "/dev/../proc/self/environ",
        ] {
            try site.write(reference: "file:\(target)")
            let message = loadError(site)
            #expect(
                message.contains("secret reference file:\(target)")
                    && message.contains("secret references may not name"), "\(message)")
        }
        // Nor through a link that leads there.
        #expect(symlink("/proc/self/environ", site.directory.file("environ")) == 0)
        try site.write(reference: "file:environ")
        let message = loadError(site)
        #expect(message.contains("under /proc, which secret references may not name"), "\(message)")
    }

    /// A path with no link on the way is opened refusing links (`openat2`), and checked as written; a link
    /// in any directory on the way takes the open that asks the kernel where the file is.
    @Test func aLinkOnTheWayIsFollowedAndChecked() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        // Plain, absolute, no link: read.
        let secrets = site.directory.file("secrets")
        #expect(mkdir(secrets, 0o755) == 0)
        try replaceFile(secrets + "/token", with: "plain-path")
        try site.write(reference: "file:\(secrets)/token")
        #expect(try site.root().value.ticker.greeting == "plain-path")
        // A directory on the way that is a link, to an ordinary directory: followed, and read.
        #expect(symlink(secrets, site.directory.file("linked")) == 0)
        try site.write(reference: "file:\(site.directory.file("linked"))/token")
        #expect(try site.root().value.ticker.greeting == "plain-path")
        // A directory on the way that is a link into /proc: refused, though the path as written is not there.
        #expect(symlink("/proc/self", site.directory.file("kernel")) == 0)
        try site.write(reference: "file:\(site.directory.file("kernel"))/environ")
        var message = loadError(site)
        #expect(message.contains("under /proc, which secret references may not name"), "\(message)")
        // The last component a link into /proc, named by an absolute path.
        #expect(symlink("/proc/self/status", site.directory.file("status")) == 0)
        try site.write(reference: "file:\(site.directory.file("status"))")
        message = loadError(site)
        #expect(message.contains("under /proc, which secret references may not name"), "\(message)")
    }

    @Test func aRelativePathIsRelativeToTheSettingsFile() throws {
        let site = try Site()
        defer { site.directory.cleanUp() }
        // A name the working directory does not hold: it is read beside the settings file.
        let name = "token-\(UUID().uuidString).txt"
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/" + name))
        _ = try site.secret(name, "beside-the-settings", mode: 0o600)
        try site.write(reference: "file:\(name)")
        #expect(try site.root().value.ticker.greeting == "beside-the-settings")
        try site.write(reference: "file:./\(name)")
        #expect(try site.root().value.ticker.greeting == "beside-the-settings")
    }

    @Test func aReferenceOnlyAProgramsOwnStoreHoldsMayNotBeRelative() throws {
        let store = MemoryStore(
            .object(["ticker": .object(["greeting": .object(["$secret": .string("file:token.txt")])])]))
        let error = #expect(throws: SettingsError.self) { try RootLens(default: Settings(), store: store) }
        #expect("\(error.map { "\($0)" } ?? "")".contains("a relative path is relative to the settings file"))
    }
}
