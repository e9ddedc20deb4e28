import Foundation

/// The environment's variables under a prefix (`MYAPP_SERVER__PORT=9000`), as an override layer.
///
/// The environment of a process does not change under it, so the layer is read once per load and never
/// watched; its token is a digest of the variables it read, never their values.
final class EnvironmentLayer: LayerSource {
    let prefix: String
    private let variables: @Sendable () -> [String: String]

    init(prefix: String, variables: @escaping @Sendable () -> [String: String]) {
        self.prefix = prefix
        self.variables = variables
    }

    var name: String { "environment (\(prefix)*)" }

    func load() -> (layers: [StoredLayer], token: ChangeToken) {
        let matching = variables().filter { $0.key.hasPrefix(prefix) && $0.key.count > prefix.count }
            .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        let values = matching.map { name, text in
            SettingOverride(
                target: .environmentName(name.dropFirst(prefix.count).components(separatedBy: "__")), text: text,
                origin: "environment variable \(name)", isSecret: false)
        }
        let layers = values.isEmpty ? [] : [StoredLayer(source: name, name: name, content: .overrides(values))]
        return (layers, Self.token(of: matching))
    }

    func token() -> ChangeToken {
        Self.token(of: variables().filter { $0.key.hasPrefix(prefix) })
    }

    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? { nil }

    /// A digest of `variables`, names and values: which changed is all a token says.
    private static func token(of variables: some Sequence<(key: String, value: String)>) -> ChangeToken {
        var hasher = Hasher()
        for (name, value) in variables.sorted(by: { $0.key < $1.key }) {
            hasher.combine(name)
            hasher.combine(value)
        }
        return ChangeToken("environment \(hasher.finalize())")
    }
}

/// `path=value` arguments (a program's repeated `--set path=value` options), as an override layer.
final class ArgumentsLayer: LayerSource {
    private let arguments: [String]

    init(_ arguments: [String]) {
        self.arguments = arguments
    }

    static let name = "--set arguments"

    func load() -> (layers: [StoredLayer], token: ChangeToken) {
        var values: [SettingOverride] = []
        for argument in arguments {
            guard let equals = argument.firstIndex(of: "=") else {
                return (Self.unreadable("--set \(argument.prefix(60)): expected path=value"), token())
            }
            let text = String(argument[..<equals])
            let path: ValuePath
            do {
                path = try ValuePath(parsing: text)
            } catch {
                return (Self.unreadable("--set \(text): \(error)"), token())
            }
            values.append(SettingOverride(
                target: .path(path), text: String(argument[argument.index(after: equals)...]), origin: "--set \(text)", isSecret: false))
        }
        return (values.isEmpty ? [] : [StoredLayer(source: Self.name, name: Self.name, content: .overrides(values))], token())
    }

    private static func unreadable(_ reason: String) -> [StoredLayer] {
        [StoredLayer(source: name, name: name, content: .unreadable(SettingsError(.invalidValue, reason: reason)))]
    }

    func token() -> ChangeToken { ChangeToken("arguments") }

    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? { nil }
}

/// A directory of credentials, one value per regular file (`upstream.token` holds the token), as
/// systemd's `$CREDENTIALS_DIRECTORY` and a Kubernetes Secret volume provide them; an override layer whose
/// values are secret.
///
/// Hidden names are skipped (a Secret volume's `..data` and its timestamped directories); a file's
/// content, as UTF-8 text, is its value, without one trailing newline. The directory is watched: a
/// Secret volume's update (its `..data` link swapped) reaches the root like any outside change.
final class CredentialsDirectory: LayerSource {
    let path: String
    private let fileSystem: any ReadableFileSystem

    init(path: String, fileSystem: any ReadableFileSystem) {
        self.path = path
        self.fileSystem = fileSystem
    }

    var name: String { "credential directory \(path)" }

    /// The largest credential read, as systemd limits them.
    static let maximumSize = 1 << 20

    func load() -> (layers: [StoredLayer], token: ChangeToken) {
        do {
            var values: [SettingOverride] = []
            var tokens: [ChangeToken] = []
            for (file, credential) in try files() {
                guard let (text, identity) = try fileSystem.readSettled(file, maximumSize: Self.maximumSize, parse: { data in
                    guard let text = String(data: data, encoding: .utf8) else {
                        throw SettingsError(.corrupt, store: "credential \(credential)", reason: "it is not UTF-8 text")
                    }
                    return text.hasSuffix("\r\n") ? String(text.dropLast(2)) : text.hasSuffix("\n") ? String(text.dropLast()) : text
                }) else { continue }  // removed meanwhile
                let target: SettingOverride.Target = (try? ValuePath(parsing: credential)).map { .path($0) } ?? .environmentName([credential])
                values.append(SettingOverride(target: target, text: text, origin: "credential \(credential)", isSecret: true))
                tokens += [ChangeToken(credential), identity.token]
            }
            let layers = values.isEmpty ? [] : [StoredLayer(source: name, name: name, content: .overrides(values))]
            return (layers, ChangeToken(combining: tokens))
        } catch {
            return ([StoredLayer(source: name, name: name, content: .unreadable(.reading(error, store: name)))], ChangeToken("unreadable"))
        }
    }

    func token() -> ChangeToken {
        guard let files = try? files() else { return ChangeToken("unreadable") }
        return ChangeToken(combining: files.flatMap { file, credential in
            [ChangeToken(credential), (try? fileSystem.identity(of: file))?.map(\.token) ?? .absent]
        })
    }

    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? {
        try fileSystem.watch(path, contents: true, onChange: onChange).watch
    }

    /// The credential files now, with their names, in name order.
    private func files() throws -> [(file: String, credential: String)] {
        let names: [String]?
        do {
            names = try fileSystem.entries(of: fileSystem.resolvingSymlinks(path))
        } catch let error as SystemCallError {
            throw SettingsError(.unreadable, store: name, path: path, error)
        }
        guard let names else {
            throw SettingsError(.unreadable, store: name, reason: "no such directory")
        }
        return names
            .filter { !$0.hasPrefix(".") && fileSystem.isRegularFile(path + "/" + $0) }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .map { (path + "/" + $0, $0) }
    }
}
