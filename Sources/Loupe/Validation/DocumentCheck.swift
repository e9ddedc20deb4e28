/// A problem a settings document has for a settings type: the part, what is wrong, and of which kind.
///
/// What ``RootLens/problems(in:named:coding:reportingUnknownKeys:)`` finds, every one of them rather than
/// the first, for tools that check files before they ship (`loupe check` in CI, a pre-commit hook).
public struct SettingsProblem: Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem it is: a tool's code for it.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The text is not a document in its format.
        case syntax
        /// A part does not fit the type (`expected UInt16, found String "x"`), or the document's version
        /// stamp or migrations fail.
        case invalidValue = "invalid-value"
        /// A part breaks one of the type's rules (``Validated``).
        case rule
        /// The document sets a path an administrator locked, to a value other than the layers below give:
        /// the value is ignored.
        case locked
        /// A key the type does not know: a misspelt one, or one a newer version of the program reads.
        /// Loupe keeps such keys, so they are reported only when asked (`loupe check --strict`).
        case unknownKey = "unknown-key"
    }

    /// The part the problem is at (the root for the whole document).
    public var path: ValuePath
    /// What is wrong, in words, without the path: `must be at least 1024, got 80`. Never a secret's value.
    public var message: String
    /// What kind of problem it is.
    public var kind: Kind

    /// A problem at `path` (the whole document, by default).
    public init(path: ValuePath = .root, message: String, kind: Kind) {
        self.path = path
        self.message = message
        self.kind = kind
    }

    /// `server.port: must be at least 1024, got 80`.
    public var description: String {
        "\(path): \(message)"
    }
}

extension RootLens {
    /// Every problem `document` has as this root's user file (the top layer): each part that does not fit
    /// the type, each rule it breaks, each locked path it sets, in that order, then, when asked, each key
    /// the type does not know. Nothing is read or written.
    ///
    /// The document lies over what this root's read-only layers held when it last read them (or the
    /// defaults) and under its locks, as its own store's document would. Its version stamp is taken off
    /// and its migrations run first; secret references are left to the program (they are resolved where it
    /// runs). Keys the type does not know are kept by Loupe, and are problems only with
    /// `reportingUnknownKeys`: each key the document sets (not one a layer below it sets, nor the `$schema`
    /// that names its JSON Schema for an editor), named with the keys the type knows beside it.
    ///
    /// A part that does not fit is reported, then read as the layers below give it (or taken out), and the
    /// document decoded again, so that one file's several bad parts are reported at once; the rules are
    /// checked when the document decodes. Values are quoted unless the store keeps secrets or the part is
    /// (or holds) one the type declares secret.
    ///
    /// - Parameters:
    ///   - document: The document, as a file holds it.
    ///   - name: The document's name in the messages of a failed migration: its file's path.
    ///   - coding: How the document's format maps to the type; the store's by default.
    ///   - reportingUnknownKeys: Whether a key the type does not know is a problem.
    public func problems(
        in document: JSONValue, named name: String, coding: DocumentCoding? = nil, reportingUnknownKeys: Bool = false
    ) -> [SettingsProblem] {
        let pipeline = core.pipeline
        let coding = coding ?? pipeline.coding
        var problems: [SettingsProblem] = []
        var top = document
        do {
            _ = try pipeline.migrate(&top, store: name)
        } catch {
            return [SettingsProblem(path: error.path ?? .root, message: error.reason, kind: .invalidValue)]
        }
        for reference in top.secretReferences { top[path: reference.path] = nil }

        let defaults = (try? coding.encode(core.defaultValue)) ?? .object([:])
        let base = core.lowerLayers ?? defaults
        // A locked path the document sets is ignored; a problem where that changes the value.
        for lock in core.locks {
            let before = top
            guard let touched = top.firstPatched(under: lock.path), top.removePatch(at: lock.path) != nil else {
                continue
            }
            let wanted = base.merging(patch: before)[path: lock.path]
            let kept = base.merging(patch: top)[path: lock.path]
            let changes: Bool =
                switch (wanted, kept) {
                case let (wanted?, kept?): !wanted.isSameValue(as: kept)
                case (nil, nil): false
                default: true
                }
            guard changes else { continue }
            problems.append(
                SettingsProblem(
                    path: touched,
                    message:
                        "locked by \(lock.file) line \(lock.line): the value here is ignored, the layers below give it",
                    kind: .locked))
        }

        var effective = base == .object([:]) ? top : base.merging(patch: top)
        var reported: Set<ValuePath> = []
        var decoded: Root?
        var reads: ReadKeys?
        while decoded == nil {
            do {
                reads = reportingUnknownKeys ? ReadKeys() : nil
                decoded = try coding.decode(Root.self, from: effective, reads: reads)
            } catch let error as DecodingError {
                let path = DecodingFailure(error, in: nil, coding: pipeline.coding, quotingValues: false).path
                let quoting = pipeline.quotesValues && !pipeline.containsSecrets(at: path)
                let failure = DecodingFailure(error, in: effective, coding: pipeline.coding, quotingValues: quoting)
                problems.append(SettingsProblem(path: failure.path, message: failure.reason, kind: .invalidValue))
                // Read the part as the layers below give it, and decode again: the next bad part, if any.
                guard reported.insert(failure.path).inserted else { break }
                var repaired = failure.path
                // An element the layers below do not give goes with its array, so that the elements after
                // it keep their indices in the messages.
                if case .index? = repaired.components.last, base[path: repaired] == nil {
                    repaired = ValuePath(Array(repaired.components.dropLast()))
                }
                if repaired.components.isEmpty {
                    effective = base
                } else {
                    effective[path: repaired] = base[path: repaired]
                }
            } catch {
                let message = pipeline.quotesValues ? "\(error)" : "it cannot be read as \(Root.self)"
                problems.append(SettingsProblem(message: message, kind: .invalidValue))
                break
            }
        }
        guard let decoded else { return problems }
        if let validated = Root.self as? any Validated.Type {
            func violations<V: Validated>(_: V.Type) -> [RuleViolation] {
                (decoded as? V)?.violations(quotingValues: pipeline.quotesValues, coding: pipeline.coding) ?? []
            }
            for var violation in violations(validated) {
                if pipeline.containsSecrets(at: violation.path) { violation.found = nil }
                let message = violation.rule + (violation.found.map { ", got \($0)" } ?? "")
                problems.append(SettingsProblem(path: violation.path, message: message, kind: .rule))
            }
        }
        if let reads, let unknown = UnknownKeys(in: effective, reads: reads) {
            let known = (try? coding.encode(decoded)) ?? .object([:])
            // A file's `$schema` names its JSON Schema for an editor: the type does not read it, but it is
            // no mistake.
            let unknownPaths = unknown.paths().filter { $0 != ValuePath([.key("$schema")]) && top[path: $0] != nil }
            for path in unknownPaths.sorted(by: { $0.description < $1.description }) {
                let parent = ValuePath(Array(path.components.dropLast()))
                let beside: [String] =
                    if case .object(let members)? = known[path: parent] { members.keys.sorted() } else { [] }
                let message =
                    "a key the type does not know, kept as it is"
                    + (beside.isEmpty ? "" : " (the type knows \(beside.joined(separator: ", ")) here)")
                problems.append(SettingsProblem(path: path, message: message, kind: .unknownKey))
            }
        }
        return problems
    }
}
