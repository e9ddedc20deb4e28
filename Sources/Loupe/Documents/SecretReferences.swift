import Foundation

/// Secrets kept out of settings files: a leaf of a document may be a reference,
/// `{"$secret": "SCHEME:NAME"}`, which a load resolves to the secret's text and a write puts back as it was.
///
/// ```json
/// {"upstream": {"url": "https://api.example", "token": {"$secret": "credential:upstream-token"}}}
/// ```
///
/// | Reference | The secret |
/// |---|---|
/// | `env:NAME` | The environment variable `NAME`. |
/// | `file:/run/secrets/token` | The file's content, without one trailing newline; watched (over a ``FileStore`` or a ``LayeredStore``). A relative path is relative to the settings file's directory. |
/// | `credential:NAME` | The file `NAME` in `$CREDENTIALS_DIRECTORY` (systemd's credentials); watched (over a ``FileStore`` or a ``LayeredStore``). |
/// | `keyring:SERVICE/ACCOUNT` | The login keyring's item, once the program registers `LoupeKeyring`'s resolver. |
///
/// The text is typed by the settings type at the reference's path, as an environment variable's is. The
/// value is a secret: never in a log or an error, masked by `loupe` (``ReadableLens/secretPaths``), and never
/// written: a write stores the reference again, and a write that changes the value is refused
/// (``SettingsError/Code/invalidValue``, naming the reference), since the secret lives elsewhere. A
/// reference that cannot be resolved fails the load, naming the reference.
///
/// A reference in a file is followed only where every user who could have written it could have read
/// what it names: see ``DocumentWriters`` for the rule, the trust boundary.
public enum SecretReferences {
    /// The key of a reference: `{"$secret": "env:TOKEN"}`.
    public static let key = "$secret"

    /// Resolves references of `scheme` (`keyring`, say) with `resolve`, which is given what follows
    /// `scheme:` and returns the secret's text, or throws an error that names neither the secret nor its
    /// value. Replaces a resolver registered before for the scheme; `env`, `file` and `credential` are
    /// built in. What it reads is the process's own: a reference of the scheme is followed only in files
    /// owned by root or by the user the process runs as (``DocumentWriters``).
    public static func register(scheme: String, _ resolve: @escaping @Sendable (_ name: String) throws -> String) {
        resolvers.withLock { $0[scheme] = resolve }
    }

    private static let resolvers = Locked<[String: @Sendable (String) throws -> String]>([
        "env": { name in
            guard let value = environmentVariable(name) else { throw Failure("no such environment variable") }
            return value
        },
        "credential": { name in try readSecretFile(credentialFile(name), readableBy: nil) },
    ])

    /// The variable `name` of the process's environment, read as `getenv` reads it
    /// (`ProcessInfo.environment` builds a dictionary of every variable on each call).
    private static func environmentVariable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The file of the credential `name` in `$CREDENTIALS_DIRECTORY`, systemd's.
    private static func credentialFile(_ name: String) throws -> String {
        guard let directory = environmentVariable("CREDENTIALS_DIRECTORY"), !directory.isEmpty else {
            throw Failure("$CREDENTIALS_DIRECTORY is not set")
        }
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw Failure("a credential's name has no /")
        }
        return directory + "/" + name
    }

    /// The text `reference` names, for the reference at `path` in the document `writers` can change (nil:
    /// a document of the program's own).
    ///
    /// - Throws: ``SettingsError/Code/unreadable`` naming the reference, `path` and the file holding the
    ///   reference, never a value; where the trust boundary forbids following it, saying why.
    static func resolve(
        _ reference: String, at path: ValuePath, heldBy writers: DocumentWriters?
    ) throws(SettingsError) -> String {
        let parts = reference.split(separator: ":", maxSplits: 1).map(String.init)
        let store = "secret reference \(reference)" + (writers.map { " in \($0.file)" } ?? "")
        do {
            if let writers, let why = writers.openToOthers {
                throw Failure(
                    "it is not followed: users other than the file's owner and root can change the file (\(why)); references are followed only in files no one else can change"
                )
            }
            guard parts.count == 2 else { throw unknownScheme() }
            let (scheme, name) = (parts[0], parts[1])
            if scheme == "file" {
                return try readSecretFile(referencedFile(name, heldBy: writers), readableBy: writers?.owner)
            }
            guard let resolve = resolvers.withLock({ $0[scheme] }) else { throw unknownScheme() }
            if let writers, writers.owner != 0, writers.owner != UInt32(geteuid()) {
                throw Failure(
                    "it is not followed: a \(scheme): reference reads what the process holds, and the file belongs to another user (uid \(writers.owner)); such references are followed only in files of root or of the user the process runs as (uid \(geteuid()))"
                )
            }
            return try resolve(name)
        } catch let failure as Failure {
            throw SettingsError(.unreadable, path: path, store: store, reason: failure.reason)
        } catch let error as SettingsError {
            throw SettingsError(error.code, path: path, store: store, reason: error.reason, cause: error)
        } catch {
            throw SettingsError(.unreadable, path: path, store: store, reason: "\(error)", cause: error)
        }
    }

    /// The file `reference` reads (`file:PATH`, `credential:NAME`), in a document `writers` can change: the
    /// file a store watches so that a secret rotated in it reaches the root. Nil for a reference that reads
    /// no file, names none, or would not be followed there (see ``DocumentWriters``).
    static func file(readBy reference: String, heldBy writers: DocumentWriters?) -> String? {
        guard writers?.openToOthers == nil, let colon = reference.firstIndex(of: ":") else { return nil }
        let name = String(reference[reference.index(after: colon)...])
        switch reference[..<colon] {
        case "file": return try? referencedFile(name, heldBy: writers)
        case "credential" where writers.map({ $0.owner == 0 || $0.owner == UInt32(geteuid()) }) ?? true:
            return try? credentialFile(name)
        default: return nil
        }
    }

    /// The error for a reference whose scheme no resolver reads.
    private static func unknownScheme() -> Failure {
        let known = (resolvers.withLock { Array($0.keys) } + ["file"]).sorted().map { "\($0):" }.joined(separator: ", ")
        return Failure("expected one of \(known) followed by a name")
    }

    /// The absolute path of the file a `file:` reference names: a relative one is relative to the directory
    /// of the settings file that holds it.
    private static func referencedFile(_ name: String, heldBy writers: DocumentWriters?) throws -> String {
        guard !name.isEmpty else { throw Failure("the reference names no file") }
        if name.hasPrefix("/") { return name }
        guard let writers else {
            throw Failure(
                "a relative path is relative to the settings file that holds it, and this reference is in no file")
        }
        let settingsFile =
            writers.file.hasPrefix("/") ? writers.file : FileManager.default.currentDirectoryPath + "/" + writers.file
        return FileSystem.directory(of: settingsFile) + "/" + name
    }

    /// A secret file's text, without one trailing newline: a regular file `owner` may read (nil: the
    /// process's own), not under `/proc`, `/sys` or `/dev`.
    private static func readSecretFile(_ path: String, readableBy owner: UInt32?) throws -> String {
        let data: Data?
        do {
            data = try FileSystem.readReferenced(path, readableBy: owner, maximumSize: maximumSecretSize)
        } catch let error as SystemCallError {
            throw Failure(error.description)
        }
        guard let data else { throw Failure("no such file: \(path)") }
        guard let text = secretText(data) else { throw Failure("\(path) is not UTF-8 text") }
        return text
    }

    /// The largest secret file read (a credential, a referenced file), as systemd limits credentials.
    static let maximumSecretSize = 1 << 20

    /// A secret file's content as text, without one trailing newline (`\n` or `\r\n`), as `echo` and
    /// editors leave it; nil when it is not UTF-8.
    static func secretText(_ data: Data) -> String? {
        guard let text = String(data: data, encoding: .utf8) else { return nil }
        return text.hasSuffix("\r\n") ? String(text.dropLast(2)) : text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    /// Why a reference did not resolve, in words with no value in them.
    struct Failure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}

