import Foundation
import Logging

/// A store around another that answers saves at once and writes the latest document to it at most once
/// per interval: for settings that change many times a second.
///
/// ```swift
/// let store = CoalescingStore(FileStore(path: statePath), interval: .seconds(1))
/// ```
///
/// A save costs what an in-memory update costs: it neither locks nor reads the store underneath. The
/// latest document is written when the interval ends, on ``flush()`` (`RootLens.flush()`), and when the
/// store is released; a crash loses at most one interval of changes.
///
/// Changes another writer makes to the store underneath are never lost, and neither are this process's:
/// when the store underneath has moved on, the changes not yet written are applied again over what it
/// holds, as their merge patch (where both changed one part, this process's change wins, as it would have
/// written last). ``load()`` always reads the store underneath, so `RootLens.reload()` and a watch see
/// other writers' changes.
public final class CoalescingStore: DocumentStore, StoreDeferredWrites {
    /// The store written to.
    public let base: any DocumentStore
    /// The longest a saved document waits to be written.
    public let interval: Duration

    private let logger: Logger
    /// Runs a write when the interval ends, on the store's clock.
    private let schedule: @Sendable (_ write: @escaping @Sendable () -> Void) -> Void
    private let state = Locked(State())
    /// Serializes writes to ``base``.
    private let writing = Locked(())
    private let flushQueue = DispatchQueue(label: "loupe.coalescing-store")

    private struct State {
        /// The token of ``base``'s content that `written` is; nil before the first load.
        var baseToken: ChangeToken?
        /// What ``base`` held at `baseToken`.
        var written: JSONValue?
        /// The document saved and not yet written, and its number among saves.
        var pending: JSONValue?
        var pendingNumber: Int64 = 0
        /// Counts every change of what a load returns: the token this store hands out.
        var generation: Int64 = 0
        var flushScheduled = false
        /// The watch of ``base`` said it may have changed, and nobody has looked since.
        var outsideChangeReported = false

        /// What the store holds, as a load returns it.
        var view: JSONValue? { pending ?? written }

        /// Takes in that ``base`` holds `document` at `token`: pending changes are applied again over it.
        mutating func rebase(on document: JSONValue?, token: ChangeToken) {
            guard token != baseToken else { return }
            if let pending {
                let changes = (written ?? .object([:])).mergePatch(to: pending)
                self.pending = (document ?? .object([:])).merging(patch: changes)
            }
            baseToken = token
            written = document
            generation += 1
        }
    }

    /// Creates a store that writes to `base` at most once per `interval`.
    ///
    /// - Parameters:
    ///   - base: Where documents are written: any store that can be written.
    ///   - interval: The longest a saved document waits to be written.
    ///   - clock: The clock the interval is measured on: the continuous clock, or in tests a clock the test
    ///     moves (`LoupeTesting`'s `ManualClock`).
    ///   - logger: Where background write failures are logged. Values are never logged.
    public init(
        _ base: some DocumentStore, interval: Duration, clock: some Clock<Duration> = ContinuousClock(),
        logger: Logger = Logger(label: "loupe.coalescing")
    ) {
        self.base = base
        self.interval = interval
        self.logger = logger
        let flushQueue = flushQueue
        if clock is ContinuousClock {
            // Real time waits on a Dispatch timer: a cooperative pool kept busy never delays a write.
            schedule = { write in flushQueue.asyncAfter(deadline: .now() + interval.timeInterval, execute: write) }
        } else {
            schedule = { write in
                // Another clock (a test's) is waited on by a task; the deadline is taken when the save is
                // made, and the write runs on the queue, never on the cooperative pool.
                let deadline = clock.now.advanced(by: interval)
                Task {
                    try? await clock.sleep(until: deadline, tolerance: nil)
                    flushQueue.async(execute: write)
                }
            }
        }
    }

    deinit {
        flush(orLog: "could not write pending settings")
    }

    public var description: String { base.description }

    public var coding: DocumentCoding { base.coding }

    public var secretPaths: [ValuePath] { base.secretPaths }

    /// The base store's, but for two: this store's writes are deferred, and it holds no lock (its saves
    /// are answered from memory and never conflict). The base's history is each write that reached it (a
    /// flush of the changes meanwhile) as one change; a purge writes the changes pending first, so that it
    /// reaches them too.
    public var capabilities: StoreCapabilities {
        var capabilities = base.capabilities
        capabilities.deferredWrites = self
        capabilities.exclusiveAccess = nil
        capabilities.history = capabilities.history.map { PendingWrittenFirst(base: $0, writes: self) }
        return capabilities
    }

