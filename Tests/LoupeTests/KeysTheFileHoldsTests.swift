import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// A key the file holds stays in the file: an update writes the paths it changed, every other key the
/// stored document holds stays, even at the default's value (an administrator's explicit pin), and only a
/// reset takes a key out. A key nobody wrote is still never written for having a default.
@Suite("Keys the file holds stay in the file")
struct KeysTheFileHoldsTests {
    struct Settings: Codable, Sendable, Equatable {
        struct Server: Codable, Sendable, Equatable {
            var host = "localhost"
            var port = 8080
        }
        var greeting = "hello"
        var logLevel = "info"
        var server = Server()
        var features: [String: Bool] = ["beta": false]
    }

    /// A root over a JSON file that holds `text`.
    struct Site {
        let directory: TemporaryDirectory
        var path: String { directory.file("settings.json") }

        init(_ text: String) throws {
            directory = try TemporaryDirectory()
            try replaceFile(path, with: text)
        }

        func root() throws -> RootLens<Settings> {
            try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        }

        var stored: JSONValue {
            get throws { try JSONValue(parsing: String(contentsOfFile: path, encoding: .utf8)) }
        }
    }

    @Test func anAdministratorsExplicitDefaultsStayWhenAnotherKeyIsWritten() throws {
        let site = try Site(#"{"logLevel": "info", "server": {"port": 8080}, "features": {"beta": false}}"#)
        defer { site.directory.cleanUp() }
        let root = try site.root()
        try root.greeting.set("bonjour")
        #expect(
            try site.stored
                == JSONValue(
                    parsing:
                        #"{"logLevel": "info", "server": {"port": 8080}, "features": {"beta": false}, "greeting": "bonjour"}"#
                ))
    }

    @Test func aKeyNobodyWroteIsNotWrittenForEqualingTheDefault() throws {
        let site = try Site(#"{"greeting": "hi"}"#)
        defer { site.directory.cleanUp() }
        let root = try site.root()
        try root.server.port.set(8080)  // the default: nothing changed, nothing written
        try root.update {
            $0.server.host = "example.org"; $0.server.host = "localhost"
        }
        #expect(try site.stored == JSONValue(parsing: #"{"greeting": "hi"}"#))
        try root.logLevel.set("debug")
        #expect(try site.stored == JSONValue(parsing: #"{"greeting": "hi", "logLevel": "debug"}"#))
    }

    @Test func aKeyTheFileHoldsKeepsItsPlaceWhenSetBackToTheDefault() throws {
        let site = try Site(#"{"logLevel": "debug"}"#)
        defer { site.directory.cleanUp() }
        let root = try site.root()
        try root.logLevel.set("info")
        #expect(
            try site.stored == JSONValue(parsing: #"{"logLevel": "info"}"#),
            "the file says what the value is, as written")
        #expect(try site.root().value.logLevel == "info")
    }

    @Test func aResetTakesAKeyOutOfTheFileEvenWhenTheValueDoesNotChange() throws {
        let site = try Site(#"{"logLevel": "info", "server": {"host": "localhost", "port": 9090}, "greeting": "hi"}"#)
        defer { site.directory.cleanUp() }
        let root = try site.root()
        let seen = Locked(0)
        let token = root.observe { _ in seen.withLock { $0 += 1 } }
        defer { token.cancel() }

        try root.reset(atPath: "logLevel")
        #expect(
            try site.stored == JSONValue(parsing: #"{"server": {"host": "localhost", "port": 9090}, "greeting": "hi"}"#)
        )
        #expect(seen.withLock { $0 } == 0, "the value did not change: nothing to observe")

        // A reset of a table releases every key under it.
        try root.reset(atPath: "server")
        #expect(try site.stored == JSONValue(parsing: #"{"greeting": "hi"}"#))
        #expect(root.value.server == Settings.Server())
        #expect(seen.withLock { $0 } == 1)

        // A reset of what the file does not hold writes nothing.
        let before = try String(contentsOfFile: site.path, encoding: .utf8)
        try root.reset(atPath: "features")
        #expect(try String(contentsOfFile: site.path, encoding: .utf8) == before)

        // The whole value.
        try root.reset(atPath: "")
        #expect(try site.stored == JSONValue.object([:]))
    }

    @Test func aRemovedEntryLeavesTheFile() throws {
        let site = try Site(#"{"features": {"beta": false, "gamma": true}}"#)
        defer { site.directory.cleanUp() }
        let root = try site.root()
        try root.remove(atPath: "features.gamma")
        #expect(try site.stored == JSONValue(parsing: #"{"features": {"beta": false}}"#))
    }

    @Test func anOutsideEditsPinsStayThroughThisProcesssWrites() throws {
        let site = try Site(#"{"greeting": "hi"}"#)
        defer { site.directory.cleanUp() }
        let root = try site.root()
        // Another program pins the log level at the default, after this root read the file.
        try replaceFile(site.path, with: #"{"greeting": "hi", "logLevel": "info"}"#)
        try root.server.port.set(9090)
        #expect(
            try site.stored == JSONValue(parsing: #"{"greeting": "hi", "logLevel": "info", "server": {"port": 9090}}"#))
    }

    @Test func overLayersTheUsersPinAtTheAdministratorsValueStaysInTheUsersFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let admin = directory.file("admin.json")
        let user = directory.file("user.json")
        try replaceFile(admin, with: #"{"logLevel": "warning"}"#)
        try replaceFile(user, with: #"{"logLevel": "warning"}"#)
        let root = try RootLens(
            default: Settings(), store: LayeredStore(layers: [.file(admin)], top: FileStore(path: user)), watch: false)
        try root.greeting.set("mine")
        #expect(
            try JSONValue(parsing: String(contentsOfFile: user, encoding: .utf8))
                == JSONValue(parsing: #"{"logLevel": "warning", "greeting": "mine"}"#))
        // When the administrator changes theirs, the user's pin still decides.
        try replaceFile(admin, with: #"{"logLevel": "error"}"#)
        try root.reload()
        #expect(root.value.logLevel == "warning")
        try root.reset(atPath: "logLevel")
        #expect(root.value.logLevel == "error")
        #expect(
            try JSONValue(parsing: String(contentsOfFile: user, encoding: .utf8))
                == JSONValue(parsing: #"{"greeting": "mine"}"#))
    }
}
