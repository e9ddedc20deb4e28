import Foundation
import Loupe
import LoupeTestSupport
import Synchronization
import Testing

/// `AnyRootLens`, the one non-generic face of a root that the commands and the configuration provider use.
@Suite("AnyRootLens: a root with its type hidden")
struct AnyRootLensTests {
    @Test func writesGoThroughTheTypedRootItsRulesAndItsStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: ValidationTests.Settings(), store: FileStore(path: path))
        let erased = root.erased
        #expect(erased.storeDescription == root.storeDescription)
        #expect(erased.secretPaths.isEmpty)
        #expect("\(erased)" == "\(root)")

        let typed = Mutex<[Int]>([])
        let documents = Mutex<[JSONValue]>([])
        let typedToken = root.upstream.timeoutSeconds.observe { value in typed.withLock { $0.append(value) } }
        let documentToken = erased.observe { document in documents.withLock { $0.append(document) } }
        defer {
            typedToken.cancel()
            documentToken.cancel()
        }

        try erased.set(atPath: "upstream.timeoutSeconds", to: .integer(30))
        #expect(root.upstream.timeoutSeconds.value == 30)
        #expect(try erased.value(atPath: "upstream.timeoutSeconds") == .integer(30))
        #expect(try erased.storedDocument() == .object(["upstream": .object(["timeoutSeconds": .integer(30)])]))
        // Delivered by the updating thread, or by one already delivering (the file's watcher, which drains
        // after it looks at the write), so waited for.
        #expect(
            eventually { typed.withLock { $0 } == [30] },
            "the typed root's observers see a write through the erased face")
        #expect(eventually { documents.withLock { $0 }.count == 1 })
        #expect(try documents.withLock { $0 } == [erased.document])

        // The type and its rules check what the erased face writes.
        let wrongType = #expect(throws: failure(.invalidValue, at: "upstream.timeoutSeconds")) {
            try erased.set(atPath: "upstream.timeoutSeconds", to: .string("soon"))
        }
        #expect(wrongType != nil)
        let broken = #expect(throws: SettingsError.self) {
            try erased.set(atPath: "upstream.timeoutSeconds", to: .integer(0))
        }
        #expect(broken?.code == .outOfRange && broken?.cause is RuleViolation)
        #expect(root.upstream.timeoutSeconds.value == 30, "a refused write changes nothing")

        // A write that expects what the part no longer holds is a conflict and writes nothing.
        #expect(throws: failure(.conflict, at: "upstream.timeoutSeconds")) {
            try erased.set(atPath: "upstream.timeoutSeconds", to: .integer(60), ifUnchangedFrom: .integer(5))
        }
        try erased.set(atPath: "upstream.timeoutSeconds", to: .integer(60), ifUnchangedFrom: .integer(30))
        #expect(root.upstream.timeoutSeconds.value == 60)

        try erased.reset(atPath: "upstream.timeoutSeconds")
        #expect(root.upstream.timeoutSeconds.value == 5)
        #expect(try erased.defaults == DocumentCoding().encode(ValidationTests.Settings()))
        #expect(try erased.provenance(of: "upstream.timeoutSeconds").source == .defaultValue)
        #expect(try erased.schema() == root.schema())
    }

    @Test(
        "a part that is absent holds null to a conditional write: an entry is added only if no one added it meanwhile")
    func anAbsentPartHoldsNullToAConditionalWrite() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("limits.json")
        let root = try RootLens(default: [String: Int](), store: FileStore(path: file), watch: false).erased
        try root.set(atPath: "api", to: .integer(10), ifUnchangedFrom: .null)
        #expect(try root.value(atPath: "api") == .integer(10))
        #expect(throws: failure(.conflict, at: "api")) {
            try root.set(atPath: "api", to: .integer(20), ifUnchangedFrom: .null)
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8).contains("10"), "the conflict wrote nothing")
        #expect(throws: failure(.conflict, at: "web")) {
            try root.set(atPath: "web", to: .integer(5), ifUnchangedFrom: .integer(1))
        }
        #expect(throws: SettingsError.self) { try root.value(atPath: "web") }
    }
}
