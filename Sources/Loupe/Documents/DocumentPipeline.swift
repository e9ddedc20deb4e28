import Foundation

/// The one place where stored documents meet the typed value, for every store and format alike.
///
/// ```
/// load:   store ─▶ document ─▶ decode → Root
/// commit: Root ─▶ encode → document ─▶ store
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
    /// The documents of the large collections the last encode wrote, for the next one to reuse.
    let memo = DocumentEncoder.Memo()

    /// The root that `document` holds.
    func decode(_ document: JSONValue) throws -> Root {
        do {
            return try coding.decode(Root.self, from: document)
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
