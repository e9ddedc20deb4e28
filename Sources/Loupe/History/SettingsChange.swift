#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// One change to a store's document, as its history records it: when, who, and the merge patches
/// (RFC 7386) that take the document forward and back.
///
/// ```swift
/// for change in try root.history() {
///     print(change.revision, change.time, change.author?.userName ?? "outside edit", change.changedPaths)
/// }
/// ```
public struct SettingsChange: Sendable, Equatable {
    /// Who made a change: the user, the process and the host.
    public struct Author: Sendable, Equatable {
        /// The user's id.
        public var userID: UInt32
        /// The user's name, when the system knows it.
        public var userName: String?
        /// The process's id.
        public var processID: Int32
        /// The program's name (`loupe`, `myapp`).
        public var program: String
        /// The host's name.
        public var host: String

        /// An author.
        public init(userID: UInt32, userName: String?, processID: Int32, program: String, host: String) {
            self.userID = userID
            self.userName = userName
            self.processID = processID
            self.program = program
            self.host = host
        }

        /// This process: its effective user, its id, its program and its host.
        public static var thisProcess: Author {
            var author = processAuthor
            author.processID = getpid()  // after a fork, the child's
            return author
        }

        private static let processAuthor: Author = {
            let uid = geteuid()
            var name: String?
            if let entry = getpwuid(uid), let pointer = entry.pointee.pw_name { name = String(cString: pointer) }
            // `gethostname`, not `ProcessInfo.hostName`, which may ask the resolver.
            var buffer = [CChar](repeating: 0, count: 256)
            let host =
                gethostname(&buffer, buffer.count - 1) == 0
                ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
            return Author(
                userID: UInt32(uid), userName: name, processID: getpid(), program: ProcessInfo.processInfo.processName,
                host: host)
        }()
    }

    /// The change's number: each change has the next.
    public var revision: Int
    /// When it was made (an outside edit: when it was seen); nil when the store does not record it
    /// (etcd).
    public var time: Date?
    /// Who made it; nil for an outside edit (an editor, a script, another tool), whose author is unknown,
    /// and in a history that records no authors (``SettingsHistory/recordsAuthors``).
    public var author: Author?
    /// The merge patch from the document before to the document after; `null` when the document was
    /// removed.
    public var patch: JSONValue
    /// The merge patch from the document after back to the document before; `null` when there was none.
    public var reversePatch: JSONValue
    /// The paths whose values were purged from this change (``SettingsRoot/purgeHistory(of:)``): it set or
    /// removed something there, but neither patch holds what any more. Empty for a change nothing was
    /// purged from.
    public var purgedPaths: [ValuePath]

    /// A change.
    public init(
        revision: Int, time: Date?, author: Author?, patch: JSONValue, reversePatch: JSONValue,
        purgedPaths: [ValuePath] = []
    ) {
        self.revision = revision
        self.time = time
        self.author = author
        self.patch = patch
        self.reversePatch = reversePatch
        self.purgedPaths = purgedPaths
    }

    /// Whether the change was made by something that keeps no history (an editor, a script): seen by a
    /// later write or a watching root. (In a history that records no authors, every change has none.)
    public var isOutsideEdit: Bool { author == nil }

    /// The paths the change set or removed, in order: each leaf of the patch, and each of
    /// ``purgedPaths``.
    public var changedPaths: [ValuePath] {
        var paths: [ValuePath] = []
        // A purged path is a leaf where it was (rather than the object a purge may have left empty), unless
        // the patch holds something else on the way (the part above it removed or replaced): then it
        // comes after the patch's own.
        var patch = patch, apart: [ValuePath] = []
        for purged in purgedPaths {
            let above = (0..<purged.components.count).map { ValuePath(Array(purged.components.prefix($0))) }
            let reachable =
                !purged.components.isEmpty
                && above.allSatisfy { part in
                    guard let value = patch[path: part] else { return true }
                    if case .object = value { return true }
                    return false
                }
            if reachable, (try? patch.setValue(.null, at: purged)) != nil { continue }
            apart.append(purged)
        }
        func walk(_ patch: JSONValue, _ path: [ValuePath.Component]) {
            guard case .object(let members) = patch, !members.isEmpty || path.isEmpty else {
                paths.append(ValuePath(path))
                return
            }
            for key in members.keys.sorted() { walk(members[key]!, path + [.key(key)]) }
        }
        walk(patch, [])
        return paths + apart
    }

