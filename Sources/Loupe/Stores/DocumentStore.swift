/// Where a settings graph keeps its document between runs: a file, the keyring, `UserDefaults`, etcd, or
/// memory.
///
/// A store moves documents (``JSONValue`` trees), never typed values: the root's document pipeline turns
/// documents into the typed value and back, the same way for every store. A store that keeps bytes turns
/// them into documents with a ``DocumentCodec`` (``DocumentCodec/parseDocument(_:store:revealingValues:)``).
///
/// The contract is small: ``load()`` here, ``WritableDocumentStore/save(_:)`` and
/// ``WritableDocumentStore/remove()`` for stores that can be written. What only some stores do is a
/// refinement of its own, which the root finds by conformance:
///
/// - ``LockingStore``: exclusive access across processes around a read–modify–write (a file's `flock`);
/// - ``ChangeDetectingStore``: whether another writer changed the document since this store last saw it;
/// - ``WatchingStore``: reports of outside changes as they happen (inotify, an etcd watch);
/// - ``DeferredWriteStore``: writes that reach the medium later, made durable by `flush()`;
/// - ``SecretStore``: documents that are secrets, so tools mask them and errors never quote them.
///
/// A store that is only a ``DocumentStore`` is read-only: a root over it reads and observes, and its
/// writes throw ``LensError/Code/readOnly``.
///
/// The root calls its store under its update lock, one call at a time. Stores must never put a stored
/// value into an error, a log message or their `description` when they keep secrets.
public protocol DocumentStore: AnyObject, Sendable, CustomStringConvertible {
    /// Reads the stored document, or returns `nil` when nothing is stored.
    ///
    /// - Throws: ``StoreError`` when something is stored but cannot be read or parsed. A store must never
    ///   treat unreadable data as "nothing stored", or the root would overwrite it with a default.
    func load() throws -> JSONValue?

    /// How the typed value maps to this store's documents (date and key strategies); by default,
    /// `JSONEncoder`'s and `JSONDecoder`'s defaults. A store that keeps bytes returns its codec's.
    var coding: DocumentCoding { get }
}

extension DocumentStore {
    public var coding: DocumentCoding { DocumentCoding() }
}

/// A store that can be written.
public protocol WritableDocumentStore: DocumentStore {
    /// Stores `document`, replacing what was stored, atomically: afterwards the store holds either the old
    /// document or the new one, never a mixture.
    ///
    /// A store that detects a lost race (a compare-and-swap that failed) throws ``StoreError`` with code
    /// ``StoreError/Code/conflict``; the root then re-runs the update on the fresh document, a bounded
    /// number of times.
    func save(_ document: JSONValue) throws

    /// Deletes the stored document; the next ``DocumentStore/load()`` returns `nil`. Deleting nothing is
    /// not an error.
    func remove() throws
}

/// A store that other processes share, and that can hold them off around a read–modify–write.
public protocol LockingStore: DocumentStore {
    /// Runs `body` while holding exclusive access against every other process using the store (a `flock`,
    /// for example). The root holds it around each update: checking for an outside change, running the
    /// update closure, saving.
    func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R
}

/// A store that something else may change (another process, another host): it can tell whether the
/// stored document changed since this store instance last loaded or saved it.
///
/// Before every update the root asks ``loadIfChanged()``, so the update applies to what another writer
/// stored since. A store that nothing else can write (``MemoryStore``) does not conform, and so spares
/// every update the call.
public protocol ChangeDetectingStore: DocumentStore {
    /// Whether the stored document changed since this store instance last loaded or saved it, and if so,
    /// what it holds now.
    func loadIfChanged() throws -> StoreChange
}

/// A store that can report outside changes as they happen.
public protocol WatchingStore: ChangeDetectingStore {
    /// Starts calling `onChange` (on any thread) whenever the stored document may have changed; returns
    /// nil when the store cannot watch here.
    ///
    /// The root answers each call with ``ChangeDetectingStore/loadIfChanged()``, so a spurious call costs a
    /// check, not a commit.
    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)?
}

/// A store whose writes reach their medium later than `save` returns (a coalescing file store).
public protocol DeferredWriteStore: WritableDocumentStore {
    /// Makes every saved document durable now.
    func flush() throws

    /// Saves the document `encode` makes, encoding it only when the write happens: a burst of commits
    /// between two writes is encoded once. The root calls this rather than ``WritableDocumentStore/save(_:)``.
    /// By default, encodes at once and saves.
    func save(encoding encode: @escaping @Sendable () throws -> JSONValue) throws
}

extension DeferredWriteStore {
    public func save(encoding encode: @escaping @Sendable () throws -> JSONValue) throws {
        try save(encode())
    }
}

/// A store that keeps secrets (the keyring): tools reading through it mask every value, configuration
/// readers mark its values secret, and errors never quote what it holds.
public protocol SecretStore: DocumentStore {}

/// What ``ChangeDetectingStore/loadIfChanged()`` found.
public enum StoreChange: Sendable, Equatable {
    /// The stored document is the one this store instance last loaded or saved.
    case unchanged
    /// Another writer changed the stored document; it now holds this (`nil`: it was deleted).
    case changed(JSONValue?)
}

/// A running watch started by ``WatchingStore/watch(_:)``; the root cancels it when it is released.
public protocol StoreWatch: Sendable {
    /// Stops the watch. After it returns, `onChange` is not called again.
    func cancel()
}
