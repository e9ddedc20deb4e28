#if SOPS
import Crypto
import Foundation
import Loupe

/// One sops value, `ENC[AES256_GCM,data:…,iv:…,tag:…,type:…]`: AES-256-GCM under the file's data key, with
/// a 32-byte IV and the value's path (`key:key:`, array indices left out) as additional data, as sops 3
/// writes it.
struct EncryptedValue {
    var data: Data
    var iv: Data
    var tag: Data
    var type: String

    static let prefix = "ENC[AES256_GCM,data:"

    /// The value `text` spells, or nil when it is not an `ENC[…]` value at all.
    ///
    /// - Throws: ``SOPSFailure`` when it starts as one but does not read (truncated, bad base64).
    static func parse(_ text: String) throws(SOPSFailure) -> EncryptedValue? {
        guard text.hasPrefix("ENC[") else { return nil }
        // Read on the UTF-8 bytes: Foundation's `range(of:)` goes through NSString, at a cost per value
        // that a load of hundreds of values feels.
        let bytes = Array(text.utf8)
        let prefix = Self.prefixBytes
        guard bytes.count > prefix.count, bytes.last == 0x5D, bytes.starts(with: prefix) else {
            throw SOPSFailure("is an ENC[…] value that does not read (truncated or not AES256_GCM)")
        }
        // data:…,iv:…,tag:…,type:…]
        var fields: [ArraySlice<UInt8>] = []
        var start = prefix.count
        for label in Self.labels {
            guard let found = Self.find(label, in: bytes, from: start) else {
                throw SOPSFailure("is an ENC[…] value that does not read (truncated: data, iv, tag or type is missing)")
            }
            fields.append(bytes[start..<found])
            start = found + label.count
        }
        fields.append(bytes[start..<(bytes.count - 1)])
        guard let data = Data(base64Encoded: Data(fields[0])), let iv = Data(base64Encoded: Data(fields[1])),
            let tag = Data(base64Encoded: Data(fields[2]))
        else { throw SOPSFailure("is an ENC[…] value whose data, iv or tag is not base64") }
        guard iv.count >= 12, tag.count == 16 else {
            throw SOPSFailure("is an ENC[…] value with an IV or tag of the wrong size")
        }
        return EncryptedValue(data: data, iv: iv, tag: tag, type: String(decoding: fields[3], as: UTF8.self))
    }

