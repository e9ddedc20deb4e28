import Foundation
import Loupe
import Yams

/// YAML for a `FileStore`, through Yams: block style, keys sorted, so files diff well and people can
/// edit them.
///
/// ```swift
/// import LoupeYAML
/// let store = FileStore<Settings>(path: "/etc/app/settings.yaml", format: YAMLCodec())
/// ```
public struct YAMLCodec: ValueCodec {
    /// Creates a YAML codec.
    public init() {}

    public var formatName: String { "YAML" }

    public func encode<T: Encodable>(_ value: T) throws -> Data {
        var options = YAMLEncoder.Options()
        options.sortKeys = true
        let encoder = YAMLEncoder()
        encoder.options = options
        return Data(try encoder.encode(value).utf8)
    }

    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try YAMLDecoder().decode(type, from: data)
    }

    public func describeValue(at codingPath: [any CodingKey], in data: Data) -> String? {
        guard let text = String(data: data, encoding: .utf8), var node = try? Yams.compose(yaml: text) else { return nil }
        for key in codingPath {
            if let index = key.intValue, let sequence = node.sequence, sequence.indices.contains(index) {
                node = sequence[index]
            } else if let mapping = node.mapping, let child = mapping[key.stringValue] {
                node = child
            } else {
                return nil
            }
        }
        guard let scalar = node.scalar else { return node.mapping != nil ? "a mapping" : "a sequence" }
        if let number = Int(scalar.string) { return "number \(number)" }
        if let flag = Bool(scalar.string) { return "Bool \(flag)" }
        return "String \(String(reflecting: scalar.string))"
    }
}

extension ValueCodec where Self == YAMLCodec {
    /// YAML, keys sorted.
    public static var yaml: YAMLCodec { YAMLCodec() }
}
