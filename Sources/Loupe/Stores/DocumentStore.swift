/// Where a settings graph keeps its document between runs: a file, the keyring, `UserDefaults`, etcd, or
/// memory.
///
/// A store moves documents (``JSONValue`` trees), never typed values: the root's document pipeline turns
/// documents into the typed value and back, the same way for every store. A store that keeps bytes turns
/// them into documents with a ``DocumentCodec``.
///
/// The whole contract:
///
/// - ``load()`` reads what the store holds now and a ``ChangeToken`` that identifies it. It changes
///   nothing: no cursor moves, nothing is written, so anyone may call it at any time.
/// - ``save(_:replacing:)`` stores a document made from what `token` identifies, and fails with
///   ``SettingsError/Code/conflict`` when the store holds something else by now. The root then loads again and
///   re-runs the update on what the store holds. How the check and the write are made atomic across
///   processes (a file lock, an etcd transaction) is the store's own business.
/// - ``remove(replacing:)`` deletes the document, under the same check.
/// - ``watch(_:)``, optional: says "something may have changed"; the root then loads.
/// - ``secretPaths``: the values that are secrets, so tools mask them and errors never quote them: the root
///   path where every value is (a keyring), or some, in a document the store otherwise shows (a sops file).
/// - ``capabilities``: what a store can do beyond that, each part optional, as one value (see
///   ``StoreCapabilities``): keep a history (``StoreHistory``), report which version each reader runs
///   (``StoreFleetReport``), hold its own lock (``StoreExclusiveAccess``), write later what it answered at once
///   (``StoreDeferredWrites``). A wrapper passes its base's on in one line, so that none is dropped by mistake.
///
/// A store that can only be read implements ``load()`` alone: the default ``save(_:replacing:)`` and
/// ``remove(replacing:)`` throw ``SettingsError/Code/readOnly``, and a root over it reads and observes, and
/// its writes throw ``SettingsError/Code/readOnly``.
///
/// Every store is a stack: a plain store's ``StoredDocument`` is one document; a ``LayeredStore``'s also
/// carries the read-only layers and locks below it. The root runs the same pipeline over both.
///
/// Anything else is a wrapper: ``CoalescingStore`` answers saves at once and writes later, around any
/// store. The root calls its store from one thread at a time. Stores must never put a stored value into an
/// error, a log message or their `description` when they hold secrets.
public protocol DocumentStore: AnyObject, Sendable, CustomStringConvertible {
    /// Reads what the store holds now, and the token that identifies it. Changes nothing.
    ///
    /// - Throws: ``SettingsError`` when something is stored but cannot be read or parsed. A store must never
    ///   treat unreadable data as "nothing stored", or the root would overwrite it with a default.
    func load() throws -> StoredDocument

    /// Stores `document`, replacing what the store holds, atomically, if it still holds what `token`
    /// identifies; returns the token of what it holds afterwards.
    ///
    /// - Throws: ``SettingsError/Code/conflict`` when the store holds something else by now (nothing is
    ///   written); ``SettingsError/Code/readOnly`` when the store cannot be written (the default); any other
    ///   ``SettingsError`` when the write fails, leaving the old document in place.
    func save(_ document: JSONValue, replacing token: ChangeToken) throws -> ChangeToken

    /// Deletes the stored document, if the store still holds what `token` identifies; the next
    /// ``load()`` returns no document. Deleting nothing is not an error. Returns the token of the empty
    /// store (for a layered store, of what lies below).
    ///
    /// - Throws: as ``save(_:replacing:)``.
    func remove(replacing token: ChangeToken) throws -> ChangeToken

    /// Starts calling `onChange` (on any thread) whenever what the store holds may have changed; returns
    /// nil when the store cannot watch here (the default). A spurious call costs the root a load.
    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)?

    /// The paths of the values that are secrets in the document the store last loaded or saved: tools
    /// mask them unless asked to reveal, configuration readers mark them secret, and errors do not quote
    /// them. The root path (``ValuePath/root``) for a store whose every value is a secret (a keyring); the
    /// paths of some values for a store that keeps those secret and shows the rest (a sops file's
    /// encrypted values). Empty by default.
    var secretPaths: [ValuePath] { get }

    /// How the typed value maps to this store's documents (date and key strategies); by default,
    /// `JSONEncoder`'s and `JSONDecoder`'s defaults. A store that keeps bytes returns its codec's.
    var coding: DocumentCoding { get }

    /// What the store can do beyond loading, saving and watching; none of it by default.
    var capabilities: StoreCapabilities { get }
}

