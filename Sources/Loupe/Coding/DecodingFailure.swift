import Foundation

extension ValueCodec {
    /// Decodes `data`, or throws a ``StoreError`` with code ``StoreError/Code/corrupt`` that names `store`,
    /// the coding path and what was wrong, in words: `server.port: expected Int, found String "80a"`.
    ///
    /// Stores outside this module use it so that every store reports bad data the same way.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - data: The stored bytes.
    ///   - store: The store's `description`, which the error names.
    ///   - revealingValues: Whether the message may quote the offending value; stores that can hold secrets
    ///     pass `false`, and the message then says only where and what type was expected.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data, store: String, revealingValues: Bool) throws -> T {
        do {
            return try decode(type, from: data)
        } catch {
            throw decodingFailure(error, data: data, codec: self, store: store, revealingValues: revealingValues)
        }
    }
}

/// Turns a failed decode into a ``StoreError`` that names the coding path and what was wrong, in words:
/// `server.port: expected Int, found String "80a"`.
///
/// - Parameter revealingValues: Whether the message may quote the offending value. Stores that can hold
///   secrets (the keyring) pass `false`.
func decodingFailure(
    _ error: any Error, data: Data, codec: any ValueCodec, store: String, revealingValues: Bool = true
) -> StoreError {
    if data.isEmpty {
        return StoreError(.corrupt, store: store, reason: "it is empty (expected a \(codec.formatName) document)")
    }
    guard let decodingError = error as? DecodingError else {
        return StoreError(.corrupt, store: store, reason: revealingValues ? "\(error)" : "it is not a valid \(codec.formatName) encoding")
    }
    func found(_ context: DecodingError.Context) -> String {
        guard revealingValues, let value = codec.describeValue(at: context.codingPath, in: data) else { return "" }
        return ", found \(value)"
    }
    switch decodingError {
    case .typeMismatch(let type, let context):
        return StoreError(
            .corrupt, store: store, codingPath: codingPathName(context.codingPath),
            reason: "expected \(typeName(type))\(found(context))")
    case .valueNotFound(let type, let context):
        return StoreError(
            .corrupt, store: store, codingPath: codingPathName(context.codingPath),
            reason: "expected \(typeName(type)), found null")
    case .keyNotFound(let key, let context):
        return StoreError(
            .corrupt, store: store, codingPath: codingPathName(context.codingPath + [key]),
            reason: "missing (a required key)")
    case .dataCorrupted(let context):
        if context.codingPath.isEmpty {
            let isText = codec.formatName == "JSON"
            if isText, String(data: data, encoding: .utf8) == nil {
                return StoreError(.corrupt, store: store, reason: "it is not UTF-8 text (expected a JSON document)")
            }
            let detail = revealingValues ? underlying(context) : ""
            return StoreError(.corrupt, store: store, reason: "it is not a valid \(codec.formatName) document (it may be truncated)\(detail)")
        }
        return StoreError(
            .corrupt, store: store, codingPath: codingPathName(context.codingPath),
            reason: revealingValues ? context.debugDescription + found(context) : "invalid value")
    @unknown default:
        return StoreError(.corrupt, store: store, reason: revealingValues ? "\(decodingError)" : "it is not a valid \(codec.formatName) encoding")
    }
}

/// `server.port`, `items[3].name` for a coding path.
func codingPathName(_ path: [any CodingKey]) -> String {
    var name = ""
    for key in path {
        if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == "\(index)" {
            name += "[\(index)]"
        } else {
            name += name.isEmpty ? key.stringValue : "." + key.stringValue
        }
    }
    return name.isEmpty ? rootPathName : name
}

private func typeName(_ type: Any.Type) -> String {
    switch type {
    case is String.Type: "String"
    case is Bool.Type: "Bool"
    case is any BinaryInteger.Type: "Int"
    case is any BinaryFloatingPoint.Type: "a number"
    case is [String: Any].Type, is [String: any Sendable].Type: "an object"
    default:
        "\(type)".hasPrefix("Array<") ? "an array" : "\(type)".hasPrefix("Dictionary<") ? "an object" : "\(type)"
    }
}

private func underlying(_ context: DecodingError.Context) -> String {
    guard let error = context.underlyingError else { return "" }
    let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
    return ": " + text
}
