import AsyncHTTPClient
import Foundation
import Loupe
import LoupeSettingsPage
import NIOCore
import Synchronization

/// The settings page: an edit made on the page, delivered to 20 other open pages, against the same set
/// through a root; and serving the page (its HTML and its settings) for a type with 200 settings, against
/// the 20 ms allowed.
func measureSettingsPage(_ bench: Bench, _ report: Report) throws {
    let scratch = bench.scratch, scale = bench.scale
    let (edits, serving) = try waitFor {
        // 20 event streams held open, and the requests beside them: more connections than the default 8.
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 32)
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        do {
            let edits = try await measurePageEdits(scratch: scratch, scale: scale, client: client)
            let serving = try await measurePageServing(scratch: scratch, scale: scale, client: client)
            try await client.shutdown()
            return (edits, serving)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
    report.add(
        "an edit on the settings page (HTTP PUT, file written, delivered to 20 other open pages by Server-Sent Events) vs the same set through a root (FileStore JSON, small graph)",
        edits, .atMost(2))
    report.add(
        "serving the settings page for a type with 200 settings (the page and its settings, over HTTP) vs the 20 ms allowed",
        serving, .atMost(1), baselineNote: " (allowed)")
}

/// A page's server on `root`, started on a free port of the loopback; returns its address and the task
/// that serves.
private func startPage(_ page: SettingsPage) async throws -> (url: String, serving: Task<Void, any Error>) {
    let address = Mutex<String?>(nil)
    let server = SettingsPageServer(page: page, address: .loopback(port: 0)) { url in address.withLock { $0 = url } }
    let serving = Task { try await server.run() }
    while address.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(1)) }
    let url = address.withLock { $0! }
    return (String(url.prefix { $0 != "?" }), serving)
}

/// HTTP PUT → the file written → the change delivered to 20 other open pages (each reads its event stream
/// until the new value arrives), against `set` through a root with an observer that waits for the value.
func measurePageEdits(scratch: String, scale: Int, client: HTTPClient) async throws -> Comparison {
    let n = max(20 / scale, 3)
    let root = try RootLens(default: Small(), store: FileStore(path: scratch + "/page.json"), watch: false)
    let page = SettingsPage(root, configuration: SettingsPage.Configuration(token: "bench"))
    let (base, serving) = try await startPage(page)
    defer { serving.cancel() }

    // 20 open pages: each counts the events that carry the counter's latest value. They read as a browser
    // does, bytes split at each blank line, found with `firstIndex(of:)` (Foundation's `String.range(of:)`
    // bridges through `NSString` on Linux, and the standard library's generic `firstRange(of:)` is as slow:
    // either costs this process, which serves the pages too, more than the page's own work).
    let tally = Tally()
    var readers: [Task<Void, Never>] = []
    let blankLine = Array("\n\n".utf8), settingsEvent = Array("event: settings".utf8)
    let counterPath = Array(#""path":"counter""#.utf8)
    for _ in 0..<20 {
        readers.append(
            Task {
                do {
                    var request = HTTPClientRequest(url: base + "api/events?token=bench")
                    request.method = .GET
                    let response = try await client.execute(request, timeout: .hours(1))
                    var pending: [UInt8] = []
                    for try await buffer in response.body {
                        pending.append(contentsOf: buffer.readableBytesView)
                        while let end = firstIndex(of: blankLine, in: pending[...]) {
                            let event = pending[..<end]
                            let wanted = tally.latest
                            if event.starts(with: settingsEvent), firstIndex(of: counterPath, in: event) != nil,
                                firstIndex(of: Array("\"value\":\(wanted),".utf8), in: event) != nil
                                    || firstIndex(of: Array("\"value\":\(wanted)}".utf8), in: event) != nil
                            {
                                tally.delivered(wanted)
                            }
                            pending.removeSubrange(..<(end + blankLine.count))
                        }
                    }
                } catch {}
            })
    }
    defer { for reader in readers { reader.cancel() } }
    while page.openEventStreams < 20 { try await Task.sleep(for: .milliseconds(1)) }

    var value = 1_000
    func edit() async throws {
        value += 1
        tally.expect(value)
        var request = HTTPClientRequest(url: base + "api/value")
        request.method = .PUT
        request.headers.add(name: "X-Loupe-Token", value: "bench")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"path":"counter","value":\#(value)}"#))
        let response = try await client.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 24)
        precondition(response.status == .ok, "the page refused the edit: \(response.status)")
        await tally.allDelivered()
    }
    let direct = try RootLens(default: Small(), store: FileStore(path: scratch + "/page-direct.json"), watch: false)
    let token = direct.counter.observe { counter in tally.seen.withLock { $0 = counter } }
    defer { token.cancel() }
    func set() async throws {
        value += 1
        try await direct.counter.async.set(value)
        while tally.seen.withLock({ $0 }) != value { await Task.yield() }
    }

    try await edit()
    try await set()
    var comparison = Comparison()
    for _ in 0..<9 {
        comparison.loupe.append(try await timeOnceAsync(n) { for _ in 0..<n { try await edit() } })
        comparison.baseline.append(try await timeOnceAsync(n) { for _ in 0..<n { try await set() } })
    }
    return comparison
}

