import Foundation
import InMemoryLogging
import Logging
import Loupe
import LoupeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("FileStore: atomic, durable, readable")
struct FileStoreTests {
    @Test func aMissingFileStartsFromTheDefaultAndIsCreatedByTheFirstUpdate() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("nested/deeper/settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path))
        #expect(root.value == Settings())
        #expect(!FileManager.default.fileExists(atPath: path), "a default is never written by itself")
        try root.server.port.set(9090)
        let reopened = try RootLens(default: Settings(), store: FileStore(path: path))
        #expect(reopened.server.port.value == 9090)
    }

    @Test func jsonIsPrettySortedAndReadByPython() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path))
        try root.update {
            $0.server.port = 81
            $0.features["beta"] = true
        }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        #expect(text.contains("\n  \"features\" : {"))
        #expect(text.firstRange(of: "features")!.lowerBound < text.firstRange(of: "server")!.lowerBound)
        let fromPython = try python(
            "import json,sys; d=json.load(open(sys.argv[1])); print(d['server']['port'], d['features']['beta'])", [path]
        )
        #expect(fromPython == "81 True")
    }

    @Test(arguments: [PropertyListCodec(format: .xml), PropertyListCodec(format: .binary)])
    func propertyListsRoundTripAndAreReadByPython(codec: PropertyListCodec) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.plist")
        let root = try RootLens(default: Settings(), store: FileStore(path: path, format: codec))
        try root.server.host.set("example.org")
        let reopened = try RootLens(default: Settings(), store: FileStore(path: path, format: codec))
        #expect(reopened.value == root.value)
        let fromPython = try python(
            "import plistlib,sys; print(plistlib.load(open(sys.argv[1],'rb'))['server']['host'])", [path])
        #expect(fromPython == "example.org")
        let head = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(6)
        #expect((head == Data("bplist".utf8)) == (codec.format == .binary))
    }

    @Test func permissionsAreKeptOrConfigured() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let fresh = directory.file("fresh.json")
        try RootLens(default: Settings(), store: FileStore(path: fresh)).server.port.set(1)
        #expect(mode(of: fresh) == 0o600)
        let shared = directory.file("shared.json")
        try RootLens(default: Settings(), store: FileStore(path: shared, permissions: 0o644)).server.port.set(1)
        // As asked, less the umask (which the test run's shell sets).
        let mask = try processUmask()
        #expect(mode(of: shared) == 0o644 & ~mask)
        chmod(shared, 0o640)
        try RootLens(default: Settings(), store: FileStore(path: shared)).server.port.set(2)
        #expect(mode(of: shared) == 0o640, "an existing file keeps its mode")
        // Even bits the umask takes from a new file (its "other" write bit, under any usual umask).
        chmod(shared, 0o666)
        try RootLens(default: Settings(), store: FileStore(path: shared)).server.port.set(3)
        #expect(mode(of: shared) == 0o666, "an existing file keeps the bits the umask would take")
    }

    @Test func aSymlinkIsFollowedAndKept() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let target = directory.file("real/settings.json")
        let link = directory.file("link.json")
        try FileManager.default.createDirectory(atPath: directory.file("real"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real/settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: link))
        try root.server.port.set(7)
        try root.server.port.set(8)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "real/settings.json")
        let stored = try decodeStored(over: Settings(), Data(contentsOf: URL(fileURLWithPath: target)))
        #expect(stored.server.port == 8)
    }

    @Test func removeDeletesTheFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path))
        try root.server.port.set(1)
        try root.remove()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(root.value == Settings())
    }

    @Test func descriptionNamesFormatAndPath() {
        #expect(FileStore(path: "/etc/app/settings.json").description == "JSON file /etc/app/settings.json")
        #expect(
            FileStore(url: URL(fileURLWithPath: "/x/s.plist"), format: .propertyList).description
                == "property list file /x/s.plist")
        #expect(
            String(reflecting: FileStore(path: "/x/s.json", writePolicy: .coalesced(.seconds(1))))
                == "FileStore(JSON, /x/s.json, coalesced(1.0 seconds), recovery: fail)")
        #expect(MemoryStore().description == "memory store")
    }

    private func mode(of path: String) -> mode_t {
        var info = stat()
        stat(path, &info)
        return info.st_mode & 0o777
    }
}

