#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The environment's variables under a prefix (`MYAPP_SERVER__PORT=9000`), as an override layer.
///
/// The environment of a process does not change under it, so the layer is read once per load and never
/// watched; its token is a digest of the variables it read, never their values.
final class EnvironmentLayer: LayerSource {
    let prefix: String
    /// The variables to read; nil: the process's own.
    private let given: (@Sendable () -> [String: String])?

    init(prefix: String, variables: (@Sendable () -> [String: String])?) {
        self.prefix = prefix
        given = variables
    }

    /// A variable under the prefix, named as provenance and warnings name it.
    struct Variable {
        /// `environment variable MYAPP_SERVER__PORT`.
        var origin: String
        var value: String

        static let originPrefix = "environment variable "

        /// The variable's name, the end of its origin.
        var name: Substring { Substring(origin.utf8.dropFirst(Self.originPrefix.utf8.count)) }
    }

    /// The variables under the prefix (with more to their name than it), in name order.
    private func variables() -> [Variable] {
        var all =
            given.map { variables in
                variables().compactMap {
                    Self.names($0.key, under: prefix)
                        ? Variable(origin: Variable.originPrefix + $0.key, value: $0.value) : nil
                }
            } ?? Self.processVariables(withPrefix: prefix)
        // Every origin starts with the same words: in origin order is in name order.
        all.sort { $0.origin < $1.origin }
        return all
    }

    /// Whether a variable's name is under `prefix`: starts with it, and goes on after it.
    private static func names(_ name: String, under prefix: String) -> Bool {
        name.hasPrefix(prefix) && name.utf8.count > prefix.utf8.count
    }

    /// The process's variables whose names are under `prefix`, read from `environ` as `getenv` reads it,
    /// so that only those become Swift strings (`ProcessInfo.environment` builds a dictionary of every
    /// variable on each call).
    static func processVariables(withPrefix prefix: String) -> [Variable] {
        #if canImport(Darwin)
        // Darwin has no `environ` symbol for Swift to read (`_NSGetEnviron` instead).
        return ProcessInfo.processInfo.environment.compactMap {
            names($0.key, under: prefix) ? Variable(origin: Variable.originPrefix + $0.key, value: $0.value) : nil
        }
        #else
        return prefix.withCString { cPrefix in
            var found: [Variable] = []
            let count = strlen(cPrefix)
            // Each origin is made in one buffer, reused, and becomes a string once.
            var origin = Array(Variable.originPrefix.utf8)
            let kept = origin.count
            var entry = environ
            while let pointer = entry.pointee {
                defer { entry += 1 }
                guard strncmp(pointer, cPrefix, count) == 0, let equals = strchr(pointer, Int32(UInt8(ascii: "="))),
                    pointer.distance(to: equals) > count
                else { continue }
                origin.removeSubrange(kept...)
                origin.append(contentsOf: UnsafeRawBufferPointer(start: pointer, count: pointer.distance(to: equals)))
                found.append(
                    Variable(origin: String(decoding: origin, as: UTF8.self), value: String(cString: equals + 1)))
            }
            return found
        }
        #endif
    }

    var name: String { "environment (\(prefix)*)" }

    func load() -> (layers: [StoredLayer], token: ChangeToken) {
        let matching = variables()
        let values = matching.map { variable in
            SettingOverride(
                target: .environmentName(Self.levels(of: variable.name.utf8.dropFirst(prefix.utf8.count))),
                text: variable.value,
                origin: variable.origin, isSecret: false)
        }
        let layers = values.isEmpty ? [] : [StoredLayer(source: name, name: name, content: .overrides(values))]
        return (layers, Self.token(of: matching))
    }

    func token() -> ChangeToken {
        Self.token(of: variables())
    }

    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreWatch)? { nil }

    /// A name's levels: its parts between `__`.
    private static func levels(of name: Substring.UTF8View) -> [String] {
        var levels: [String] = []
        levels.reserveCapacity(4)
        var start = name.startIndex
        var index = start
        while index != name.endIndex {
            let next = name.index(after: index)
            if name[index] == UInt8(ascii: "_"), next != name.endIndex, name[next] == UInt8(ascii: "_") {
                levels.append(String(Substring(name[start..<index])))
                index = name.index(after: next)
                start = index
            } else {
                index = next
            }
        }
        levels.append(String(Substring(name[start...])))
        return levels
    }

    /// A digest of `variables`, names and values: which changed is all a token says.
    private static func token(of variables: [Variable]) -> ChangeToken {
        var hasher = Hasher()
        for variable in variables {
            hasher.combine(variable.origin)
            hasher.combine(variable.value)
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
            values.append(
                SettingOverride(
                    target: .path(path), text: String(argument[argument.index(after: equals)...]),
                    origin: "--set \(text)", isSecret: false,
                    mustNameASetting: true))
        }
        return (
            values.isEmpty ? [] : [StoredLayer(source: Self.name, name: Self.name, content: .overrides(values))],
            token()
        )
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

    func load() -> (layers: [StoredLayer], token: ChangeToken) {
        do {
            var values: [SettingOverride] = []
            var tokens: [ChangeToken] = []
            for (file, credential) in try files() {
                let read: (String, FileIdentity)?
                do {
                    read = try fileSystem.readSettled(file, maximumSize: SecretReferences.maximumSecretSize) { data in
                        guard let text = SecretReferences.secretText(data) else {
                            throw SettingsError(
                                .corrupt, store: "credential \(credential)", reason: "it is not UTF-8 text")
                        }
                        return text
                    }
                } catch  where !fileSystem.isRegularFile(file) {
                    continue  // a directory, a socket: not a credential
                }
                guard let (text, identity) = read else { continue }  // removed meanwhile
                let target: SettingOverride.Target =
                    (try? ValuePath(parsing: credential)).map { .path($0) } ?? .environmentName([credential])
                values.append(
                    SettingOverride(target: target, text: text, origin: "credential \(credential)", isSecret: true))
                tokens += [ChangeToken(credential), identity.token]
            }
            let layers = values.isEmpty ? [] : [StoredLayer(source: name, name: name, content: .overrides(values))]
            return (layers, ChangeToken(combining: tokens))
        } catch {
            return (
                [StoredLayer(source: name, name: name, content: .unreadable(.reading(error, store: name)))],
                ChangeToken("unreadable")
            )
        }
    }

    func token() -> ChangeToken {
        guard let files = try? files() else { return ChangeToken("unreadable") }
        // As `load()` reads them: the regular files only.
        return ChangeToken(
            combining: files.filter { fileSystem.isRegularFile($0.file) }.flatMap { file, credential in
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
        // Whether each is a regular file is seen when it is opened (a directory in it is skipped then).
        return
            names
            .filter { !$0.hasPrefix(".") }
            .sorted()
            .map { (path + "/" + $0, $0) }
    }
}
