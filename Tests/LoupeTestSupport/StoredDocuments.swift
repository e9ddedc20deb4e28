import Foundation
@_exported import Loupe

/// A stored document read as a root reads it: merged (RFC 7386) over the encoded default, without its
/// version stamp, then decoded. Stored documents hold only what differs from the default.
public func decodeStored<Value: Codable>(over defaultValue: Value, _ document: JSONValue) throws -> Value {
    var patch = document
    patch[path: ValuePath([.key("$version")])] = nil
    return try DocumentCoding().decode(
        Value.self, from: try DocumentCoding().encode(defaultValue).merging(patch: patch))
}

/// The JSON text `data` read as a root reads it; see `decodeStored(over:_:)`.
public func decodeStored<Value: Codable>(over defaultValue: Value, _ data: Data) throws -> Value {
    try decodeStored(over: defaultValue, JSONValue(parsing: String(decoding: data, as: UTF8.self)))
}

/// Replaces the file at `path` with `text` as editors and admins' tools do: a new file renamed over it.
public func replaceFile(_ path: String, with text: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path + ".edit"))
    guard rename(path + ".edit", path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
}

extension DocumentStore {
    /// The document the store holds now; nil when it holds nothing.
    public func storedDocument() throws -> JSONValue? {
        try load().document
    }

    /// Saves `document` over whatever the store holds now, as a person's editor or another program would,
    /// and makes it durable.
    public func overwrite(with document: JSONValue) throws {
        _ = try save(document, replacing: load().token)
        try flush()
    }

    /// Deletes whatever the store holds now.
    public func removeWhateverIsStored() throws {
        _ = try remove(replacing: load().token)
        try flush()
    }
}
