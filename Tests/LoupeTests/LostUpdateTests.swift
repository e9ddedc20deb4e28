import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// The sequences in which Loupe 2 lost another writer's update, each with real files and real processes.
@Suite("No update is lost: reads change nothing, and links are locked where they point")
struct LostUpdateTests {
    /// Another process writes; this root reads the stored document (as `loupe show --stored` does); its
    /// next update must still apply to the other process's change, and never write over it.
    @Test func readingTheStoredDocumentBetweenAnotherWritersChangeAndAnUpdateLosesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("record.json")
        let root = try RootLens(default: Record(), store: FileStore(path: path), watch: false)
        try root.payload.set(["before"])

        let other = try run(testHelper, ["increment", path, "1"])
        #expect(other.status == 0, "\(other.error)")
        #expect(try root.storedDocument()?[path: "count"] == .integer(1), "the read shows the other process's write")
        try root.payload.set(["mine"])

        let stored = try decodeStored(over: Record(), Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(stored.count == 1, "the other process's increment is still in the file")
        #expect(stored.payload == ["mine"])
        #expect(root.value.count == 1, "the root took the other process's change")
    }

    /// Two writers through one link in a third directory, the second started after the link was
    /// retargeted (`ln -sfn`: a new link renamed over the old). Every increment lands in one of the two
    /// files, and none is lost: each writer locks the file the link points to when it locks.
    @Test func twoWritersThroughALinkRetargetedByRenameLoseNoIncrement() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        for name in ["a", "b", "link"] {
            try FileManager.default.createDirectory(atPath: directory.file(name), withIntermediateDirectories: true)
        }
        let first = directory.file("a/record.json")
        let second = directory.file("b/record.json")
        let link = directory.file("link/record.json")
        try Data("{}".utf8).write(to: URL(fileURLWithPath: first))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: second))
        #expect(symlink(first, link) == 0)

        let increments = 600
        let early = try ChildProcess(testHelper, ["increment", link, "\(increments)"])
        #expect(
            eventually(deadline: .seconds(60)) { count(first) >= 50 }, "the first writer is writing through the link")
        // Retargeted as `ln -sfn` does it: a new link renamed over the old one.
        #expect(symlink(second, link + ".new") == 0)
        #expect(rename(link + ".new", link) == 0)
        let late = try ChildProcess(testHelper, ["increment", link, "\(increments)"])

        #expect(early.wait(limit: .seconds(300)) == 0, "\(early.errorOutput)")
        #expect(late.wait(limit: .seconds(300)) == 0, "\(late.errorOutput)")
        let landed = count(first) + count(second)
        #expect(
            landed == 2 * increments,
            "every increment landed in one of the files (a: \(count(first)), b: \(count(second)))")
        #expect(count(second) > increments, "both writers wrote through the retargeted link")
    }

    private func count(_ path: String) -> Int {
        (try? decodeStored(over: Record(), Data(contentsOf: URL(fileURLWithPath: path))).count) ?? -1
    }
}
