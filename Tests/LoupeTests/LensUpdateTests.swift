import Foundation
import Loupe
import LoupeTestSupport
import Synchronization
import Testing

@Suite("Updating: atomic, serial, all or nothing")
struct LensUpdateTests {
    @Test func setAndUpdatePersistBeforeReturning() throws {
        let store = RecordingStore()
        let root = try RootLens(default: Settings(), store: store)
        try root.server.port.set(9090)
        try root.update { $0.server.port += 1 }
        #expect(root.server.port.value == 9091)
        #expect(try store.load(over: Settings())?.server.port == 9091)
        #expect(store.saves == 2)
    }

    @Test func updateReturnsTheClosuresResult() throws {
        let root = RootLens(Settings())
        let old = try root.update { s -> Int in
            defer { s.server.port = 1 }
            return s.server.port
        }
        #expect(old == 8080)
        #expect(root.server.port.value == 1)
    }

    @Test func conflictsReRunTheUpdateABoundedNumberOfTimesThenFailWithATypedError() throws {
        let store = RecordingStore(holding: Settings())
        let root = try RootLens(default: Settings(), store: store)
        store.fail(true, with: .conflict)
        let runs = Locked(0)
        #expect {
            try root.server.port.update { port in
                runs.withLock { $0 += 1 }
                port = 1
            }
        } throws: { error in
            guard let error = error as? SettingsError, error.code == .conflict else { return false }
            return error.path == "server.port" && "\(error)".contains("256 times")
                && (error.cause as? SettingsError)?.code == .conflict
        }
        #expect(runs.withLock { $0 } == 256)
        #expect(root.value == Settings())
        store.fail(false)
        try root.server.port.set(1)
        #expect(root.server.port.value == 1)
    }

    @Test func aThrowingClosureChangesNothing() throws {
        let store = RecordingStore()
        let root = try RootLens(default: Settings(), store: store)
        try root.server.port.set(1)
        let notified = Recorder<Int>()
        let token = root.server.port.observe { notified.append($0) }
        #expect(throws: Boom.self) {
            try root.update { settings in
                settings.server.port = 2
                settings.features["x"] = true
                throw Boom()
            }
        }
        #expect(root.value.server.port == 1)
        #expect(root.value.features.isEmpty)
        #expect(try store.load(over: Settings())?.server.port == 1)
        #expect(store.saves == 1)
        #expect(notified.all.isEmpty)
        token.cancel()
    }

    @Test func aFailingStoreLeavesTheOldSnapshotIdentical() throws {
        let store = RecordingStore()
        let root = try RootLens(default: Settings(), store: store)
        try root.server.port.set(1)
        let before = root.value
        let notified = Recorder<Settings>()
        let token = root.observe { notified.append($0) }
        store.fail(true)
        #expect {
            try root.server.port.set(2)
        } throws: { error in
            (error as? SettingsError)?.code == .unwritable && "\(error)".contains("recording store")
        }
        #expect(root.value == before)
        #expect(try store.load(over: Settings()) == before)
        #expect(notified.all.isEmpty)
        store.fail(false)
        try root.server.port.set(3)
        #expect(notified.all.map(\.server.port) == [3])
        token.cancel()
    }

    /// A root saved to a store changes when its document does: a value its own `==` takes for the current
    /// one while it encodes otherwise is stored and committed, on the first update after a load as after a
    /// save.
    @Test func aValueEqualByItsEqualsButEncodedOtherwiseIsStored() throws {
        struct Noted: Codable, Sendable, Equatable {
            var port = 80
            var note = ""
            static func == (lhs: Noted, rhs: Noted) -> Bool { lhs.port == rhs.port }  // the note is not compared
        }
        let store = RecordingStore()
        let root = try RootLens(default: Noted(), store: store)
        try root.note.set("first")
        #expect(store.saves == 1)
        #expect(root.value.note == "first")
        #expect(try store.load(over: Noted())?.note == "first")
        try root.port.set(81)
        try root.note.set("second")
        #expect(store.saves == 3)
        #expect(root.value.note == "second")
        #expect(try store.load(over: Noted())?.note == "second")
    }

    /// An update to an equal value in storage of its own (another copy of a long string), which its bytes
    /// do not show equal, commits and saves nothing: before any save, after one, and after a failed one
    /// (which leaves the encoder another value's document).
    @Test func anEqualValueInStorageOfItsOwnCommitsNothing() throws {
        struct Named: Codable, Sendable, Equatable {
            var name = "a name longer than fifteen bytes"
            var count = 0
        }
        /// An equal name in new storage.
        func copy(_ name: String) -> String { String(decoding: Array(name.utf8), as: UTF8.self) }
        let store = RecordingStore()
        let root = try RootLens(default: Named(), store: store)
        let notified = Recorder<Named>()
        let token = root.observe { notified.append($0) }
        try root.name.set(copy(root.value.name))
        #expect(store.saves == 0)
        try root.count.set(1)
        try root.name.set(copy(root.value.name))
        #expect(store.saves == 1)
        store.fail(true)
        #expect(throws: SettingsError.self) { try root.count.set(2) }
        store.fail(false)
        try root.update {
            $0.name = copy($0.name)
            $0.count = 1
        }
        #expect(store.saves == 1)
        #expect(notified.all.map(\.count) == [1])
        token.cancel()
    }

    @Test func aClosureThatChangesNothingCommitsNothing() throws {
        let store = RecordingStore()
        let root = try RootLens(default: Settings(), store: store)
        let notified = Recorder<Settings>()
        let token = root.observe { notified.append($0) }
        try root.update { $0.server.port = 8080 }
        try root.server.port.set(8080)
        try root.features["beta"].set(nil)
        #expect(store.saves == 0)
        #expect(try store.storedDocument() == nil)
        #expect(notified.all.isEmpty)
        token.cancel()
    }

    @Test func aNonEquatableGraphAlsoSkipsNoOpCommits() throws {
        let store = RecordingStore()
        let root = try RootLens(default: Opaque(), store: store)
        let notified = Recorder<Int>()
        let token = root.counter.observe { notified.append($0) }
        try root.update { $0.counter = 0 }
        #expect(store.saves == 0)
        try root.counter.set(5)
        #expect(store.saves == 1)
        #expect(notified.all == [5])
        token.cancel()
    }

    @Test func aValueHoldingNaNIsNotChangedByAnUpdateThatLeavesItAlone() throws {
        struct Measured: Codable, Sendable, Equatable {
            var ratio = Double.nan
            var count = 0
        }
        let root = RootLens(Measured())
        let roots = Recorder<Int>()
        let ratios = Recorder<Double>()
        let rootToken = root.observe { roots.append($0.count) }
        let ratioToken = root.ratio.observe { ratios.append($0) }
        defer { rootToken.cancel(); ratioToken.cancel() }
        try root.update { _ in }
        try root.ratio.update { _ in }
        #expect(roots.all.isEmpty, "a no-op update commits nothing, though NaN is not == to itself")
        try root.count.set(1)
        #expect(roots.all == [1])
        #expect(ratios.all.isEmpty, "the ratio did not change with the count")
        try root.ratio.set(0.5)
        #expect(ratios.all == [0.5])
    }

    @Test func noLostUpdatesAcrossThreadsAndLenses() throws {
        let store = RecordingStore()
        let root = try RootLens(default: Settings(), store: store)
        try root.server.port.set(0)
        let threads = 8
        let increments = 500
        let lenses: [MutableLens<Int>] = [root.server.port, root[\.server.port], root.server[\.port]]
        concurrently(threads) { worker in
            let lens = lenses[worker % lenses.count]
            for _ in 0..<increments {
                try! lens.update { $0 += 1 }
                if worker % 2 == 0 {
                    try! root.update {
                        $0.server.port += 1; $0.server.port -= 1
                    }
                }
            }
        }
        #expect(root.server.port.value == threads * increments)
        #expect(try store.load(over: Settings())?.server.port == threads * increments)
    }

    @Test func anUpdateInsideAnUpdateIsReportedNotDeadlocked() throws {
        let root = RootLens(Settings())
        let port = root.server.port
        #expect(throws: failure(.reentrantUpdate, at: "server.port")) {
            try root.update { _ in try port.set(1) }
        }
        // Reading inside an update is fine: it sees the last committed value.
        let seen = try root.update { settings -> Int in
            settings.server.port = 5
            return port.value
        }
        #expect(seen == 8080)
        #expect(port.value == 5)
    }

    @Test func removeDeletesTheStoredValueAndReturnsToTheDefault() throws {
        let store = RecordingStore()
        let root = try RootLens(default: Settings(), store: store)
        try root.server.port.set(1)
        let notified = Recorder<Int>()
        let token = root.server.port.observe { notified.append($0) }
        try root.remove()
        #expect(try store.storedDocument() == nil)
        #expect(root.value == Settings())
        #expect(notified.all == [8080])
        token.cancel()
    }

    @Test func reloadPicksUpWhatTheStoreHoldsNow() throws {
        let store = MemoryStore()
        let root = try RootLens(default: Settings(), store: store)
        let notified = Recorder<Int>()
        let token = root.server.port.observe { notified.append($0) }
        var outside = Settings()
        outside.server.port = 4242
        try store.overwrite(with: DocumentCoding().encode(outside))
        #expect(root.server.port.value == 8080, "the lens does not poll a store that cannot watch")
        try root.reload()
        #expect(root.server.port.value == 4242)
        #expect(notified.all == [4242])
        try store.removeWhateverIsStored()
        try root.reload()
        #expect(root.value == Settings())
        token.cancel()
    }

    @Test func aRootThatIsNotEquatableIsComparedByItsEncodedForm() throws {
        struct Plain: Codable, Sendable { var name = "a"; var sizes = [1, 2] }  // deliberately not Equatable
        let store = RecordingStore()
        let root = try RootLens(default: Plain(), store: store)
        let names = Recorder<String>()
        let roots = Recorder<[Int]>()
        let tokens = [root.name.observe { names.append($0) }, root.observe { roots.append($0.sizes) }]
        try root.name.set("a")  // unchanged: nothing saved, nothing committed
        #expect(store.saves == 0)
        try root.name.set("b")
        try root.sizes.update { $0.append(3) }
        #expect(store.saves == 2)
        #expect(names.all == ["b"])
        #expect(roots.all == [[1, 2], [1, 2, 3]], "a value that is not Equatable is reported on every commit")
        tokens.forEach { $0.cancel() }
    }

    @Test func storeErrorsReadWell() {
        let error = SettingsError(.corrupt, path: "server.port", store: "file /tmp/s.json", reason: "expected Int")
        #expect("\(error)" == "invalid data in file /tmp/s.json: server.port: expected Int")
        #expect(error.localizedDescription == "\(error)")
        let lensError = SettingsError(.outOfRange, path: "items[4]", reason: "cannot write items[4]: no index 4")
        #expect("\(lensError)" == "cannot write items[4]: no index 4", "without a store, the reason is the message")
    }

    @Test func anUpdateClosuresOwnConflictIsThrownAsItIsAndNeverRetried() throws {
        let root = try RootLens(default: Settings(), store: MemoryStore())
        let runs = Mutex(0)
        let thrown = SettingsError(.conflict, path: "server.port", reason: "the caller's own conflict")
        let caught = #expect(throws: thrown) {
            try root.update { _ in
                runs.withLock { $0 += 1 }
                throw thrown
            }
        }
        #expect(caught?.reason == "the caller's own conflict")
        #expect(runs.withLock { $0 } == 1, "only a store's conflict runs an update again")
    }

    @Test func settingsErrorsCompareByCodePathAndStoreNotByTheirWords() {
        let error = SettingsError(.corrupt, path: "server.port", store: "file /tmp/s.json", reason: "expected Int")
        #expect(error == SettingsError(.corrupt, path: "server.port", store: "file /tmp/s.json", reason: "other words"))
        #expect(
            error != SettingsError(.unreadable, path: "server.port", store: "file /tmp/s.json", reason: "expected Int"))
        #expect(
            error != SettingsError(.corrupt, path: "server.host", store: "file /tmp/s.json", reason: "expected Int"))
        #expect(
            error != SettingsError(.corrupt, path: "server.port", store: "file /tmp/t.json", reason: "expected Int"))
        #expect(error != SettingsError(.corrupt, store: "file /tmp/s.json", reason: "expected Int"))
    }

    @Test func anErrorThroughAComputedPartHasNoPathButSaysWhere() throws {
        let root = RootLens(Settings())
        let error = #expect(throws: SettingsError.self) {
            try root.update { _ in try root[\.features["beta"]].withDefault(false).set(true) }
        }
        #expect(error?.code == .reentrantUpdate)
        #expect(error?.path == nil, "a subscript key path is not a path of stored parts")
        #expect(
            error?.description == "cannot update […] from inside another update of the same settings on this thread")
    }
}

