import Foundation

/// The one place where stored documents meet the typed value, for every store and format alike.
///
/// ```
/// load:   stored document ─▶ take the stamp ─▶ migrations ─▶ merge (RFC 7386) over the encoded defaults
///                         ─▶ decode → Root, noting which keys the type read
/// commit: Root ─▶ encode → document ─▶ the merge patch from the defaults (or the whole document)
///                         ─▶ put back the unknown keys ─▶ stamp the version ─▶ store
/// ```
///
/// Every error it throws names the store, the path of the part that does not fit, and (unless the store
/// keeps secrets) what was found there: `invalid data in JSON file /etc/app/settings.json: server.port:
/// expected Int, found String "80a"`.
struct DocumentPipeline<Root: Codable & Sendable>: Sendable {
    /// How the typed value maps to documents: the store's.
    let coding: DocumentCoding
    /// The store's `description`, for errors.
    let storeName: String
    /// Whether errors may quote values found in documents (not for stores that keep secrets).
    let quotesValues: Bool
    /// The encoded default root: what a stored document lies over.
    let defaults: JSONValue
    /// The version of the documents this program writes (1 unless migrations say otherwise).
    let version: Int
    /// The step to each version from the one before.
    let migrations: [Int: Migration]
    /// What a stored document holds: the differences from the defaults, or the whole value.
    let form: StoredForm
    /// The first rule a root breaks (``Validated``), when `Root` has rules; the flag says whether the
    /// violation may quote the value.
    let validate: (@Sendable (Root, Bool) -> RuleViolation?)?
    /// Whether two roots with the same bytes are the same value (``SameBytes``): when they are not,
    /// nothing is taken as unchanged for its bytes.
    let comparesBytes = SameBytes.isSound(for: Root.self)
    /// What the last encode made, for the next one to reuse; none for a type that holds references, whose
    /// parts may change with their bytes the same.
    let memo: DocumentEncoder.Memo?
    /// The schema of `Root`, which types and places the values of override layers; worked out the first
    /// time a stack has any, or it is asked for.
    let schema: SchemaCache

    typealias Migration = @Sendable (inout JSONValue) throws -> Void

    /// The key of an object document that holds its version: `"$version": 2`. No Swift property is named
    /// so, and a person reading the file sees what it is.
    static var stampKey: String { "$version" }

    init(
        coding: DocumentCoding, storeName: String, quotesValues: Bool, defaults: JSONValue,
        version: Int = 1, migrations: [Int: Migration] = [:], form: StoredForm = .differencesFromDefaults,
        validate: (@Sendable (Root, Bool) -> RuleViolation?)? = nil, schema: SchemaCache
    ) {
        self.validate = validate
        self.schema = schema
        memo = comparesBytes ? DocumentEncoder.Memo() : nil
        self.coding = coding
        self.storeName = storeName
        self.quotesValues = quotesValues
        self.defaults = defaults
        self.version = version
        self.migrations = migrations
        self.form = form
    }

