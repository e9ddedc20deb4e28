import Foundation
public import Loupe
import Testing

/// Checks that a store keeps Loupe's store contract, in the store's own test suite: every store Loupe
/// ships passes it, and a third-party store can run it the same way (as swift-configuration's
/// `ProviderCompatTest`).
///
/// ```swift
/// import LoupeTesting
/// import Testing
///
/// @Test func myStoreKeepsTheContract() async throws {
///     let place = temporaryPlace()
///     try await StoreConformanceTest { try MyStore(place: place) }.run()
/// }
/// ```
///
/// `makeStore` returns a new store instance over the *same* place on every call, so that the suite can
/// check that a second instance sees what the first saved, as two processes would. The suite starts by
/// removing what the place holds. What it checks depends on what the store conforms to:
///
/// - every store: an empty place loads `nil`; a root over it starts from its default;
/// - `WritableDocumentStore`: documents round-trip (objects, arrays, strings, integers, fractions,
///   booleans, nesting); a save replaces the whole document; `remove()` empties the place and removing
///   nothing is no error; a second instance loads what the first saved; a `RootLens` over the store
///   commits, persists, reloads and removes;
/// - `DeferredWriteStore`: what is saved is durable after `flush()`;
/// - `ChangeDetectingStore`: a second instance reports the first one's save once, then `.unchanged`;
/// - `WatchingStore`: a watching instance is told of another instance's save, and a root over it
///   commits that change;
/// - `LockingStore`: `withExclusiveAccess` runs its body, returns its result and passes its error on;
/// - `SecretStore`: a secret saved never appears in the store's `description`, nor in the error of a
///   write the type refuses;
/// - documents across program versions (writable stores): a partial document takes the defaults for what
///   it lacks, elements take their type's defaults, keys the type does not know survive every write at
///   their place, a write stores only what differs from the defaults (or the whole value when asked), a
///   default changed later reaches a document that never set it, a removed entry stays removed, a
///   migration runs once and is written stamped, a failing migration writes nothing, and a newer stamp is
///   never lowered.
public struct StoreConformanceTest: Sendable {
    /// What the suite may assume of the store.
    public struct Configuration: Sendable {
        /// How long a watching store may take to report a change made by another instance.
        public var watchTimeout: Duration
        /// Whether fractions keep their exact value (`0.25` stays `0.25`); false for a format that cannot.
        public var keepsFractions: Bool

        /// The defaults: 5 seconds for a watch to report; fractions kept.
        public init(watchTimeout: Duration = .seconds(5), keepsFractions: Bool = true) {
            self.watchTimeout = watchTimeout
            self.keepsFractions = keepsFractions
        }
    }

    private let makeStore: @Sendable () throws -> any DocumentStore
    private let configuration: Configuration

    /// A suite over the stores `makeStore` returns, all over the same place.
    public init(configuration: Configuration = Configuration(), makeStore: @escaping @Sendable () throws -> any DocumentStore) {
        self.makeStore = makeStore
        self.configuration = configuration
    }

    /// Runs every check that applies to the store.
    public func run() async throws {
        let store = try makeStore()
        if let writable = store as? any WritableDocumentStore {
            try writable.remove()
        }
        #expect(try store.load() == nil, "an empty place loads nil")
        #expect(try RootLens(default: Sample(), store: store, watch: false).value == Sample(), "a root over an empty place starts from its default")

        guard let writable = store as? any WritableDocumentStore else { return }
        try checkRoundTrips(writable)
        try checkRemoval(writable)
        try checkRoot()
        if store is any LockingStore { try checkExclusiveAccess() }
        if store is any ChangeDetectingStore { try checkChangeDetection() }
        if store is any WatchingStore { try await checkWatch() }
        if store is any SecretStore { try checkSecrets() }
        try checkEvolution(writable)
        try checkMigrations(writable)
        try writable.remove()
    }

    // MARK: Checks

