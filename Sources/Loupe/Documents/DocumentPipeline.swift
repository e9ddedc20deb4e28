import Foundation

/// The one place where stored documents meet the typed value, for every store and format alike.
///
/// ```
/// load:   stored document ─▶ take the stamp ─▶ migrations ─▶ merge (RFC 7386) over the encoded defaults
///                         ─▶ decode → Root, noting which keys the type read
/// commit: Root ─▶ encode → document ─▶ the merge patch from the defaults (or the whole document)
///                         ─▶ put back the unknown keys ─▶ stamp the version ─▶ store
/// ```
///
/// Every error it throws names the store, the path of the part that does not fit, and (unless the store
/// keeps secrets) what was found there: `invalid data in JSON file /etc/app/settings.json: server.port:
/// expected Int, found String "80a"`.
struct DocumentPipeline<Root: Codable & Sendable>: Sendable {
    /// How the typed value maps to documents: the store's.
    let coding: DocumentCoding
    /// The store's `description`, for errors.
    let storeName: String
    /// Whether errors may quote values found in documents (not for stores that keep secrets).
    let revealsValues: Bool
    /// The encoded default root: what a stored document lies over.
    let defaults: JSONValue
    /// The version of the documents this program writes (1 unless migrations say otherwise).
    let version: Int
    /// The step to each version from the one before.
    let migrations: [Int: Migration]
    /// What a stored document holds: the differences from the defaults, or the whole value.
    let form: StoredForm
    /// The documents of the large collections the last encode wrote, for the next one to reuse.
    let memo = DocumentEncoder.Memo()

    typealias Migration = @Sendable (inout JSONValue) throws -> Void

    /// The key of an object document that holds its version: `"$version": 2`. No Swift property is named
    /// so, and a person reading the file sees what it is.
    static var stampKey: String { "$version" }

    init(
        coding: DocumentCoding, storeName: String, revealsValues: Bool, defaults: JSONValue,
        version: Int = 1, migrations: [Int: Migration] = [:], form: StoredForm = .differencesFromDefaults
    ) {
        self.coding = coding
        self.storeName = storeName
        self.revealsValues = revealsValues
        self.defaults = defaults
        self.version = version
        self.migrations = migrations
        self.form = form
    }

    /// The root a stored document holds, and what the root must remember of it to store the next one.
    ///
    /// The document's stamp is taken off, the migrations from its version to ``version`` run on it, and it
    /// is merged over ``defaults`` before it is decoded. Nothing is written.
    func load(_ stored: JSONValue) throws -> (root: Root, memory: StoredMemory) {
        var document = stored
        let stamp = try takeStamp(from: &document)
        if stamp < version {
            for step in (stamp + 1)...version {
                guard let migration = migrations[step] else { continue }
                do {
                    try migration(&document)
                } catch {
                    let reason = revealsValues ? "\(error)" : "the migration threw"
                    throw StoreError(.corrupt, store: storeName,
                                     reason: "the migration to version \(step) failed: \(reason)", cause: error)
                }
            }
        }
        // Over no defaults at all (a root of any document), the stored document is the value as it is,
        // `null`s included: a merge would take them for removals.
        let effective = defaults == .object([:]) ? document : defaults.merging(patch: document)
        let reads = ReadKeys()
        let root = try decode(effective, reads: reads)
        return (root, StoredMemory(unknownKeys: UnknownKeys(in: effective, reads: reads), stamp: stamp))
    }

    /// The version `document` is stamped with (1 when unstamped), taking the stamp off.
    private func takeStamp(from document: inout JSONValue) throws -> Int {
        guard case .object(var object) = document, let stamp = object.removeValue(forKey: Self.stampKey) else { return 1 }
        guard case .integer(let number) = stamp, number >= 1 else {
            let found = revealsValues ? ", found \(stamp.shortDescription)" : ""
            throw StoreError(.corrupt, store: storeName, codingPath: Self.stampKey,
                             reason: "expected the document's version, a whole number from 1\(found)")
        }
        document = .object(object)
        return number
    }

    /// The root that `document` (already merged over the defaults) holds.
    func decode(_ document: JSONValue, reads: ReadKeys? = nil) throws -> Root {
        do {
            return try coding.decode(Root.self, from: document, reads: reads)
        } catch let error as DecodingError {
            let failure = DecodingFailure(error, in: document, revealingValues: revealsValues)
            throw StoreError(.corrupt, store: storeName, codingPath: failure.path.description, reason: failure.reason, cause: error)
        } catch {
            throw StoreError(.corrupt, store: storeName, reason: revealsValues ? "\(error)" : "it cannot be read as \(Root.self)", cause: error)
        }
    }

