import Synchronization

/// One committed root. Observers need only the new root: each channel remembers its lens's last value.
///
/// The version comes first, at a fixed offset: reading a field that follows a generic one makes
/// unspecialized code look up the commit type's metadata for its offset.
struct Commit<Root: Sendable>: Sendable {
    let version: UInt64
    let new: Root
}

/// Delivers commits to observers: in commit order, one commit at a time, never while a lens lock is held.
///
/// Commits are queued by the updating thread (in version order, under the update lock). After releasing
/// its locks, that thread drains the queue unless another thread is already draining, in which case that
/// thread delivers this commit too, after the ones before it. So callbacks never run concurrently, and a
/// callback may read or update lenses: a nested update queues its commit, which the running drain delivers
/// once the current callback returns.
///
/// Observers are grouped in ``Channel``s, one per lens: a commit evaluates a lens's value once and compares
/// it with the previous one, however many observers the lens has.
final class Notifier<Root: Sendable>: Sendable {
    private struct State {
        var pending: [Commit<Root>] = []
        var draining = false
        /// The channels with observers, in the order they were registered.
        var channels: [AnyChannel<Root>] = []
    }

    private let state = Locked(State())
    private let nextObserverID = Atomic<UInt64>(0)
    /// Whether any channel is registered, mirrored from `state` (written under its lock) so that a commit
    /// nobody observes costs one atomic load rather than a lock.
    private let observed = Atomic<Bool>(false)
    /// Whether commits may be queued, mirrored likewise, so that a drain with nothing to deliver is free.
    private let mayHavePending = Atomic<Bool>(false)

    /// Whether any lens has observers. When not, a committer makes no ``Commit`` at all: a channel
    /// registered later starts from the version current at that time, so it never needs older commits.
    ///
    /// The unlocked check is exact: a channel is marked observed under the lock before its starting
    /// snapshot is read, and a committer checks only after its root is swapped in, so a commit dropped
    /// for this is one every channel registered since has already seen as its starting point.
    var isObserved: Bool { observed.load(ordering: .acquiring) }

    /// Queues `commit` for delivery; a committer calls it only while ``isObserved``.
    func enqueue(_ new: Root, version: UInt64) {
        state.withLock { state in
            if !state.channels.isEmpty {
                state.pending.append(Commit(version: version, new: new))
                mayHavePending.store(true, ordering: .releasing)
            }
        }
    }

    func drain() {
        // The updating thread's own commit is either still queued (and the flag set by this thread) or
        // already taken by a drain running elsewhere, which delivers it.
        guard mayHavePending.load(ordering: .acquiring) else { return }
        deliverPending()
    }

    private func deliverPending() {
        let mine = state.withLock { state -> Bool in
            guard !state.draining, !state.pending.isEmpty else { return false }
            state.draining = true
            return true
        }
        guard mine else { return }
        // Filled in place rather than returned as a tuple: unspecialized generic code looks up the
        // metadata of every generic tuple and optional it makes, on each call.
        var commits: [Commit<Root>] = []
        var channels: [AnyChannel<Root>] = []
        while true {
            let more = state.withLock { state -> Bool in
                guard !state.pending.isEmpty else {
                    state.draining = false
                    return false
                }
                commits.removeAll(keepingCapacity: true)
                swap(&commits, &state.pending)
                mayHavePending.store(false, ordering: .releasing)
                channels = state.channels
                return true
            }
            guard more else { return }
            for commit in commits {
                for channel in channels {
                    channel.deliver(commit)
                }
            }
        }
    }

    /// Adds an observer to `channel`, registering the channel if it has none yet.
    ///
    /// `snapshot` is read under the notifier's lock, so the observer's starting point and its place in the
    /// commit stream agree: it is sent exactly the commits after the version it started from.
    func add<Value>(
        to channel: Channel<Root, Value>,
        snapshot: () -> (root: Root, version: UInt64),
        initial: ((Value) -> Void)?,
        handler: ObserverHandler<Value>
    ) -> UInt64 {
        let id = nextObserverID.add(1, ordering: .relaxed).newValue
        state.withLock { state in
            observed.store(true, ordering: .sequentiallyConsistent)
            let (root, version) = snapshot()
            let isNew = !state.channels.contains { $0 === channel }
            if isNew { state.channels.append(channel) }
            let value = channel.add(Observer(id: id, since: version, handler: handler), root: root, restart: isNew)
            initial?(value)
        }
        return id
    }

