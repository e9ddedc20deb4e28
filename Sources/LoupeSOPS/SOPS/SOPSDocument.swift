#if SOPS
import Crypto
import Foundation
import Loupe

/// A sops file's document opened with its data key, or a plaintext document sealed with it: the value walk
/// of sops 3 (keys in file order, array elements sharing their array's path, `null` and `""` left alone).
enum SOPSDocument {
    /// A document opened: the plaintext (without the `sops` block), the paths of the values that were
    /// encrypted, and the order of the keys its MAC was checked in.
    struct Opened {
        var plaintext: JSONValue
        var encryptedPaths: [ValuePath]
        var order: KeyOrder
    }

    /// The data key, unwrapped from the first age stanza one of `identities` opens.
    ///
    /// - Throws: ``SOPSFailure`` naming every recipient the file was sealed for when none opens it.
    static func dataKey(of metadata: SOPSMetadata, identities: [AgeIdentity]) throws(SOPSFailure) -> SymmetricKey {
        for (_, enc) in metadata.ageKeys {
            var opened: Data
            do {
                opened = try AgeFile.decrypt(Data(enc.utf8), with: identities)
            } catch let error as AgeError where error.description.hasPrefix("no identity") {
                continue
            } catch {
                throw SOPSFailure("its data key does not open: \(error)")
            }
            defer { opened.resetBytes(in: opened.startIndex..<opened.endIndex) }  // the key's bytes, wiped
            guard opened.count == 32 else { throw SOPSFailure("its data key is \(opened.count) bytes, not 32") }
            return SymmetricKey(data: opened)
        }
        let recipients = metadata.recipientNames
        let names = recipients.isEmpty ? "no recipient" : recipients.joined(separator: ", ")
        let held =
            identities.isEmpty
            ? "no age identity was found" : "none of the \(identities.count) age identities given opens it"
        throw SOPSFailure("\(held); it was sealed for \(names)")
    }

    /// The plaintext of `document`, each encrypted value opened with `key` and its path, the MAC checked.
    ///
    /// - Throws: ``SOPSFailure`` naming the path of a value that does not open, or "MAC mismatch".
    /// With `checkingMAC` false (a revision the history keeps as a document, not as text, so without the
    /// order the MAC takes), each value is still opened with its path, and the MAC is not checked.
    static func open(
        _ document: JSONValue, metadata: SOPSMetadata, key: SymmetricKey, order: KeyOrder, checkingMAC: Bool = true
    ) throws(SOPSFailure) -> Opened {
        var hasher = SHA512()
        if metadata.rules.macOnlyEncrypted { hasher.update(data: SOPSMetadata.macOnlyEncryptedPrefix) }
        var walk = OpenWalk(rules: metadata.rules, key: key, hasher: hasher)
        var plaintext = try walk.open(document, order: order)
        hasher = walk.hasher
        let encrypted = walk.encrypted
        if case .object(var members) = plaintext {
            members[SOPSMetadata.key] = nil
            plaintext = .object(members)
        }
        if checkingMAC { try verifyMAC(hex(hasher.finalize()), metadata: metadata, key: key) }
        return Opened(plaintext: plaintext, encryptedPaths: encrypted, order: order)
    }

    /// The walk of ``open(_:metadata:key:order:)``: the keys and path of the value at hand kept as stacks,
    /// so that a value costs no array of its own.
    private struct OpenWalk {
        let rules: SOPSRules
        let key: SymmetricKey
        var hasher: SHA512
        var keys: [String] = []
        var path: [ValuePath.Component] = []
        var encrypted: [ValuePath] = []

        init(rules: SOPSRules, key: SymmetricKey, hasher: SHA512) {
            self.rules = rules
            self.key = key
            self.hasher = hasher
        }

