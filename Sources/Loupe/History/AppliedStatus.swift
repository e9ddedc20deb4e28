import Foundation

/// Which version of a shared store's document each of its readers runs, as they report it: for an
/// operator rolling a change out to a fleet (`loupe status`, `loupe set … --wait-applied`).
///
/// ```swift
/// if let status = try root.appliedStatus() {
///     for reader in status.readers where reader.revision != status.currentRevision {
///         print(reader.name, "runs", reader.revision, reader.refusal.map { "and refused \($0.revision): \($0.reason)" } ?? "")
///     }
/// }
/// ```
public struct AppliedStatus: Sendable, Equatable {
    /// What one reader reports: the `name` it reports under (its host's, unless the program chose
    /// another), the store's `revision` it runs (0: nothing stored) and the `time` it took it, and its
    /// `refusal`: the newest revision it refused since, and why; nil when it refused none.
    public struct Reader: Sendable, Equatable {
        public var name: String, revision: Int, time: Date, refusal: Refusal?

        /// A reader's report.
        public init(name: String, revision: Int, time: Date, refusal: Refusal? = nil) {
            self.name = name
            self.revision = revision
            self.time = time
            self.refusal = refusal
        }
    }

    /// A revision a reader refused: it does not fit the reader's type or rules.
    public struct Refusal: Sendable, Equatable {
        public var revision: Int
        /// The reader's error, in words.
        public var reason: String

        public init(revision: Int, reason: String) {
            self.revision = revision
            self.reason = reason
        }
    }

    /// The store's revision now (0: nothing stored).
    public var currentRevision: Int
    /// The readers that report, by name.
    public var readers: [Reader]

    /// A status.
    public init(currentRevision: Int, readers: [Reader]) {
        self.currentRevision = currentRevision
        self.readers = readers
    }

    /// The readers that do not run `revision` or a later one: those that refused it, and those that have
    /// not taken it yet.
    public func readers(behind revision: Int) -> [Reader] {
        readers.filter { $0.revision < revision }
    }
}