/// `GET /` (the page) and `GET /api/settings` (its 200 settings with their schema, values and provenance)
/// together, against the 20 ms allowed.
private func measurePageServing(scratch: String, scale: Int, client: HTTPClient) async throws -> Comparison {
    let n = max(50 / scale, 5)
    let root = try RootLens(
        default: TwoHundredSettings(), store: FileStore(path: scratch + "/page-200.json"), watch: false)
    try await root.section3.limit.async.set(7)
    let page = SettingsPage(root, configuration: SettingsPage.Configuration(token: "bench"))
    let (base, serving) = try await startPage(page)
    defer { serving.cancel() }
    func get(_ path: String) async throws {
        var request = HTTPClientRequest(url: base + path)
        request.headers.add(name: "X-Loupe-Token", value: "bench")
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 24)
        precondition(response.status == .ok && body.readableBytes > 0)
    }
    try await get("?token=bench")
    try await get("api/settings")
    var comparison = Comparison()
    for _ in 0..<9 {
        comparison.loupe.append(
            try await timeOnceAsync(n) {
                for _ in 0..<n {
                    try await get("?token=bench")
                    try await get("api/settings")
                }
            })
        comparison.baseline.append(20e6)
    }
    return comparison
}

/// What the open pages and the root's observer have seen; an edit waits for all 20 pages without
/// spinning (a spinning waiter would take a core from the server and the pages it waits for).
/// Where `needle` first stands in `bytes`: each place its first byte stands, compared.
func firstIndex(of needle: [UInt8], in bytes: ArraySlice<UInt8>) -> Int? {
    var start = bytes.startIndex
    while let found = bytes[start...].firstIndex(of: needle[0]) {
        guard found + needle.count <= bytes.endIndex else { return nil }
        if bytes[found..<(found + needle.count)].elementsEqual(needle) { return found }
        start = found + 1
    }
    return nil
}

final class Tally: Sendable {
    private struct State {
        var latest = 0
        var delivered = 0
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())
    /// The last value the direct root's observer saw.
    let seen = Mutex(0)

    /// The counter's value the last edit set.
    var latest: Int { state.withLock { $0.latest } }

    /// The next edit sets `value`: no page has received it yet.
    func expect(_ value: Int) {
        state.withLock {
            $0.latest = value; $0.delivered = 0
        }
    }

    /// A page received `value`.
    func delivered(_ value: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard value == state.latest else { return nil }
            state.delivered += 1
            guard state.delivered == 20 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Returns once all 20 pages received the value expected.
    func allDelivered() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.delivered >= 20 { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}

/// Nanoseconds per operation of `body`, which performs `operations` operations.
func timeOnceAsync(_ operations: Int, _ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let (seconds, attoseconds) = (ContinuousClock.now - start).components
    return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(operations)
}

/// A settings type with 200 settings: 20 sections of 10, each a number, a toggle, a choice or a text.
struct TwoHundredSettings: Codable, Sendable, Equatable {
    enum Mode: String, Codable, Sendable, CaseIterable { case fast, safe, off }
    struct Section: Codable, Sendable, Equatable {
        var name: String = "group"
        var enabled: Bool = true
        var limit: Int = 100
        var ratio: Double = 0.5
        var url: String = "https://example.org/path"
        var retries: Int = 3
        var label: String = "label"
        var timeoutSeconds: Double = 30
        var maxConnections: Int = 512
        var mode: Mode = .fast
    }
    var section0 = Section()
    var section1 = Section()
    var section2 = Section()
    var section3 = Section()
    var section4 = Section()
    var section5 = Section()
    var section6 = Section()
    var section7 = Section()
    var section8 = Section()
    var section9 = Section()
    var section10 = Section()
    var section11 = Section()
    var section12 = Section()
    var section13 = Section()
    var section14 = Section()
    var section15 = Section()
    var section16 = Section()
    var section17 = Section()
    var section18 = Section()
    var section19 = Section()
}