    /// The document for `root`.
    func encode(_ root: Root) throws -> JSONValue {
        do {
            return try coding.encode(root, memo: memo)
        } catch {
            throw StoreError(.unwritable, store: storeName, reason: "cannot encode the value: \(error)", cause: error)
        }
    }

    /// The document to store for a value whose whole document is `full`: the patch from the defaults (or
    /// `full` itself), with the unknown keys put back and the version stamped. Updates `memory` to what
    /// the store holds once it is written; `dropped` lists unknown keys that had no place any more.
    func storedDocument(for full: JSONValue, memory: inout StoredMemory, dropped: inout [ValuePath]) -> JSONValue {
        var stored: JSONValue? = form == .wholeValue ? full : defaults.mergePatch(to: full)
        if var unknown = memory.unknownKeys {
            dropped = unknown.restore(into: &stored, full: full)
            memory.unknownKeys = unknown.isEmpty ? nil : unknown
        }
        var document = stored ?? .object([:])
        let stamp = max(memory.stamp, version)
        if stamp > 1, case .object(var object) = document {
            object[Self.stampKey] = .integer(stamp)
            document = .object(object)
        }
        memory.stamp = stamp
        return document
    }
}

/// What a root remembers of the document its store holds, to write the next one: the keys its type did
/// not read, and the version the document is stamped with.
struct StoredMemory: Sendable, Equatable {
    var unknownKeys: UnknownKeys?
    /// The stored document's version (1 when unstamped). Migrations from it ran in memory only; the next
    /// stored document carries the later of it and the program's version, so a stamp is never lowered.
    var stamp: Int = 1

    /// A store that holds nothing.
    static var empty: StoredMemory { StoredMemory() }
}

/// What a root's stored document holds.
public enum StoredForm: Sendable, Hashable {
    /// Only what differs from the default value (a merge patch over its encoding), plus the keys the type
    /// does not know: a default changed in a later version reaches everyone who never set that part.
    /// The default.
    case differencesFromDefaults
    /// The whole value, plus the keys the type does not know: for documents that other programs read
    /// without knowing the defaults.
    case wholeValue
}

/// A failed decode, as people read it: where, what was expected, and what was found.
///
/// The one dialect for every decoding failure, of a load and of a write by path alike:
/// `server.port: expected Int, found String "80a"`, `ticker.greeting: missing (a required key)`.
struct DecodingFailure: Sendable {
    /// The part that does not fit.
    let path: ValuePath
    /// What was expected and what was found.
    let reason: String

    /// Describes `error`, quoting from `document` what was found unless `revealingValues` is false.
    init(_ error: DecodingError, in document: JSONValue?, revealingValues: Bool) {
        func found(_ path: ValuePath) -> String {
            guard revealingValues, let value = try? document?.value(at: path) else { return "" }
            return ", found \(value.shortDescription)"
        }
        switch error {
        case .typeMismatch(let type, let context):
            path = ValuePath(codingPath: context.codingPath)
            reason = "expected \(typeName(type))\(found(path))"
        case .valueNotFound(let type, let context):
            path = ValuePath(codingPath: context.codingPath)
            reason = "expected \(typeName(type)), found null"
        case .keyNotFound(let key, let context):
            path = ValuePath(codingPath: context.codingPath + [key])
            reason = "missing (a required key)"
        case .dataCorrupted(let context):
            path = ValuePath(codingPath: context.codingPath)
            reason = revealingValues ? context.debugDescription + found(path) : "invalid value"
        @unknown default:
            path = ValuePath([])
            reason = revealingValues ? "\(error)" : "invalid value"
        }
    }
}

extension ValuePath {
    /// The path a `Codable` coding path names: `items[3].name`.
    init(codingPath: [any CodingKey]) {
        self.init(codingPath.map { key in
            if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == "\(index)" {
                return .index(index)
            }
            return .key(key.stringValue)
        })
    }
}

extension JSONValue {
    /// `String "80a"`, `number 3`, `Bool true`, `null`, `an object`, for a message: strings shortened to
    /// 40 characters.
    var shortDescription: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return "Bool \(value)"
        case .integer(let value): return "number \(value)"
        case .double(let value): return "number \(value)"
        case .string(let value):
            let shown = value.count > 40 ? String(value.prefix(40)) + "…" : value
            return "String \(String(reflecting: shown))"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// `Int`, `String`, `a number`, `an object` for a Swift type in a message.
private func typeName(_ type: Any.Type) -> String {
    switch type {
    case is String.Type, is Substring.Type: return "String"
    case is Bool.Type: return "Bool"
    case is any BinaryInteger.Type: return "Int"
    case is any BinaryFloatingPoint.Type: return "a number"
    default:
        let name = "\(type)"
        if name.hasPrefix("Array<") || name.hasPrefix("Set<") { return "an array" }
        if name.hasPrefix("Dictionary<") { return "an object" }
        return name
    }
}