    /// Whether the change set or removed `path`, a part under it, or a part above it.
    public func touches(_ path: ValuePath) -> Bool {
        changedPaths.contains {
            $0.components.starts(with: path.components) || path.components.starts(with: $0.components)
        }
    }
}

/// The changes a store keeps, oldest first, and the document before the first of them (the document
/// after ``baseRevision``, the newest revision dropped, or 0 for the document before the first change),
/// from which the document after any kept revision is worked out.
public struct SettingsHistory: Sendable, Equatable {
    /// The revision ``base`` is the document after: the newest dropped, or 0 when none was.
    public var baseRevision: Int
    /// The document before the oldest change kept; nil when there was none.
    public var base: JSONValue?
    /// The changes, oldest first.
    public var changes: [SettingsChange]
    /// Whether the store records who made each change and when (a file's journal does; etcd's revisions
    /// do not).
    public var recordsAuthors: Bool
    /// The paths whose values were purged from ``base`` (``SettingsRoot/purgeHistory(of:)``), or from changes
    /// since folded into it: the history no longer knows what the documents it keeps held there.
    public var basePurgedPaths: [ValuePath]

    /// A history; without arguments, the empty one: no change kept, and nothing stored before.
    public init(
        baseRevision: Int = 0, base: JSONValue? = nil, changes: [SettingsChange] = [],
        recordsAuthors: Bool = true, basePurgedPaths: [ValuePath] = []
    ) {
        self.baseRevision = baseRevision
        self.base = base
        self.changes = changes
        self.recordsAuthors = recordsAuthors
        self.basePurgedPaths = basePurgedPaths
    }

    /// The paths whose values in the document after `revision` the history no longer knows, because they
    /// were purged (``SettingsRoot/purgeHistory(of:)``): those purged from ``base`` and from each change up to
    /// `revision`. ``document(after:)`` holds nothing there; ``SettingsRoot/rollback(to:)`` leaves them as
    /// they are.
    public func purgedPaths(through revision: Int) -> [ValuePath] {
        var paths = basePurgedPaths
        for change in changes where change.revision <= revision {
            paths += change.purgedPaths.filter { !paths.contains($0) }
        }
        return paths
    }

    /// The revisions whose documents are known, as text for messages: `3–40` (the base's and the
    /// changes'), or `none`.
    public var keptRevisions: String {
        guard let last = changes.last?.revision else { return "none" }
        return "\(baseRevision)–\(last)"
    }

    /// The stored document as it was after `revision` (nil: nothing was stored then); ``baseRevision``
    /// gives ``base``.
    ///
    /// - Throws: ``SettingsError/Code/notFound`` when the history does not keep that revision (it was
    ///   dropped, or never was), naming the revisions it keeps.
    public func document(after revision: Int) throws -> JSONValue? {
        guard revision == baseRevision && !changes.isEmpty || changes.contains(where: { $0.revision == revision })
        else {
            throw SettingsError(
                .notFound,
                reason:
                    "revision \(revision) is not kept: the history holds \(changes.isEmpty ? "no revisions" : "revisions \(keptRevisions)")"
            )
        }
        // `null` stands for no document: a patch of `null` removes it, and any other patch over it is the
        // document the patch makes.
        var document: JSONValue = base ?? .null
        for change in changes where change.revision <= revision {
            document = document.merging(patch: change.patch)
        }
        return document == .null ? nil : document
    }

    /// The merge patch (RFC 7386) from `old` to `new`, either of which may be no document (nil): `null`
    /// when `new` is none, `new` itself when `old` is none.
    public static func patch(from old: JSONValue?, to new: JSONValue?) -> JSONValue {
        guard let new else { return .null }
        return (old ?? .object([:])).mergePatch(to: new)
    }
}
