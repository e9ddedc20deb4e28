import Foundation
import Loupe
import LoupeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Starts a process that updates the file at `path` in a loop, and kills it (SIGKILL) `microseconds` after
/// it is past its first load.
func killChurningWriter(of path: String, after microseconds: UInt32) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: testHelper)
    process.arguments = ["churn", path]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    _ = output.fileHandleForReading.availableData  // "started": the writer is past its first load
    usleep(microseconds)
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
}

@Suite("FileStore: between processes, and watched")
struct FileStoreProcessTests {
    @Test func killedWritersNeverLeaveATornFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("record.json")
        var generator = SystemRandomNumberGenerator()
        var highest = 0
        var kills = 0
        while kills < 200 {
            try killChurningWriter(of: path, after: .random(in: 0...20_000, using: &generator))
            kills += 1

            // The file holds exactly what some committed update wrote: never torn, never empty.
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let record = try decodeStored(over: Record(), data)
            #expect(record == Record.written(record.count), "after kill \(kills)")
            #expect(record.count >= highest, "a committed update was lost after kill \(kills)")
            highest = record.count
            let temporaries = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
                $0.contains(".tmp-")
            }
            #expect(temporaries.count <= 1, "temporary files pile up: \(temporaries)")
        }
        #expect(highest > 0, "the writer never committed")
        // The next writer clears what the last killed one left.
        try RootLens(default: Record(), store: FileStore(path: path), watch: false).count.update { $0 += 1 }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.contains(".tmp-")
        }
        #expect(leftovers.isEmpty)
    }

    /// Writers killed at random while they update (and append to the history, and compact it): the history
    /// always reads, every change it holds is one of theirs (never an outside edit), and it replays to
    /// exactly what the file holds.
    @Test func killedWritersLeaveAHistoryThatReplaysToTheFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("record.json")
        var generator = SystemRandomNumberGenerator()
        // Sixty kills, and more until the writers have made ten changes: a machine's speed decides how many
        // changes a writer makes before it is killed, so the test waits for the changes, not for a time.
        func changes() throws -> Int {
            try RootLens(default: Record(), store: FileStore(path: path), watch: false).history().changes.count
        }
        var kills = 0
        repeat {
            try killChurningWriter(of: path, after: .random(in: 0...30_000, using: &generator))
            kills += 1
        } while try kills < 60 || (changes() < 10 && kills < 2_000)
        let root = try RootLens(default: Record(), store: FileStore(path: path), watch: false)
        try root.count.update { $0 += 1 }
        let history = try root.history()
        #expect(
            history.changes.count >= 10 && history.changes.allSatisfy { !$0.isOutsideEdit },
            "\(history.changes.count) changes")
        #expect(zip(history.changes, history.changes.dropFirst()).allSatisfy { $0.revision + 1 == $1.revision })
        let last = try #require(history.changes.last?.revision)
        #expect(try history.document(after: last) == root.storedDocument())
        // Each change the killed writers made added one to the count.
        let counts = try history.changes.map {
            try history.document(after: $0.revision).map { try decodeStored(over: Record(), $0).count } ?? 0
        }
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $0 + 1 == $1 }, "\(counts)")
    }

    @Test func twoProcessesIncrementingOneCounterLoseNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("record.json")
        let processes = try (0..<2).map { _ in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: testHelper)
            process.arguments = ["increment", path, "1000"]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return process
        }
        for process in processes {
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
        let record = try decodeStored(over: Record(), Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(record.count == 2_000)
        #expect(record == Record.written(2_000))
    }

    @Test func anotherProcessesUpdatesReachObserversAndLocalUpdatesBuildOnThem() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("record.json")
        let root = try RootLens(default: Record(), store: FileStore(path: path))
        let seen = Recorder<Int>()
        let token = root.count.observe { seen.append($0) }
        let result = try run(testHelper, ["increment", path, "5"])
        #expect(result.status == 0)
        #expect(eventually { root.count.value == 5 })
        #expect(eventually { seen.all.last == 5 })
        #expect(seen.all == seen.all.sorted(), "in order")
        try root.count.update { $0 += 1 }
        #expect(try decodeStored(over: Record(), Data(contentsOf: URL(fileURLWithPath: path))).count == 6)
        token.cancel()
    }

    @Test func outsideEditsByRenameAndInPlaceReachObservers() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path))
        try root.server.port.set(1)
        let ports = Recorder<Int>()
        let token = root.server.port.observe { ports.append($0) }

        // An editor's save: write a new file, rename it over the old one.
        let replacement = directory.file(".settings.json.swp")
        try Data(#"{"server": {"host": "a", "port": 2}, "features": {}}"#.utf8).write(
            to: URL(fileURLWithPath: replacement))
        #expect(rename(replacement, path) == 0)
        #expect(eventually { ports.all == [2] })

        // sed -i
        let sed = try run("/usr/bin/env", ["sed", "-i", "s/\"port\" *: *2/\"port\": 3/", path])
        #expect(sed.status == 0)
        #expect(eventually { ports.all == [2, 3] })

        // An in-place write (shell redirection truncates and writes the same inode).
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(#"{"server": {"host": "a", "port": 4}, "features": {}}"#.utf8))
        try handle.close()
        #expect(eventually { ports.all == [2, 3, 4] })
        #expect(root.server.host.value == "a")
        token.cancel()
    }

    @Test func aCorruptOutsideEditIsReportedAndIgnoredUntilTheNextGoodOne() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path))
        try root.server.port.set(1)
        let ports = Recorder<Int>()
        let errors = Recorder<String>()
        let tokens = [
            root.server.port.observe { ports.append($0) },
            root.observeErrors { errors.append("\($0)") },
        ]
        try Data(#"{"server": {"host": "a", "port": "eighty"}, "features": {}}"#.utf8).write(
            to: URL(fileURLWithPath: path))
        #expect(eventually { !errors.all.isEmpty })
        #expect(
            eventually { errors.all.contains { $0.contains(#"server.port: expected Int, found String "eighty""#) } })
        #expect(root.server.port.value == 1, "the good in-memory value stays")
        #expect(ports.all.isEmpty)

        // While the file is bad, a local update refuses to overwrite it.
        #expect(throws: SettingsError.self) { try root.server.port.set(5) }
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("eighty"))

        try Data(#"{"server": {"host": "a", "port": 9}, "features": {}}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(eventually { ports.all == [9] })
        tokens.forEach { $0.cancel() }
    }

    @Test func aDeletedFileReturnsTheLensToItsDefault() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path))
        try root.server.port.set(1)
        unlink(path)
        #expect(eventually { root.server.port.value == 8080 })
    }
}