extension DocumentStore {
    public func save(_ document: JSONValue, replacing token: ChangeToken) throws -> ChangeToken {
        throw SettingsError(.readOnly, store: description, reason: "it is read-only")
    }

    public func remove(replacing token: ChangeToken) throws -> ChangeToken {
        throw SettingsError(.readOnly, store: description, reason: "it is read-only")
    }

    public func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? { nil }

    public var secretPaths: [ValuePath] { [] }

    public var coding: DocumentCoding { DocumentCoding() }

    public var capabilities: StoreCapabilities { StoreCapabilities() }
}

// The capabilities, asked of any store: what a store without one does.
extension DocumentStore {
    /// Runs `body` holding the store's own lock against every other writer (``StoreExclusiveAccess``), or
    /// just runs it, for a store without one.
    public func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R {
        guard let access = capabilities.exclusiveAccess else { return try body() }
        return try access.withExclusiveAccess(body)
    }

    /// Makes every document the store answered at once durable now (``StoreDeferredWrites``); nothing to
    /// do for a store that writes each save before it returns.
    public func flush() throws { try capabilities.deferredWrites?.flush() }

    /// The changes the store keeps a record of (``StoreHistory``); nil when it keeps none.
    public func history() throws -> SettingsHistory? { try capabilities.history?.history() }

    /// Takes the values at `path` out of the store's history (``StoreHistory``); nil when it keeps none.
    public func purgeHistory(of path: ValuePath) throws -> Int? { try capabilities.history?.purgeHistory(of: path) }

    /// Tells the store which version its root runs (``StoreFleetReport``); nothing for a store that keeps
    /// no such report.
    public func rootDidApply(_ token: ChangeToken, refusal: SettingsError?) {
        capabilities.fleetReport?.rootDidApply(token, refusal: refusal)
    }

    /// Which version each reader reports running (``StoreFleetReport``); nil for a store without a report.
    public func appliedStatus() throws -> AppliedStatus? { try capabilities.fleetReport?.appliedStatus() }
}

/// What a store can do beyond loading, saving and watching, as one value: each part is there or not.
///
/// A store states what it has (`StoreCapabilities(history: journal, exclusiveAccess: self)`); a wrapper
/// passes its base's on whole (`var capabilities: StoreCapabilities { base.capabilities }`), changing only
/// what it does differently, so that a capability is never lost to a member forgotten in a wrapper.
public struct StoreCapabilities: Sendable {
    /// The record of changes the store keeps (a file's journal, etcd's revisions), for
    /// `RootLens.history()`, `RootLens.rollback(to:)` and `RootLens.purgeHistory(of:)`.
    public var history: (any StoreHistory)?
    /// The report a shared store (etcd) keeps of which version each reader runs, and which it refused.
    public var fleetReport: (any StoreFleetReport)?
    /// The store's own lock (a file's `flock`), which the root holds around a load, an update and a save
    /// after a conflict, so that a writer that lost a race cannot lose the next one too.
    public var exclusiveAccess: (any StoreExclusiveAccess)?
    /// Saves answered at once and written later (a ``CoalescingStore``), made durable on demand.
    public var deferredWrites: (any StoreDeferredWrites)?
    /// Where values are written in the text of the store's files, for a ``Provenance`` that names the line.
    public var textPositions: (any StoreTextPositions)?
    /// Whether the store follows the files that its documents' secret references read
    /// (`{"$secret": "file:…"}`): their versions are part of its tokens, and its watch reports their changes,
    /// so that a rotated secret reaches the root. A ``LayeredStore`` does; a root holds any other store as the top of a layered store
    /// of no layers, which does it for it.
    public var watchesReferencedFiles: Bool

    public init(
        history: (any StoreHistory)? = nil, fleetReport: (any StoreFleetReport)? = nil,
        exclusiveAccess: (any StoreExclusiveAccess)? = nil, deferredWrites: (any StoreDeferredWrites)? = nil,
        textPositions: (any StoreTextPositions)? = nil, watchesReferencedFiles: Bool = false
    ) {
        self.history = history
        self.fleetReport = fleetReport
        self.exclusiveAccess = exclusiveAccess
        self.deferredWrites = deferredWrites
        self.textPositions = textPositions
        self.watchesReferencedFiles = watchesReferencedFiles
    }
}

/// Where a store's values are written in the text of its files: what lets ``Provenance`` say the line of a
/// value as well as its file, as `loupe explain` and the settings page show it.
public protocol StoreTextPositions: Sendable {
    /// Where the values at `paths` are written in the file `source` (as ``StoredDocument/source`` and
    /// ``StoredLayer/source`` name it) as the store last read or wrote it: each value's line and column, or
    /// those of the nearest part above it that the text writes. nil for each path when the store keeps no
    /// such file or its format cannot say.
    func positions(of paths: [ValuePath], inFile source: String) -> [TextPosition?]
}

