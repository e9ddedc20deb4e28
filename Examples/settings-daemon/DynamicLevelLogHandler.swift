import Foundation
import Logging
import Loupe

/// Logs to standard error, at a level shared by the whole process and changed by the settings.
struct DynamicLevelLogHandler: LogHandler {
    /// The process-wide level: a root with no store is a thread-safe value anything can observe.
    static let level = RootLens(Logger.Level.info)

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
        get { Self.level.value }
        set { try? Self.level.set(newValue) }  // a root with no store cannot fail to set
    }

    func log(event: LogEvent) {
        stream.log(event: event)
    }
}
