import Foundation
@testable import Loupe
import LoupeTestSupport
import Testing

/// A part that holds a reference to state changed in place: its bytes stay the same while its encoding
/// changes, so no "same bytes" shortcut may take it for unchanged.
@Suite("Values that hold references are compared by what they encode, never by their bytes")
struct SameBytesTests {
    /// A counter shared by reference, with locked state, that encodes its count.
    final class SharedCounter: Codable, Sendable, Equatable {
        private let count = Locked(0)

        init(_ value: Int = 0) { count.withLock { $0 = value } }

        var value: Int { count.withLock { $0 } }

        func increment() { count.withLock { $0 += 1 } }

        required init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer().decode(Int.self)
            count.withLock { $0 = value }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }

        static func == (lhs: SharedCounter, rhs: SharedCounter) -> Bool { lhs === rhs }
    }

    struct Settings: Codable, Sendable, Equatable {
        var name = "a"
        var counter = SharedCounter()
        var groups: [String: Group] = ["g": Group()]
    }

    struct Group: Codable, Sendable, Equatable {
        var limit = 1
        var counter = SharedCounter()
    }

    struct Plain: Codable, Sendable, Equatable {
        enum Level: String, Codable { case info, debug }
        var level = Level.info
        var names: [String] = []
        var limits: [String: Int]? = nil
        var when = Date(timeIntervalSince1970: 0)
    }

    enum Payload: Codable, Sendable { case counter(SharedCounter), none }

    @Test func theCheckIsSoundOnlyForTypesMadeOfValues() {
        #expect(SameBytes.isSound(for: Plain.self))
        #expect(SameBytes.isSound(for: [String: [Plain]].self))
        #expect(!SameBytes.isSound(for: Settings.self))
        #expect(!SameBytes.isSound(for: Group.self))
        #expect(!SameBytes.isSound(for: [String: Group].self))
        #expect(!SameBytes.isSound(for: Payload.self))
        #expect(!SameBytes.isSound(for: (any Sendable).self))
    }

    @Test func aChangeMadeThroughAReferenceIsSavedAndReadBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        try root.name.set("b")  // an encode the next one could start from
        try root.update { $0.counter.increment() }
        try root.update { $0.groups["g"]?.counter.increment() }
        let stored = try JSONValue(parsing: String(contentsOfFile: path, encoding: .utf8))
        #expect(stored[path: "counter"] == .integer(1), "\(stored)")
        #expect(stored[path: "groups.g.counter"] == .integer(1), "\(stored)")
        let reread = try RootLens(default: Settings(), store: FileStore(path: path), watch: false)
        #expect(reread.value.counter.value == 1 && reread.value.groups["g"]?.counter.value == 1)
    }
}