@Suite("FileStore: coalesced writes")
struct CoalescedWriteTests {
    @Test func memoryChangesAtOnceAndTheDiskOncePerInterval() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let store = FileStore(path: path, writePolicy: .coalesced(.seconds(30)))
        let root = try RootLens(default: Settings(), store: store)
        for port in 1...100 { try root.server.port.set(port) }
        #expect(root.server.port.value == 100)
        #expect(!FileManager.default.fileExists(atPath: path), "nothing written before the interval or a flush")
        try root.flush()
        #expect(try decodeStored(over: Settings(), Data(contentsOf: URL(fileURLWithPath: path))).server.port == 100)
    }

    @Test func theIntervalWritesTheLatestValue() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(
            default: Settings(), store: FileStore(path: path, writePolicy: .coalesced(.milliseconds(20))))
        for port in 1...50 { try root.server.port.set(port) }
        #expect(
            eventually {
                (try? decodeStored(over: Settings(), Data(contentsOf: URL(fileURLWithPath: path))))?.server.port == 50
            })
    }

    @Test func outsideChangesStillReachACoalescingStoreThroughItsWatch() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(
            default: Settings(), store: FileStore(path: path, writePolicy: .coalesced(.seconds(30))))
        try root.server.host.set("local")
        try root.update { $0.features["beta"] = true }
        let ports = Recorder<Int>()
        let token = root.server.port.observe { ports.append($0) }
        let result = try run(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import json,sys; json.dump({'server': {'host': 'h', 'port': 7}, 'features': {}}, open(sys.argv[1], 'w'))",
                path,
            ])
        #expect(result.status == 0)
        #expect(eventually { ports.all == [7] })
        // Local changes not yet written are applied again over the outside one, never dropped; where both
        // changed one part, the local change wins, as it would have written last.
        #expect(root.server.host.value == "local")
        #expect(root.value.features["beta"] == true)
        try root.flush()
        let written = try decodeStored(over: Settings(), Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(written.server.port == 7 && written.server.host == "local" && written.features["beta"] == true)
        token.cancel()
    }

    @Test func releasingTheRootLensFlushes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        do {
            let root = try RootLens(
                default: Settings(), store: FileStore(path: path, writePolicy: .coalesced(.seconds(60))))
            try root.server.port.set(42)
        }
        #expect(try decodeStored(over: Settings(), Data(contentsOf: URL(fileURLWithPath: path))).server.port == 42)
    }
}

@Suite("DefaultsStore")
struct DefaultsStoreTests {
    /// A suite of its own per test, removed afterwards.
    private func withSuite(_ body: (String, URL?) throws -> Void) throws {
        let suite = "org.loupe.tests." + UUID().uuidString
        let file = try DefaultsStore(suite: suite, key: "settings").suiteFile
        defer {
            file.map { try? FileManager.default.removeItem(at: $0) }
            file.map {
                try? FileManager.default.removeItem(
                    at: $0.deletingLastPathComponent().appendingPathComponent("." + $0.lastPathComponent + ".lock"))
            }
        }
        try body(suite, file)
    }

