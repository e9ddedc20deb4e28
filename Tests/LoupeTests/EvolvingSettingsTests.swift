import Foundation
import InMemoryLogging
import Logging
import Loupe
import LoupeTestSupport
import Testing

/// What the conformance suite checks for every store, checked here where the root meets outside edits,
/// resets, roots that are not `Equatable`, and arrays that change length.
@Suite("Documents across program versions: outside edits, resets, arrays")
struct EvolvingSettingsTests {
    func document(_ path: String) throws -> JSONValue {
        try JSONValue(parsing: String(contentsOfFile: path, encoding: .utf8))
    }

    @Test func anOutsideEditsUnknownKeysSurviveTheNextLocalWrite() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path))
        let ports = Recorder<Int>()
        let token = root.server.port.observe { ports.append($0) }
        defer { token.cancel() }
        // A newer program writes a key this one does not know, and changes the port.
        try replaceFile(path, with: #"{"server": {"port": 81, "weight": 3}, "addedLater": true}"#)
        #expect(eventually { ports.all.last == 81 })
        try root.server.host.set("example.org")
        #expect(
            try document(path)
                == (try JSONValue(
                    parsing: #"{"server": {"host": "example.org", "port": 81, "weight": 3}, "addedLater": true}"#)))
        try root.reload()
        #expect(root.value.server == Server(host: "example.org", port: 81))
    }

    @Test func resetReturnsAPartToItsDefaultAndStopsStoringIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        try replaceFile(path, with: #"{"server": {"port": 81, "colour": "red"}, "features": {"beta": true}}"#)
        let root = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        try root.reset(atPath: "server.port")
        #expect(root.value.server.port == 8080)
        try root.reset(atPath: "features.beta")  // the default has no such entry: removed
        #expect(root.value.features.isEmpty)
        #expect(try document(path) == (try JSONValue(parsing: #"{"server": {"colour": "red"}}"#)))
        #expect(try root.storedDocument() == (try document(path)))
        #expect(throws: SettingsError.self) { try root.reset(atPath: "server.nothing") }
    }

    @Test func aRootThatIsNotEquatableStoresOnlyWhatDiffers() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("opaque.json")
        let root = try RootLens(default: Opaque(), store: FileStore(path: path), watch: false)
        try root.counter.set(3)
        #expect(try document(path) == .object(["counter": .integer(3)]))
    }

    struct Fleet: Codable, Sendable, Equatable {
        var hosts: [Host] = []
        struct Host: Codable, Sendable, Equatable { var name = "h" }
    }

    @Test func unknownKeysInArrayElementsStayWhileTheArrayKeepsItsLength() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("fleet.json")
        try replaceFile(path, with: #"{"hosts": [{"name": "a", "zone": "eu"}, {"name": "b"}]}"#)
        let logs = InMemoryLogHandler()
        let root = try RootLens(
            default: Fleet(), store: FileStore(path: path), watch: false,
            logger: Logger(label: "test") { _ in logs })
        try root.hosts.update { $0[1].name = "c" }
        #expect(
            try document(path) == (try JSONValue(parsing: #"{"hosts": [{"name": "a", "zone": "eu"}, {"name": "c"}]}"#)))
        try root.hosts.update { $0.remove(at: 0) }
        #expect(
            try document(path) == (try JSONValue(parsing: #"{"hosts": [{"name": "c"}]}"#)),
            "never put on the wrong element")
        #expect(
            logs.entries.contains {
                "\($0.message)".contains("dropped keys this program does not know, with the parts that held them")
                    && "\($0.metadata)".contains("hosts[0]")
            })
    }

    /// A program at version 2 reading a document stamped 3 says so, once, and tells the program; it keeps the
    /// newer stamp and the keys it does not know when it writes.
    @Test func aNewerDocumentIsReadWithOneWarningAndAPropertyThatSaysSo() throws {
        struct Versioned: Codable, Sendable, Equatable { var port = 8080 }
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        try replaceFile(path, with: #"{"$version": 3, "port": 9090, "movedHere": {"host": "x"}}"#)
        let logs = InMemoryLogHandler()
        let root = try RootLens(
            default: Versioned(), store: FileStore(path: path), version: 2, watch: false,
            logger: Logger(label: "test") { _ in logs })
        #expect(root.version == 2 && root.storedVersion == 3 && root.storedDocumentIsNewer)
        #expect(root.value.port == 9090)
        try root.port.set(9091)
        try root.reload()
        let warnings = logs.entries.filter { "\($0.message)".contains("from a newer version of the settings") }
        #expect(warnings.count == 1, "once per root: \(logs.entries.map(\.message))")
        #expect(
            warnings.first.map {
                "\($0.metadata)".contains(path) && "\($0.metadata)".contains("3") && "\($0.metadata)".contains("2")
            } == true)
        #expect(try document(path)[path: "$version"] == .integer(3), "the stamp is never lowered")
        #expect(try document(path)[path: "movedHere.host"] == .string("x"))
        // A document at the program's version says nothing.
        let current = directory.file("current.json")
        try replaceFile(current, with: #"{"$version": 2, "port": 1}"#)
        let quiet = InMemoryLogHandler()
        let same = try RootLens(
            default: Versioned(), store: FileStore(path: current), version: 2, watch: false,
            logger: Logger(label: "test") { _ in quiet })
        #expect(!same.storedDocumentIsNewer && quiet.entries.isEmpty)
    }

    /// The issue's cases: an unknown key stays with its element as the array is reversed, shortened or
    /// appended to, and is never put on another element.
    @Test func unknownKeysStayWithTheirElementWhereverItMoves() throws {
        struct Item: Codable, Sendable, Equatable { var name: String }
        struct Items: Codable, Sendable, Equatable { var items: [Item] = [] }
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("items.json")
        let original =
            #"{"items": [{"name": "alpha", "priority": "HIGH"}, {"name": "beta"}, {"name": "gamma", "owner": "ops"}]}"#
        func element(_ name: String) throws -> JSONValue? {
            guard case .array(let items)? = try document(path)[path: "items"] else { return nil }
            return items.first { $0[path: "name"] == .string(name) }
        }
        func fresh() throws -> RootLens<Items> {
            try replaceFile(path, with: original)
            return try RootLens(default: Items(), store: FileStore(path: path), watch: false)
        }
        // Reversed: each element keeps its own keys.
        var root = try fresh()
        try root.items.update { $0.reverse() }
        #expect(try element("alpha") == JSONValue(parsing: #"{"name": "alpha", "priority": "HIGH"}"#))
        #expect(try element("gamma") == JSONValue(parsing: #"{"name": "gamma", "owner": "ops"}"#))
        #expect(try element("beta") == JSONValue(parsing: #"{"name": "beta"}"#))
        // Reversed again, then changed in place: the keys stay.
        try root.items.update { $0.reverse() }
        try root.items.update { $0[0].name = "alpha2" }
        #expect(try element("alpha2") == JSONValue(parsing: #"{"name": "alpha2", "priority": "HIGH"}"#))
        // The first removed and a new one appended: the new one gets nothing; gamma keeps its owner.
        root = try fresh()
        try root.items.update {
            $0.removeFirst(); $0.append(Item(name: "delta"))
        }
        #expect(try element("delta") == JSONValue(parsing: #"{"name": "delta"}"#))
        #expect(try element("gamma") == JSONValue(parsing: #"{"name": "gamma", "owner": "ops"}"#))
        // The last removed: alpha, untouched, keeps its priority.
        root = try fresh()
        try root.items.update { $0.removeLast() }
        #expect(try element("alpha") == JSONValue(parsing: #"{"name": "alpha", "priority": "HIGH"}"#))
        // The first removed and the second changed: nobody can tell which changed, so nothing moves onto it.
        root = try fresh()
        try root.items.update {
            $0.removeFirst(); $0[0].name = "beta2"
        }
        #expect(try element("beta2") == JSONValue(parsing: #"{"name": "beta2"}"#))
        #expect(try element("gamma") == JSONValue(parsing: #"{"name": "gamma", "owner": "ops"}"#))
    }
}
