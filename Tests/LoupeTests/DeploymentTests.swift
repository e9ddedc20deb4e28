#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// Settings files as Linux deploys them: root-owned files read by unprivileged daemons, symbolic links
/// retargeted, Kubernetes ConfigMaps swapped, directories deleted and made again.
@Suite("FileStore as deployed: unprivileged readers, symlink swaps")
struct DeploymentTests {
    struct Counted: Codable, Sendable, Equatable {
        var count = 0
    }

    /// Writes `count` to `path` as an editor or an admin's tool does: a new file renamed over the old one,
    /// or, `inPlace`, the file truncated and written again.
    static func write(_ count: Int, to path: String, inPlace: Bool = false) throws {
        let text = #"{"count": \#(count)}"#
        if inPlace {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        } else {
            try replaceFile(path, with: text)
        }
    }

    /// Copies the test helper where an unprivileged user can run it, whatever the build directory's
    /// permissions. `cp` copies it, in a process of its own: a file this process had open for writing
    /// would leak into a child another test starts meanwhile, and running the copy would then fail with
    /// "text file busy".
    static func installHelper(in directory: TemporaryDirectory) throws -> String {
        let helper = directory.file("LoupeTestHelper")
        let copy = try ChildProcess("/bin/cp", [testHelper, helper])
        guard copy.wait(limit: .seconds(30)) == 0 else { throw POSIXError(.EIO) }
        return helper
    }

