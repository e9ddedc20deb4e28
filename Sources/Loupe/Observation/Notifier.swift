import Foundation
import Synchronization

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
///
/// **Why a commit is queued as two entries, not as one pair.** This code runs unspecialized (the library
/// never sees the program's settings type), and unspecialized code looks up the runtime metadata of each
/// generic type it builds from a type parameter (a `(version, root)` struct, an optional, an iterator,
/// new array storage) every time it uses one (`Benchmarks/README.md` says which row needs this). So a
/// commit is queued as its version and its root in two arrays whose storage the queue keeps and which are
/// walked by index, and a ``Channel`` keeps its state in fields of its own.
final class Notifier<Root: Sendable>: Sendable {
    private struct State {
        /// The commits not yet delivered, in version order: their versions, and their roots at the same
        /// indices.
        var pendingVersions: [UInt64] = []
        var pendingRoots: [Root] = []
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

    /// Whether any lens has observers. When not, a committer queues nothing: a channel registered later
    /// starts from the version current at that time, so it never needs older commits.
    ///
    /// The unlocked check is exact: a channel is marked observed under the lock before its starting
    /// snapshot is read, and a committer checks only after its root is swapped in, so a commit dropped
    /// for this is one every channel registered since has already seen as its starting point.
    var isObserved: Bool { observed.load(ordering: .acquiring) }

    /// Queues the commit of `new` as `version` for delivery; a committer calls it only while
    /// ``isObserved``.
    func enqueue(_ new: Root, version: UInt64) {
        state.withLock { state in
            if !state.channels.isEmpty {
                state.pendingVersions.append(version)
                state.pendingRoots.append(new)
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
            guard !state.draining, !state.pendingVersions.isEmpty else { return false }
            state.draining = true
            return true
        }
        guard mine else { return }
        // Taken out in place (swapped with these emptied arrays), so that their storage is reused.
        var versions: [UInt64] = []
        var roots = [Root]()
        var channels = [AnyChannel<Root>]()
        while true {
            let more = state.withLock { state -> Bool in
                // The delivered commits' arrays, emptied, go back to the queue, and the queued ones come
                // out; when none are queued, the queue just takes back the storage, for the next commits.
                let more = !state.pendingVersions.isEmpty
                versions.removeAll(keepingCapacity: true)
                roots.removeAll(keepingCapacity: true)
                swap(&versions, &state.pendingVersions)
                swap(&roots, &state.pendingRoots)
                guard more else {
                    state.draining = false
                    return false
                }
                mayHavePending.store(false, ordering: .releasing)
                channels = state.channels
                return true
            }
            guard more else { return }
            for commit in 0..<versions.count {
                for channel in 0..<channels.count {
                    channels[channel].deliver(version: versions[commit], root: roots[commit])
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
    func deliver(version: UInt64, root: Root) {}
    func removeObserver(_ id: UInt64) -> Bool { true }
}

/// The observers of one lens, and the lens's value as last delivered.
///
/// A commit evaluates the lens once; observers are called only if the value changed (its bytes differ and,
/// when the value is `Equatable`, `==` says so too) and only for commits after the one they started from.
///
/// Its state lives in its own fields, guarded by `guarded`, rather than in a struct inside the lock: a
/// generic class's fields are found through the object itself, while a struct built from `Value` would be
/// looked up (see ``Notifier``). It is `@unchecked Sendable` because its state is read and written only
/// inside `guarded`.
final class Channel<Root: Sendable, Value: Sendable>: AnyChannel<Root>, @unchecked Sendable {
    let step: any Step<Root, Value>
    private let valuesEqual: (@Sendable (Value, Value) -> Bool)?
    private let guarded = Locked(())
    /// In the order they were added, so by `id` and by `since`: a commit is delivered to a prefix.
    private var observers: [Observer<Value>] = []
    /// The value last delivered, meaningful while `isLive`; set when the channel (re)starts.
    private var last: Value
    private var lastVersion: UInt64 = 0
    /// Whether the channel has started: commits before that are not its to deliver.
    private var isLive = false

    /// A channel for the lens `step` reaches; `current` is the lens's value now, which the first
    /// observer's starting point replaces.
    init(step: any Step<Root, Value>, current: Value) {
        self.step = step
        self.valuesEqual = RuntimeEquality(Value.self)?.areEqual
        last = current
    }

    /// Adds an observer; restarts the channel's memory from `root` if it had no observers. Returns the
    /// observer's starting value.
    fileprivate func add(_ observer: Observer<Value>, root: Root, restart: Bool) -> Value {
        let value = step.get(root)
        guarded.withLock { _ in
            if restart {
                last = value
                lastVersion = observer.since
                isLive = true
            }
            observers.append(observer)  // ids are handed out under the notifier's lock, increasing
        }
        return value
    }

    override func deliver(version: UInt64, root: Root) {
        let current = step.get(root)
        var changed = false
        var observers = [Observer<Value>]()
        let previous = guarded.withLock { _ -> Value in
            let previous = last
            guard version > lastVersion, isLive else { return previous }
            last = current
            lastVersion = version
            changed = !SameBytes.equal(previous, current) && valuesEqual?(previous, current) != true
            if changed { observers = self.observers }
            return previous
        }
        guard changed else { return }
        for observer in observers {
            guard observer.since < version else { break }  // later ones started later
            observer.handler(previous, current)
        }
    }

    /// Removes an observer; returns whether the channel is now empty.
    override func removeObserver(_ id: UInt64) -> Bool {
        guarded.withLock { _ in
            // Sorted by id: find it by bisection.
            var low = 0, high = observers.count
            while low < high {
                let middle = (low + high) / 2
                if observers[middle].id < id { low = middle + 1 } else { high = middle }
            }
            if low < observers.count, observers[low].id == id { observers.remove(at: low) }
            return observers.isEmpty
        }
    }
}
