import Foundation
@testable import Loupe
import LoupeTestSupport
import Testing

/// Writes through one entry of a dictionary (`root[\.groups["a"]]`, `root.groups["a"]`), among other writes:
/// the encoder's memo encodes the members that changed alone, and the file always holds the value.
@Suite("Writes through a dictionary's entry")
struct DictionaryEntryWriteTests {
    struct Group: Codable, Sendable, Equatable {
        var limit = 0
        var label = "label"
    }

    /// A dictionary whose encoding is its own: keys upper-cased on the way out.
    struct Shouted: Codable, Sendable, Equatable {
        var table: [String: Group] = [:]
        init() {}
        init(from decoder: any Decoder) throws {
            let read = try [String: Group](from: decoder)
            table = Dictionary(uniqueKeysWithValues: read.map { ($0.key.lowercased(), $0.value) })
        }
        func encode(to encoder: any Encoder) throws {
            try Dictionary(uniqueKeysWithValues: table.map { ($0.key.uppercased(), $0.value) }).encode(to: encoder)
        }
    }

    struct Inner: Codable, Sendable, Equatable {
        var table: [String: Group] = [:]
    }

    struct Settings: Codable, Sendable, Equatable {
        var groups: [String: Group] = [:]
        var inner = Inner()
        /// Written through its setter, which also counts the writes: a write here changes more than the entry.
        var observed: [String: Group] = [:] {
            didSet { writes += 1 }
        }
        var writes = 0
        var shouted = Shouted()
        var port = 8080

        static var filled: Settings {
            var settings = Settings()
            for index in 0..<40 {
                settings.groups["g\(index)"] = Group(limit: index)
                settings.inner.table["t\(index)"] = Group(limit: index)
                settings.observed["o\(index)"] = Group(limit: index)
                settings.shouted.table["s\(index)"] = Group(limit: index)
            }
            settings.writes = 0
            return settings
        }
    }

    @Test(
        "writes through entries, added, changed and removed, among other writes, always store the value",
        arguments: [(false, "json"), (true, "json"), (false, "toml"), (true, "toml")])
    func writesThroughEntriesStoreTheValue(named: Bool, format: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings." + format)
        let codec: any DocumentCodec = format == "toml" ? TOMLCodec() : JSONCodec()
        // The entries are the file's, not the defaults' (TOML holds no null to remove a default's entry).
        let root = try RootLens(default: Settings(), store: FileStore(path: path, format: codec), watch: false)
        try root.set(.filled)
        func entry(_ key: String) -> MutableLens<Group?> {
            named ? root.groups[key] : root[\.groups[key]]
        }
        var generator = SplitMix64(seed: named ? 7 : 11)
        for step in 0..<300 {
            let key = "g\(generator.next() % 50)"  // some absent: written, they come
            let number = Int(generator.next() % 1000)
            switch generator.next() % 8 {
            case 0: try entry(key).set(nil)
            case 1: try entry(key).set(Group(limit: number, label: "set \(step)"))
            case 2: try root[\.inner.table["t\(number % 45)"]].update { $0?.limit = number }
            case 3: try root[\.observed["o\(number % 45)"]].set(Group(limit: number))
            case 4: try root[\.shouted.table["s\(number % 45)"]].update { $0?.label = "s\(number)" }
            case 5:
                try root.update {
                    $0.groups["g\(number % 50)"]?.limit = -number; $0.port = number
                }
            default: try entry(key).update { $0?.limit = number }
            }
            let reread = try RootLens(default: Settings(), store: FileStore(path: path, format: codec), watch: false)
            #expect(reread.value == root.value, "step \(step)")
            if reread.value != root.value { break }
        }
        #expect(root.value.writes > 0, "writes through the observed dictionary ran its observer")
        #expect(
            try String(contentsOfFile: path, encoding: .utf8).contains(format == "toml" ? "[groups." : "\"groups\""))
    }

    @Test("a walk of an object beside the one it was made from visits the keys that differ, in either order")
    func walksVisitTheChangedKeys() {
        let old = Dictionary(uniqueKeysWithValues: (0..<200).map { ("k\($0)", JSONValue.object(["n": .integer($0)])) })
        var new = old
        new["k5"] = .object(["n": .integer(-5)])
        new["k7"] = nil
        new["added"] = .integer(1)
        func visits(_ a: [String: JSONValue], _ b: [String: JSONValue]) -> (keys: Set<String>, found: Int) {
            var keys: Set<String> = []
            let found = a.forEachMember(notSharedWith: b) { key, _, _ in keys.insert(key) }
            return (keys, found)
        }
        let forward = visits(new, old)
        let backward = visits(old, new)
        #expect(forward.keys == ["k5", "added"] && forward.found == 199)
        #expect(backward.keys == ["k5", "k7"] && backward.found == 199)
    }
}

/// A seeded generator, for sequences a failure can be replayed from.
private struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
