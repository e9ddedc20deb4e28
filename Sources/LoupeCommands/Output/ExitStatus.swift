#if Commands
import ArgumentParser
import Foundation
import Loupe

/// A failure of a command itself (not of a store or a path).
enum CommandError: Error, CustomStringConvertible {
    case invalidValue(String)
    case conflict(String)
    case usage(String)
    case output(String)
    case unavailable(String)

    var description: String {
        switch self {
        case .invalidValue(let message), .conflict(let message), .usage(let message), .output(let message),
            .unavailable(let message):
            message
        }
    }
}

/// The exit statuses, from sysexits(3), so scripts can tell failures apart.
enum ExitStatus {
    static let usage: Int32 = 64  // EX_USAGE: bad arguments, a malformed path
    static let invalidValue: Int32 = 65  // EX_DATAERR: the value does not fit the type or its rules, or is not JSON
    static let notFound: Int32 = 66  // EX_NOINPUT: nothing at that path
    static let unavailable: Int32 = 69  // EX_UNAVAILABLE: the store cannot be read or written
    static let output: Int32 = 74  // EX_IOERR: standard output or error could not be written
    static let conflict: Int32 = 75  // EX_TEMPFAIL: another writer got there first; try again
    static let locked: Int32 = 77  // EX_NOPERM: an administrator locked the path

    static let help = """
        Exit status: 0 success; 64 usage (bad arguments, malformed path); 65 invalid value (refused \
        by the type or its rules, or not JSON); 66 not found (nothing at the path); 69 store unavailable \
        (unreadable or corrupt file, no keyring); 74 output could not be written; 75 conflict (another \
        writer got there first: try again); 77 locked (an administrator's lock file keeps the path at the \
        value of the layers below).
        """

    static func of(_ error: any Error) -> Int32 {
        switch error {
        case let error as SettingsError:
            switch error.code {
            case .invalidPath: usage
            case .notFound: notFound
            case .invalidValue, .notRemovable, .missingParent, .notOptional, .outOfRange, .reentrantUpdate: invalidValue
            // Another writer got there first, or holds the file's lock: try again. Any other timeout (a
            // keyring that never answers) is a store that is unavailable.
            case .conflict: conflict
            case .timeout where error.errno == ETIMEDOUT: conflict
            case .locked: locked
            default: unavailable  // unreadable, corrupt, unwritable, unavailable, read-only, timed out
            }
        case let error as CommandError:
            switch error {
            case .invalidValue: invalidValue
            case .conflict: conflict
            case .usage: usage
            case .output: output
            case .unavailable: unavailable
            }
        case is SettingsCommandUsageError: usage
        case is DecodingError, is RuleViolation: invalidValue
        default: unavailable
        }
    }
}

/// The program's name, for messages: `loupe`, `myapp`.
let programName = URL(fileURLWithPath: CommandLine.arguments.first ?? "settings").lastPathComponent

/// Runs `body`; on failure prints one line, `PROGRAM: MESSAGE`, to standard error and exits with the
/// error's status.
func reportingErrors(_ body: () throws -> Void) throws {
    // A closed pipe is an error to report (exit 74), not a signal that kills the process; a file-size limit
    // (`ulimit -f`) is a write error to report ("File too large"), not a signal either.
    signal(SIGPIPE, SIG_IGN)
    signal(SIGXFSZ, SIG_IGN)
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch {
        printError(oneLine(error))
        throw ExitCode(ExitStatus.of(error))
    }
}

/// The error's description on one line.
func oneLine(_ error: any Error) -> String {
    "\(error)".replacingOccurrences(of: "\n", with: " ")
}
#endif