@Suite("FileStore: bad input is an error, and nothing is overwritten")
struct FileStoreBadInputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        let message: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "wrong type", bytes: Array(#"{"server": {"host": "h", "port": "80a"}, "features": {}}"#.utf8),
            message: #"server.port: expected Int, found String "80a""#),
        Case(
            name: "corrupt", bytes: Array(#"{"server": {"host": "h", "port": 80} "features": {}}"#.utf8),
            message: "not a valid JSON document"),
        Case(
            name: "truncated", bytes: Array(#"{"server": {"host": "h", "po"#.utf8),
            message: "(it may be truncated)"),
        Case(name: "empty", bytes: [], message: "it is empty"),
        Case(name: "non-UTF-8", bytes: [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D], message: "not UTF-8 text"),
        // Missing keys take the default's value; an optional part the default lacks has no defaults to take.
        Case(
            name: "missing key", bytes: Array(#"{"protection": {"passcode": "1234"}}"#.utf8),
            message: "protection.enabled: missing (a required key)"),
    ]

    @Test(arguments: cases)
    func aBadFileIsAClearErrorAndLeftAsItWas(_ bad: Case) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        try Data(bad.bytes).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try RootLens(default: Settings(), store: FileStore(path: path))
        } throws: { error in
            let message = "\(error)"
            let named = message.contains(path) && message.contains(bad.message)
            if !named { Issue.record("unclear message: \(message)") }
            return (error as? SettingsError)?.code == .corrupt && named
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bad.bytes), "the file is left as it was")
    }

    @Test func moveAsideRecoveryStartsFromTheDefaultAndKeepsTheBadFileBeforeWritingOverIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: path))
        let logs = InMemoryLogHandler()
        let store = FileStore(path: path, recovery: .moveAside, logger: Logger(label: "test") { _ in logs })
        let root = try RootLens(default: Settings(), store: store)
        #expect(root.value == Settings())
        #expect(
            logs.entries.contains {
                $0.level == .warning && "\($0.message)".contains("does not parse: starting from the default")
            })
        func aside() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
                $0.hasPrefix("settings.json.corrupt-")
            }
        }
        #expect(try aside().isEmpty, "a load changes nothing: the file stays where it is until something is written")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{ not json")

        try root.server.host.set("written")
        let moved = try aside()
        #expect(moved.count == 1, "the first write moved the bad file aside")
        #expect(try moved.first.map { try String(contentsOfFile: directory.file($0), encoding: .utf8) } == "{ not json")
        #expect(
            try decodeStored(over: Settings(), Data(contentsOf: URL(fileURLWithPath: path))).server.host == "written")
        #expect(
            logs.entries.contains {
                $0.level == .warning && "\($0.message)".contains("moved an unreadable settings file aside")
            })
    }

    /// A bad outside edit is logged without its values (a token typed into the wrong key, a URL with
    /// credentials): the log line says what failed where; the root's `errors` carry the whole error.
    @Test func logLinesNeverCarryAValue() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let logs = InMemoryLogHandler()
        let root = try RootLens(
            default: Settings(), store: FileStore(path: path), logger: Logger(label: "test") { _ in logs })
        let errors = Recorder<String>()
        let token = AnyRootLens(root).observeErrors { errors.append("\($0)") }
        defer { token.cancel() }
        try replaceFile(
            path, with: #"{"server": {"port": "hunter2-PASSWORD", "host": "https://user:s3cret@example.org"}}"#)
        #expect(eventually { logs.entries.contains { "\($0.message)".contains("ignored an outside change") } })
        for entry in logs.entries {
            let line = "\(entry.message) \(entry.metadata)"
            #expect(!line.contains("hunter2") && !line.contains("s3cret"), "\(line)")
        }
        #expect(logs.entries.contains { "\($0.metadata)".contains("server.port") }, "the log line names where")
        #expect(
            eventually { errors.all.contains { $0.contains("hunter2-PASSWORD") } },
            "the error, for the program, says what was found")
    }

    @Test func anUnreadableDirectoryFailsTheUpdateCleanly() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let writable = directory.file("ro")
        try FileManager.default.createDirectory(atPath: writable, withIntermediateDirectories: true)
        let path = writable + "/settings.json"
        try RootLens(default: Record(), store: FileStore(path: path)).update { $0 = Record.written(1) }
        chmod(directory.path, 0o755)
        chmod(writable, 0o555)
        chmod(path, 0o644)
        defer { chmod(writable, 0o755) }
        let result = try run(testHelper, ["readonly-update", path])
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(result.output.contains("cannot write JSON file \(path)"))
        #expect(result.output.contains("Permission denied"))
    }

    @Test func aFullDiskFailsTheUpdateCleanly() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        try RootLens(default: Record(), store: FileStore(path: path)).update { $0 = Record.written(1) }
        let result = try run(testHelper, ["fsize-update", path, "8192"])
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(result.output.contains("File too large"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.contains(".tmp-")
        }
        #expect(leftovers.isEmpty)
    }
}

/// The record the test helper writes: its payload is derived from its count.
struct Record: Codable, Sendable, Equatable {
    var count = 0
    var payload: [String] = []

    static func written(_ count: Int) -> Record {
        Record(count: count, payload: (0..<64).map { "entry \($0) of update \(count)" })
    }
}
