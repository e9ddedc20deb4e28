#if SOPS
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation
import Logging
import Loupe

/// A settings file whose secrets are sealed in place, as sops 3 seals them: each encrypted value is
/// `ENC[AES256_GCM,…]` under the file's data key, keys and comments stay readable, and a `sops` block holds
/// the data key wrapped for each age recipient and a MAC over the values.
///
/// ```swift
/// let store = SOPSFileStore(path: "/etc/app/settings.yaml", format: YAMLCodec(), identities: .sopsDefaults())
/// let root = try RootLens(default: Settings(), store: store)
/// try root.update { $0.token = "s3cr3t" }  // one ENC[…] line, lastmodified and mac change
/// ```
///
/// - **Read.** The data key is unwrapped with the first of ``identities`` an age stanza was sealed for;
///   every encrypted value is opened with its path as additional data and the MAC is checked. A value or MAC
///   that does not verify, a file with `ENC[…]` values and no `sops` block, or a version other than sops 3
///   is a `SettingsError` (`SettingsError.Code.corrupt`) naming the file and the path or "MAC mismatch";
///   no identity that opens it is `SettingsError.Code.unavailable`, naming the recipients.
/// - **Written in place.** A write is an edit of the file's text through its format's editor: a changed
///   value is sealed with a fresh IV where the old one stood, every unchanged value keeps its ciphertext,
///   `lastmodified` and `mac` are updated, and every other byte stays; `sops -d` still opens it. A new value
///   at a path the rules encrypt is written encrypted. A file that does not exist yet is created sealed for
///   ``recipients`` under ``rules``.
/// - **No plaintext kept.** The file store underneath (its lock, atomic writes, watch and journal) only ever
///   sees the ciphertext document: what it remembers of the file, the journal beside it and its temporary
///   files hold ciphertext. ``history()`` opens each revision when asked for it.
///
/// JSON and YAML are read and written as sops does. TOML, JSONC and other formats take the same scheme (a
/// `sops` table or member), as Loupe's extension, and hash their values for the MAC in sorted key order
/// (TOML) or the text's order (JSONC).
public final class SOPSFileStore: DocumentStore, StoreHistory {
    /// The file's path.
    public let path: String
    /// The file's format (what is sealed in it is the same in every format).
    public let format: any DocumentCodec
    /// Where the identities that open the data key come from.
    public let identities: AgeIdentities
    /// Whom a file this store creates is sealed for.
    public let recipients: [AgeRecipient]
    /// Which values a file this store creates encrypts; an existing file's `sops` block says its own.
    public let rules: SOPSRules

    private let file: FileStore
    private let logger: Logger
    /// The data key last unwrapped and the stanzas it came from: a load need not unwrap it again.
    private let dataKeyCache = Locked<(stanzas: [String], key: SymmetricKey)?>(nil)
    /// The paths whose values the file holds encrypted, as last read.
    private let encrypted = Locked<[ValuePath]>([])
    /// The ciphertext document this store last opened or sealed, the plaintext it holds, and the order of
    /// its keys in the text it was read from or written as (nil: not known): a write over that very
    /// document keeps the ciphertext of each value it leaves as it was, without opening it again, and a
    /// write over that very text takes the MAC's order without reading the text for it.
    private let lastOpened = Locked<(cipher: JSONValue, plaintext: JSONValue, order: (text: Data, keys: KeyOrder)?)?>(
        nil)

