import Foundation
import Logging

/// Logs to standard error, at a level shared by the whole process and changed by the settings.
struct DynamicLevelLogHandler: LogHandler {
    /// The process-wide level.
    static let level = SharedLevel()

    private var stream: StreamLogHandler

    init(label: String) {
        stream = StreamLogHandler.standardError(label: label)
        stream.logLevel = .trace
    }

    var metadata: Logger.Metadata {
        get { stream.metadata }
        set { stream.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { stream[metadataKey: key] }
        set { stream[metadataKey: key] = newValue }
    }

    var logLevel: Logger.Level {
        get { Self.level.withLock { $0 } }
        set { Self.level.withLock { $0 = newValue } }
    }

    func log(event: LogEvent) {
        stream.log(event: event)
    }
}

/// A log level behind a lock.
final class SharedLevel: @unchecked Sendable {
    private let lock = NSLock()
    private var level = Logger.Level.info
    func withLock<R>(_ body: (inout Logger.Level) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&level)
    }
}