    static func symlink(_ target: String, at link: String) throws {
        guard Glibc.symlink(target, link) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Points `link` at `target` as `ln -sfn` does: a new link renamed over the old one.
    static func retarget(_ link: String, to target: String) throws {
        try? FileManager.default.removeItem(atPath: link + ".tmp")
        try symlink(target, at: link + ".tmp")
        guard rename(link + ".tmp", link) == 0 else { throw POSIXError(.EIO) }
    }

    @Test(.enabled(if: getuid() == 0, "running a reader as an unprivileged user takes root (setpriv)"))
    func anUnprivilegedReaderFollowsEveryEditOfARootOwnedFile() throws {
        let etc = try TemporaryDirectory()  // root's, 0755: others may read, not write
        let bin = try TemporaryDirectory()
        defer { etc.cleanUp(); bin.cleanUp() }
        chmod(etc.path, 0o755)
        chmod(bin.path, 0o755)
        let path = etc.file("settings.json")
        try Self.write(1, to: path)
        chmod(path, 0o644)
        let helper = try Self.installHelper(in: bin)
        let reader = try ChildProcess(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", "--", helper, "follow", path, "4",
            ])
        #expect(eventually { reader.output.contains("started 1") }, "\(reader.output) \(reader.errorOutput)")
        for (count, inPlace) in [(2, false), (3, true), (4, false), (5, false)] {
            try Self.write(count, to: path, inPlace: inPlace)
            chmod(path, 0o644)
            #expect(
                eventually { reader.output.contains("count \(count)") },
                "edit \(count): \(reader.output) \(reader.errorOutput)")
        }
        #expect(reader.wait(limit: .seconds(30)) == 0, "\(reader.output) \(reader.errorOutput)")
        #expect(reader.output.contains("reloaded 5"), "reload() needs no lock either")
        #expect(
            !reader.output.contains("error") && !reader.errorOutput.contains("Permission denied"),
            "\(reader.output) \(reader.errorOutput)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: etc.path) == ["settings.json"],
            "a reader leaves nothing in a directory it only reads")
    }

    @Test(.enabled(if: getuid() == 0, "running a reader as an unprivileged user takes root (setpriv)"))
    func anUnprivilegedLayeredDaemonFollowsRootOwnedLayersAndLocks() throws {
        let etc = try TemporaryDirectory()  // root's, 0755: others may read, not write
        let home = try TemporaryDirectory()
        let bin = try TemporaryDirectory()
        defer { etc.cleanUp(); home.cleanUp(); bin.cleanUp() }
        for directory in [etc.path, bin.path] { chmod(directory, 0o755) }
        chown(home.path, 65534, 65534)
        for folder in ["settings.d", "locks"] {
            try FileManager.default.createDirectory(atPath: etc.file(folder), withIntermediateDirectories: false)
            chmod(etc.file(folder), 0o755)
        }
        func publish(_ text: String, _ name: String) throws {
            try replaceFile(etc.file(name), with: text)
            chmod(etc.file(name), 0o644)
        }
        try publish(#"{"count": 1}"#, "settings.json")
        try publish("payload\n", "locks/admin")
        let helper = try Self.installHelper(in: bin)
        let reader = try ChildProcess(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", "--", helper, "follow-layers", etc.path,
                home.file("settings.json"), "3",
            ])
        #expect(eventually { reader.output.contains("started 1") }, "\(reader.output) \(reader.errorOutput)")
        try publish(#"{"count": 2}"#, "settings.d/10-site.json")  // a new drop-in
        #expect(eventually { reader.output.contains("count 2") }, "\(reader.output) \(reader.errorOutput)")
        try publish(#"{"count": 3}"#, "settings.d/20-later.json")  // a later one overrides it
        #expect(eventually { reader.output.contains("count 3") }, "\(reader.output) \(reader.errorOutput)")
        #expect(unlink(etc.file("settings.d/20-later.json")) == 0)  // removed: the earlier one again
        #expect(
            eventually {
                reader.output.contains("count 2\n") && reader.output.components(separatedBy: "count 2").count == 3
            },
            "\(reader.output) \(reader.errorOutput)")
        #expect(reader.wait(limit: .seconds(30)) == 0, "\(reader.output) \(reader.errorOutput)")
        #expect(reader.output.contains("locked write refused: cannot write payload"), "\(reader.output)")
        #expect(reader.output.contains("wrote \(home.file("settings.json"))"), "the user's own file takes the write")
        #expect(
            !reader.output.contains("error") && !reader.errorOutput.contains("Permission denied"),
            "\(reader.output) \(reader.errorOutput)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: etc.path).sorted() == [
                "locks", "settings.d", "settings.json",
            ],
            "a reader leaves nothing in a directory it only reads")
    }

    @Test func everyConfigMapSwapIsSeen() throws {
        // As the kubelet mounts a ConfigMap: settings.json -> ..data/settings.json, ..data -> ..TIMESTAMP,
        // and each update writes a new ..TIMESTAMP, swaps ..data to it and deletes the old one.
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        func publish(_ count: Int) throws {
            let version = directory.file("..2026_11_23_\(count)")
            try FileManager.default.createDirectory(atPath: version, withIntermediateDirectories: false)
            try Self.write(count, to: version + "/settings.json")
            let previous = try? FileManager.default.destinationOfSymbolicLink(atPath: directory.file("..data"))
            try Self.retarget(directory.file("..data"), to: "..2026_11_23_\(count)")
            if let previous { try FileManager.default.removeItem(atPath: directory.file(previous)) }
        }
        try publish(1)
        try Self.symlink("..data/settings.json", at: directory.file("settings.json"))
        let root = try RootLens(default: Counted(), store: FileStore(path: directory.file("settings.json")))
        #expect(root.count.value == 1)
        let seen = Recorder<Int>()
        let token = root.count.observe { seen.append($0) }
        defer { token.cancel() }
        for count in 2...5 {
            try publish(count)
            #expect(eventually(deadline: .seconds(5)) { seen.all.last == count }, "swap \(count): \(seen.all)")
        }
        #expect(seen.all == [2, 3, 4, 5])
    }

    @Test func aRetargetedLinkAndEditsOfEachTargetAreSeen() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let (a, b, link) = (directory.file("a.json"), directory.file("b.json"), directory.file("settings.json"))
        try Self.write(1, to: a)
        try Self.write(2, to: b)
        try Self.symlink("a.json", at: link)
        let root = try RootLens(default: Counted(), store: FileStore(path: link))
        let seen = Recorder<Int>()
        let token = root.count.observe { seen.append($0) }
        defer { token.cancel() }
        try Self.retarget(link, to: "b.json")  // ln -sfn b.json settings.json
        #expect(eventually(deadline: .seconds(5)) { seen.all.last == 2 }, "\(seen.all)")
        try Self.write(3, to: b)
        #expect(eventually(deadline: .seconds(5)) { seen.all.last == 3 }, "an edit of the new target: \(seen.all)")
        try Self.write(4, to: a)  // the old target no longer counts
        try Self.retarget(link, to: "a.json")
        #expect(eventually(deadline: .seconds(5)) { seen.all.last == 4 }, "\(seen.all)")
        try Self.write(5, to: a, inPlace: true)
        #expect(eventually(deadline: .seconds(5)) { seen.all.last == 5 }, "\(seen.all)")
        try root.reload()
        #expect(root.count.value == 5)
    }

    @Test func aDirectoryDeletedAndMadeAgainIsFollowed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let sub = directory.file("app")
        let path = sub + "/settings.json"
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: false)
        try Self.write(1, to: path)
        let root = try RootLens(default: Counted(), store: FileStore(path: path))
        let seen = Recorder<Int>()
        let token = root.count.observe { seen.append($0) }
        defer { token.cancel() }
        try FileManager.default.removeItem(atPath: sub)
        #expect(eventually(deadline: .seconds(5)) { seen.all.last == 0 }, "the file gone: the default")
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: false)
        try Self.write(2, to: path)
        #expect(eventually(deadline: .seconds(5)) { seen.all.last == 2 }, "the directory made again: \(seen.all)")
        try Self.write(3, to: path)
        #expect(eventually(deadline: .seconds(5)) { seen.all.last == 3 }, "\(seen.all)")
    }
}