    /// Creates a store for the sops file at `path`.
    ///
    /// - Parameters:
    ///   - path: The file; it need not exist (the first write creates it, sealed for `recipients`).
    ///   - format: The file's format: JSON (the default), `YAMLCodec`, `TOMLCodec`, `JSONCCodec`.
    ///   - identities: Where the age identities that open the file are read from (sops's places by default).
    ///   - recipients: Whom a file this store creates is sealed for.
    ///   - rules: Which values a file this store creates encrypts (sops's default: all but `*_unencrypted`).
    ///   - permissions: The mode of a newly created file (0600 by default).
    ///   - history: What the file store keeps of its changes (ciphertext, beside the file).
    ///   - logger: Where loads and saves are logged; never a value.
    public init(
        path: String, format: any DocumentCodec = JSONCodec(), identities: AgeIdentities = .sopsDefaults(),
        recipients: [AgeRecipient] = [], rules: SOPSRules? = nil, permissions: mode_t = 0o600,
        history: FileStore.HistoryPolicy = .kept(), logger: Logger = Logger(label: "loupe.sops")
    ) {
        self.path = path
        self.format = format
        self.identities = identities
        self.recipients = recipients
        self.rules = rules ?? .standard
        self.logger = logger
        file = FileStore(path: path, format: format, permissions: permissions, history: history, logger: logger)
    }

    public var description: String { "sops \(format.formatName) file \(path)" }

    public var coding: DocumentCoding { format.coding }

    /// The paths of the values the file holds encrypted, as last read or written: tools mask them.
    public var encryptedPaths: [ValuePath] { encrypted.withLock { $0 } }

    /// The encrypted values' paths: `get`, `show`, `list`, `explain` and `diff` mask them unless
    /// `--reveal`, and errors do not quote them.
    public var secretPaths: [ValuePath] { encryptedPaths }

    public func load() throws -> StoredDocument {
        let (stored, text) = try file.loadWithText()
        guard let cipher = stored.document else { return stored }
        let opened = try open(cipher, text: text)
        encrypted.withLock { $0 = opened.encryptedPaths }
        lastOpened.withLock { $0 = (cipher, opened.plaintext, text.map { ($0, opened.order) }) }
        logger.debug(
            "opened the sops file", metadata: ["file": "\(path)", "encrypted-values": "\(opened.encryptedPaths.count)"])
        return StoredDocument(
            opened.plaintext, token: stored.token, layers: stored.layers, source: stored.source, writers: stored.writers
        )
    }

    public func save(_ document: JSONValue, replacing token: ChangeToken) throws -> ChangeToken {
        let sealed = try sealed(document, replacing: token)
        let written = try file.save(sealed.document, replacing: token)
        encrypted.withLock { $0 = sealed.encryptedPaths }
        // The text written (nil when another version of the file was read since: the next write reads
        // the order of its keys from the text it edits).
        let text = file.text(of: written)
        lastOpened.withLock { $0 = (sealed.document, document, text.map { ($0, sealed.order) }) }
        logger.debug(
            "sealed the sops file",
            metadata: ["file": "\(path)", "encrypted-values": "\(sealed.encryptedPaths.count)"])
        return written
    }

    public func remove(replacing token: ChangeToken) throws -> ChangeToken { try file.remove(replacing: token) }