    private static let prefixBytes = Array(prefix.utf8)
    private static let labels = [Array(",iv:".utf8), Array(",tag:".utf8), Array(",type:".utf8)]

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        var index = start
        while index <= bytes.count - needle.count {
            if bytes[index] == needle[0] {
                var matches = true
                for offset in 1..<needle.count where bytes[index + offset] != needle[offset] {
                    matches = false
                    break
                }
                if matches { return index }
            }
            index += 1
        }
        return nil
    }

    /// The text sops writes for this value.
    var text: String {
        "ENC[AES256_GCM,data:\(data.base64EncodedString()),iv:\(iv.base64EncodedString()),tag:\(tag.base64EncodedString()),type:\(type)]"
    }

    /// The additional data of the value at `keys`: `a:b:c:`.
    static func additionalData(_ keys: [String]) -> Data {
        Data((keys.joined(separator: ":") + ":").utf8)
    }

    /// The plaintext bytes, opened under `key` with `additionalData`.
    ///
    /// - Throws: ``SOPSFailure`` when the tag does not verify (a wrong key, a tampered value, a value moved
    ///   from another path).
    func open(with key: SymmetricKey, additionalData: Data) throws(SOPSFailure) -> Data {
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: iv), ciphertext: data, tag: tag)
            return try AES.GCM.open(box, using: key, authenticating: additionalData)
        } catch {
            throw SOPSFailure("does not verify (a wrong tag, a tampered value, or a value moved from another path)")
        }
    }

    /// `plaintext` sealed under `key` with a fresh 32-byte IV.
    static func seal(
        _ plaintext: some DataProtocol, type: String, with key: SymmetricKey, additionalData: Data
    ) throws -> EncryptedValue {
        let iv = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let box = try AES.GCM.seal(
            plaintext, using: key, nonce: AES.GCM.Nonce(data: iv), authenticating: additionalData)
        return EncryptedValue(data: box.ciphertext, iv: iv, tag: box.tag, type: type)
    }

    /// The document value of the plaintext `bytes` of type `type`.
    static func value(of bytes: Data, type: String) throws(SOPSFailure) -> JSONValue {
        let text = String(decoding: bytes, as: UTF8.self)
        switch type {
        case "str", "bytes": return .string(text)
        case "int":
            if let number = Int(text) { return .integer(number) }
            throw SOPSFailure("holds an int that does not read")
        case "float":
            if let number = Double(text) { return .double(number) }
            throw SOPSFailure("holds a float that does not read")
        case "bool":
            switch text {
            case "1", "t", "T", "TRUE", "true", "True": return .bool(true)
            case "0", "f", "F", "FALSE", "false", "False": return .bool(false)
            default: throw SOPSFailure("holds a bool that does not read")
            }
        case "time": return .string(text)
        default: throw SOPSFailure("has a type sops does not know (\(type))")
        }
    }

    /// The plaintext bytes and sops type of a document value; nil for what sops does not encrypt (null,
    /// an empty string).
    static func plaintext(of value: JSONValue) -> (bytes: Data, type: String)? {
        switch value {
        case .string(let text): text.isEmpty ? nil : (Data(text.utf8), "str")
        case .integer(let number): (Data(String(number).utf8), "int")
        case .double(let number): (Data(GoFormat.float(number).utf8), "float")
        case .exactNumber(let text):
            if let number = Int(text) {
                (Data(String(number).utf8), "int")
            } else {
                (Data(GoFormat.float(Double(text) ?? .nan).utf8), "float")
            }
        case .bool(let flag): (Data((flag ? "True" : "False").utf8), "bool")
        case .null, .array, .object: nil
        }
    }

    /// Whether sops encrypts a document value of this kind (``plaintext(of:)`` is not nil), without making
    /// its bytes.
    static func isSealable(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let text): !text.isEmpty
        case .integer, .double, .exactNumber, .bool: true
        case .null, .array, .object: false
        }
    }

    /// The bytes sops's MAC takes of a (plaintext) document value: `ToBytes` of the value sops reads.
    static func macBytes(of value: JSONValue) -> Data? {
        plaintext(of: value)?.bytes
    }
}

/// How Go's `strconv.FormatFloat(v, 'f', -1, 64)` writes a double: the shortest digits that read back, never
/// an exponent, no `.0` for whole numbers. sops hashes floats so.
enum GoFormat {
    static func float(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "NaN" : (value < 0 ? "-Inf" : "+Inf") }
        var text = "\(value)"  // shortest round-trip digits, maybe with an exponent
        var negative = false
        if text.hasPrefix("-") { negative = true; text.removeFirst() }
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponent = Int(text[text.index(after: e)...]) ?? 0
            text = String(text[..<e])
        }
        var integer = text
        var fraction = ""
        if let dot = text.firstIndex(of: ".") {
            integer = String(text[..<dot])
            fraction = String(text[text.index(after: dot)...])
        }
        var digits = integer + fraction
        var point = integer.count + exponent
        if point < 0 { digits = String(repeating: "0", count: -point) + digits; point = 0 }
        if point > digits.count { digits += String(repeating: "0", count: point - digits.count) }
        var whole = String(digits.prefix(point))
        var decimals = String(digits.dropFirst(point))
        while decimals.hasSuffix("0") { decimals.removeLast() }
        while whole.count > 1 && whole.hasPrefix("0") { whole.removeFirst() }
        if whole.isEmpty { whole = "0" }
        let result = decimals.isEmpty ? whole : whole + "." + decimals
        return negative && result != "0" ? "-" + result : (negative ? "-0" : result)
    }
}

/// Why a sops file or one of its values is refused, before a store and path are put around it.
struct SOPSFailure: Error, CustomStringConvertible {
    /// What is wrong, in words, after the path (if any): `does not verify`.
    var description: String
    /// The value it concerns, if one.
    var path: ValuePath?
    init(_ description: String, path: ValuePath? = nil) {
        self.description = description
        self.path = path
    }
}
#endif
