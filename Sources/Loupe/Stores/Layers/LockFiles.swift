#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Lock files, as dconf's lockdown has them: text, one locked path per line, `#` starting a comment.
///
/// ```
/// # /etc/app/locks/security: users keep the administrator's upstream
/// upstream.url
/// /upstream/timeoutSeconds      # dconf's form works too
/// ```
enum LockFiles {
    /// A lock file, or a directory of them (every file whose name does not start with `.` or end in `~`).
    static func source(_ path: String, fileSystem: any ReadableFileSystem) -> any LayerSource {
        if fileSystem.isDirectory(path) {
            return DropInDirectory(
                path: path, fileSystem: fileSystem, includes: { !$0.hasSuffix("~") },
                makeFile: { file($0, fileSystem: fileSystem) })
        }
        return file(path, fileSystem: fileSystem)
    }

    /// One lock file: its content is the locks it holds.
    static func file(_ path: String, fileSystem: any ReadableFileSystem) -> LayerFile {
        LayerFile(path: path, name: "lock file \(path)", fileSystem: fileSystem) { data, name in
            guard let text = String(data: data, encoding: .utf8) else {
                throw SettingsError(.corrupt, store: name, reason: "it is not UTF-8 text")
            }
            var locks: [SettingsLock] = []
            // LF, CRLF and CR all end a line ("\r\n" is one Character: a split on "\n" would not see it).
            for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
                .enumerated()
            {
                let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard !trimmed.isEmpty else { continue }
                do {
                    locks.append(SettingsLock(path: try parsePath(trimmed), file: path, line: index + 1))
                } catch {
                    throw SettingsError(.corrupt, store: name, reason: "line \(index + 1): \(error)", cause: error)
                }
            }
            return .locks(locks)
        }
    }

    /// `upstream.url`, or dconf's `/upstream/url` (a trailing `/` locks a whole directory, which is what
    /// any path locks here anyway); dconf's `/` alone locks the whole document.
    static func parsePath(_ text: String) throws -> ValuePath {
        guard text.hasPrefix("/") else { return try ValuePath(parsing: text) }
        return ValuePath(text.split(separator: "/").map { .key(String($0)) })
    }
}