@Suite("Defaults on optional parts")
struct DefaultTests {
    @Test func aDefaultIsReadWhileThePartIsNilAndNeverSaved() throws {
        let store = RecordingStore()
        let root = try RootLens(default: Settings(), store: store)
        let protection = root.protection.withDefault(Protection(enabled: false, passcode: "0000"))
        #expect(protection.enabled.value == false)
        #expect(protection.passcode.value == "0000")
        #expect(root.protection.value == nil)
        #expect(store.saves == 0)
    }

    @Test func aWriteThroughADefaultPromotesIt() throws {
        let store = RecordingStore()
        let root = try RootLens(default: Settings(), store: store)
        let protection = root.protection.withDefault(Protection(enabled: false, passcode: "0000"))
        let appeared = Recorder<Protection?>()
        let token = root.protection.observe { appeared.append($0) }
        try protection.enabled.set(true)
        #expect(root.protection.value == Protection(enabled: true, passcode: "0000"))
        #expect(try store.load(over: Settings())?.protection == Protection(enabled: true, passcode: "0000"))
        #expect(appeared.all == [Protection(enabled: true, passcode: "0000")])
        token.cancel()
    }

    @Test func aWriteThatLeavesTheDefaultAsItIsDoesNotPromoteIt() throws {
        let store = RecordingStore()
        let root = try RootLens(default: Settings(), store: store)
        let protection = root.protection.withDefault(Protection())
        let seen = Recorder<Protection?>()
        let token = root.protection.observe { seen.append($0) }
        defer { token.cancel() }
        try protection.enabled.set(false)
        try protection.update { _ in }
        #expect(root.protection.value == nil, "the default is not saved by a write that changes nothing")
        #expect(store.saves == 0 && seen.all.isEmpty)
        try protection.enabled.set(true)
        #expect(root.protection.value == Protection(enabled: true))
    }

