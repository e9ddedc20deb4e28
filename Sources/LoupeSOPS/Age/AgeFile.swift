#if SOPS
import Crypto
import Foundation

/// The age v1 file format (age-encryption.org/v1): a header of recipient stanzas that each wrap a 16-byte
/// file key, the header's HMAC, then the payload in 64 KiB chunks of ChaCha20-Poly1305 (STREAM). Only the
/// format is written here; every primitive (X25519, HKDF-SHA256, HMAC-SHA256, ChaCha20-Poly1305) is
/// swift-crypto's.
public enum AgeFile {
    static let versionLine = "age-encryption.org/v1"
    static let chunkSize = 64 * 1024
    static let armorBegin = "-----BEGIN AGE ENCRYPTED FILE-----"
    static let armorEnd = "-----END AGE ENCRYPTED FILE-----"

    /// One recipient stanza: `-> TYPE ARG…` and its body.
    struct Stanza: Equatable {
        var type: String
        var arguments: [String]
        var body: [UInt8]

        /// The stanza as a header holds it: its line, then its body in lines of 64 columns, the last shorter.
        var text: String {
            var text = "-> " + ([type] + arguments).joined(separator: " ") + "\n"
            let encoded = Array(AgeFile.base64NoPadding(body).utf8)
            var index = 0
            while true {
                let end = min(index + 64, encoded.count)
                text += String(decoding: encoded[index..<end], as: UTF8.self) + "\n"
                if end - index < 64 { break }
                index = end
            }
            return text
        }
    }

    // MARK: Sealing

    /// `plaintext` sealed for `recipients`, as a binary age file.
    public static func encrypt(_ plaintext: some DataProtocol, to recipients: [AgeRecipient]) throws -> Data {
        guard !recipients.isEmpty else { throw AgeError("no recipient to seal for") }
        var fileKey = SymmetricKey(size: .init(bitCount: 128))
        defer { fileKey = SymmetricKey(size: .init(bitCount: 128)) }
        var header = versionLine + "\n"
        for recipient in recipients {
            header += try wrap(fileKey, for: recipient).text
        }
        header += "---"
        let mac = headerMAC(header, fileKey: fileKey)
        var output = Data((header + " " + base64NoPadding(mac) + "\n").utf8)
        let nonce = SymmetricKey(size: .init(bitCount: 128)).withUnsafeBytes { Data($0) }
        output.append(nonce)
        output.append(try stream(seal: Data(plaintext), fileKey: fileKey, nonce: nonce))
        return output
    }

    /// `plaintext` sealed for `recipients`, ASCII-armored (PEM-style), as sops keeps a data key.
    public static func encryptArmored(_ plaintext: some DataProtocol, to recipients: [AgeRecipient]) throws -> String {
        armor(try encrypt(plaintext, to: recipients))
    }