    /// The root a stack of layers holds (a store's document over nothing, for most stores), and what the
    /// root must remember of it to store the next one.
    ///
    /// Each document's stamp is taken off and the migrations from its version to ``version`` run on it;
    /// the top layer loses what it holds at locked paths; the defaults, the lower layers in order and the
    /// top are merged (RFC 7386), and the result is decoded. Nothing is written.
    ///
    /// - Throws: ``LayerLoadFailure``, naming the layer at fault: for a document that does not decode,
    ///   the topmost layer that sets the part that does not fit.
    func load(_ stack: LayerStack) throws(LayerLoadFailure) -> Loaded<Root> {
        var lower: [LayerDocument] = []
        lower.reserveCapacity(stack.lower.count)
        var base = defaults
        for (index, layer) in stack.lower.enumerated() {
            var document = layer.document
            do {
                _ = try migrate(&document, store: layer.name)
            } catch {
                throw LayerLoadFailure(layer: index, error: error)
            }
            lower.append(
                LayerDocument(source: layer.source, name: layer.name, document: document, writers: layer.writers))
            base = base.merging(patch: document)
        }
        let topName = storeName
        var top = stack.top ?? .object([:])
        var stamp = 1
        if stack.top != nil {
            do {
                stamp = try migrate(&top, store: topName)
            } catch {
                throw LayerLoadFailure(layer: nil, error: error)
            }
        }
        var ignored: [(path: ValuePath, lock: SettingsLock)] = []
        var heldAside: [HeldValue] = []
        for lock in stack.locks {
            guard let touched = top.firstPatched(under: lock.path), let held = top.removePatch(at: lock.path) else {
                continue
            }
            ignored.append((touched, lock))
            heldAside.append(held)
        }
        // Over no defaults and no layers (a root of any document), the stored document is the value as it
        // is, `null`s included: a merge would take them for removals.
        var effective = defaults == .object([:]) && lower.isEmpty ? top : base.merging(patch: top)
        // The override layers (the environment, `--set`, credentials) set their values over all of it.
        // Secret references in the documents are resolved first: the override layers win over them too.
        var overrides = OverrideResult()
        let references = effective.secretReferences
        if !stack.overrides.isEmpty || !references.isEmpty {
            do {
                let schema: SchemaIndex
                do {
                    schema = try self.schema.index()
                } catch {
                    throw SettingsError(
                        .corrupt, store: storeName,
                        reason:
                            "secret references and override layers need the settings type's schema, which could not be worked out: \(error)",
                        cause: error)
                }
                let resolved = try schema.resolve(references, in: &effective) {
                    stack.writers(ofReferenceAt: $0, top: top, lower: lower)
                }
                overrides = try schema.apply(stack.overrides, to: &effective)
                overrides.applied.insert(contentsOf: resolved, at: 0)
            } catch {
                throw LayerLoadFailure(
                    layer: nil,
                    error: error as? SettingsError
                        ?? SettingsError(.corrupt, store: storeName, reason: "\(error)", cause: error))
            }
        }
        let reads = ReadKeys()
        let root: Root
        do {
            root = try coding.decode(Root.self, from: effective, reads: reads)
        } catch {
            // The topmost layer that sets the part that does not fit is the one to fix.
            var layer: Int?
            var failure: (path: ValuePath, reason: String)?
            if let error = error as? DecodingError {
                // A value an override gave is the override's fault: named by its origin, never quoted if secret.
                let path = DecodingFailure(error, in: effective, coding: coding, quotingValues: false).path
                // Nor is a value the type declares secret, wherever it comes from.
                let quoting = quotesValues && !containsSecrets(at: path)
                if let applied = overrides.applied.last(where: { $0.overlaps(path) }) {
                    let described = DecodingFailure(
                        error, in: effective, coding: coding, quotingValues: quoting && !applied.isSecret)
                    throw LayerLoadFailure(
                        layer: nil,
                        error: SettingsError(
                            .invalidValue, path: described.path,
                            reason: "\(applied.origin): \(described.path): \(described.reason)", cause: error))
                }
                let described = DecodingFailure(error, in: effective, coding: coding, quotingValues: quoting)
                failure = (described.path, described.reason)
                layer = culprit(of: described.path, top: top, lower: lower)
            }
            let name = layer.map { lower[$0].name } ?? topName
            let storeError =
                failure.map {
                    SettingsError(.corrupt, path: $0.path, store: name, reason: $0.reason, cause: error)
                }
                ?? SettingsError(
                    .corrupt, store: name, reason: quotesValues ? "\(error)" : "it cannot be read as \(Root.self)",
                    cause: error)
            throw LayerLoadFailure(layer: layer, error: storeError)
        }
        // A rule broken is the fault of the topmost layer that sets the part, like a part that does not fit.
        if let validate, let violation = violation(of: root, validate) {
            if let applied = overrides.applied.last(where: { $0.overlaps(violation.path) }) {
                let quiet = applied.isSecret ? validate(root, false) ?? violation : violation
                let reason = quiet.rule + (quiet.found.map { ", got \($0)" } ?? "")
                throw LayerLoadFailure(
                    layer: nil,
                    error: SettingsError(
                        .invalidValue, path: violation.path, reason: "\(applied.origin): \(violation.path): \(reason)",
                        cause: quiet))
            }
            let layer = culprit(of: violation.path, top: top, lower: lower)
            let reason = violation.rule + (violation.found.map { ", got \($0)" } ?? "")
            throw LayerLoadFailure(
                layer: layer,
                error: SettingsError(
                    .corrupt, path: violation.path.components.isEmpty ? nil : violation.path,
                    store: layer.map { lower[$0].name } ?? topName, reason: reason, cause: violation))
        }
        var memory = StoredMemory(unknownKeys: UnknownKeys(in: effective, reads: reads), stamp: stamp)
        memory.spellings = top
        memory.overrides = overrides.applied
        if !stack.lower.isEmpty || !stack.locks.isEmpty || stack.topSource != nil || !stack.overrides.isEmpty {
            memory.layers = LayerMemory(
                lower: lower, base: base, locks: stack.locks, heldAside: heldAside,
                topSource: stack.topSource ?? storeName)
        }
        return Loaded(root: root, memory: memory, ignored: ignored, unmatched: overrides.unmatched)
    }