    public func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        try file.watch(onChange)
    }

    /// The file's, with its history opened: the file's lock, its deferred writes, and its journal, whose
    /// revisions are read as ``history()`` reads them.
    public var capabilities: StoreCapabilities {
        var capabilities = file.capabilities
        if capabilities.history != nil { capabilities.history = self }
        return capabilities
    }

    /// The journal's revisions, each opened with the data key its own `sops` block wraps, every value with
    /// its path: a rollback to a revision sealed under an older data key writes it sealed again under the
    /// current one. The journal keeps documents, not their text, so a revision's MAC (over the values in its
    /// text's order) is not checked; what the file holds now is, on every load.
    public func history() throws -> SettingsHistory {
        guard let history = try file.history() else {
            return SettingsHistory()
        }
        var revisions = [history.baseRevision] + history.changes.map(\.revision)
        if history.changes.isEmpty { revisions = [] }
        var opened: [Int: JSONValue?] = [:]
        for revision in revisions {
            let cipher = try history.document(after: revision)
            opened[revision] = try cipher.map { try open($0, text: nil, checkingMAC: false).plaintext }
        }
        let base: JSONValue? = history.changes.isEmpty ? nil : (opened[history.baseRevision] ?? nil)
        var previous = base
        var changes: [SettingsChange] = []
        for change in history.changes {
            let current = opened[change.revision] ?? nil
            changes.append(
                SettingsChange(
                    revision: change.revision, time: change.time, author: change.author,
                    patch: SettingsHistory.patch(from: previous, to: current),
                    reversePatch: SettingsHistory.patch(from: current, to: previous),
                    purgedPaths: change.purgedPaths))
            previous = current
        }
        return SettingsHistory(
            baseRevision: history.baseRevision, base: base, changes: changes, recordsAuthors: history.recordsAuthors,
            basePurgedPaths: history.basePurgedPaths)
    }

    public func purgeHistory(of path: ValuePath) throws -> Int { try file.purgeHistory(of: path) ?? 0 }

    /// Whether the file at `path` is a sops file: it reads as `format` and has a `sops` block (a mapping at
    /// its top). False for a file that does not exist or read.
    public static func isSOPSFile(atPath path: String, format: any DocumentCodec) -> Bool {
        guard let data = FileManager.default.contents(atPath: path), let document = try? format.parse(data),
            case .object(let members) = document, case .object? = members[SOPSMetadata.key]
        else { return false }
        return true
    }

    // MARK: Keys

    /// Seals every value again under a new data key, wrapped for the same age recipients (`sops rotate`),
    /// in place, under the file's lock. The values and the text around them stay; every `ENC[…]` changes.
    ///
    /// - Throws: `SettingsError` when the file does not open, or is also sealed for recipients Loupe cannot
    ///   wrap a key for (PGP, cloud KMS), which would lose their access.
    public func rotate() throws {
        try file.withExclusiveAccess {
            let (cipher, text, token) = try current()
            var metadata = try self.metadata(of: cipher)
            let plaintext = try open(cipher, text: text).plaintext
            let recipients = try ageRecipients(of: metadata, forWhat: "rotate its data key")
            let (key, stanzas) = try SOPSSealing.newDataKey(for: recipients)
            metadata.block["age"] = Self.ageList(stanzas)
            let sealed = try SOPSSealing.seal(
                plaintext, metadata: metadata, key: key, reusing: nil, editing: text.map { (cipher, $0, nil) },
                format: format)
            _ = try file.save(sealed.document, replacing: token)
            dataKeyCache.withLock { $0 = (stanzas.map(\.enc), key) }
        }
    }

    /// Wraps the file's data key for exactly `recipients` (`sops updatekeys`): a recipient already there
    /// keeps its stanza, a new one gets one, one no longer named loses its own. The values, `lastmodified`
    /// and `mac` stay.
    ///
    /// - Throws: `SettingsError` when the file does not open, `recipients` is empty, or the file keeps
    ///   its keys in `key_groups`.
    public func updateRecipients(_ recipients: [AgeRecipient]) throws {
        guard !recipients.isEmpty else {
            throw SettingsError(
                .invalidValue, store: description, reason: "a sops file needs at least one age recipient")
        }
        try file.withExclusiveAccess {
            let (cipher, text, token) = try current()
            var metadata = try self.metadata(of: cipher)
            _ = try open(cipher, text: text)
            guard metadata.block["key_groups"] == nil else {
                throw SettingsError(
                    .unwritable, store: description,
                    reason: "it keeps its keys in key_groups, which Loupe does not update")
            }
            let key = try dataKey(of: metadata)
            let existing = Dictionary(
                metadata.ageKeys.map { ($0.recipient, $0.enc) }, uniquingKeysWith: { first, _ in first })
            var stanzas: [(recipient: String, enc: String)] = []
            for recipient in recipients {
                if let enc = existing[recipient.description] {
                    stanzas.append((recipient.description, enc))
                } else {
                    stanzas += try SOPSSealing.wrap(key, for: [recipient])
                }
            }
            metadata.block["age"] = Self.ageList(stanzas)
            guard case .object(var members) = cipher else { return }
            members[SOPSMetadata.key] = .object(metadata.block)
            _ = try file.save(.object(members), replacing: token)
            dataKeyCache.withLock { $0 = (stanzas.map(\.enc), key) }
        }
    }

    /// The file's text with every value opened, as `sops -d` prints it: comments (encrypted ones as they
    /// are) and layout kept, the `sops` block left out.
    public func decryptedText() throws -> Data {
        let (cipher, text, _) = try current()
        let plaintext = try open(cipher, text: text).plaintext
        guard let text else { return try format.serialize(plaintext) }
        return try format.serialize(plaintext, editing: text, holding: cipher)
    }

    /// The ciphertext document the file holds, its text and token.
    private func current() throws -> (JSONValue, Data?, ChangeToken) {
        let (stored, text) = try file.loadWithText()
        guard let cipher = stored.document else {
            throw SettingsError(.notFound, store: description, reason: "there is no such file")
        }
        return (cipher, text, stored.token)
    }

    private func ageRecipients(of metadata: SOPSMetadata, forWhat what: String) throws -> [AgeRecipient] {
        let others = metadata.recipientNames.filter { !$0.hasPrefix("age ") }
        guard others.isEmpty, metadata.block["key_groups"] == nil else {
            throw SettingsError(
                .unwritable, store: description,
                reason:
                    "it is also sealed for \(others.isEmpty ? "key groups" : others.joined(separator: ", ")), which Loupe cannot wrap a new data key for; use sops to \(what)"
            )
        }
        return try metadata.ageKeys.map { try AgeRecipient($0.recipient) }
    }

    private static func ageList(_ stanzas: [(recipient: String, enc: String)]) -> JSONValue {
        .array(stanzas.map { .object(["recipient": .string($0.recipient), "enc": .string($0.enc)]) })
    }

    /// Seals the plaintext settings file at `path` in place (`sops encrypt -i`): every value the rules
    /// encrypt becomes `ENC[…]` where it stood, and a `sops` block wraps a new data key for `recipients`.
    /// Comments and layout stay. No history is kept of the plaintext.
    ///
    /// - Throws: `SettingsError` when the file does not exist or read, is already a sops file, or
    ///   `recipients` is empty.
    public static func encrypt(
        path: String, format: any DocumentCodec = JSONCodec(), recipients: [AgeRecipient], rules: SOPSRules? = nil
    ) throws {
        let file = FileStore(path: path, format: format, history: .off)
        let name = "\(format.formatName) file \(path)"
        guard !recipients.isEmpty else {
            throw SettingsError(
                .invalidValue, store: name,
                reason: "no age recipient to seal it for (--age, or a .sops.yaml creation rule)")
        }
        try file.withExclusiveAccess {
            let (stored, text) = try file.loadWithText()
            guard let plaintext = stored.document else {
                throw SettingsError(.notFound, store: name, reason: "there is no such file")
            }
            if (try? SOPSMetadata.of(plaintext)) != nil {
                throw SettingsError(
                    .invalidValue, store: name, reason: "it is already a sops file (it has a sops block)")
            }
            let (key, stanzas) = try SOPSSealing.newDataKey(for: recipients)
            let metadata = SOPSMetadata.new(rules: rules ?? .standard, ageStanzas: stanzas)
            let sealed: JSONValue
            do {
                sealed = try SOPSSealing.seal(
                    plaintext, metadata: metadata, key: key, reusing: nil,
                    editing: text.map { (plaintext, $0, nil) }, format: format
                ).document
            } catch let error as SOPSFailure {
                throw SettingsError(
                    .invalidValue, path: error.path, store: name, reason: error.description, cause: error)
            }
            _ = try file.save(sealed, replacing: stored.token)
        }
    }

    // MARK: Opening and sealing

    /// `cipher` opened: its data key unwrapped, its values opened and its MAC checked.
    private func open(_ cipher: JSONValue, text: Data?, checkingMAC: Bool = true) throws -> SOPSDocument.Opened {
        let metadata = try metadata(of: cipher)
        let key = try dataKey(of: metadata)
        do {
            guard checkingMAC else {
                return try SOPSDocument.open(cipher, metadata: metadata, key: key, order: .unknown, checkingMAC: false)
            }
            // Where the ciphertexts stand gives the order the MAC takes, without reading the text again;
            // where it does not verify so, the text is read for its order (a file with plaintext values).
            if let text, KeyOrder.followsText(format.formatName), let order = KeyOrder.positional(cipher, text: text),
                let opened = try? SOPSDocument.open(cipher, metadata: metadata, key: key, order: order)
            {
                return opened
            }
            let order = text.map { KeyOrder.of($0, format: format.formatName) } ?? .unknown
            return try SOPSDocument.open(cipher, metadata: metadata, key: key, order: order)
        } catch {
            throw SettingsError(
                .corrupt, path: error.path, store: description,
                reason: error.path == nil ? error.description : "the value \(error.description)", cause: error)
        }
    }

    private func metadata(of cipher: JSONValue) throws -> SOPSMetadata {
        let metadata: SOPSMetadata?
        do {
            metadata = try SOPSMetadata.of(cipher)
        } catch {
            throw SettingsError(.corrupt, store: description, reason: error.description, cause: error)
        }
        guard let metadata else {
            let reason =
                SOPSDocument.holdsEncryptedValues(cipher)
                ? "it holds ENC[…] values but no sops block, so they cannot be opened or checked"
                : "it is not a sops file (it has no sops block); seal it with `loupe encrypt`"
            throw SettingsError(.corrupt, store: description, reason: reason)
        }
        return metadata
    }

    private func dataKey(of metadata: SOPSMetadata) throws -> SymmetricKey {
        let stanzas = metadata.ageKeys.map(\.enc)
        if let cached = dataKeyCache.withLock({ $0 }), cached.stanzas == stanzas { return cached.key }
        let key: SymmetricKey
        do {
            key = try SOPSDocument.dataKey(of: metadata, identities: identities.identities())
        } catch let error as SOPSFailure {
            throw SettingsError(
                .unavailable, store: description,
                reason: "its data key does not open: \(error.description) (identities from \(identities))", cause: error
            )
        }
        dataKeyCache.withLock { $0 = (stanzas, key) }
        return key
    }

    /// The ciphertext document that holds `document`, as an edit of what the file holds (`token`).
    private func sealed(_ document: JSONValue, replacing token: ChangeToken) throws -> SOPSSealing.Sealed {
        // The text the write edits: the save below edits the text of this very version (`token` names
        // its bytes), and the MAC takes the order of its keys.
        let (current, currentText) = try file.loadWithText()
        guard current.token == token else {
            throw SettingsError(
                .conflict, store: description, reason: "another writer changed the file since it was read")
        }
        var metadata: SOPSMetadata
        let key: SymmetricKey
        let previousText: Data?
        if let previous = current.document {
            metadata = try self.metadata(of: previous)
            key = try dataKey(of: metadata)
            previousText = currentText
        } else {
            guard !recipients.isEmpty else {
                throw SettingsError(
                    .unwritable, store: description,
                    reason: "it does not exist, and the store has no age recipient to seal a new file for")
            }
            let stanzas: [(recipient: String, enc: String)]
            (key, stanzas) = try SOPSSealing.newDataKey(for: recipients)
            metadata = SOPSMetadata.new(rules: rules, ageStanzas: stanzas)
            dataKeyCache.withLock { $0 = (stanzas.map(\.enc), key) }
            previousText = nil
        }
        do {
            // What this store last opened or sealed, when the file still holds that very document: its
            // plaintext, and the order of its keys when the file still holds that very text.
            let known = lastOpened.withLock { $0 }.flatMap { known in current.document == known.cipher ? known : nil }
            let editing = current.document.flatMap { previous in
                previousText.map { text in
                    (document: previous, text: text, order: known?.order.flatMap { $0.text == text ? $0.keys : nil })
                }
            }
            return try SOPSSealing.seal(
                document, metadata: metadata, key: key, reusing: current.document, opened: known?.plaintext,
                editing: editing, format: format)
        } catch let error as SOPSFailure {
            throw SettingsError(
                .unwritable, path: error.path, store: description, reason: error.description, cause: error)
        }
    }
}
#endif