extension SchemaIndex {
    /// Resolves `references` (the document's ``JSONValue/secretReferences``) in `document`, each typed by
    /// the schema of its part and followed only as far as the writers of the document holding it
    /// (`writers(path)`) could read; returns them, to be written back as references.
    func resolve(
        _ references: [(path: ValuePath, reference: String)], in document: inout JSONValue,
        heldBy writers: (ValuePath) -> DocumentWriters?
    ) throws(SettingsError) -> [AppliedOverride] {
        var applied: [AppliedOverride] = []
        for (path, reference) in references {
            let text = try SecretReferences.resolve(reference, at: path, heldBy: writers(path))
            let origin = "secret reference \(reference)"
            let value = try typedValue(
                SettingOverride(target: .path(path), text: text, origin: origin, isSecret: true), at: path,
                schema: describedPart(at: path).schema)
            applied.append(
                AppliedOverride(
                    path: path, value: value, underneath: document[path: path], origin: origin, isSecret: true,
                    reference: reference))
            document[path: path] = value
        }
        return applied
    }
}

extension JSONValue {
    /// The reference this value is, when it is one: an object whose only key is `"$secret"`, a string.
    var secretReference: String? {
        guard case .object(let members) = self, members.count == 1,
            case .string(let reference)? = members[SecretReferences.key]
        else { return nil }
        return reference
    }

    /// The secret references this document holds (leaves `{"$secret": "SCHEME:NAME"}`), in the order of
    /// their paths as written: one walk of the whole document, which every load makes.
    var secretReferences: [(path: ValuePath, reference: String)] {
        var found: [(path: ValuePath, reference: String)] = []
        var path: [ValuePath.Component] = []
        collectReferences(at: &path, into: &found)
        guard found.count > 1 else { return found }
        // Each path written once.
        return found.map { (name: $0.path.description, found: $0) }.sorted { $0.name < $1.name }.map(\.found)
    }

    /// Adds the secret references under this value, at `path` and below, to `found`.
    private func collectReferences(
        at path: inout [ValuePath.Component], into found: inout [(path: ValuePath, reference: String)]
    ) {
        switch self {
        case .object(let members):
            if let reference = secretReference { return found.append((ValuePath(path), reference)) }
            for (key, member) in members where member.isContainer {
                path.append(.key(key))
                member.collectReferences(at: &path, into: &found)
                path.removeLast()
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() where element.isContainer {
                path.append(.index(index))
                element.collectReferences(at: &path, into: &found)
                path.removeLast()
            }
        default:
            break
        }
    }

    /// Whether this is an object or an array, which may hold a reference.
    private var isContainer: Bool {
        switch self {
        case .object, .array: true
        default: false
        }
    }
}