    /// The first rule `root` breaks, quoting the value found unless the store keeps secrets or the value
    /// is (or holds) one the type declares.
    func violation(of root: Root, _ validate: (Root, Bool) -> RuleViolation?) -> RuleViolation? {
        guard let violation = validate(root, quotesValues) else { return nil }
        guard violation.found != nil, containsSecrets(at: violation.path) else { return violation }
        return validate(root, false) ?? violation
    }

    /// The read-only layer to blame for the part at `path`: the topmost that sets it, unless the top layer
    /// does (nil).
    private func culprit(of path: ValuePath, top: JSONValue, lower: [LayerDocument]) -> Int? {
        top.patchTouches(path) ? nil : lower.lastIndex { $0.document.patchTouches(path) }
    }

    /// Takes the stamp off `document` and runs the migrations from its version to ``version`` on it;
    /// returns the version it was stamped with. `store` names the document, for errors.
    func migrate(_ document: inout JSONValue, store: String) throws(SettingsError) -> Int {
        let stamp = try takeStamp(from: &document, store: store)
        guard stamp < version else { return stamp }
        for step in (stamp + 1)...version {
            guard let migration = migrations[step] else { continue }
            do {
                try migration(&document)
            } catch {
                let reason = quotesValues ? "\(error)" : "the migration threw"
                throw SettingsError(
                    .corrupt, store: store,
                    reason: "the migration to version \(step) failed: \(reason)", cause: error)
            }
        }
        return stamp
    }

    /// Refuses a write by path that would set, remove or replace the version stamp, `"$version"` at the
    /// top of the stored document: the stamp is Loupe's (migrations read it), and a value written there
    /// either leaves a file that no later read accepts or is taken over as a stamp.
    ///
    /// - Parameters:
    ///   - path: The path written, from the root.
    ///   - value: The value written at it (nil for a removal): a whole document holding the key is
    ///     refused too.
    static func refuseStampWrite(at path: ValuePath, writing value: JSONValue?) throws {
        let named: Bool = if case .key(stampKey)? = path.components.first { true } else { false }
        let inDocument: Bool =
            if path.components.isEmpty, case .object(let members)? = value, members[stampKey] != nil { true } else {
                false
            }
        guard named || inDocument else { return }
        throw SettingsError(
            .invalidValue, path: ValuePath([.key(stampKey)]),
            reason:
                "\(stampKey) is the version stamp Loupe keeps for migrations, not a setting: it cannot be set, removed or edited (the stored document, stamp included, is what `show --stored` prints)"
        )
    }

    /// The version `document` is stamped with (1 when unstamped), taking the stamp off.
    private func takeStamp(from document: inout JSONValue, store: String) throws(SettingsError) -> Int {
        guard case .object(var object) = document, let stamp = object.removeValue(forKey: Self.stampKey) else {
            return 1
        }
        guard case .integer(let number) = stamp, number >= 1 else {
            let found = quotesValues ? ", found \(stamp.shortDescription)" : ""
            throw SettingsError(
                .corrupt, path: ValuePath([.key(Self.stampKey)]), store: store,
                reason: "expected the document's version, a whole number from 1\(found)")
        }
        document = .object(object)
        return number
    }

