#if SOPS
import Crypto
import Foundation
import Loupe

/// A plaintext document sealed into the ciphertext document a sops file holds, `sops` block and MAC
/// included: what a store's write, `encrypt` and `rotate` write.
enum SOPSSealing {
    /// A document sealed for a file: the ciphertext document with its `sops` block, the paths of the values
    /// it holds encrypted, and the order of its keys in the text it is written as (the MAC's order).
    struct Sealed {
        var document: JSONValue
        var encryptedPaths: [ValuePath]
        var order: KeyOrder
    }

    /// `plaintext` sealed with `key` under `metadata`'s rules, with `metadata`'s block (its `lastmodified`
    /// now, its `mac` over the values in the order the text will hold them).
    ///
    /// - Parameters:
    ///   - reusing: The ciphertext document the file holds: an encrypted value that opens to the same value
    ///     at the same place keeps its ciphertext (nil: every value sealed afresh).
    ///   - opened: What `reusing` opens to, when the store knows it: its values are not opened again.
    ///   - editing: The document and text the write edits in place (nil: a new text, keys sorted), and the
    ///     order of the keys in that text when the store knows it (nil: read from the text).
    ///   - format: The file's format, whose editor makes the text.
    static func seal(
        _ plaintext: JSONValue, metadata: SOPSMetadata, key: SymmetricKey, reusing previous: JSONValue?,
        opened: JSONValue? = nil, editing: (document: JSONValue, text: Data, order: KeyOrder?)?,
        format: any DocumentCodec
    ) throws -> Sealed {
        var metadata = metadata
        let body = try SOPSDocument.seal(
            plaintext, previous: previous, opened: opened, rules: metadata.rules, key: key)
        let lastModified = SOPSMetadata.timestamp()
        metadata.block["lastmodified"] = .string(lastModified)
        if metadata.block["mac"] == nil { metadata.block["mac"] = .string("") }
        let draft = adding(metadata.block, to: body.document)
        // The MAC hashes the values in the order the written text holds them: where no key was added or
        // removed, the edit keeps the text's order; else the edit is made once to read its order.
        let order: KeyOrder
        if let editing, SOPSDocument.sameShape(draft, editing.document) {
            order = editing.order ?? textOrder(of: editing.document, in: editing.text, format: format)
        } else {
            let text =
                try editing.map { try format.serialize(draft, editing: $0.text, holding: $0.document) }
                ?? format.serialize(draft)
            order = textOrder(of: draft, in: text, format: format)
        }
        let mac = SOPSDocument.mac(of: plaintext, rules: metadata.rules, order: order)
        metadata.block["mac"] = .string(try SOPSDocument.sealedMAC(mac, lastModified: lastModified, key: key))
        return Sealed(
            document: adding(metadata.block, to: body.document), encryptedPaths: body.encryptedPaths, order: order)
    }

    /// The order of `document`'s keys in `text`: where its ciphertexts stand, when that tells it, else the
    /// text read again.
    static func textOrder(of document: JSONValue, in text: Data, format: any DocumentCodec) -> KeyOrder {
        if KeyOrder.followsText(format.formatName), let order = KeyOrder.positional(document, text: text) {
            return order
        }
        return KeyOrder.of(text, format: format.formatName)
    }

    static func adding(_ block: [String: JSONValue], to body: JSONValue) -> JSONValue {
        guard case .object(var members) = body else { return body }
        members[SOPSMetadata.key] = .object(block)
        return .object(members)
    }

    /// A fresh data key wrapped for each of `recipients`, one armored stanza each, as sops keeps them.
    static func newDataKey(
        for recipients: [AgeRecipient]
    ) throws -> (key: SymmetricKey, stanzas: [(recipient: String, enc: String)]) {
        let key = SymmetricKey(size: .bits256)
        return (key, try wrap(key, for: recipients))
    }

    static func wrap(_ key: SymmetricKey, for recipients: [AgeRecipient]) throws -> [(recipient: String, enc: String)] {
        try key.withUnsafeBytes { bytes in
            try recipients.map { (recipient: $0.description, enc: try AgeFile.encryptArmored(Data(bytes), to: [$0])) }
        }
    }
}
#endif