        mutating func open(_ value: JSONValue, order: KeyOrder) throws(SOPSFailure) -> JSONValue {
            switch value {
            case .object(let members):
                var result: [String: JSONValue] = [:]
                result.reserveCapacity(members.count)
                for name in order.ordered(members) {
                    guard let member = members[name] else { continue }
                    if path.isEmpty, name == SOPSMetadata.key { continue }
                    keys.append(name)
                    path.append(.key(name))
                    defer {
                        keys.removeLast()
                        path.removeLast()
                    }
                    result[name] = try open(member, order: order.child(name))
                }
                return .object(result)
            case .array(let elements):
                var result: [JSONValue] = []
                result.reserveCapacity(elements.count)
                for (index, element) in elements.enumerated() {
                    path.append(.index(index))
                    defer { path.removeLast() }
                    result.append(try open(element, order: order.element(index)))
                }
                return .array(result)
            case .null:
                return .null
            default:
                let encrypts = rules.encrypts(keys)
                var plain = value
                if encrypts {
                    guard case .string(let text) = value else {
                        throw SOPSFailure(
                            "is not encrypted, though the file's sops rules say it is", path: ValuePath(path))
                    }
                    if !text.isEmpty {
                        do throws(SOPSFailure) {
                            guard let sealed = try EncryptedValue.parse(text) else {
                                throw SOPSFailure(
                                    "is not an ENC[…] value, though the file's sops rules say it is encrypted")
                            }
                            var bytes = try sealed.open(with: key, additionalData: EncryptedValue.additionalData(keys))
                            plain = try EncryptedValue.value(of: bytes, type: sealed.type)
                            bytes.resetBytes(in: bytes.startIndex..<bytes.endIndex)  // the plaintext buffer, wiped
                        } catch {
                            throw SOPSFailure(error.description, path: ValuePath(path))
                        }
                        encrypted.append(ValuePath(path))
                    }
                }
                if !rules.macOnlyEncrypted || encrypts, let bytes = EncryptedValue.macBytes(of: plain) {
                    hasher.update(data: bytes)
                }
                return plain
            }
        }
    }

    /// The MAC sops keeps of `plaintext` (without its `sops` block): SHA-512 of the values it covers in
    /// `order`, in upper-case hex.
    static func mac(of plaintext: JSONValue, rules: SOPSRules, order: KeyOrder) -> String {
        var hasher = SHA512()
        if rules.macOnlyEncrypted { hasher.update(data: SOPSMetadata.macOnlyEncryptedPrefix) }
        var keys: [String] = []
        func walk(_ value: JSONValue, order: KeyOrder) {
            switch value {
            case .object(let members):
                for name in order.ordered(members) where !(keys.isEmpty && name == SOPSMetadata.key) {
                    guard let member = members[name] else { continue }
                    keys.append(name)
                    walk(member, order: order.child(name))
                    keys.removeLast()
                }
            case .array(let elements):
                for (index, element) in elements.enumerated() { walk(element, order: order.element(index)) }
            default:
                if !rules.macOnlyEncrypted || rules.encrypts(keys), let bytes = EncryptedValue.macBytes(of: value) {
                    hasher.update(data: bytes)
                }
            }
        }
        walk(plaintext, order: order)
        return hex(hasher.finalize())
    }

    private static func verifyMAC(_ computed: String, metadata: SOPSMetadata, key: SymmetricKey) throws(SOPSFailure) {
        guard let lastModified = metadata.lastModified, let macText = metadata.mac else {
            throw SOPSFailure("MAC mismatch: its sops block has no mac or lastmodified")
        }
        do throws(SOPSFailure) {
            guard let sealed = try EncryptedValue.parse(macText) else {
                throw SOPSFailure("MAC mismatch: its mac is not an ENC[…] value")
            }
            let stored = try sealed.open(with: key, additionalData: Data(lastModified.utf8))
            guard String(decoding: stored, as: UTF8.self) == computed else {
                throw SOPSFailure(
                    "MAC mismatch: the values are not the ones the file was sealed with (a value was changed, added or removed)"
                )
            }
        } catch {
            throw error.description.hasPrefix("MAC mismatch")
                ? error : SOPSFailure("MAC mismatch: its mac \(error.description)")
        }
    }

    /// The sealed `mac` member for `mac` written at `lastModified`.
    static func sealedMAC(_ mac: String, lastModified: String, key: SymmetricKey) throws -> String {
        try EncryptedValue.seal(Data(mac.utf8), type: "str", with: key, additionalData: Data(lastModified.utf8)).text
    }

    /// A document sealed: the ciphertext document (without the `sops` block) and the paths of the values it
    /// holds encrypted.
    struct Sealed {
        var document: JSONValue
        var encryptedPaths: [ValuePath]
    }

