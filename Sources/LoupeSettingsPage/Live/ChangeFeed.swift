#if SettingsPage
import Dispatch
import Foundation
import Loupe

/// The open pages' Server-Sent Events streams, fed by the root's observer: each change of the settings
/// (from this page, another one, `loupe`, an editor, etcd) reaches every page; an outside change the root
/// refused is sent as a `problem`.
///
/// A stream opens with the whole model (`event: settings`). After that, a change sends each stream the
/// settings that differ from the model it was last brought up to, with the model's own fields: an
/// `event: settings` of the same shape whose groups hold only those settings, so that a one-value edit
/// sends one setting to each page, not all of them. The model is worked out once a change for all the
/// streams, and what differs once for the streams that were brought up to the same model.
///
/// Every event is sent from one serial queue, in order. A stream that drops an event (a page that stopped
/// reading while eight waited) is sent the whole model right after, which stands for everything before it.
final class ChangeFeed: Sendable {
    private struct State {
        var next = 0
        var streams: [Int: AsyncStream<String>.Continuation] = [:]
        /// The generation of the model each stream was last brought up to (none before its first event).
        var shown: [Int: Int] = [:]
        /// The models a stream was last brought up to, by generation.
        var models: [Int: JSONValue] = [:]
        var generation = 0
        /// Whether a model is being worked out for a change already: changes meanwhile share one.
        var pending = false
        /// How many changes were sent.
        var broadcasts = 0

        /// Keeps `model` as a new generation, and returns it.
        mutating func keep(_ model: JSONValue) -> Int {
            generation += 1
            models[generation] = model
            return generation
        }

        /// Notes that the stream `id` was brought up to `generation` (nil: it is gone), and lets go of the
        /// models no stream was last brought up to.
        mutating func show(_ generation: Int?, to id: Int) {
            shown[id] = generation
            let kept = Set(shown.values)
            models = models.filter { kept.contains($0.key) }
        }
    }

    private let model: PageModel
    private let state = Locked(State())
    private let tokens = Locked<[ObservationToken]>([])
    /// Works out the model after a change, off the committing thread, and sends every event.
    private let queue = DispatchQueue(label: "LoupeSettingsPage.ChangeFeed")
    /// How often an idle stream sends a comment, so that a page gone away is noticed.
    static let keepAlive: Duration = .seconds(15)

    init(model: PageModel) {
        self.model = model
        let changes = model.root.observe { [weak self] _ in self?.changed() }
        let problems = model.root.observeErrors { [weak self] error in
            guard let self else { return }
            let event = Self.problem(error)
            queue.async { self.sendToAll(event) }
        }
        tokens.withLock { $0 = [changes, problems] }
    }

    /// The number of open streams.
    var count: Int { state.withLock { $0.streams.count } }

    /// How many changes were sent to the streams: the events of the latest are yielded to every stream.
    var broadcasts: Int { state.withLock { $0.broadcasts } }

