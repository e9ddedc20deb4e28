#if SOPS
/// Bech32 (BIP 173), as age spells its keys: `age1…` recipients and `AGE-SECRET-KEY-1…` identities. age
/// lifts BIP 173's 90-character limit; the checksum is Bech32's (not Bech32m).
enum Bech32 {
    private static let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    private static let reverse: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = Int8(index) }
        return table
    }()

    /// Why a string is not Bech32.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]
        var check: UInt32 = 1
        for value in values {
            let top = check >> 25
            check = (check & 0x1ff_ffff) << 5 ^ UInt32(value)
            for bit in 0..<5 where (top >> UInt32(bit)) & 1 == 1 { check ^= generator[bit] }
        }
        return check
    }

    private static func expanded(_ prefix: [UInt8]) -> [UInt8] {
        prefix.map { $0 >> 5 } + [0] + prefix.map { $0 & 31 }
    }

    /// The human-readable part (lowercased) and the data bytes of `string`, which must be all lower or all
    /// upper case.
    static func decode(_ string: String) throws -> (prefix: String, data: [UInt8]) {
        let bytes = Array(string.utf8)
        guard bytes.allSatisfy({ $0 >= 33 && $0 <= 126 }) else {
            throw Failure(description: "it holds characters Bech32 does not use")
        }
        let hasLower = bytes.contains { $0 >= 0x61 && $0 <= 0x7a }
        let hasUpper = bytes.contains { $0 >= 0x41 && $0 <= 0x5a }
        guard !(hasLower && hasUpper) else { throw Failure(description: "it mixes upper and lower case") }
        let lower = bytes.map { $0 >= 0x41 && $0 <= 0x5a ? $0 + 32 : $0 }
        guard let separator = lower.lastIndex(of: 0x31), separator > 0, lower.count - separator - 1 >= 6 else {
            throw Failure(description: "it has no separator or checksum")
        }
        let prefix = Array(lower[..<separator])
        var values: [UInt8] = []
        values.reserveCapacity(lower.count - separator - 1)
        for byte in lower[(separator + 1)...] {
            guard byte < 128, reverse[Int(byte)] >= 0 else {
                throw Failure(description: "it holds a character Bech32 does not use")
            }
            values.append(UInt8(reverse[Int(byte)]))
        }
        guard polymod(expanded(prefix) + values) == 1 else { throw Failure(description: "its checksum does not match") }
        let data = try regroup(Array(values.dropLast(6)), from: 5, to: 8, padding: false)
        return (String(decoding: prefix, as: UTF8.self), data)
    }

    /// `data` as Bech32 under `prefix`, in lower case.
    static func encode(prefix: String, data: [UInt8]) -> String {
        let hrp = Array(prefix.lowercased().utf8)
        // Regrouping 8-bit bytes into 5-bit groups with padding cannot fail.
        let values = (try? regroup(data, from: 8, to: 5, padding: true)) ?? []
        let check = polymod(expanded(hrp) + values + [0, 0, 0, 0, 0, 0]) ^ 1
        let checksum = (0..<6).map { UInt8((check >> (5 * (5 - UInt32($0)))) & 31) }
        return String(decoding: hrp + [0x31] + (values + checksum).map { alphabet[Int($0)] }, as: UTF8.self)
    }

    private static func regroup(_ values: [UInt8], from: Int, to: Int, padding: Bool) throws -> [UInt8] {
        var accumulator = 0
        var bits = 0
        var result: [UInt8] = []
        let mask = (1 << to) - 1
        for value in values {
            accumulator = (accumulator << from) | Int(value)
            bits += from
            while bits >= to {
                bits -= to
                result.append(UInt8((accumulator >> bits) & mask))
            }
        }
        if padding {
            if bits > 0 { result.append(UInt8((accumulator << (to - bits)) & mask)) }
        } else if bits >= from || (accumulator << (to - bits)) & mask != 0 {
            throw Failure(description: "its padding is not zero")
        }
        return result
    }
}
#endif