    /// `plaintext` sealed with `key` under `rules`: an encrypted value that `previous` (the ciphertext
    /// document the file holds) holds at the same place, and that opens to the same value, keeps its
    /// ciphertext, so a write changes only the lines of what changed; any other encrypted value is sealed
    /// with a fresh IV. The `sops` block is not added.
    ///
    /// - Parameter opened: What `previous` opens to, when the store knows it (it opened or sealed that very
    ///   document): a value equal to it at its place keeps its ciphertext without being opened again.
    /// - Throws: ``SOPSFailure`` when `plaintext` has a member `sops` at its top.
    static func seal(
        _ plaintext: JSONValue, previous: JSONValue?, opened: JSONValue? = nil, rules: SOPSRules, key: SymmetricKey
    ) throws -> Sealed {
        if case .object(let members) = plaintext, members[SOPSMetadata.key] != nil {
            throw SOPSFailure(
                "the member sops at the top of a sops file is its metadata, not a setting",
                path: ValuePath([.key(SOPSMetadata.key)]))
        }
        var walk = SealWalk(rules: rules, key: key)
        let document = try walk.seal(plaintext, previous: previous, opened: opened)
        return Sealed(document: document, encryptedPaths: walk.encrypted)
    }

    /// The walk of ``seal(_:previous:opened:rules:key:)``: the keys and path of the value at hand kept as
    /// stacks, as ``OpenWalk`` keeps them.
    private struct SealWalk {
        let rules: SOPSRules
        let key: SymmetricKey
        var keys: [String] = []
        var path: [ValuePath.Component] = []
        var encrypted: [ValuePath] = []

        init(rules: SOPSRules, key: SymmetricKey) {
            self.rules = rules
            self.key = key
        }

        mutating func seal(_ value: JSONValue, previous: JSONValue?, opened: JSONValue?) throws -> JSONValue {
            switch value {
            case .object(let members):
                let old: [String: JSONValue]? = if case .object(let old)? = previous { old } else { nil }
                let known: [String: JSONValue]? = if case .object(let known)? = opened { known } else { nil }
                var result: [String: JSONValue] = [:]
                result.reserveCapacity(members.count)
                for (name, member) in members {
                    keys.append(name)
                    path.append(.key(name))
                    defer {
                        keys.removeLast()
                        path.removeLast()
                    }
                    result[name] = try seal(member, previous: old?[name], opened: known?[name])
                }
                return .object(result)
            case .array(let elements):
                let old: [JSONValue]? = if case .array(let old)? = previous { old } else { nil }
                let known: [JSONValue]? = if case .array(let known)? = opened { known } else { nil }
                var result: [JSONValue] = []
                result.reserveCapacity(elements.count)
                for (index, element) in elements.enumerated() {
                    path.append(.index(index))
                    defer { path.removeLast() }
                    result.append(
                        try seal(
                            element, previous: old.flatMap { $0.indices.contains(index) ? $0[index] : nil },
                            opened: known.flatMap { $0.indices.contains(index) ? $0[index] : nil }))
                }
                return .array(result)
            default:
                guard EncryptedValue.isSealable(value), rules.encrypts(keys) else { return value }
                encrypted.append(ValuePath(path))
                // Known to open to this very value: its ciphertext stays, unopened.
                if case .string(let text)? = previous, opened == value, text.hasPrefix("ENC[AES256_GCM,") {
                    return .string(text)
                }
                guard let plaintext = EncryptedValue.plaintext(of: value) else { return value }
                var bytes = plaintext.bytes
                let type = plaintext.type
                defer { bytes.resetBytes(in: bytes.startIndex..<bytes.endIndex) }  // the plaintext buffer, wiped
                let additionalData = EncryptedValue.additionalData(keys)
                if case .string(let text)? = previous, let sealed = try? EncryptedValue.parse(text),
                    let opened = try? sealed.open(with: key, additionalData: additionalData),
                    let old = try? EncryptedValue.value(of: opened, type: sealed.type),
                    old == value || (old.isSameValue(as: value) && sealed.type == type)
                {
                    return .string(text)
                }
                return .string(
                    try EncryptedValue.seal(bytes, type: type, with: key, additionalData: additionalData).text)
            }
        }
    }

    /// Whether `document` holds a string that looks like a sops value.
    static func holdsEncryptedValues(_ document: JSONValue) -> Bool {
        switch document {
        case .string(let text): text.hasPrefix("ENC[AES256_GCM,")
        case .array(let elements): elements.contains(where: holdsEncryptedValues)
        case .object(let members): members.values.contains(where: holdsEncryptedValues)
        default: false
        }
    }

    /// Whether two documents have the same objects with the same keys and arrays of the same lengths.
    static func sameShape(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)):
            x.count == y.count && x.allSatisfy { key, value in y[key].map { sameShape(value, $0) } ?? false }
        case (.array(let x), .array(let y)):
            x.count == y.count && zip(x, y).allSatisfy { sameShape($0, $1) }
        case (.object, _), (_, .object), (.array, _), (_, .array): false
        default: true
        }
    }

    static func hex(_ digest: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in digest {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 15)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
#endif