    /// An X25519 stanza wrapping `fileKey` for `recipient`.
    static func wrap(_ fileKey: SymmetricKey, for recipient: AgeRecipient) throws -> Stanza {
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        let share = ephemeral.publicKey.rawRepresentation
        let shared = try ephemeral.sharedSecretFromKeyAgreement(with: recipient.publicKey)
        let salt = share + recipient.publicKey.rawRepresentation
        let wrapKey = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: salt, sharedInfo: Data("age-encryption.org/v1/X25519".utf8), outputByteCount: 32)
        let sealed = try fileKey.withUnsafeBytes { key in
            try ChaChaPoly.seal(Data(key), using: wrapKey, nonce: ChaChaPoly.Nonce(data: Data(count: 12)))
        }
        return Stanza(type: "X25519", arguments: [base64NoPadding(share)], body: Array(sealed.ciphertext + sealed.tag))
    }

    // MARK: Opening

    /// The plaintext of the binary or armored age file `data`, opened with the first of `identities` that
    /// one of its X25519 stanzas was sealed for.
    ///
    /// - Throws: ``AgeError`` when the file does not read, no identity opens it (naming none), or the header
    ///   MAC or a payload chunk does not verify.
    public static func decrypt(_ data: Data, with identities: [AgeIdentity]) throws -> Data {
        let binary = try dearmorIfArmored(data)
        let (stanzas, headerText, mac, payloadStart) = try parseHeader(binary)
        guard !stanzas.isEmpty else { throw AgeError("the age header has no recipient stanza") }
        if stanzas.contains(where: { $0.type == "scrypt" }), stanzas.count > 1 {
            throw AgeError("an scrypt stanza must be the only one in an age header")
        }
        var fileKey: SymmetricKey?
        search: for stanza in stanzas where stanza.type == "X25519" {
            guard stanza.arguments.count == 1, let share = base64NoPaddingDecode(stanza.arguments[0]).map({ Data($0) }),
                share.count == 32
            else {
                throw AgeError("an X25519 stanza's share is not 32 bytes of canonical base64")
            }
            guard stanza.body.count == 32 else { throw AgeError("an X25519 stanza's body is not 32 bytes") }
            for identity in identities {
                if let key = try unwrap(stanza, share: share, with: identity) {
                    fileKey = key
                    break search
                }
            }
        }
        guard let fileKey else { throw AgeError("no identity matches any of the recipients") }
        guard mac.count == 32,
            HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Data(headerText.utf8), using: macKey(fileKey))
        else {
            throw AgeError("the age header's MAC does not verify")
        }
        let payload = binary[payloadStart...]
        guard payload.count >= 16 else { throw AgeError("the age payload has no nonce") }
        return try stream(open: Data(payload.dropFirst(16)), fileKey: fileKey, nonce: Data(payload.prefix(16)))
    }

    /// The file key of an X25519 stanza for `identity`; nil when the stanza was sealed for someone else.
    static func unwrap(_ stanza: Stanza, share: Data, with identity: AgeIdentity) throws -> SymmetricKey? {
        let sharePublic = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: share)
        let shared = try identity.privateKey.sharedSecretFromKeyAgreement(with: sharePublic)
        if shared.withUnsafeBytes({ $0.allSatisfy { $0 == 0 } }) {
            throw AgeError("an X25519 stanza's share is a low-order point")
        }
        let salt = share + identity.privateKey.publicKey.rawRepresentation
        let wrapKey = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: salt, sharedInfo: Data("age-encryption.org/v1/X25519".utf8), outputByteCount: 32)
        let box = try ChaChaPoly.SealedBox(
            nonce: ChaChaPoly.Nonce(data: Data(count: 12)), ciphertext: stanza.body.prefix(16),
            tag: stanza.body.suffix(16))
        guard var key = try? ChaChaPoly.open(box, using: wrapKey) else { return nil }
        defer { key.resetBytes(in: key.startIndex..<key.endIndex) }  // the file key's bytes, wiped
        return SymmetricKey(data: key)
    }

    // MARK: Header

    static func macKey(_ fileKey: SymmetricKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, salt: Data(), info: Data("header".utf8), outputByteCount: 32)
    }

    static func headerMAC(_ header: String, fileKey: SymmetricKey) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data(header.utf8), using: macKey(fileKey)))
    }

    /// The stanzas, the header text the MAC covers (through `---`), the MAC and where the payload starts.
    static func parseHeader(
        _ data: Data
    ) throws -> (stanzas: [Stanza], macked: String, mac: Data, payloadStart: Data.Index) {
        var position = data.startIndex
        func line() throws -> String {
            guard let end = data[position...].firstIndex(of: 0x0A) else { throw AgeError("the age header ends early") }
            let bytes = data[position..<end]
            position = end + 1
            guard bytes.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) else {
                throw AgeError("the age header holds a byte that is not printable ASCII")
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        guard try line() == versionLine else { throw AgeError("not an age v1 file (unknown version line)") }
        var macked = versionLine + "\n"
        var stanzas: [Stanza] = []
        var current = try line()
        while current.hasPrefix("-> ") {
            let fields = current.dropFirst(3).split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard let type = fields.first,
                fields.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F } })
            else {
                throw AgeError("an age stanza line is malformed")
            }
            macked += current + "\n"
            var body: [UInt8] = []
            while true {
                let bodyLine = try line()
                macked += bodyLine + "\n"
                guard bodyLine.utf8.count <= 64, let bytes = base64NoPaddingDecode(bodyLine) else {
                    throw AgeError("an age stanza body line is not canonical base64 of at most 64 columns")
                }
                body += bytes
                if bodyLine.utf8.count < 64 { break }
            }
            stanzas.append(Stanza(type: type, arguments: Array(fields.dropFirst()), body: body))
            current = try line()
        }
        guard current.hasPrefix("--- ") else { throw AgeError("the age header has no MAC line") }
        macked += "---"
        guard let mac = base64NoPaddingDecode(String(current.dropFirst(4))), mac.count == 32 else {
            throw AgeError("the age header's MAC is not 32 bytes of canonical base64")
        }
        return (stanzas, macked, Data(mac), position)
    }

    // MARK: STREAM

    private static func chunkNonce(_ counter: UInt64, last: Bool) throws -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { bytes[10 - index] = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(index))) }
        bytes[11] = last ? 1 : 0
        return try ChaChaPoly.Nonce(data: bytes)
    }

    private static func payloadKey(_ fileKey: SymmetricKey, nonce: Data) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, salt: nonce, info: Data("payload".utf8), outputByteCount: 32)
    }

    static func stream(seal plaintext: Data, fileKey: SymmetricKey, nonce: Data) throws -> Data {
        let key = payloadKey(fileKey, nonce: nonce)
        var output = Data()
        var offset = plaintext.startIndex
        var counter: UInt64 = 0
        repeat {
            let end = min(offset + chunkSize, plaintext.endIndex)
            let last = end == plaintext.endIndex
            let box = try ChaChaPoly.seal(plaintext[offset..<end], using: key, nonce: chunkNonce(counter, last: last))
            output.append(box.ciphertext)
            output.append(box.tag)
            offset = end
            counter += 1
        } while offset < plaintext.endIndex
        return output
    }

    static func stream(open ciphertext: Data, fileKey: SymmetricKey, nonce: Data) throws -> Data {
        let key = payloadKey(fileKey, nonce: nonce)
        var output = Data()
        var offset = ciphertext.startIndex
        var counter: UInt64 = 0
        guard !ciphertext.isEmpty else { throw AgeError("the age payload is empty") }
        while offset < ciphertext.endIndex {
            let end = min(offset + chunkSize + 16, ciphertext.endIndex)
            let chunk = ciphertext[offset..<end]
            guard chunk.count >= 16 else { throw AgeError("an age payload chunk is shorter than its tag") }
            let last = end == ciphertext.endIndex
            let box = try ChaChaPoly.SealedBox(
                nonce: chunkNonce(counter, last: last), ciphertext: chunk.dropLast(16), tag: chunk.suffix(16))
            guard let plain = try? ChaChaPoly.open(box, using: key) else {
                if !last,
                    let _ = try? ChaChaPoly.open(
                        ChaChaPoly.SealedBox(
                            nonce: chunkNonce(counter, last: true), ciphertext: chunk.dropLast(16),
                            tag: chunk.suffix(16)), using: key)
                {
                    throw AgeError("the age payload goes on after its last chunk")
                }
                throw AgeError("an age payload chunk does not verify")
            }
            if last, plain.isEmpty, counter > 0 { throw AgeError("the age payload ends with an empty chunk") }
            output.append(plain)
            offset = end
            counter += 1
        }
        return output
    }

    // MARK: Armor and base64

    static func armor(_ data: Data) -> String {
        let encoded = Array(data.base64EncodedString().utf8)
        var text = armorBegin + "\n"
        var index = 0
        while index < encoded.count {
            let end = min(index + 64, encoded.count)
            text += String(decoding: encoded[index..<end], as: UTF8.self) + "\n"
            index = end
        }
        return text + armorEnd + "\n"
    }

    /// The binary age file in `data`, which may be armored (leading and trailing white space allowed).
    static func dearmorIfArmored(_ data: Data) throws -> Data {
        guard let text = String(data: data, encoding: .utf8) else { return data }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(armorBegin) else { return data }
        // Split on bytes: a Swift string takes "\r\n" for one character.
        let lines = trimmed.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
        }
        guard lines.count >= 2, lines.last == armorEnd else { throw AgeError("the armored age file has no end line") }
        let body = lines.dropFirst().dropLast()
        for (index, line) in body.enumerated() {
            let isLast = index == body.count - 1
            guard isLast ? line.count <= 64 && !line.isEmpty : line.count == 64 else {
                throw AgeError("the armored age file's lines are not 64 columns")
            }
        }
        let encoded = body.joined()
        guard let decoded = Data(base64Encoded: encoded), decoded.base64EncodedString() == encoded else {
            throw AgeError("the armored age file is not canonical base64")
        }
        return decoded
    }

    static func base64NoPadding(_ data: some DataProtocol) -> String {
        var text = Data(data).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// Canonical base64 without padding (as age writes it); nil for anything else.
    static func base64NoPaddingDecode(_ text: String) -> [UInt8]? {
        guard !text.contains("="), text.utf8.count % 4 != 1 else { return nil }
        let padded = text + String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: padded), base64NoPadding(data) == text else { return nil }
        return Array(data)
    }
}
#endif
