import Foundation
import Loupe
import LoupeTestSupport
import Observation
import Testing

@Suite("Swift Observation and property wrappers")
struct SwiftObservationTests {
    @Test func withObservationTrackingFiresOnACommitThatChangesTheValue() throws {
        let root = RootLens(Settings())
        let port = root.server.port
        let fired = Recorder<Int>()
        withObservationTracking {
            _ = port.value
        } onChange: {
            fired.append(port.value)  // after the commit: the new value is visible
        }
        #expect(fired.all.isEmpty)
        try port.set(9)
        #expect(fired.all == [9])
        try port.set(10)
        #expect(fired.all == [9], "onChange fires once per tracking, as Observation does")
    }

    @Test func trackingThroughAFileStoreFiresOnAnOutsideEdit() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path))
        let fired = Recorder<Int>()
        withObservationTracking {
            _ = root.server.port.value
        } onChange: {
            fired.append(1)
        }
        try Data(#"{"server": {"host": "h", "port": 81}, "features": {}}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(eventually { fired.all == [1] })
        #expect(root.server.port.value == 81)
    }

    struct Ticker {
        @Lensed var server: Server
        @LensedReader var features: [String: Bool]

        func bump() throws { try $server.port.update { $0 += 1 } }
    }

    @Test func componentsHoldTheirLensesAsPropertyWrappers() throws {
        let root = RootLens(Settings())
        let ticker = Ticker(server: Lensed(root.server), features: LensedReader(root.features.readOnly))
        #expect(ticker.server.port == 8080)
        try ticker.bump()
        #expect(ticker.server.port == 8081)
        #expect(root.server.port.value == 8081)
        try root.features["beta"].set(true)
        #expect(ticker.features == ["beta": true])
        #expect(ticker.$features.path == "features")
    }
}