    /// A new stream: the settings now, then each change; ends when the page goes away or ``finishAll()``.
    func subscribe() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let id = state.withLock { state in
            state.next += 1
            state.streams[state.next] = continuation
            return state.next
        }
        let keepAlive = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.keepAlive)
                guard let feed = self else { return }
                feed.queue.async { feed.send(": keep-alive\n\n", to: id) }
            }
        }
        continuation.onTermination = { [weak self] _ in
            keepAlive.cancel()
            self?.state.withLock { state in
                state.streams[id] = nil
                state.show(nil, to: id)
            }
        }
        queue.async { [self] in bringUp(id) }
        return stream
    }

    /// Ends every stream.
    func finishAll() {
        let all = state.withLock { state in
            defer { state.streams = [:] }
            return Array(state.streams.values)
        }
        for continuation in all { continuation.finish() }
    }

    private func changed() {
        let schedule = state.withLock { state -> Bool in
            guard !state.streams.isEmpty, !state.pending else { return false }
            state.pending = true
            return true
        }
        guard schedule else { return }
        queue.async { [self] in
            state.withLock { $0.pending = false }
            broadcast()
        }
    }

    // MARK: On the queue

    /// Sends each stream what changed since the model it was last brought up to, and brings it up to the
    /// model now.
    private func broadcast() {
        let current: JSONValue
        do {
            current = try model.settings()
        } catch {
            sendToAll(Self.problem(error))
            return
        }
        let (targets, known, generation) = state.withLock { state in
            let targets = state.streams.keys.map { (id: $0, shown: state.shown[$0]) }
            let known = state.models
            state.models = [:]
            let generation = state.keep(current)
            for target in targets { state.shown[target.id] = generation }
            return (targets, known, generation)
        }
        // Every change sends each stream an event, if only of the model's own fields: a page reloads its
        // history and its fleet view on each.
        var events: [Int: String] = [:]
        for target in targets {
            guard let shown = target.shown, let before = known[shown] else {
                bringUp(target.id, to: (current, generation))
                continue
            }
            let event = events[shown] ?? Self.event("settings", Self.changes(from: before, to: current))
            events[shown] = event
            send(event, to: target.id, current: (current, generation))
        }
        state.withLock { $0.broadcasts += 1 }
    }

    /// Sends the stream `id` the whole model, `current` or worked out now, and notes that it was brought up
    /// to it.
    private func bringUp(_ id: Int, to current: (model: JSONValue, generation: Int)? = nil) {
        let whole: (model: JSONValue, generation: Int)
        if let current {
            whole = current
        } else {
            do {
                let model = try model.settings()
                whole = (model, state.withLock { $0.keep(model) })
            } catch {
                deliver(Self.problem(error), to: id)
                return
            }
        }
        state.withLock { $0.show(whole.generation, to: id) }
        deliver(Self.event("settings", whole.model), to: id)
    }

    /// Sends `event` to the stream `id`; when that drops an earlier event, brings it up to the whole model
    /// right after (`current`, or worked out now).
    private func send(_ event: String, to id: Int, current: (model: JSONValue, generation: Int)? = nil) {
        if deliver(event, to: id) { bringUp(id, to: current) }
    }

    /// Sends `event` to every stream.
    private func sendToAll(_ event: String) {
        for id in state.withLock({ Array($0.streams.keys) }) { send(event, to: id) }
    }

    /// Yields `event` to the stream `id`; returns whether that dropped an earlier event.
    @discardableResult
    private func deliver(_ event: String, to id: Int) -> Bool {
        guard let continuation = state.withLock({ $0.streams[id] }) else { return false }
        if case .dropped = continuation.yield(event) { return true }
        return false
    }

    // MARK: Events

    /// `new` with its groups holding only the settings that differ from `old`'s (a setting by its path),
    /// and the groups that hold none left out; `removed` lists the paths of `old`'s settings that `new` no
    /// longer has (a key gone from a document that no type describes), when there are any.
    static func changes(from old: JSONValue, to new: JSONValue) -> JSONValue {
        guard case .object(var fields) = new, case .array(let groups)? = fields["groups"],
            case .array(let oldGroups)? = old[path: "groups"]
        else { return new }
        var before: [String: JSONValue] = [:]
        for group in oldGroups {
            guard case .array(let settings)? = group[path: "settings"] else { continue }
            for setting in settings {
                if case .string(let path)? = setting[path: "path"] { before[path] = setting }
            }
        }
        var changed: [JSONValue] = []
        var gone = before
        for group in groups {
            guard case .object(var members) = group, case .array(let settings)? = members["settings"] else { continue }
            let differing = settings.filter { setting in
                guard case .string(let path)? = setting[path: "path"] else { return true }
                return gone.removeValue(forKey: path) != setting
            }
            guard !differing.isEmpty else { continue }
            members["settings"] = .array(differing)
            changed.append(.object(members))
        }
        fields["groups"] = .array(changed)
        fields["whole"] = nil
        if !gone.isEmpty { fields["removed"] = .array(gone.keys.sorted().map(JSONValue.string)) }
        return .object(fields)
    }

    /// `event: problem` with `error`'s description on one line.
    private static func problem(_ error: any Error) -> String {
        event("problem", .object(["error": .string("\(error)".replacingOccurrences(of: "\n", with: " "))]))
    }

    /// One Server-Sent Event: its name and its data, JSON on one line.
    static func event(_ name: String, _ data: JSONValue) -> String {
        "event: \(name)\ndata: \(data.jsonText())\n\n"
    }
}
#endif
