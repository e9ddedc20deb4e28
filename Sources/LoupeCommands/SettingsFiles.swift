#if Commands
import Foundation
import Loupe
#if YAML
import LoupeYAML
#endif

/// Settings files named on the command line (`check FILE…`, `diff --files A B`), read in the format their
/// extension names.
enum SettingsFiles {
    /// The formats a file may be in: JSON, JSONC, TOML, property lists, and YAML where the package's
    /// `YAML` trait is on.
    static var codecs: [any DocumentCodec] {
        var codecs: [any DocumentCodec] = [JSONCodec(), JSONCCodec(), TOMLCodec(), PropertyListCodec()]
        #if YAML
        codecs.append(YAMLCodec())
        #endif
        return codecs
    }

    /// The codec of the file at `path`, by its extension.
    ///
    /// - Throws: ``CommandError/usage`` when no format has the extension.
    static func codec(of path: String) throws -> any DocumentCodec {
        let fileExtension = URL(fileURLWithPath: path).pathExtension.lowercased()
        guard let codec = codecs.first(where: { $0.fileExtensions.contains(fileExtension) }) else {
            let known = codecs.flatMap(\.fileExtensions).map { "." + $0 }.joined(separator: ", ")
            throw CommandError.usage(
                "cannot tell the format of \(path) from its extension; settings files end in \(known)")
        }
        return codec
    }

    /// The bytes of the file at `path`.
    ///
    /// - Throws: ``SettingsError`` naming the file: not found (exit 66), or unreadable (69).
    static func contents(of path: String) throws -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            guard FileManager.default.fileExists(atPath: path) else {
                throw SettingsError(.notFound, reason: "cannot read \(path): no such file", cause: error)
            }
            let reason = (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
            throw SettingsError(.unreadable, store: path, reason: reason, cause: error)
        }
    }

    /// The document the file at `path` holds.
    ///
    /// - Throws: ``SettingsError`` for a file that cannot be read or is not a document in its format.
    static func document(of path: String) throws -> (document: JSONValue, codec: any DocumentCodec) {
        let codec = try codec(of: path)
        return (try codec.parseDocument(try contents(of: path), store: path), codec)
    }
}
#endif
