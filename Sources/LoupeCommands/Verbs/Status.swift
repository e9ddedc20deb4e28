#if Commands
import ArgumentParser
import Foundation
import Loupe

extension SettingsCommand {
    /// `status`: which revision each reader of a shared store runs.
    public struct Status: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "status",
                abstract:
                    "Lists the readers of a shared store (an etcd key's fleet): the revision each runs, and what it refused.",
                discussion: """
                    One line a reader that reports (its lease alive): `web-1  revision 41  current  since \
                    2026-11-25T10:00:00.000Z`, or `2 behind`, and `refused 42: REASON` when it refused a newer \
                    revision. Exit 69 when the store has no such report.
                    """)
        }
        @ParentCommand var group: SettingsCommand

        public init() {}

        public func run() throws {
            try group.withSettings { settings in
                let status = try appliedStatus(of: settings)
                let count = status.readers.count
                printError(
                    "the store is at revision \(status.currentRevision); \(count) reader\(count == 1 ? " reports" : "s report")"
                )
                for reader in status.readers {
                    try printLine(describe(reader, current: status.currentRevision))
                }
            }
        }
    }
}

/// What the readers of the store report running.
///
/// - Throws: ``CommandError/unavailable`` when the store has no such report.
func appliedStatus(of settings: OpenSettings) throws -> AppliedStatus {
    guard let status = try settings.root.appliedStatus() else {
        throw CommandError.unavailable(
            "\(settings.root.storeDescription) has no report of what its readers run (an etcd store whose roots report their status has)"
        )
    }
    return status
}

/// A reader's line in `status`: its name, revision, how far behind, since when, and what it refused.
func describe(_ reader: AppliedStatus.Reader, current: Int) -> String {
    let lag = reader.revision >= current ? "current" : "\(current - reader.revision) behind"
    var line = "\(reader.name)  revision \(reader.revision)  \(lag)  since \(timestamp(reader.time))"
    if let refusal = reader.refusal { line += "  refused \(refusal.revision): \(refusal.reason)" }
    return line
}
#endif
