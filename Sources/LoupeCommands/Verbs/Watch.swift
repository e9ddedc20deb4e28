#if Commands
import ArgumentParser
import Dispatch
import Foundation
import Loupe

extension SettingsCommand {
    /// `watch [PATH]`: the value, then each change.
    public struct Watch: ParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "watch",
                abstract:
                    "Prints the value at a path (or the whole value), then each change as it lands, one JSON line each, until interrupted.",
                discussion:
                    "Changes other processes make are seen as they land; a change that cannot be applied is reported on standard error and the watch goes on."
            )
        }
        @ParentCommand var group: SettingsCommand
        @Argument(help: "The path; the whole value when left out.") var path: String = ""

        public init() {}

        public func run() throws {
            try group.withSettings(watching: true) { settings in
                let path = try ValuePath(parsing: self.path)
                let printer = ChangePrinter(settings: settings, path: path)
                let token = settings.root.observe { printer.print($0) }
                let errors = settings.root.observeErrors { error in printError("ignored a change: \(oneLine(error))") }
                defer {
                    token.cancel()
                    errors.cancel()
                }
                printer.print(try settings.root.document)
                waitForInterruptOrFailure(printer)
                if let failure = printer.failure { throw failure }
            }
        }
    }
}

/// Prints the watched part when it changes; remembers the first failure to print.
final class ChangePrinter: Sendable {
    let settings: OpenSettings
    let path: ValuePath
    private let state = Locked<(last: JSONValue?, failure: CommandError?)>((nil, nil))
    let failed = DispatchSemaphore(value: 0)

    init(settings: OpenSettings, path: ValuePath) {
        self.settings = settings
        self.path = path
    }

    var failure: CommandError? { state.withLock { $0.failure } }

    func print(_ whole: JSONValue) {
        let value = (try? whole.value(at: path)) ?? .null
        // Under the lock, so that two changes never print out of order.
        state.withLock { state in
            guard state.failure == nil, state.last != value else { return }
            state.last = value
            do {
                try printLine(displayed(value, settings, at: path).jsonText())
            } catch let error as CommandError {
                state.failure = error
                failed.signal()
            } catch {}
        }
    }
}

/// Blocks until SIGINT or SIGTERM, or until `printer` fails to print.
func waitForInterruptOrFailure(_ printer: ChangePrinter) {
    var sources: [any DispatchSourceSignal] = []
    for signalNumber in [SIGINT, SIGTERM] {
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        source.setEventHandler { printer.failed.signal() }
        source.resume()
        sources.append(source)
    }
    printer.failed.wait()
    sources.forEach { $0.cancel() }
}
#endif
