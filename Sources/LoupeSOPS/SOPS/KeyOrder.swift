#if SOPS
import Foundation
import Loupe
import Yams

/// The order of the keys of each object of a document, as its text has them. sops's MAC hashes the values
/// in the order the file holds them, which a `JSONValue` (a dictionary) does not keep: it is read from the
/// text. Keys the order does not know are taken after the ones it knows, sorted.
indirect enum KeyOrder: Sendable, Equatable {
    case object(keys: [String], children: [String: KeyOrder])
    case array([KeyOrder])
    /// Nothing known: keys sorted, all the way down.
    case unknown

    /// The keys of `members` in this order.
    func ordered(_ members: [String: JSONValue]) -> [String] {
        guard case .object(let keys, _) = self else { return members.keys.sorted() }
        var result = keys.filter { members[$0] != nil }
        if result.count < members.count {
            let known = Set(result)
            result += members.keys.filter { !known.contains($0) }.sorted()
        }
        return result
    }

    func child(_ key: String) -> KeyOrder {
        if case .object(_, let children) = self { return children[key] ?? .unknown }
        return .unknown
    }

    func element(_ index: Int) -> KeyOrder {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return .unknown
    }

    /// The order of the keys in `data`, a document in `format` (a codec's `formatName`): JSON and JSONC are
    /// read for it, YAML through Yams; any other format's keys (TOML) are taken sorted, which is Loupe's
    /// rule for the formats sops does not write.
    static func of(_ data: Data, format: String) -> KeyOrder {
        switch format {
        case "JSON", "JSONC":
            var scanner = JSONOrderScanner(bytes: Array(data))
            return (try? scanner.document()) ?? .unknown
        case "YAML":
            guard let text = String(data: data, encoding: .utf8), let node = try? Yams.compose(yaml: text) else {
                return .unknown
            }
            return of(node)
        default:
            return .unknown
        }
    }

    /// Whether the order of `format`'s text can be read from where its ciphertexts stand (JSON, JSONC, YAML).
    static func followsText(_ format: String) -> Bool { ["JSON", "JSONC", "YAML"].contains(format) }

    /// The order of `document`'s keys as `text` holds them, read from where each `ENC[…]` value stands
    /// in it: every ciphertext is unique (its IV is random), and an object's members stand in the order of
    /// their first values. Costs a scan of the text for `ENC[`, where ``of(_:format:)`` parses it again.
    /// nil when a value the MAC may cover is not encrypted, or its ciphertext is not found: its place is
    /// not known from the text alone.
    static func positional(_ document: JSONValue, text: Data) -> KeyOrder? {
        let marker = Array("ENC[AES256_GCM,".utf8)
        var offsets: [String: Int] = [:]
        let bytes = [UInt8](text)
        var index = 0
        let count = bytes.count
        while index + marker.count < count {
            guard bytes[index] == 0x45, bytes[index + 1] == 0x4E, bytes[index + 2] == 0x43, bytes[index + 3] == 0x5B,
                bytes[index..<(index + marker.count)].elementsEqual(marker)
            else {
                index += 1
                continue
            }
            var end = index + marker.count
            while end < count, bytes[end] != 0x5D, bytes[end] != 0x0A { end += 1 }
            guard end < count, bytes[end] == 0x5D else { index = end; continue }
            offsets[String(decoding: bytes[index...end], as: UTF8.self)] = index
            index = end + 1
        }
        func walk(_ value: JSONValue, top: Bool) -> (order: KeyOrder, first: Int)?? {
            switch value {
            case .object(let members):
                var children: [String: KeyOrder] = [:]
                var placed: [(key: String, first: Int)] = []
                for (key, member) in members where !(top && key == SOPSMetadata.key) {
                    guard let result = walk(member, top: false) else { return nil }
                    children[key] = result?.order ?? .unknown
                    placed.append((key, result?.first ?? Int.max))
                }
                placed.sort { $0.first != $1.first ? $0.first < $1.first : $0.key < $1.key }
                return .some((.object(keys: placed.map(\.key), children: children), placed.first?.first ?? Int.max))
            case .array(let elements):
                var orders: [KeyOrder] = []
                var first = Int.max
                for element in elements {
                    guard let result = walk(element, top: false) else { return nil }
                    orders.append(result?.order ?? .unknown)
                    first = min(first, result?.first ?? Int.max)
                }
                return .some((.array(orders), first))
            case .null:
                return .some(nil)
            case .string(let text) where text.isEmpty:
                return .some(nil)
            case .string(let text) where text.hasPrefix("ENC["):
                guard let offset = offsets[text] else { return nil }
                return .some((.unknown, offset))
            default:
                return nil
            }
        }
        guard let result = walk(document, top: true) else { return nil }
        return result?.order ?? .unknown
    }

    private static func of(_ node: Node) -> KeyOrder {
        switch node {
        case .mapping(let mapping):
            var keys: [String] = []
            var children: [String: KeyOrder] = [:]
            for (key, value) in mapping {
                guard let name = key.string, children[name] == nil else { continue }
                keys.append(name)
                children[name] = of(value)
            }
            return .object(keys: keys, children: children)
        case .sequence(let sequence): return .array(sequence.map(of))
        default: return .unknown
        }
    }
}

