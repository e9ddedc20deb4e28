#if Commands
import Foundation
import Loupe

/// A root the settings commands work on, whatever its type: what a ``SettingsLocation`` opens.
///
/// ```swift
/// OpenSettings(try RootLens(default: AppSettings(), store: FileStore(path: path), watch: watching))
/// ```
public struct OpenSettings: Sendable {
    /// Whether printed values are masked: the store holds secrets and the person did not ask to see them.
    public let masksValues: Bool
    /// Whether the store holds secrets (which `edit` never writes to a temporary file).
    public let holdsSecrets: Bool

    let value: @Sendable (String) throws -> JSONValue
    let set: @Sendable (String, JSONValue) throws -> Void
    let replace: @Sendable (JSONValue, JSONValue) throws -> Void
    let reset: @Sendable (String) throws -> Void
    let storedDocument: @Sendable () throws -> JSONValue?
    let layers: @Sendable () throws -> [SettingsLayer]
    let locks: @Sendable () -> [SettingsLock]
    let provenance: @Sendable (ValuePath) throws -> Provenance
    let schema: @Sendable () throws -> SettingsSchema
    let observe: @Sendable (@escaping @Sendable (JSONValue) -> Void) -> ObservationToken
    let observeErrors: @Sendable (@escaping @Sendable (any Error) -> Void) -> ObservationToken

    /// The commands' view of `root`. Values of a root that holds secrets are printed masked unless
    /// `revealingSecrets`.
    public init<Root: Codable & Sendable>(_ root: RootLens<Root>, revealingSecrets: Bool = false) {
        holdsSecrets = root.holdsSecrets
        masksValues = root.holdsSecrets && !revealingSecrets
        value = { try root.lens.value(atPath: $0) }
        set = { try root.lens.set(atPath: $0, to: $1) }
        replace = { original, edited in try root.lens.set(atPath: "", to: edited, ifUnchangedFrom: original) }
        reset = { try root.reset(atPath: $0) }
        storedDocument = { try root.storedDocument() }
        layers = { try root.layers() }
        locks = { root.locks }
        provenance = { try root.provenance(of: $0) }
        schema = { try root.schema() }
        let lens = root.readOnly
        observe = { handler in
            root.observe { _ in
                if let json = try? lens.value(atPath: "") { handler(json) }
            }
        }
        observeErrors = { root.observeErrors($0) }
    }

    /// The whole value, as JSON.
    var json: JSONValue {
        get throws { try value("") }
    }

    /// The encoded default value.
    var defaults: JSONValue {
        get throws { try layers().first { $0.source == .defaultValue }?.document ?? .object([:]) }
    }
}
#endif
