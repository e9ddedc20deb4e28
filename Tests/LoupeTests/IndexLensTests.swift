import Foundation
import Loupe
import LoupeTestSupport
import Testing

@Suite("Index lenses: never trap, follow the array")
struct IndexLensTests {
    struct Item: Codable, Sendable, Equatable {
        var name: String
        var weight = 1
    }

    struct Inventory: Codable, Sendable, Equatable {
        var items = [Item(name: "a"), Item(name: "b")]
        var tags = ["x", "y", "z"]
    }

    @Test func readsNilOutOfRangeAndFollowsTheArray() throws {
        let root = RootLens(Inventory())
        let second = root.items[index: 1]
        let sixth = root.items[index: 5]
        #expect(second.value?.name == "b")
        #expect(sixth.value == nil)
        try root.items.update { $0.removeAll() }
        #expect(second.value == nil)
        try root.items.set((0..<6).map { Item(name: "item \($0)") })
        #expect(sixth.value?.name == "item 5")
        #expect(root.items[index: -1].value == nil, "a negative index is out of range, not a trap")
        #expect(root.readOnly.tags[index: 2].value == "z")
    }

    @Test func anObserverOfAnIndexSurvivesACommitThatEmptiesTheArray() throws {
        let root = RootLens(Inventory())
        try root.items.set((0..<6).map { Item(name: "item \($0)") })
        let seen = Recorder<String?>()
        let token = root.items[index: 5].observe { seen.append($0?.name) }
        try root.items.set([])
        try root.items.set([Item(name: "only")])
        try root.items.set((0..<6).map { Item(name: "again \($0)") })
        #expect(seen.all == [nil, "again 5"], "the element went, then came back; shorter arrays kept it nil")
        token.cancel()
    }

    @Test func aWriteOutOfRangeThrowsNamingThePathAndChangesNothing() throws {
        let root = RootLens(Inventory())
        let outOfRange = #expect(throws: failure(.outOfRange, at: "items[4]")) {
            try root.items[index: 4].set(Item(name: "far"))
        }
        #expect(outOfRange?.description == "cannot write items[4]: the array has 2 elements, so there is no index 4")
        #expect(throws: SettingsError.self) { try root.items[index: 4].name.set("far") }
        #expect(throws: SettingsError.self, "an element is removed through the array") {
            try root.items[index: 0].set(nil)
        }
        #expect(root.value == Inventory())
        try root.items[index: 1].set(Item(name: "B", weight: 2))
        try root.items[index: 0].withDefault(Item(name: "unused")).weight.set(7)
        #expect(root.value.items == [Item(name: "a", weight: 7), Item(name: "B", weight: 2)])
        #expect(root.items[index: 3].path == "items[3]")
    }

    @Test func stringPathsIntoArraysTakeTheSafeRoute() throws {
        let root = RootLens(Inventory())
        #expect(throws: SettingsError.self) { try root.value(atPath: "items[9].name") }
        #expect(throws: SettingsError.self) { try root.set(atPath: "items[9].name", to: .string("x")) }
        #expect(root.value == Inventory())
    }

    @Test func anOutsideEditThatShrinksTheArrayReachesIndexObserversWithoutATrap() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("inventory.json")
        let root = try RootLens(default: Inventory(), store: FileStore(path: path))
        try root.items.set((0..<6).map { Item(name: "item \($0)") })
        let seen = Recorder<String?>()
        let token = root.items[index: 5].observe { seen.append($0?.name) }
        try Data(#"{"items": [], "tags": []}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(eventually { seen.all == [nil] })
        #expect(root.items[index: 5].value == nil)
        token.cancel()
    }
}