/// Reads the key order of a JSON (or JSONC) text, skipping every scalar; the text has already parsed.
private struct JSONOrderScanner {
    let bytes: [UInt8]
    var position = 0

    struct Malformed: Error {}

    mutating func document() throws -> KeyOrder {
        skipTrivia()
        if bytes.count >= position + 3, bytes[position] == 0xEF, bytes[position + 1] == 0xBB,
            bytes[position + 2] == 0xBF
        {
            position += 3
        }
        skipTrivia()
        return try value(depth: 0)
    }

    private mutating func skipTrivia() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            case 0x2F where position + 1 < bytes.count && bytes[position + 1] == 0x2F:
                while position < bytes.count && bytes[position] != 0x0A { position += 1 }
            case 0x2F where position + 1 < bytes.count && bytes[position + 1] == 0x2A:
                position += 2
                while position + 1 < bytes.count && !(bytes[position] == 0x2A && bytes[position + 1] == 0x2F) {
                    position += 1
                }
                position += 2
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws -> KeyOrder {
        guard position < bytes.count, depth < 512 else { throw Malformed() }
        switch bytes[position] {
        case 0x7B:
            position += 1
            var keys: [String] = []
            var children: [String: KeyOrder] = [:]
            while true {
                skipTrivia()
                guard position < bytes.count else { throw Malformed() }
                if bytes[position] == 0x7D { position += 1; break }
                if bytes[position] == 0x2C { position += 1; continue }
                let key = try string()
                skipTrivia()
                guard position < bytes.count, bytes[position] == 0x3A else { throw Malformed() }
                position += 1
                skipTrivia()
                let child = try value(depth: depth + 1)
                if children[key] == nil { keys.append(key) }
                children[key] = child
            }
            return .object(keys: keys, children: children)
        case 0x5B:
            position += 1
            var elements: [KeyOrder] = []
            while true {
                skipTrivia()
                guard position < bytes.count else { throw Malformed() }
                if bytes[position] == 0x5D { position += 1; break }
                if bytes[position] == 0x2C { position += 1; continue }
                elements.append(try value(depth: depth + 1))
            }
            return .array(elements)
        case 0x22:
            _ = try string()
            return .unknown
        default:
            while position < bytes.count,
                !([0x2C, 0x7D, 0x5D, 0x20, 0x09, 0x0A, 0x0D, 0x2F] as [UInt8]).contains(bytes[position])
            { position += 1 }
            return .unknown
        }
    }

    /// A string's decoded text (through JSONSerialization for its escapes, when it has any).
    private mutating func string() throws -> String {
        guard position < bytes.count, bytes[position] == 0x22 else { throw Malformed() }
        let start = position
        position += 1
        var escaped = false
        while position < bytes.count, bytes[position] != 0x22 {
            if bytes[position] == 0x5C { escaped = true; position += 1 }
            position += 1
        }
        guard position < bytes.count else { throw Malformed() }
        position += 1
        let raw = bytes[(start + 1)..<(position - 1)]
        guard escaped else { return String(decoding: raw, as: UTF8.self) }
        let literal = Data(bytes[start..<position])
        guard let text = try JSONSerialization.jsonObject(with: literal, options: .fragmentsAllowed) as? String else {
            throw Malformed()
        }
        return text
    }
}
#endif
