import Foundation

/// Digests that are the same in every process and on every host (Swift's `Hasher` is seeded per
/// process): for names shared between processes, and for telling versions of a file apart. Not
/// cryptographic: nothing here defends against someone who crafts collisions.
package enum StableDigest {
    /// FNV-1a of `text`'s UTF-8 bytes: for short names (a lock file's), which must never change.
    package static func fnv1a(_ text: String) -> UInt64 {
        var digest: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            digest = (digest ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return digest
    }

    /// A 64-bit digest of `data`, eight bytes at a time (so that a large settings file costs little next to
    /// writing it, which a byte at a time does not), finished with MurmurHash3's mix.
    package static func of(_ data: Data) -> UInt64 {
        data.withUnsafeBytes { bytes in
            var digest: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
            var offset = 0
            while offset + 8 <= bytes.count {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                digest = (digest ^ word) &* 0x9e37_79b9_7f4a_7c15
                digest ^= digest >> 29
                offset += 8
            }
            while offset < bytes.count {
                digest = (digest ^ UInt64(bytes[offset])) &* 0x0000_0100_0000_01b3
                offset += 1
            }
            digest ^= digest >> 33
            digest &*= 0xff51_afd7_ed55_8ccd
            digest ^= digest >> 33
            digest &*= 0xc4ce_b9fe_1a85_ec53
            digest ^= digest >> 33
            return digest
        }
    }
}