    /// The document for `root`.
    func encode(_ root: Root) throws -> JSONValue {
        try encodeNotingLast(root).document
    }

    /// The document for `root`, and the document of the last encode it started from, which it shares its
    /// storage with if and only if the two are the same; nil when it started from none.
    func encodeNotingLast(_ root: Root) throws -> (document: JSONValue, last: JSONValue?) {
        do {
            return try coding.encodeNotingLast(root, memo: memo)
        } catch {
            throw SettingsError(
                .unwritable, store: storeName, reason: "cannot encode the value: \(error)", cause: error)
        }
    }

    /// The document to store for a value whose whole document is `full`: the patch from the layers below
    /// (the defaults, for most stores), or `full` itself, with the unknown keys put back and the version
    /// stamped. Updates `memory` to what the store holds once it is written; `dropped` lists unknown keys
    /// that had no place any more.
    ///
    /// A key the stored document held stays in it, with the value's value there, even when that equals the
    /// layers below (an administrator's explicit pin), unless it is under a path in `released`; a key it
    /// did not hold is written only where the value differs from the layers below.
    ///
    /// - Throws: ``SettingsError/Code/locked`` when the patch sets a path an administrator locked.
    ///
    /// What override layers put into the value is taken out again (what the files hold there is stored), so
    /// that it is never written anywhere; a part the value changed where an override sets it is stored and
    /// listed in `overridden`: the override still wins.
    func storedDocument(
        for full: JSONValue, memory: inout StoredMemory, releasing released: [ValuePath] = [],
        dropped: inout [ValuePath],
        overridden: inout [AppliedOverride]
    ) throws(SettingsError) -> JSONValue {
        let full = try withoutOverrides(full, memory: memory, releasing: released, overridden: &overridden)
        // The unknown keys go back into the value first, so that those a lower layer holds are not
        // patched away, and those only the stored document holds are patched in.
        var whole = full
        if var unknown = memory.unknownKeys {
            var restored: JSONValue? = full
            dropped = unknown.restore(into: &restored, full: full)
            whole = restored ?? full
            memory.unknownKeys = unknown.isEmpty ? nil : unknown
        }
        let base = memory.layers?.base ?? defaults
        var document = form == .wholeValue ? whole : base.mergePatch(to: whole)
        if let layers = memory.layers, !layers.locks.isEmpty {
            // What the value changes over the layers below, whatever the stored form.
            let changes = form == .wholeValue ? base.mergePatch(to: whole) : document
            for lock in layers.locks {
                if let touched = changes.firstPatched(under: lock.path) {
                    throw SettingsError.locked(touched, by: lock)
                }
            }
            // What the top layer held at locked paths stays there, ignored, for when the lock is lifted;
            // unless it is reset (released), which is how a user takes it out of their file.
            let isReleased = { (held: HeldValue) in
                released.contains { held.path.components.starts(with: $0.components) }
            }
            for held in layers.heldAside where document[path: held.path] == nil && !isReleased(held) {
                document[path: held.path] = held.value
            }
            memory.layers?.heldAside.removeAll(where: isReleased)
        }
        // Numbers the store holds spelled otherwise than the value encodes them stay as they are there; and
        // (in a patch) keys the store holds stay there, even where they equal what lies below.
        document =
            form == .wholeValue
            ? document.keepingNumberSpellings(of: memory.spellings)
            : document.keepingKeysAndSpellings(of: memory.spellings, whole: whole, releasing: released)
        memory.spellings = document
        let stamp = max(memory.stamp, version)
        if stamp > 1, case .object(var object) = document {
            object[Self.stampKey] = .integer(stamp)
            document = .object(object)
        }
        memory.stamp = stamp
        return document
    }

    // MARK: Layers

