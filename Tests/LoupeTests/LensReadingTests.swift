import Foundation
import Loupe
import LoupeTestSupport
import Testing

@Suite("Reading and deriving lenses")
struct LensReadingTests {
    @Test func rootStartsFromTheDefaultWhenTheStoreIsEmpty() throws {
        let store = RecordingStore()
        let root = try RootLens(default: Settings(), store: store)
        #expect(root.value == Settings())
        #expect(try store.storedDocument() == nil, "a default is not written until an update")
        #expect(store.saves == 0)
    }

    @Test func rootStartsFromTheStoredValue() throws {
        var stored = Settings()
        stored.server.port = 1234
        let root = try RootLens(default: Settings(), store: MemoryStore(DocumentCoding().encode(stored)))
        #expect(root.server.port.value == 1234)
    }

    @Test func derivedLensesNameOnlyTheirValueTypeAndReadLazily() throws {
        let root = RootLens(Settings())
        let server: MutableLens<Server> = root.server
        let port: MutableLens<Int> = server.port
        let same: MutableLens<Int> = root[\.server.port]
        try root.update { $0.server.port = 9 }
        #expect(port.value == 9)
        #expect(same.value == 9)
        #expect(server.value.port == 9)
    }

    @Test func snapshotsAreNeverMutatedLater() throws {
        let root = RootLens(Settings())
        let before = root.value
        try root.server.port.set(1)
        try root.features["beta"].set(true)
        #expect(before == Settings())
        #expect(root.value.server.port == 1)
    }

    @Test func readOnlyLensesReadAndObserve() throws {
        let root = RootLens(Settings())
        let port: Lens<Int> = root.server.port.readOnly
        let host: Lens<String> = root.readOnly.server.host
        try root.server.port.set(7)
        #expect(port.value == 7)
        #expect(host.value == "localhost")
    }

    @Test func optionalChainsGiveReadOnlyLensesThatReadNil() throws {
        let root = RootLens(Settings())
        let deep: Lens<Bool?> = root[\Settings.protection?.enabled]
        #expect(deep.value == nil)
        try root.protection.set(Protection(enabled: true))
        #expect(deep.value == true)
    }

    @Test func dictionaryEntriesReadNilUntilPresent() throws {
        let root = RootLens(Settings())
        let beta: MutableLens<Bool?> = root[\.features["beta"]]
        let alsoBeta: MutableLens<Bool?> = root.features["beta"]
        #expect(beta.value == nil)
        try alsoBeta.set(true)
        #expect(beta.value == true)
        try beta.set(nil)
        #expect(root.value.features.isEmpty)
    }

    @Test func pathsNameThePartAsWritten() {
        let root = RootLens(Settings())
        #expect(root.lens.path == "<root>")
        #expect(root.server.port.path == "server.port")
        #expect(root[\.server.port].path == "server.port")
        #expect(root.features["beta"].path == "features.beta", "printed as every path is: as ValuePath prints it")
        #expect(root.protection.enabled.path == "protection.enabled")
        #expect(root.protection.withDefault(Protection()).passcode.path == "protection.passcode")
    }

    @Test func keyPathsAreNamedByTheirStoredPropertiesNotTheirPrintedForm() {
        let root = RootLens(Settings())
        // `server` and `server.host` both lie at offset 0: the names come from matching key paths, not offsets.
        #expect(root[\.server].path == "server")
        #expect(root[\.server.host].path == "server.host")
        #expect(root.server[\.host].path == "server.host")
        #expect(root.readOnly[\.server.port].path == "server.port")
        #expect(root[\.self].path == "<root>")
        // A subscript or computed property walks parts no stored property names: shown as such, never as
        // a getter's address. The lens subscripts that know their key or index name it exactly.
        #expect(root[\.features["beta"]].path == "[…]")
        #expect(root.readOnly[\.server.host.count].path == "[…]", "no chain of stored properties equals it")
        #expect(root.server.readOnly[\.host.count].path == "server[…]")
        #expect(root[\.features["beta"]].readOnly[\.self].path == "[…]")
        #expect(root.features["beta"].path == "features.beta")
        // A lens derived again is the same lens: its path and its value agree with the first one's.
        for _ in 0..<3 { #expect(root.server.port.path == "server.port" && root.server.port.value == 8080) }
    }

    @Test func aLensWithManyChildrenFindsEachOneAgainWhateverTheOrder() throws {
        // More children than a lens compares one by one before hashing, derived in turns, by literal key
        // paths and by key paths made anew, writable and read-only through the same key path: each
        // derivation finds its own lens, of its own kind, with its own value.
        let root = RootLens(Settings())
        let names = (0..<40).map { "flag-\($0)" }
        for (index, name) in names.enumerated() { try root.features[name].set(index % 2 == 0) }
        for round in 0..<5 {
            for (index, name) in names.enumerated().shuffled() {
                let made = \Settings.features[name]  // a new key path object each time
                #expect(root[made].value == (index % 2 == 0))
                #expect(root.readOnly[made].value == (index % 2 == 0))
                #expect(root.features[name].path == "features.\(name)")
            }
            #expect(root.server.port.value == 8080 + round && root.readOnly.server.port.value == 8080 + round)
            #expect(root.server.host.value == "localhost" && root.server.host.path == "server.host")
            try root.server.port.set(8081 + round)
        }
    }

    @Test func descriptionsNamePathTypeAndStoreButNeverTheValue() throws {
        let root = RootLens(Settings())
        try root.protection.withDefault(Protection()).passcode.set("hunter2")
        let text = "\(root.protection.passcode) \(root.readOnly) \(String(reflecting: root))"
        #expect(text.contains("protection.passcode"))
        #expect(text.contains("memory (no store)"))
        #expect(!text.contains("hunter2"))
    }

    @Test func manyReadersRunAlongsideAWriter() throws {
        let root = RootLens(Settings())
        let port = root.server.port
        concurrently(8) { worker in
            for i in 0..<2_000 {
                if worker == 0 {
                    try! port.set(i)
                } else {
                    let value = port.value
                    precondition((0..<2_000).contains(value) || value == 8080)
                    _ = root.value.server.host
                }
            }
        }
        #expect(port.value == 1_999)
    }
}