    private func checkRoundTrips(_ store: any WritableDocumentStore) throws {
        for document in sampleDocuments() {
            try store.save(document)
            try flush(store)
            #expect(try store.load() == document, "a saved document loads as it was saved")
            #expect(try makeStore().load() == document, "another instance over the same place loads what was saved")
        }
        // A save replaces the whole document: keys of the previous one do not survive.
        try store.save(.object(["a": .integer(1), "b": .integer(2)]))
        try store.save(.object(["a": .integer(3)]))
        try flush(store)
        #expect(try makeStore().load() == .object(["a": .integer(3)]), "a save replaces the whole document")
    }

    private func checkRemoval(_ store: any WritableDocumentStore) throws {
        try store.save(.object(["a": .integer(1)]))
        try flush(store)
        try store.remove()
        #expect(try store.load() == nil, "after remove() the store loads nil")
        #expect(try makeStore().load() == nil, "after remove() another instance loads nil")
        try store.remove()  // removing nothing is not an error
    }

    private func checkRoot() throws {
        do {
            let root = try RootLens(default: Sample(), store: makeStore(), watch: false)
            try root.name.set("changed")
            try root.items.update { $0.append(4) }
            try root.flush()
            #expect(root.value.name == "changed")
        }
        let reopened = try RootLens(default: Sample(), store: makeStore(), watch: false)
        #expect(reopened.value.name == "changed", "a root over another instance loads what a root committed")
        #expect(reopened.value.items == [1, 2, 3, 4])
        try reopened.remove()
        #expect(reopened.value == Sample(), "remove() returns the root to its default")
        #expect(try makeStore().load() == nil, "remove() empties the place")
    }

