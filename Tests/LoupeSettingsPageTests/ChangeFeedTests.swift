#if SettingsPage
import DaemonSettings
import Foundation
import Loupe
@testable import LoupeSettingsPage
import LoupeTestSupport
import Testing

/// The event streams the open pages read: the whole model first, then what each change changed; a page
/// that fell behind is brought up to the whole model again. What a page makes of them (each event's
/// settings shown over what it had) is always the settings as the page's API serves them.
@Suite("Settings page: the changes an open page receives")
struct ChangeFeedTests {
    /// The settings of every `event: settings` in `events`, shown one over the other as the page's script
    /// does (a setting by its path, those an event says were removed taken away), and how many settings
    /// each event held.
    static func shown(_ events: [String]) throws -> (settings: [String: JSONValue], counts: [Int]) {
        var settings: [String: JSONValue] = [:]
        var counts: [Int] = []
        for event in events where event.hasPrefix("event: settings\ndata: ") {
            let model = try JSONValue(parsing: String(event.dropFirst("event: settings\ndata: ".count)))
            // A model of every setting stands for the page's settings; a change's, for those it names.
            if model[path: "whole"] == .bool(true) { settings = [:] }
            if case .array(let removed)? = model[path: "removed"] {
                for case .string(let path) in removed { settings[path] = nil }
            }
            var count = 0
            if case .array(let groups)? = model[path: "groups"] {
                for group in groups {
                    guard case .array(let entries)? = group[path: "settings"] else { continue }
                    for entry in entries {
                        if case .string(let path)? = entry[path: "path"] { settings[path] = entry }
                        count += 1
                    }
                }
            }
            counts.append(count)
        }
        return (settings, counts)
    }

    /// The settings as the page's API serves them now, by path.
    static func served(_ page: SettingsPage) throws -> [String: JSONValue] {
        let model = try PageModel(root: page.root, configuration: page.configuration).settings()
        return try shown(["event: settings\ndata: " + model.jsonText() + "\n\n"]).settings
    }

    /// The events `stream` holds now, without waiting for more.
    static func drain(_ stream: AsyncStream<String>, expecting count: Int) async -> [String] {
        var events: [String] = []
        var iterator = stream.makeAsyncIterator()
        while events.count < count, let event = await iterator.next() { events.append(event) }
        return events
    }

    @Test(
        "a stream opens with every setting; a one-value change sends that setting alone; the page shows what the API serves"
    )
    func aChangeSendsWhatChanged() async throws {
        let fixture = try PageFixture()
        let stream = fixture.page.feed.subscribe()
        var events = await Self.drain(stream, expecting: 1)
        let whole = try Self.shown(events)
        #expect(whole.counts.count == 1 && whole.counts[0] > 5, "\(whole.counts)")
        #expect(whole.settings == (try Self.served(fixture.page)))

        try await fixture.root.logLevel.async.set(.warning)
        events += await Self.drain(stream, expecting: 1)
        let after = try Self.shown(events)
        #expect(after.counts.last == 1, "the change sent \(after.counts.last ?? 0) settings")
        #expect(events.map { $0.contains(#""whole":true"#) } == [true, false], "only the first holds every setting")
        #expect(after.settings["logLevel"]?[path: "value"] == .string("warning"))
        #expect(after.settings == (try Self.served(fixture.page)))
    }

    @Test("a page that stopped reading while many changes were sent is brought up to every setting after them")
    func aStreamThatDropsAnEventIsSentTheWholeModel() async throws {
        let fixture = try PageFixture()
        let stream = fixture.page.feed.subscribe()
        _ = await Self.drain(stream, expecting: 1)
        // Twenty changes, each waited for until it is sent: the stream keeps the newest eight events.
        var sent = 0
        for round in 0..<20 {
            try await fixture.root.ticker.greeting.async.set("greeting \(round)")
            #expect(await eventually { fixture.page.feed.broadcasts > sent })
            sent = fixture.page.feed.broadcasts
        }
        var events: [String] = []
        var iterator = stream.makeAsyncIterator()
        while events.count < 8, let event = await iterator.next() { events.append(event) }
        let shown = try Self.shown(events)
        #expect(shown.counts.contains { $0 > 5 }, "a whole model among the kept events: \(shown.counts)")
        #expect(shown.settings["ticker.greeting"]?[path: "value"] == .string("greeting 19"))
        #expect(shown.settings == (try Self.served(fixture.page)))
    }

    @Test(
        "a document no type describes: each value it holds is a setting; a key added or removed in the file is added to or removed from the page"
    )
    func anUntypedDocumentsKeysComeAndGo() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("settings.json")
        try #"{"port": 8080, "ratio": 0.5, "server": {"host": "a.example"}}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        let root = try RootLens(default: JSONValue.object([:]), store: FileStore(path: file), watch: true)
        let page = SettingsPage(root, configuration: SettingsPage.Configuration(token: "t"))
        let stream = page.feed.subscribe()
        var events = await Self.drain(stream, expecting: 1)
        #expect(try Set(Self.shown(events).settings.keys) == ["port", "ratio", "server.host"])

        // An editor's save: a key gone, another new.
        try #"{"port": 8080, "server": {"host": "a.example", "tls": true}}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        events += await Self.drain(stream, expecting: 1)
        let after = try Self.shown(events)
        #expect(Set(after.settings.keys) == ["port", "server.host", "server.tls"], "\(events)")
        #expect(after.counts.last == 1, "the change sent the new setting alone: \(after.counts)")
        #expect(after.settings == (try Self.served(page)))
    }
}
#endif