/// A record of a store's changes.
public protocol StoreHistory: Sendable {
    /// The changes the store keeps a record of, oldest first, with the document before them. Reads and
    /// changes nothing else.
    ///
    /// - Throws: ``SettingsError`` when the record exists but cannot be read.
    func history() throws -> SettingsHistory

    /// Takes the values at `path`, and under it, out of every record (the documents and patches both ways
    /// it keeps), noting the path in each record that held one (``SettingsChange/purgedPaths``); returns how
    /// many records held one. What the store holds now is not changed. The root path purges every value.
    ///
    /// - Throws: ``SettingsError`` when the history cannot be read or rewritten, or is not the store's to
    ///   rewrite (etcd's own revisions).
    func purgeHistory(of path: ValuePath) throws -> Int
}

/// A shared store's report of which version each of its readers runs.
public protocol StoreFleetReport: Sendable {
    /// Tells the store that its root now runs the version `token` identifies (after a load, an update or
    /// an outside change), or, with `refusal`, that it refused that version (it does not fit the type or
    /// its rules) and keeps running the one before. Must return at once.
    func rootDidApply(_ token: ChangeToken, refusal: SettingsError?)

    /// Which version each reader of the store reports running, and the store's current version.
    ///
    /// - Throws: ``SettingsError`` when the report cannot be read.
    func appliedStatus() throws -> AppliedStatus
}

/// A store's own lock against every other writer.
public protocol StoreExclusiveAccess: Sendable {
    /// Runs `body` holding the lock; the store's saves and removes called from `body` on the same thread
    /// run inside it.
    func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R
}

/// Saves a store answers at once and writes later.
public protocol StoreDeferredWrites: Sendable {
    /// Makes every saved document durable now.
    func flush() throws
}

/// What identifies one version of what a store holds: a file's identity, an etcd `mod_revision`, a digest
/// of a keyring item's bytes. Two loads that return equal tokens returned the same thing.
///
/// A token is opaque to the root, which only hands it back to the store that made it. It never holds a
/// stored value.
public struct ChangeToken: Sendable, Hashable, CustomStringConvertible {
    private enum Storage: Sendable, Hashable {
        case absent
        case number(Int64)
        case text(String)
        case file(FileIdentity, digest: UInt64?)
        case combined([ChangeToken])
    }

    private let storage: Storage

    private init(_ storage: Storage) {
        self.storage = storage
    }

    /// The token of a store that holds nothing.
    public static let absent = ChangeToken(.absent)

    /// A token made of a number: a revision, a generation.
    public init(_ number: Int64) {
        storage = .number(number)
    }

    /// A token made of text: an identity written out, a digest.
    public init(_ text: String) {
        storage = .text(text)
    }

    /// A file's identity (its device, inode, size and modification time) as a token, with the digest of
    /// its bytes where they were read: two saves in place at the same size within one tick of the kernel's
    /// clock leave one identity, and only the bytes tell them apart.
    init(file identity: FileIdentity, digest: UInt64? = nil) {
        storage = .file(identity, digest: digest)
    }

    /// The identity of the file a file's token names, else nil.
    var fileIdentity: FileIdentity? {
        if case .file(let identity, _) = storage { identity } else { nil }
    }

    /// The digest of the bytes a file's token names, where they were read; else nil.
    var fileDigest: UInt64? {
        if case .file(_, let digest) = storage { digest } else { nil }
    }

    /// A token made of the tokens of several parts (a layered store's layers), in order.
    public init(combining parts: [ChangeToken]) {
        storage = .combined(parts)
    }

    /// The parts of a token made by ``init(combining:)``, else nil.
    public var parts: [ChangeToken]? {
        if case .combined(let parts) = storage { parts } else { nil }
    }

    /// The number of a token made from a number, else nil.
    public var number: Int64? {
        if case .number(let number) = storage { number } else { nil }
    }

    public var description: String {
        switch storage {
        case .absent: "absent"
        case .number(let number): "\(number)"
        case .text(let text): text
        case .file(let identity, let digest):
            "\(identity.device):\(identity.inode):\(identity.size):\(identity.modifiedSeconds).\(identity.modifiedNanoseconds)"
                + (digest.map { "#" + String($0, radix: 16) } ?? "")
        case .combined(let parts): "[" + parts.map(\.description).joined(separator: ", ") + "]"
        }
    }
}

