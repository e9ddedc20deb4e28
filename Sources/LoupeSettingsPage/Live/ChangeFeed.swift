#if SettingsPage
import Dispatch
import Foundation
import Loupe

/// The open pages' Server-Sent Events streams, fed by the root's observer: each change of the settings
/// (from this page, another one, `loupe`, an editor, etcd) is sent to every page as the settings' model,
/// worked out once for them all; an outside change the root refused is sent as a `problem`.
final class ChangeFeed: Sendable {
    private struct State {
        var next = 0
        var subscribers: [Int: AsyncStream<String>.Continuation] = [:]
        /// Whether a model is being worked out for a change already: changes meanwhile share one.
        var pending = false
    }

    private let model: PageModel
    private let state = Locked(State())
    private let tokens = Locked<[ObservationToken]>([])
    /// Works out the model after a change, off the committing thread, one change after the other.
    private let queue = DispatchQueue(label: "LoupeSettingsPage.ChangeFeed")
    /// How often an idle stream sends a comment, so that a page gone away is noticed.
    static let keepAlive: Duration = .seconds(15)

    init(model: PageModel) {
        self.model = model
        let changes = model.root.observe { [weak self] _ in self?.changed() }
        let problems = model.root.observeErrors { [weak self] error in
            self?.send(
                Self.event("problem", .object(["error": .string("\(error)".replacingOccurrences(of: "\n", with: " "))]))
            )
        }
        tokens.withLock { $0 = [changes, problems] }
    }

    /// The number of open streams.
    var count: Int { state.withLock { $0.subscribers.count } }

    /// A new stream: the settings now, then each change; ends when the page goes away or ``finishAll()``.
    func subscribe() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let id = state.withLock { state in
            state.next += 1
            state.subscribers[state.next] = continuation
            return state.next
        }
        let keepAlive = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.keepAlive)
                continuation.yield(": keep-alive\n\n")
            }
        }
        continuation.onTermination = { [weak self] _ in
            keepAlive.cancel()
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        queue.async { [model] in
            continuation.yield(Self.settingsEvent(model))
        }
        return stream
    }

    /// Ends every stream.
    func finishAll() {
        let all = state.withLock { state in
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in all { continuation.finish() }
    }

    private func changed() {
        let schedule = state.withLock { state -> Bool in
            guard !state.subscribers.isEmpty, !state.pending else { return false }
            state.pending = true
            return true
        }
        guard schedule else { return }
        queue.async { [self] in
            state.withLock { $0.pending = false }
            send(Self.settingsEvent(model))
        }
    }

    private func send(_ event: String) {
        let all = state.withLock { Array($0.subscribers.values) }
        for continuation in all { continuation.yield(event) }
    }

    /// `event: settings` with the model, or `event: problem` when it cannot be worked out.
    private static func settingsEvent(_ model: PageModel) -> String {
        do {
            return event("settings", try model.settings())
        } catch {
            return event("problem", .object(["error": .string("\(error)".replacingOccurrences(of: "\n", with: " "))]))
        }
    }

    /// One Server-Sent Event: its name and its data, JSON on one line.
    static func event(_ name: String, _ data: JSONValue) -> String {
        "event: \(name)\ndata: \(data.jsonText())\n\n"
    }
}
#endif