    private func checkExclusiveAccess() throws {
        guard let store = try makeStore() as? any LockingStore else { return }
        #expect(try store.withExclusiveAccess { 42 } == 42, "withExclusiveAccess returns its body's result")
        struct Marker: Error {}
        #expect(throws: Marker.self, "withExclusiveAccess passes its body's error on") {
            try store.withExclusiveAccess { throw Marker() }
        }
    }

    private func checkChangeDetection() throws {
        guard let first = try makeStore() as? any WritableDocumentStore,
            let second = try makeStore() as? any ChangeDetectingStore
        else { return }
        _ = try second.load()
        // A store that watches may look only when its watch says so (a coalescing file store): watch, as
        // a root would.
        let watch = try (second as? any WatchingStore)?.watch {}
        defer { watch?.cancel() }
        let document = JSONValue.object(["changed": .string("by another instance")])
        try first.save(document)
        try flush(first)
        #expect(try eventually(timeout: configuration.watchTimeout) { try second.loadIfChanged() == .changed(document) },
                "another instance's save is reported as a change")
        #expect(try second.loadIfChanged() == .unchanged, "a change is reported once")
    }

    private func checkWatch() async throws {
        guard let writer = try makeStore() as? any WritableDocumentStore else { return }
        try writer.remove()
        let root = try RootLens(default: Sample(), store: makeStore(), watch: true)
        let seen = Seen()
        let token = root.name.observe { seen.record($0) }
        defer { token.cancel() }
        let committer = try RootLens(default: Sample(), store: writer, watch: false)
        try await committer.name.set("from another root")
        try await committer.flush()
        let deadline = ContinuousClock.now + configuration.watchTimeout
        while !seen.contains("from another root"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(seen.contains("from another root"), "a watching root commits another instance's change and notifies")
        #expect(root.value.name == "from another root")
    }

    private func checkSecrets() throws {
        let secret = "s3cr3t-\(UInt32.random(in: 0...UInt32.max))"
        let root = try RootLens(default: Sample(), store: makeStore(), watch: false)
        try root.name.set(secret)
        try root.flush()
        #expect(root.holdsSecrets, "a root over a secret store says it holds secrets")
        #expect(!root.storeDescription.contains(secret) && !root.description.contains(secret))
        do {
            try root.lens.set(atPath: "items", to: .string(secret))
            Issue.record("a write the type refuses must throw")
        } catch {
            #expect(!"\(error)".contains(secret), "an error about a secret store never quotes its value")
        }
    }

    private func checkEvolution(_ store: any WritableDocumentStore) throws {
        // A partial document, as a person writes it: the rest is the default's.
        try save(.object(["count": .integer(7)]), in: store)
        var root = try RootLens(default: Evolving(), store: makeStore(), watch: false)
        #expect(root.value == Evolving(count: 7), "a key the document lacks takes the default's value")
        #expect(try makeStore().load() == .object(["count": .integer(7)]), "loading never writes")
        try save(.object([:]), in: store)
        #expect(try RootLens(default: Evolving(), store: makeStore(), watch: false).value == Evolving(), "{} is the default")

        // An element that lacks a key takes its type's default; one in the defaults merges with it.
        try save(.object(["labels": .object(["new": .object(["text": .string("n")])])]), in: store)
        root = try RootLens(default: Evolving(), store: makeStore(), watch: false)
        #expect(root.value.labels == ["keep": Evolving.Label(), "new": Evolving.Label(text: "n", weight: 1)],
                "an element lacking a key takes its type's default")

        // Keys the type does not know survive a write, at their place, and only differences are written.
        let future: JSONValue = .object([
            "addedLater": .string("by a newer version"),
            "labels": .object(["keep": .object(["colour": .string("red")])]),
            "tags": .array([.string("a")]),
        ])
        try save(future, in: store)
        root = try RootLens(default: Evolving(), store: makeStore(), watch: false)
        try root.name.set("changed")
        try root.flush()
        #expect(try makeStore().load() == .object([
            "name": .string("changed"),
            "addedLater": .string("by a newer version"),
            "labels": .object(["keep": .object(["colour": .string("red")])]),
        ]), "a write keeps unknown keys at their place and stores only what differs from the defaults")

        // A default changed in a later version reaches a document that never set that part.
        let later = try RootLens(default: Evolving(count: 99), store: makeStore(), watch: false)
        #expect(later.value.count == 99 && later.value.name == "changed", "a changed default reaches what was never set")

        // A removed entry stays removed, with the unknown keys it held.
        try root.labels.update { $0["keep"] = nil }
        try root.flush()
        let reopened = try RootLens(default: Evolving(), store: makeStore(), watch: false)
        #expect(reopened.value.labels.isEmpty, "a removed entry of the defaults stays removed")
        #expect(try makeStore().load()?[path: "labels.keep"] == .null, "its removal is stored as null (RFC 7386)")
        #expect(try makeStore().load()?[path: "addedLater"] == .string("by a newer version"))

        // Asked to, a root stores the whole value, still with the unknown keys.
        let whole = try RootLens(default: Evolving(), store: makeStore(), storing: .wholeValue, watch: false)
        try whole.count.set(8)
        try whole.flush()
        let stored = try makeStore().load()
        #expect(stored?[path: "tags"] == .array([.string("a")]) && stored?[path: "name"] == .string("changed")
                && stored?[path: "addedLater"] == .string("by a newer version"), "the whole value, with unknown keys")
        try removeStored()
    }

    private func checkMigrations(_ store: any WritableDocumentStore) throws {
        let runs = Counter()
        let rename: [Int: @Sendable (inout JSONValue) throws -> Void] = [
            2: { document in
                runs.increment()
                try document.move(from: "title", to: "name")
            },
        ]
        // A version 1 document (unstamped) is migrated on load, in memory only.
        try save(.object(["title": .string("old name"), "count": .integer(3)]), in: store)
        let root = try RootLens(default: Evolving(), store: makeStore(), version: 2, migrations: rename, watch: false)
        #expect(root.value.name == "old name" && root.value.count == 3, "a migration runs on load")
        #expect(try makeStore().load()?[path: "title"] == .string("old name"), "loading never writes, migrated or not")
        // The next commit writes the upgraded document, stamped.
        try root.count.set(4)
        try root.flush()
        #expect(try makeStore().load() == .object([
            "$version": .integer(2), "name": .string("old name"), "count": .integer(4),
        ]), "the next commit writes the migrated document, stamped")
        // Once stamped, the migration never runs again.
        let before = runs.value
        let again = try RootLens(default: Evolving(), store: makeStore(), version: 2, migrations: rename, watch: false)
        #expect(runs.value == before && again.value.name == "old name", "a migration runs once and only once")

        // A failing step is an error naming the store and the step, and nothing is written.
        struct Refused: Error {}
        let failing: [Int: @Sendable (inout JSONValue) throws -> Void] = [3: { _ in throw Refused() }]
        let storedBefore = try makeStore().load()
        #expect {
            _ = try RootLens(default: Evolving(), store: makeStore(), version: 3, migrations: failing, watch: false)
        } throws: { error in
            let message = "\(error)"
            return (error as? StoreError)?.code == .corrupt && message.contains(store.description)
                && message.contains("migration to version 3")
        }
        #expect(try makeStore().load() == storedBefore, "a failing migration writes nothing")

        // A document from a newer program: read as far as the type allows, its stamp never lowered.
        try save(.object(["$version": .integer(5), "name": .string("new"), "future": .bool(true)]), in: store)
        let older = try RootLens(default: Evolving(), store: makeStore(), version: 2, migrations: rename, watch: false)
        #expect(older.value.name == "new")
        try older.count.set(2)
        try older.flush()
        #expect(try makeStore().load() == .object([
            "$version": .integer(5), "name": .string("new"), "future": .bool(true), "count": .integer(2),
        ]), "a newer document keeps its stamp and its unknown keys")
        try removeStored()
    }

    // MARK: Helpers

    /// Saves `document` through a fresh instance that has read the place first, as a person's editor or
    /// another program would (a store that detects conflicts refuses a blind write over another's).
    private func save(_ document: JSONValue, in _: any WritableDocumentStore) throws {
        guard let writer = try makeStore() as? any WritableDocumentStore else { return }
        _ = try writer.load()
        try writer.save(document)
        try flush(writer)
    }

    private func removeStored() throws {
        guard let writer = try makeStore() as? any WritableDocumentStore else { return }
        _ = try writer.load()
        try writer.remove()
    }

    private func flush(_ store: any DocumentStore) throws {
        try (store as? any DeferredWriteStore)?.flush()
    }

    private func sampleDocuments() -> [JSONValue] {
        var documents: [JSONValue] = [
            .object([:]),
            .object(["name": .string("loupe"), "port": .integer(8080), "enabled": .bool(true), "off": .bool(false)]),
            .object([
                "nested": .object(["deeper": .object(["deepest": .array([.integer(1), .integer(2), .integer(3)])])]),
                "unicode": .string("grüße, 世界, emoji 🔍, \"quotes\" and \\ backslash\nnew line"),
                "list": .array([.object(["a": .integer(1)]), .object(["b": .array([])])]),
                "negative": .integer(-42),
                "big": .integer(9_007_199_254_740_993),
                "key.with.dots": .string("dotted"),
            ]),
        ]
        if configuration.keepsFractions {
            documents.append(.object(["ratio": .double(0.25), "third": .double(1.0 / 3.0), "tiny": .double(1.5e-300)]))
        }
        return documents
    }

    private func eventually(timeout: Duration, _ condition: () throws -> Bool) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if try condition() { return true }
            if ContinuousClock.now > deadline { return false }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }
}

/// The typed value the suite's roots hold.
private struct Sample: Codable, Sendable, Equatable {
    var name = "sample"
    var items = [1, 2, 3]
    var nested = Nested()

    struct Nested: Codable, Sendable, Equatable {
        var enabled = false
        var ratio = 0.5
    }
}

/// The typed value of the checks across program versions.
private struct Evolving: Codable, Sendable, Equatable {
    var name = "sample"
    var count = 1
    var labels: [String: Label] = ["keep": Label()]
    var tags = ["a"]

    struct Label: Codable, Sendable, Equatable, DefaultProviding {
        var text = "t"
        var weight = 1
        static var defaultValue: Label { Label() }
    }
}

/// Counts calls from any thread.
private final class Counter: Sendable {
    private let count = Locked(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// Values an observer saw.
private final class Seen: Sendable {
    private let values = Locked<[String]>([])
    func record(_ value: String) { values.withLock { $0.append(value) } }
    func contains(_ value: String) -> Bool { values.withLock { $0.contains(value) } }
}