/// What one ``DocumentStore/load()`` read: the store's document, the token that identifies it, and, for a
/// store of layers, the read-only layers below it.
public struct StoredDocument: Sendable, Equatable {
    /// The document the store holds, as stored (its version stamp and all); nil when it holds nothing.
    public var document: JSONValue?
    /// What identifies this version of the store's content; handed back to ``DocumentStore/save(_:replacing:)``.
    public var token: ChangeToken
    /// The read-only layers under ``document``, lowest first (a ``LayeredStore``'s files, drop-ins and
    /// lock files); empty for a plain store.
    public var layers: [StoredLayer]
    /// Where ``document`` is, for provenance (a file's path); nil: the store's description.
    public var source: String?
    /// Who can change ``document``, when it is a file people may write: what its secret references may
    /// read (see ``DocumentWriters``). nil: the program's own store, whose references are all followed.
    public var writers: DocumentWriters?

    /// What a store read.
    public init(
        _ document: JSONValue?, token: ChangeToken, layers: [StoredLayer] = [], source: String? = nil,
        writers: DocumentWriters? = nil
    ) {
        self.document = document
        self.token = token
        self.layers = layers
        self.source = source
        self.writers = writers
    }

    /// A store that holds nothing.
    public static var empty: StoredDocument { StoredDocument(nil, token: .absent) }
}

/// One read-only layer under a store's document, as one load read it.
public struct StoredLayer: Sendable, Equatable {
    /// What a layer held when it was read.
    public enum Content: Sendable, Equatable {
        /// A document: a merge patch over the layers below.
        case document(JSONValue)
        /// Paths the writable document may not set.
        case locks([SettingsLock])
        /// Values set over every document, the top's included, and never written: the environment's,
        /// `--set` arguments', credentials'. Typed by the settings type at load.
        case overrides([SettingOverride])
        /// It could not be read or parsed. The root keeps the last good content it read from the same
        /// source, and reports the error.
        case unreadable(SettingsError)
    }

    /// Where the layer is (a file's path); the root matches layers across loads by it.
    public var source: String
    /// The layer's name in errors (`JSON file /etc/app/settings.json`).
    public var name: String
    public var content: Content
    /// Who can change the layer, when it is a file: what its secret references may read (see
    /// ``DocumentWriters``). nil: the program's own layer, whose references are all followed.
    public var writers: DocumentWriters?

    /// A layer as read.
    public init(source: String, name: String, content: Content, writers: DocumentWriters? = nil) {
        self.source = source
        self.name = name
        self.content = content
        self.writers = writers
    }
}

/// Who can change a settings file, as a read found it: the trust boundary of the secret references the
/// file holds.
///
/// A reference (`{"$secret": "file:/run/secrets/token"}`) makes the program read something and use it as
/// a value, which may reach a log line, a peer, or another user's screen. So a reference is followed only
/// where every user who could have written it could have read what it names themselves:
/// - in a file that no one but its owner and root can change: neither the file nor its directory is
///   writable by its group or by others (a directory with the sticky bit, as `/tmp`, lets no one else
///   replace the file), as `ssh`'s `StrictModes` asks of `authorized_keys`;
/// - a `file:` reference names a regular file its owner may read (root may read any), never one under
///   `/proc`, `/sys` or `/dev`; a relative path is relative to the settings file's directory;
/// - the other kinds (`env:`, `credential:`, `keyring:`, a scheme a program registers) read what the
///   process holds: they are followed only in files owned by root or by the user the process runs as.
///
/// A reference that breaks the rule fails the load with an error naming the reference and the file that
/// holds it, never what it names.
public struct DocumentWriters: Sendable, Hashable, CustomStringConvertible {
    /// The file, as the store names it.
    public var file: String
    /// The user ID of the file's owner.
    public var owner: UInt32
    /// Why users other than the owner and root can change the file (`its directory /srv/pub is writable by
    /// others`); nil when they cannot.
    public var openToOthers: String?

    /// Who can change `file`.
    public init(file: String, owner: UInt32, openToOthers: String? = nil) {
        self.file = file
        self.owner = owner
        self.openToOthers = openToOthers
    }

    /// `/etc/app/settings.json (owner uid 0)`.
    public var description: String { "\(file) (owner uid \(owner))" }
}

/// A running watch started by ``DocumentStore/watch(_:)``; the root cancels it when it is released.
public protocol StoreWatch: Sendable {
    /// Stops the watch. After it returns, `onChange` is not called again.
    func cancel()
}

/// Several watches as one.
struct StoreWatches: StoreWatch {
    let all: [any StoreWatch]

    init(_ all: [any StoreWatch]) {
        self.all = all
    }

    func cancel() {
        all.forEach { $0.cancel() }
    }
}