    @Test func twoProcessesIncrementingOneSuiteLoseNothing() throws {
        try withSuite { suite, _ in
            let writers = try (0..<2).map { _ in try ChildProcess(testHelper, ["defaults-increment", suite, "150"]) }
            for writer in writers {
                #expect(writer.wait(limit: .seconds(120)) == 0, "\(writer.errorOutput)")
            }
            #expect(
                try DefaultsStore(suite: suite, key: "counter").storedDocument()
                    == JSONValue(parsing: #"{"count": 300}"#))
        }
    }

    /// Integers up to 2⁶⁴ − 1 keep their exact value in a suite (18446744073709551615 read back as -1), and
    /// data and dates that nobody changed stay data and dates through an unrelated write.
    @Test func bigIntegersDataAndDatesKeepWhatTheyAre() throws {
        try withSuite { suite, file in
            let store = try DefaultsStore(suite: suite, key: "settings")
            let root = try RootLens(default: JSONValue.object([:]), store: store, watch: false)
            try root.set(atPath: "big", to: .exactNumber("18446744073709551615"))
            #expect(
                try DefaultsStore(suite: suite, key: "settings").storedDocument()?[path: "big"]
                    == .exactNumber("18446744073709551615"))
            // Data and a date written by another program (here, Python's plistlib) into the suite.
            let path = try #require(file).path
            _ = try python(
                """
                import plistlib, sys, datetime
                p = plistlib.load(open(sys.argv[1], 'rb'))
                p['settings']['blob'] = b'hello'
                p['settings']['when'] = datetime.datetime(2020, 1, 1)
                plistlib.dump(p, open(sys.argv[1], 'wb'))
                """, [path])
            let again = try RootLens(
                default: JSONValue.object([:]), store: try DefaultsStore(suite: suite, key: "settings"), watch: false)
            try again.set(atPath: "other", to: .integer(1))
            let types = try python(
                """
                import plistlib, sys
                d = plistlib.load(open(sys.argv[1], 'rb'))['settings']
                print(type(d['blob']).__name__, type(d['when']).__name__, d['big'])
                """, [path])
            #expect(types == "bytes datetime 18446744073709551615")
        }
    }

    @Test func storesReadableKeysThatPythonReads() throws {
        try withSuite { suite, file in
            let root = try RootLens(default: Settings(), store: try DefaultsStore(suite: suite, key: "settings"))
            #expect(root.value == Settings())
            try root.update {
                $0.server.port = 7070
                $0.features["beta"] = true
            }
            let again = try RootLens(default: Settings(), store: try DefaultsStore(suite: suite, key: "settings"))
            #expect(again.value == root.value)
            let path = try #require(file).path
            let fromPython = try python(
                "import plistlib,sys; d=plistlib.load(open(sys.argv[1],'rb'))['settings']; print(d['server']['port'], d['features']['beta'])",
                [path])
            #expect(fromPython == "7070 True")
            try root.remove()
            #expect(try DefaultsStore(suite: suite, key: "settings").storedDocument() == nil)
        }
    }

    @Test func aWrongTypeIsAClearErrorAndLeftAsItWas() throws {
        try withSuite { suite, file in
            let defaults = try #require(UserDefaults(suiteName: suite))
            defaults.set(["server": ["host": "h", "port": "80a"], "features": [String: Bool]()], forKey: "settings")
            defaults.synchronize()
            #expect {
                _ = try RootLens(default: Settings(), store: try DefaultsStore(suite: suite, key: "settings"))
            } throws: { error in
                "\(error)".contains("defaults \(suite) key settings")
                    && "\(error)".contains(#"server.port: expected Int, found String "80a""#)
            }
            #expect((defaults.dictionary(forKey: "settings")?["server"] as? [String: Any])?["port"] as? String == "80a")
        }
    }

    @Test func aCorruptSuiteFileIsRefusedNotOverwritten() throws {
        try withSuite { suite, file in
            let url = try #require(file)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("<plist><dict><key>settings".utf8).write(to: url)
            let store = try DefaultsStore(suite: suite, key: "settings")
            #expect(throws: SettingsError.self) { _ = try RootLens(default: Settings(), store: store) }
            #expect(throws: SettingsError.self) { try store.overwrite(with: DocumentCoding().encode(Settings())) }
            #expect(try String(contentsOf: url, encoding: .utf8) == "<plist><dict><key>settings")
        }
    }
}