    func remove(_ id: UInt64, from channel: AnyChannel<Root>) {
        state.withLock { state in
            if channel.removeObserver(id) { state.channels.removeAll { $0 === channel } }
            observed.store(!state.channels.isEmpty, ordering: .releasing)
        }
    }
}

/// What an observer is called with: the new value, or the old and the new.
///
/// Two shapes rather than one, so that the common `observe { new in … }` is called directly, not through a
/// closure that drops the old value.
enum ObserverHandler<Value>: Sendable {
    case newValue(@Sendable (_ new: Value) -> Void)
    case change(@Sendable (_ old: Value, _ new: Value) -> Void)

    @inline(__always)
    func callAsFunction(_ old: Value, _ new: Value) {
        switch self {
        case .newValue(let handler): handler(new)
        case .change(let handler): handler(old, new)
        }
    }
}

struct Observer<Value>: Sendable {
    /// Observers are numbered in the order they were added, across the whole graph.
    let id: UInt64
    /// The version the observer started from; it is sent only later commits.
    let since: UInt64
    let handler: ObserverHandler<Value>
}

/// The type-erased face of a ``Channel``, so the notifier can hold channels of every value type.
class AnyChannel<Root: Sendable>: @unchecked Sendable {
    func deliver(_ commit: Commit<Root>) {}
    func removeObserver(_ id: UInt64) -> Bool { true }
}

/// The observers of one lens, and the lens's value as last delivered.
///
/// A commit evaluates the lens once; observers are called only if the value changed (its bytes differ and,
/// when the value is `Equatable`, `==` says so too) and only for commits after the one they started from.
final class Channel<Root: Sendable, Value: Sendable>: AnyChannel<Root>, @unchecked Sendable {
    private struct State {
        /// In the order they were added, so by `id` and by `since`: a commit is delivered to a prefix.
        var observers: [Observer<Value>] = []
        var last: Value?
        var lastVersion: UInt64 = 0
    }

    let step: any Step<Root, Value>
    private let valuesEqual: (@Sendable (Value, Value) -> Bool)?
    private let state = Locked(State())

    init(step: any Step<Root, Value>) {
        self.step = step
        self.valuesEqual = RuntimeEquality(Value.self)?.areEqual
    }

    /// Adds an observer; restarts the channel's memory from `root` if it had no observers. Returns the
    /// observer's starting value.
    fileprivate func add(_ observer: Observer<Value>, root: Root, restart: Bool) -> Value {
        let value = step.get(root)
        state.withLock { state in
            if restart {
                state.last = value
                state.lastVersion = observer.since
            }
            state.observers.append(observer)  // ids are handed out under the notifier's lock, increasing
        }
        return value
    }

    override func deliver(_ commit: Commit<Root>) {
        let current = step.get(commit.new)
        // Filled in place rather than returned as an optional tuple (see ``Notifier``).
        var previous: Value?
        var observers: [Observer<Value>] = []
        let changed = state.withLock { state -> Bool in
            guard commit.version > state.lastVersion, state.last != nil else { return false }
            swap(&previous, &state.last)
            state.last = current
            state.lastVersion = commit.version
            if let previous, haveSameBytes(previous, current) || valuesEqual?(previous, current) == true { return false }
            observers = state.observers
            return true
        }
        guard changed, let previous else { return }
        let version = commit.version
        for observer in observers {
            guard observer.since < version else { break }  // later ones started later
            observer.handler(previous, current)
        }
    }

    /// Removes an observer; returns whether the channel is now empty.
    override func removeObserver(_ id: UInt64) -> Bool {
        state.withLock { state in
            // Sorted by id: find it by bisection.
            var low = 0, high = state.observers.count
            while low < high {
                let middle = (low + high) / 2
                if state.observers[middle].id < id { low = middle + 1 } else { high = middle }
            }
            if low < state.observers.count, state.observers[low].id == id { state.observers.remove(at: low) }
            return state.observers.isEmpty
        }
    }
}