    /// The layers as `memory` records them, lowest first: the defaults, the read-only layers, and the top
    /// layer's patch for the value whose whole document is `full`.
    func layers(for full: JSONValue, memory: StoredMemory) -> [SettingsLayer] {
        var layers = [SettingsLayer(source: .defaultValue, document: defaults, isWritable: false)]
        for layer in memory.layers?.lower ?? [] {
            layers.append(SettingsLayer(source: .layer(layer.source), document: layer.document, isWritable: false))
        }
        layers.append(
            SettingsLayer(
                source: .layer(memory.layers?.topSource ?? storeName), document: topPatch(for: full, memory: memory),
                isWritable: true))
        for applied in memory.overrides {
            // As a merge patch: an override inside an array replaces the array, as the value holds it.
            let keys = ValuePath(Array(applied.path.components.prefix { if case .key = $0 { true } else { false } }))
            var document = JSONValue.object([:])
            document[path: keys] = keys == applied.path ? applied.value : full[path: keys]
            layers.append(
                SettingsLayer(
                    source: .override(applied.origin), document: document, isWritable: false, isSecret: applied.isSecret
                ))
        }
        return layers
    }

    /// Where the values at `paths` come from, for the value whose whole document is `full`.
    func provenance(of paths: [ValuePath], full: JSONValue, memory: StoredMemory) -> [Provenance] {
        // The layers and the whole document once for every path: each is worked out from the whole value.
        let layers = self.layers(for: full, memory: memory)
        let whole = wholeDocument(for: full, memory: memory)
        return paths.map { provenance(of: $0, layers: layers, whole: whole, memory: memory) }
    }

    private func provenance(
        of path: ValuePath, layers: [SettingsLayer], whole: JSONValue, memory: StoredMemory
    ) -> Provenance {
        var setters: [Provenance.Source] = []
        for layer in layers {
            if case .override = layer.source { continue }  // each override by its own path, below
            let sets = layer.source == .defaultValue ? layer.document.contains(path) : layer.document.patchTouches(path)
            if sets { setters.append(layer.source) }
        }
        // The override layers that set it, or a part above or below it, come last.
        let overriding = memory.overrides.filter { $0.overlaps(path) }
        setters += overriding.map { .override($0.reference ?? $0.origin) }
        var provenance = Provenance(
            path: path, value: whole[path: path],
            source: setters.last ?? .defaultValue,
            overrides: setters.dropLast().reversed(), lock: memory.layers?.locks.first { $0.covers(path) })
        provenance.isSecret = overriding.contains(where: \.isSecret) || containsSecrets(at: path)
        return provenance
    }

    /// `full` without what the override layers put into it: what the document held there before them,
    /// except where `full` changed it, which is listed in `overridden`.
    ///
    /// A secret reference's value goes back as the reference. A change of it is refused, since the secret
    /// lives elsewhere, unless its path is `released` (a reset, which takes the reference out).
    private func withoutOverrides(
        _ full: JSONValue, memory: StoredMemory, releasing released: [ValuePath] = [],
        overridden: inout [AppliedOverride]
    ) throws(SettingsError) -> JSONValue {
        var full = full
        for applied in memory.overrides.reversed() {
            if let now = full[path: applied.path], now.isSameDocument(as: applied.value) {
                full[path: applied.path] = applied.underneath
                continue
            }
            if let reference = applied.reference {
                if released.contains(where: { applied.path.components.starts(with: $0.components) }) { continue }
                throw SettingsError(
                    .invalidValue, path: applied.path,
                    reason:
                        "\(applied.path) is the secret reference \(reference) (\(SecretReferences.key) in the settings file): change the secret where it is kept, or edit the reference in the file"
                )
            }
            overridden.insert(applied, at: 0)
        }
        return full
    }

    /// `full` (the document of a value the top layer and everything below make) with what the override
    /// layers set put over it, as a load puts it.
    func applyingOverrides(to full: JSONValue, memory: StoredMemory) -> JSONValue {
        var full = full
        for applied in memory.overrides { full[path: applied.path] = applied.value }
        return full
    }

    /// What the top layer holds for the value whose whole document is `full`: the patch from the layers
    /// below (or the whole value), with the keys the type does not know and without the stamp.
    private func topPatch(for full: JSONValue, memory: StoredMemory) -> JSONValue {
        var overridden: [AppliedOverride] = []
        let bare = (try? withoutOverrides(full, memory: memory, overridden: &overridden)) ?? full
        let whole = wholeDocument(for: bare, memory: memory)
        return form == .wholeValue ? whole : (memory.layers?.base ?? defaults).mergePatch(to: whole)
    }

