#if Commands
import Foundation
import Loupe

/// A root the settings commands work on, whatever its type: what a ``SettingsLocation`` opens.
///
/// ```swift
/// OpenSettings(try RootLens(default: AppSettings(), store: FileStore(path: path), watch: watching))
/// ```
///
/// The commands reach the root through its type-erased face, `AnyRootLens`, so every write is checked by
/// the settings type and its rules exactly as a program's own writes are.
public struct OpenSettings: Sendable {
    /// The root, with its type hidden.
    public let root: AnyRootLens
    /// Whether the person asked to see secrets: otherwise the values at the root's
    /// `AnyRootLens.secretPaths` (every value of a store that keeps secrets, credentials, secret
    /// references, the parts the settings type declares secret) are printed masked.
    public let revealsSecrets: Bool

    /// The commands' view of `root`. Values at the root's secret paths are printed masked unless
    /// `revealingSecrets`.
    public init(_ root: AnyRootLens, revealingSecrets: Bool = false) {
        self.root = root
        revealsSecrets = revealingSecrets
    }

    /// The commands' view of `root`. Values at the root's secret paths are printed masked unless
    /// `revealingSecrets`.
    public init<Root: Codable & Sendable>(_ root: RootLens<Root>, revealingSecrets: Bool = false) {
        self.init(root.erased, revealingSecrets: revealingSecrets)
    }
}
#endif