    /// A history purged once the pending changes are written.
    private struct PendingWrittenFirst: StoreHistory {
        let base: any StoreHistory
        let writes: CoalescingStore

        func history() throws -> SettingsHistory { try base.history() }

        func purgeHistory(of path: ValuePath) throws -> Int {
            try writes.flush()
            return try base.purgeHistory(of: path)
        }
    }

    /// Reads the store underneath, with this process's changes not yet written applied over it.
    public func load() throws -> StoredDocument {
        let stored = try base.load()
        return state.withLock { state in
            state.outsideChangeReported = false
            state.rebase(on: stored.document, token: stored.token)
            return StoredDocument(
                state.view, token: ChangeToken(state.generation), layers: stored.layers, source: stored.source,
                writers: stored.writers)
        }
    }

    /// Keeps `document` to write when the interval ends. Reads the store underneath only when its watch
    /// said it changed.
    public func save(_ document: JSONValue, replacing token: ChangeToken) throws -> ChangeToken {
        if state.withLock({ $0.outsideChangeReported || $0.baseToken == nil }) { _ = try load() }
        let (accepted, schedule) = state.withLock { state -> (ChangeToken?, Bool) in
            guard token == ChangeToken(state.generation) else { return (nil, false) }
            state.pending = document
            state.pendingNumber += 1
            state.generation += 1
            defer { state.flushScheduled = true }
            return (ChangeToken(state.generation), !state.flushScheduled)
        }
        guard let accepted else {
            throw SettingsError(.conflict, store: description, reason: "the store changed since it was read")
        }
        if schedule {
            self.schedule { [weak self] in self?.writeScheduledFlush() }
        }
        return accepted
    }

    /// Deletes the document underneath at once, with the changes not yet written.
    public func remove(replacing token: ChangeToken) throws -> ChangeToken {
        try writing.withLock { _ in
            let baseToken = try state.withLock { state -> ChangeToken in
                guard token == ChangeToken(state.generation), let baseToken = state.baseToken else {
                    throw SettingsError(.conflict, store: description, reason: "the store changed since it was read")
                }
                return baseToken
            }
            let emptied = try base.remove(replacing: baseToken)
            return state.withLock { state in
                state.pending = nil
                state.baseToken = emptied
                state.written = nil
                state.generation += 1
                return ChangeToken(state.generation)
            }
        }
    }

    public func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        try base.watch { [weak self] in
            self?.state.withLock { $0.outsideChangeReported = true }
            onChange()
        }
    }

    /// Writes the pending document now, over whatever the store underneath holds.
    public func flush() throws {
        try writing.withLock { _ in
            do {
                try ConflictLoop.run(on: base) { round in
                    if round > 0 {
                        // Another writer wrote meanwhile: this process's changes go again over what it holds.
                        let stored = try base.load()
                        state.withLock { $0.rebase(on: stored.document, token: stored.token) }
                        logger.notice(
                            "re-applied changes not yet written over an outside change",
                            metadata: ["store": "\(description)"])
                    }
                    guard
                        let (document, number, baseToken) = state.withLock({ state in
                            state.pending.map { ($0, state.pendingNumber, state.baseToken ?? .absent) }
                        })
                    else { return }
                    let token = try base.save(document, replacing: baseToken)
                    state.withLock { state in
                        state.baseToken = token
                        state.written = document
                        if state.pendingNumber == number { state.pending = nil }
                    }
                }
            } catch is ConflictLoop.Exhausted {
                throw SettingsError(.conflict, store: description, reason: "other writers kept changing the store")
            }
        }
    }

    private func writeScheduledFlush() {
        state.withLock { $0.flushScheduled = false }
        flush(orLog: "could not write coalesced settings")
    }

    /// Writes what is pending where no caller waits for the write (a scheduled flush, the store's release):
    /// a failure is logged as `message`.
    private func flush(orLog message: Logger.Message) {
        do {
            try flush()
        } catch {
            logger.error(
                message, metadata: ["store": "\(base.description)", "error": "\(logDescription(of: error))"])
        }
    }
}