    /// `full` with the keys the type does not know put back at their place, leaving `memory` as it is.
    private func wholeDocument(for full: JSONValue, memory: StoredMemory) -> JSONValue {
        var whole: JSONValue? = full
        var unknown = memory.unknownKeys
        _ = unknown?.restore(into: &whole, full: full)
        return whole ?? full
    }
}

/// What ``DocumentPipeline/load(_:)`` gives.
struct Loaded<Root: Sendable>: Sendable {
    var root: Root
    var memory: StoredMemory
    /// What the top layer held at locked paths, and was ignored.
    var ignored: [(path: ValuePath, lock: SettingsLock)]
    /// Override values that name no part of the type, with the closest part that exists.
    var unmatched: [(origin: String, closest: ValuePath)] = []
}

/// A stack of layers that could not be loaded, and the layer at fault.
struct LayerLoadFailure: Error {
    /// The index of the read-only layer at fault; nil: the top layer (or the store's only document).
    var layer: Int?
    var error: SettingsError
}

/// What a root remembers of the layers below its store's document.
struct LayerMemory: Sendable, Equatable {
    /// The read-only layers' documents, after migrations.
    var lower: [LayerDocument]
    /// The defaults merged with every read-only layer: what the top layer's patch lies over.
    var base: JSONValue
    var locks: [SettingsLock]
    /// What the top layer's document holds at locked paths, ignored.
    var heldAside: [HeldValue]
    /// Where the top layer's document is.
    var topSource: String
}

/// What a root remembers of what its store holds, to write the next document: the token of what it last
/// read or wrote, the keys its type did not read, and the version the document is stamped with.
struct StoredMemory: Sendable, Equatable {
    /// What identifies the version of the store the root last read or wrote; a save replaces it.
    var token: ChangeToken = .absent
    /// The content last read good from each read-only layer, by source: what a layer that changes into
    /// something unreadable keeps.
    var goodLayers: [String: StoredLayer.Content] = [:]
    /// The error last reported for each read-only layer that cannot be used now, by source: reported
    /// again only when it changes, not on every change of another layer.
    var brokenLayers: [String: String] = [:]
    var unknownKeys: UnknownKeys?
    /// The stored document's version (1 when unstamped). Migrations from it ran in memory only; the next
    /// stored document carries the later of it and the program's version, so a stamp is never lowered.
    var stamp: Int = 1
    /// The layers below the stored document, for a ``LayeredStore``; nil for other stores.
    var layers: LayerMemory?
    /// The stored document as last read or written (without its stamp), whose numbers keep their
    /// spelling when a write leaves them the same number.
    var spellings: JSONValue?
    /// What the override layers put into the value at the last load, in the order they applied.
    var overrides: [AppliedOverride] = []

    /// A store that holds nothing.
    static var empty: StoredMemory { StoredMemory() }
}

/// What a root's stored document holds.
public enum StoredForm: Sendable, Hashable {
    /// What differs from the default value (a merge patch over its encoding), plus the keys the type does
    /// not know, plus every key the stored document already held (until it is reset): a default changed
    /// in a later version reaches everyone who never set that part. The default.
    case differencesFromDefaults
    /// The whole value, plus the keys the type does not know: for documents that other programs read
    /// without knowing the defaults.
    case wholeValue
}

/// A failed decode, as people read it: where, what was expected, and what was found.
///
/// The one dialect for every decoding failure, of a load and of a write by path alike:
/// `server.port: expected Int, found String "80a"`, `ticker.greeting: missing (a required key)`.
struct DecodingFailure: Sendable {
    /// The part that does not fit.
    let path: ValuePath
    /// What was expected and what was found.
    let reason: String

