import ArgumentParser
import Foundation
import Loupe

/// A failure of the CLI itself (not of a store or a path).
enum CLIError: Error, CustomStringConvertible {
    case invalidValue(String)
    case conflict(String)
    case usage(String)

    var description: String {
        switch self {
        case .invalidValue(let message), .conflict(let message), .usage(let message): message
        }
    }
}

/// The exit codes, from sysexits(3), so scripts can tell failures apart.
enum ExitStatus {
    static let usage: Int32 = 64         // EX_USAGE: bad arguments, a malformed path
    static let invalidValue: Int32 = 65  // EX_DATAERR: the value does not fit the type, or is not JSON
    static let notFound: Int32 = 66      // EX_NOINPUT: nothing at that path
    static let unavailable: Int32 = 69   // EX_UNAVAILABLE: the store cannot be read or written
    static let conflict: Int32 = 75      // EX_TEMPFAIL: another writer got there first; try again
    static let locked: Int32 = 77        // EX_NOPERM: an administrator locked the path

    static let help = """
        Exit status: 0 success; 64 usage (bad arguments, malformed path); 65 invalid value (refused \
        by the type, or not JSON); 66 not found (nothing at the path); 69 store unavailable (unreadable \
        or corrupt file, no keyring); 75 conflict (another writer got there first: try again); 77 locked \
        (an administrator's lock file keeps the path at the value of the layers below).
        """

    static func of(_ error: any Error) -> Int32 {
        switch error {
        case let error as PathError:
            switch error.code {
            case .invalidPath: usage
            case .notFound: notFound
            default: invalidValue
            }
        case let error as StoreError: error.code == .conflict || error.code == .timeout ? conflict : unavailable
        case let error as LensError:
            switch error.code {
            case .conflict: conflict
            case .readOnly: unavailable
            case .locked: locked
            default: invalidValue
            }
        case let error as CLIError:
            switch error {
            case .invalidValue: invalidValue
            case .conflict: conflict
            case .usage: usage
            }
        case is DecodingError, is RuleViolation: invalidValue
        default: unavailable
        }
    }
}

/// Runs `body`; on failure prints one line, `loupe: MESSAGE`, to standard error and exits with the
/// error's status.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch {
        FileHandle.standardError.write(Data("loupe: \(oneLine(error))\n".utf8))
        throw ExitCode(ExitStatus.of(error))
    }
}

func oneLine(_ error: any Error) -> String {
    "\(error)".replacingOccurrences(of: "\n", with: " ")
}

/// Writes a line to standard output at once, so pipes and watchers see it without buffering.
func printLine(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
