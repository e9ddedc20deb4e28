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
/// removing what the place holds. It checks:
///
/// - every store: an empty place loads no document; a root over it starts from its default; a load
///   changes nothing (two loads return the same document and token, and a load between another writer's
///   save and an update does not hide that save from the update);
/// - stores that can be written (a save that does not throw `SettingsError.Code.readOnly`): documents
///   round-trip (objects, arrays, strings, integers, fractions, booleans, nesting), after `flush()`
///   for a store that writes later; a save replaces the whole document; a save from a stale token is a
///   conflict and writes nothing; a removal empties the place, and removing nothing is no error; a second
///   instance loads what the first saved; a `RootLens` over the store commits, persists, reloads and
///   removes; an update whose save conflicts is run again on what the store holds then, so two roots
///   lose neither's update;
/// - stores that watch: a watching root is told of another instance's save, and commits it;
/// - stores that hold secrets: a secret saved never appears in the store's `description`, nor in the
///   error of a write the type refuses;
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
    public init(
        configuration: Configuration = Configuration(), makeStore: @escaping @Sendable () throws -> any DocumentStore
    ) {
        self.makeStore = makeStore
        self.configuration = configuration
    }

    /// Runs every check that applies to the store.
    public func run() async throws {
        let store = try makeStore()
        let writable = try removeStored()
        let empty = try store.load()
        #expect(empty.document == nil, "an empty place loads no document")
        #expect(try store.load() == empty, "a load changes nothing: a second one reads the same document and token")
        #expect(
            try RootLens(default: Sample(), store: store, watch: false).value == Sample(),
            "a root over an empty place starts from its default")

        guard writable else { return }
        try checkRoundTrips()
        // A store that writes later answers a save before it looks at what is stored; it applies its
        // changes over another writer's when it writes (`CoalescingStore`).
        let writesLater = try writesLater()
        if !writesLater { try checkConflicts() }
        try checkRemoval()
        try checkRoot()
        try checkLoadsChangeNothing()
        if !writesLater { try checkConflictingUpdatesRunAgain() }
        try await checkWatch()
        if store.secretPaths.contains(.root) { try checkSecrets() }
        try checkEvolution()
        try checkMigrations()
        _ = try removeStored()
    }

    // MARK: Checks

    private func checkRoundTrips() throws {
        let store = try makeStore()
        for document in sampleDocuments() {
            try save(document, in: store)
            #expect(try store.load().document == document, "a saved document loads as it was saved")
            #expect(
                try makeStore().load().document == document, "another instance over the same place loads what was saved"
            )
        }
        // A save replaces the whole document: keys of the previous one do not survive.
        try save(.object(["a": .integer(1), "b": .integer(2)]), in: store)
        try save(.object(["a": .integer(3)]), in: store)
        #expect(try makeStore().load().document == .object(["a": .integer(3)]), "a save replaces the whole document")
    }

    private func checkConflicts() throws {
        let first = try makeStore()
        let second = try makeStore()
        try save(.object(["round": .integer(1)]), in: first)
        let stale = try second.load().token
        try save(.object(["round": .integer(2)]), in: first)
        #expect(try second.load().token != stale, "another writer's save gives the store a new token")
        do {
            _ = try second.save(.object(["round": .string("stale")]), replacing: stale)
            try second.flush()
            Issue.record("a save from a stale token must be refused as a conflict")
        } catch let error as SettingsError {
            #expect(error.code == .conflict, "a save from a stale token is a conflict, not \(error)")
        }
        #expect(try makeStore().load().document == .object(["round": .integer(2)]), "a conflicting save writes nothing")
    }

    private func checkRemoval() throws {
        let store = try makeStore()
        try save(.object(["a": .integer(1)]), in: store)
        _ = try store.remove(replacing: store.load().token)
        try store.flush()
        #expect(try store.load().document == nil, "after a removal the store loads no document")
        #expect(try makeStore().load().document == nil, "after a removal another instance loads no document")
        _ = try store.remove(replacing: store.load().token)  // removing nothing is not an error
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
        #expect(try makeStore().load().document == nil, "remove() empties the place")
    }

    /// Another writer saves; this root reads the store (as `loupe show --stored` does); its next update
    /// must still apply to the other writer's save.
    private func checkLoadsChangeNothing() throws {
        _ = try removeStored()
        let root = try RootLens(default: Sample(), store: makeStore(), watch: false)
        let other = try RootLens(default: Sample(), store: makeStore(), watch: false)
        try other.name.set("the other writer's")
        try other.flush()
        _ = try root.storedDocument()
        try root.items.set([9])
        try root.flush()
        let after = try RootLens(default: Sample(), store: makeStore(), watch: false).value
        #expect(
            after.name == "the other writer's" && after.items == [9],
            "a load between another writer's save and an update hides nothing from the update")
        #expect(root.value.name == "the other writer's", "the root took the other writer's change")
    }

    /// Whether a save reaches the place only later (on a flush): another instance does not see it yet. Such
    /// a store (a `CoalescingStore`) answers a save before it writes, so a conflict met later cannot run
    /// the update again: its changes are applied over the other writer's instead.
    private func writesLater() throws -> Bool {
        _ = try removeStored()
        let store = try makeStore()
        _ = try store.save(.object(["probe": .bool(true)]), replacing: store.load().token)
        defer { _ = try? removeStored() }
        let seen = try makeStore().load().document != nil
        try store.flush()
        return !seen
    }

    /// Two roots over the same place, neither watching, each incrementing: the second's save conflicts,
    /// and it runs again on what the first saved.
    private func checkConflictingUpdatesRunAgain() throws {
        _ = try removeStored()
        let first = try RootLens(default: Sample(), store: makeStore(), watch: false)
        let second = try RootLens(default: Sample(), store: makeStore(), watch: false)
        let runs = Counter()
        for _ in 0..<3 {
            try first.items.update { $0.append($0.count) }
            try first.flush()
            try second.items.update {
                runs.increment()
                $0.append($0.count)
            }
            try second.flush()
        }
        let stored = try RootLens(default: Sample(), store: makeStore(), watch: false).value.items
        #expect(stored == [1, 2, 3, 3, 4, 5, 6, 7, 8], "updates from two roots are never lost (stored: \(stored))")
        #expect(runs.value > 3, "an update whose save conflicted ran again on what the store held")
    }

    private func checkWatch() async throws {
        _ = try removeStored()
        let root = try RootLens(default: Sample(), store: makeStore(), watch: true)
        guard try makeStore().watch({}).map({ $0.cancel() }) != nil else { return }
        let seen = Seen()
        let token = root.name.observe { seen.record($0) }
        defer { token.cancel() }
        let committer = try RootLens(default: Sample(), store: makeStore(), watch: false)
        try await committer.name.async.set("from another root")
        try await committer.async.flush()
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
        #expect(root.secretPaths == [.root], "a root over a store whose every value is a secret says so")
        #expect(!root.storeDescription.contains(secret) && !root.description.contains(secret))
        do {
            try root.lens.set(atPath: "items", to: .string(secret))
            Issue.record("a write the type refuses must throw")
        } catch {
            #expect(!"\(error)".contains(secret), "an error about a secret store never quotes its value")
        }
    }

    private func checkEvolution() throws {
        let store = try makeStore()
        // A partial document, as a person writes it: the rest is the default's.
        try save(.object(["count": .integer(7)]), in: store)
        var root = try RootLens(default: Evolving(), store: makeStore(), watch: false)
        #expect(root.value == Evolving(count: 7), "a key the document lacks takes the default's value")
        #expect(try makeStore().load().document == .object(["count": .integer(7)]), "loading never writes")
        try save(.object([:]), in: store)
        #expect(
            try RootLens(default: Evolving(), store: makeStore(), watch: false).value == Evolving(), "{} is the default"
        )

        // An element that lacks a key takes its type's default; one in the defaults merges with it.
        try save(.object(["labels": .object(["new": .object(["text": .string("n")])])]), in: store)
        root = try RootLens(default: Evolving(), store: makeStore(), watch: false)
        #expect(
            root.value.labels == ["keep": Evolving.Label(), "new": Evolving.Label(text: "n", weight: 1)],
            "an element lacking a key takes its type's default")

        // Keys the type does not know survive a write, at their place; so does every key the document held,
        // even one equal to the default (`tags`); of the rest, only differences are written.
        let future: JSONValue = .object([
            "addedLater": .string("by a newer version"),
            "labels": .object(["keep": .object(["colour": .string("red")])]),
            "tags": .array([.string("a")]),
        ])
        try save(future, in: store)
        root = try RootLens(default: Evolving(), store: makeStore(), watch: false)
        try root.name.set("changed")
        try root.flush()
        #expect(
            try makeStore().load().document
                == .object([
                    "name": .string("changed"),
                    "addedLater": .string("by a newer version"),
                    "labels": .object(["keep": .object(["colour": .string("red")])]),
                    "tags": .array([.string("a")]),
                ]),
            "a write keeps unknown keys at their place, keeps the keys the document held, and adds only what differs from the defaults"
        )

        // A default changed in a later version reaches a document that never set that part.
        let later = try RootLens(default: Evolving(count: 99), store: makeStore(), watch: false)
        #expect(
            later.value.count == 99 && later.value.name == "changed", "a changed default reaches what was never set")

        // A removed entry stays removed, with the unknown keys it held.
        try root.labels.update { $0["keep"] = nil }
        try root.flush()
        let reopened = try RootLens(default: Evolving(), store: makeStore(), watch: false)
        #expect(reopened.value.labels.isEmpty, "a removed entry of the defaults stays removed")
        #expect(
            try makeStore().load().document?[path: "labels.keep"] == .null, "its removal is stored as null (RFC 7386)")
        #expect(try makeStore().load().document?[path: "addedLater"] == .string("by a newer version"))

        // Asked to, a root stores the whole value, still with the unknown keys.
        let whole = try RootLens(default: Evolving(), store: makeStore(), storing: .wholeValue, watch: false)
        try whole.count.set(8)
        try whole.flush()
        let stored = try makeStore().load().document
        #expect(
            stored?[path: "tags"] == .array([.string("a")]) && stored?[path: "name"] == .string("changed")
                && stored?[path: "addedLater"] == .string("by a newer version"), "the whole value, with unknown keys")
        _ = try removeStored()
    }

    private func checkMigrations() throws {
        let store = try makeStore()
        let runs = Counter()
        let rename: [Int: @Sendable (inout JSONValue) throws -> Void] = [
            2: { document in
                runs.increment()
                try document.move(from: "title", to: "name")
            }
        ]
        // A version 1 document (unstamped) is migrated on load, in memory only.
        try save(.object(["title": .string("old name"), "count": .integer(3)]), in: store)
        let root = try RootLens(default: Evolving(), store: makeStore(), version: 2, migrations: rename, watch: false)
        #expect(root.value.name == "old name" && root.value.count == 3, "a migration runs on load")
        #expect(
            try makeStore().load().document?[path: "title"] == .string("old name"),
            "loading never writes, migrated or not")
        // The next commit writes the upgraded document, stamped.
        try root.count.set(4)
        try root.flush()
        #expect(
            try makeStore().load().document
                == .object([
                    "$version": .integer(2), "name": .string("old name"), "count": .integer(4),
                ]), "the next commit writes the migrated document, stamped")
        // Once stamped, the migration never runs again.
        let before = runs.value
        let again = try RootLens(default: Evolving(), store: makeStore(), version: 2, migrations: rename, watch: false)
        #expect(runs.value == before && again.value.name == "old name", "a migration runs once and only once")

        // A failing step is an error naming the store and the step, and nothing is written.
        struct Refused: Error {}
        let failing: [Int: @Sendable (inout JSONValue) throws -> Void] = [3: { _ in throw Refused() }]
        let storedBefore = try makeStore().load().document
        #expect {
            _ = try RootLens(default: Evolving(), store: makeStore(), version: 3, migrations: failing, watch: false)
        } throws: { error in
            let message = "\(error)"
            return (error as? SettingsError)?.code == .corrupt && message.contains(store.description)
                && message.contains("migration to version 3")
        }
        #expect(try makeStore().load().document == storedBefore, "a failing migration writes nothing")

        // A document from a newer program: read as far as the type allows, its stamp never lowered.
        try save(.object(["$version": .integer(5), "name": .string("new"), "future": .bool(true)]), in: store)
        let older = try RootLens(default: Evolving(), store: makeStore(), version: 2, migrations: rename, watch: false)
        #expect(older.value.name == "new")
        try older.count.set(2)
        try older.flush()
        #expect(
            try makeStore().load().document
                == .object([
                    "$version": .integer(5), "name": .string("new"), "future": .bool(true), "count": .integer(2),
                ]), "a newer document keeps its stamp and its unknown keys")
        _ = try removeStored()
    }

    // MARK: Helpers

    /// Saves `document` over what the place holds, as a person's editor or another program would: through
    /// `store` with the token of a load, then flushed.
    private func save(_ document: JSONValue, in store: any DocumentStore) throws {
        _ = try store.save(document, replacing: store.load().token)
        try store.flush()
    }

    /// Removes what the place holds through a fresh instance; returns false when the store is read-only.
    private func removeStored() throws -> Bool {
        let store = try makeStore()
        do {
            _ = try store.remove(replacing: store.load().token)
            try store.flush()
            return true
        } catch let error as SettingsError where error.code == .readOnly {
            return false
        }
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
