#if Commands
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Loupe

/// Writes a line to standard output at once, so pipes and watchers see it without buffering.
///
/// - Throws: ``CommandError/output`` when standard output is closed or full.
func printLine(_ text: String) throws {
    var bytes = Array((text + "\n").utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            let reason =
                switch errno {
                case EBADF: "it is closed"
                case EPIPE: "the pipe is closed"
                default: String(cString: strerror(errno))
                }
            throw CommandError.output("cannot write to standard output: \(reason)")
        }
        bytes = bytes.dropFirst(written)
    }
}

/// Writes `PROGRAM: message` to standard error; there is nowhere to report a failure to do so.
func printError(_ message: String) {
    try? FileHandle.standardError.write(contentsOf: Data("\(programName): \(message)\n".utf8))
}

/// Prints `value`, the part at `path`, as pretty JSON, masked where it holds secrets.
func show(_ value: JSONValue, _ settings: OpenSettings, at path: ValuePath = ValuePath([])) throws {
    try printLine(displayed(value, settings, at: path).jsonText(pretty: true))
}

/// `value`, the part at `path`, as it may be shown: the values at the root's secret paths (every value
/// of a store that keeps secrets, credentials, secret references, the parts the settings type declares
/// secret) masked, unless the person asked to see them.
func displayed(_ value: JSONValue, _ settings: OpenSettings, at path: ValuePath = ValuePath([])) -> JSONValue {
    guard !settings.revealsSecrets else { return value }
    // The declared secrets `value` holds (a stored document's, a layer's, an old version's), besides those
    // the current value does.
    let declared = settings.root.secretPaths(in: value, at: path)
    return value.masking(settings.root.secretPaths + declared, at: path)
}

/// Parses a command-line value: JSON, or a bare word of letters, digits and `-_.:/` as a string; `-`
/// reads the value from standard input.
func parseValue(_ argument: String) throws -> JSONValue {
    var text = argument
    if argument == "-" {
        let data = FileHandle.standardInput.readDataToEndOfFile()
        guard let read = String(data: data, encoding: .utf8) else {
            throw CommandError.invalidValue("standard input is not UTF-8 text")
        }
        text = read.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    if let value = try? JSONValue(parsing: text) { return value }
    let bare =
        !text.isEmpty
        && text.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || "-_.:/".unicodeScalars.contains($0)
        }
    guard bare else {
        throw CommandError.invalidValue(
            "\(String(reflecting: String(text.prefix(40)))) is not JSON; write a string with spaces or symbols in JSON quotes: '\"...\"'"
        )
    }
    return .string(text)
}

/// The paths of the values under `value`: itself, unless it is a non-empty object.
func leaves(of value: JSONValue, at path: ValuePath) -> [(path: ValuePath, value: JSONValue)] {
    guard case .object(let members) = value, !members.isEmpty else { return [(path, value)] }
    return members.keys.sorted().flatMap { leaves(of: members[$0]!, at: ValuePath(path.components + [.key($0)])) }
}

extension SettingsCommand {
    /// Prints one line for each value under the value at `path` (a command's argument), in path order: what
    /// `line` makes of it.
    func printLeaves(
        under path: String, _ line: (OpenSettings, _ path: ValuePath, _ value: JSONValue) throws -> String
    ) throws {
        try withSettings { settings in
            for leaf in leaves(of: try settings.root.value(atPath: path), at: try ValuePath(parsing: path)) {
                try printLine(try line(settings, leaf.path, leaf.value))
            }
        }
    }
}
#endif