    /// Describes `error`, quoting from `document` what was found unless `quotingValues` is false. The
    /// path is the document's: a coding key the document does not hold as it is is named as `coding`'s key
    /// strategy writes it (`timeoutSeconds` is `timeout_seconds` under `convertToSnakeCase`), as lens paths are.
    init(_ error: DecodingError, in document: JSONValue?, coding: DocumentCoding, quotingValues: Bool) {
        func documentPath(_ codingPath: [any CodingKey]) -> ValuePath {
            ValuePath(codingPath: codingPath, in: document, coding: coding)
        }
        func found(_ path: ValuePath) -> String {
            guard quotingValues, let value = try? document?.value(at: path) else { return "" }
            return ", found \(value.shortDescription)"
        }
        switch error {
        case .typeMismatch(let type, let context):
            path = documentPath(context.codingPath)
            reason = "expected \(typeName(type))\(found(path))"
        case .valueNotFound(let type, let context):
            path = documentPath(context.codingPath)
            reason = "expected \(typeName(type)), found null"
        case .keyNotFound(let key, let context):
            path = documentPath(context.codingPath + [key])
            reason = "missing (a required key)"
        case .dataCorrupted(let context):
            path = documentPath(context.codingPath)
            if let choice = context.underlyingError as? NotAChoice {
                let value = quotingValues ? (try? document?.value(at: path)) : nil
                reason = "expected one of \(choice.list)" + (value.map { ", found \($0.shortJSON)" } ?? "")
            } else {
                reason = quotingValues ? context.debugDescription + found(path) : "invalid value"
            }
        @unknown default:
            path = ValuePath([])
            reason = quotingValues ? "\(error)" : "invalid value"
        }
    }
}

extension ValuePath {
    /// The document's path that a `Codable` coding path names in `document`: each key as `document` holds
    /// it (a dictionary's key, or a coding key with no key strategy), or as `coding`'s key strategy
    /// converts it.
    init(codingPath: [any CodingKey], in document: JSONValue?, coding: DocumentCoding) {
        var current = document
        var components: [ValuePath.Component] = []
        for component in ValuePath(codingPath: codingPath).components {
            switch (component, current) {
            case (.index(let index), .array(let elements)?) where elements.indices.contains(index):
                current = elements[index]
                components.append(component)
            case (.key(let key), .object(let members)?) where members[key] != nil:
                current = members[key]
                components.append(component)
            case (.key(let key), _):
                let converted = coding.documentKey(forCodingKey: key)
                if case .object(let members)? = current { current = members[converted] } else { current = nil }
                components.append(.key(converted))
            default:
                current = nil
                components.append(component)
            }
        }
        self.init(components)
    }

    /// The path a `Codable` coding path names: `items[3].name`.
    init(codingPath: [any CodingKey]) {
        self.init(
            codingPath.map { key in
                if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == "\(index)" {
                    return .index(index)
                }
                return .key(key.stringValue)
            })
    }
}

extension JSONValue {
    /// The value as JSON, for a message: `"shouting"`, `3`; strings shortened to 40 characters.
    var shortJSON: String {
        guard case .string(let value) = self, value.count > 40 else { return jsonText() }
        return JSONValue.string(String(value.prefix(40)) + "…").jsonText()
    }

    /// `String "80a"`, `number 3`, `Bool true`, `null`, `an object`, for a message: strings shortened to
    /// 40 characters.
    var shortDescription: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return "Bool \(value)"
        case .integer(let value): return "number \(value)"
        case .double(let value): return "number \(value)"
        case .exactNumber(let text): return "number \(text.count > 40 ? String(text.prefix(40)) + "…" : text)"
        case .string(let value):
            let shown = value.count > 40 ? String(value.prefix(40)) + "…" : value
            return "String \(String(reflecting: shown))"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// `Int`, `String`, `a number`, `an object` for a Swift type in a message.
private func typeName(_ type: Any.Type) -> String {
    switch type {
    case is String.Type, is Substring.Type: return "String"
    case is Bool.Type: return "Bool"
    case is any BinaryInteger.Type: return "Int"
    case is any BinaryFloatingPoint.Type: return "a number"
    default:
        let name = "\(type)"
        if name.hasPrefix("Array<") || name.hasPrefix("Set<") { return "an array" }
        if name.hasPrefix("Dictionary<") { return "an object" }
        return name
    }
}