    @Test func aTypeThatCannotBeComparedIsPromotedByAnyWrite() throws {
        struct Opaque: Codable, Sendable { var level = 0 }
        struct Graph: Codable, Sendable { var part: Opaque? }
        let root = RootLens(Graph())
        try root.part.withDefault(Opaque()).level.set(0)
        #expect(root.value.part?.level == 0)
    }

    @Test func aHigherDefaultWinsOverALowerOne() throws {
        struct Inner: Codable, Sendable, Equatable { var level = 0 }
        struct Outer: Codable, Sendable, Equatable { var inner: Inner? }
        struct Graph: Codable, Sendable, Equatable { var outer: Outer? }
        let root = RootLens(Graph())
        let high = root.outer.withDefault(Outer(inner: Inner(level: 1)))
        let both = high.inner.withDefault(Inner(level: 2))
        #expect(both.level.value == 1)
        let lowOnly = root.outer.withDefault(Outer(inner: nil)).inner.withDefault(Inner(level: 2))
        #expect(lowOnly.level.value == 2)
        try both.level.set(3)
        #expect(root.value == Graph(outer: Outer(inner: Inner(level: 3))))
    }

    @Test func aWriteBelowANilParentWithoutADefaultThrows() throws {
        let store = RecordingStore()
        let root = try RootLens(default: Settings(), store: store)
        let enabled: MutableLens<Bool?> = root.protection.enabled
        #expect(enabled.value == nil)
        let error = #expect(throws: failure(.missingParent, at: "protection.enabled")) {
            try enabled.set(true)
        }
        #expect(root.value == Settings())
        #expect(store.saves == 0)
        #expect(
            error?.description
                == "cannot write protection.enabled: protection is nil and has no default (use withDefault(_:) or set protection first)"
        )
        try enabled.set(nil)  // nothing to write: no error
        try root.protection.set(Protection())
        try enabled.set(true)
        #expect(root.protection.value?.enabled == true)
        #expect(throws: failure(.notOptional, at: "protection.enabled")) { try enabled.set(nil) }
        try root.protection.passcode.set("1234")
        #expect(root.protection.value?.passcode == "1234")
    }
}
