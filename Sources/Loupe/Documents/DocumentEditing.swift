/// Editing a document by path, as migrations do: each reads as a sentence, and each takes a stored document
/// as it comes, which holds only what its writer changed from the defaults, so a part that is not there is
/// simply left alone.
///
/// ```swift
/// let migrations: [Int: @Sendable (inout JSONValue) throws -> Void] = [
///     2: { try $0.move(from: "ticker.interval", to: "ticker.intervalSeconds") },
///     3: { document in
///         try document.transform("timeout") { .integer(($0.integerValue ?? 30) * 1000) }
///         document.removeValue(at: "legacyMode")
///         try document.setValue(.string("eu"), at: "region", ifAbsent: true)
///     },
/// ]
/// ```
extension JSONValue {
    /// The value at `path`, or nil when there is none; setting nil removes it, setting a value creates the
    /// objects on the way (and does nothing when the path passes through something that is not an object:
    /// ``setValue(_:at:ifAbsent:)`` says so with an error).
    public subscript(path path: ValuePath) -> JSONValue? {
        get { try? value(at: path) }
        set {
            if let newValue {
                try? set(newValue, at: path)
            } else {
                removeValue(at: path)
            }
        }
    }

    /// Whether the document holds a value at `path`.
    public func contains(_ path: ValuePath) -> Bool {
        (try? value(at: path)) != nil
    }

    /// Moves the value at `from` to `to` (renaming a key when both share a parent), creating the objects on
    /// the way; replaces what `to` held. Does nothing when there is nothing at `from`.
    ///
    /// - Throws: ``SettingsError`` when `to` passes through something that is not an object.
    public mutating func move(from: ValuePath, to: ValuePath) throws {
        guard from != to, let moved = self[path: from] else { return }
        try set(moved, at: to)
        removeValue(at: from)
    }

    /// Sets `newValue` at `path`, creating the objects on the way; with `ifAbsent`, only where the document
    /// holds nothing at `path` yet.
    ///
    /// - Throws: ``SettingsError`` when `path` passes through something that is not an object.
    public mutating func setValue(_ newValue: JSONValue, at path: ValuePath, ifAbsent: Bool = false) throws {
        if ifAbsent, contains(path) { return }
        try set(newValue, at: path)
    }

    /// Removes and returns the value at `path`; nil (and nothing changes) when there is none.
    @discardableResult
    public mutating func removeValue(at path: ValuePath) -> JSONValue? {
        guard let removed = self[path: path] else { return nil }
        try? remove(at: path)
        return removed
    }

    /// Replaces the value at `path` with what `transform` makes of it. Does nothing when there is none.
    public mutating func transform(_ path: ValuePath, _ transform: (JSONValue) throws -> JSONValue) throws {
        guard let current = self[path: path] else { return }
        try set(try transform(current), at: path)
    }

    /// The integer this value holds (a number without a fraction), or nil.
    public var integerValue: Int? {
        switch self {
        case .integer(let value): value
        case .double(let value): Int(exactly: value)
        case .exactNumber: nil
        default: nil
        }
    }

    /// The number this value holds, or nil.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .double(let value): value
        case .exactNumber(let text): Double(text)
        default: nil
        }
    }

    /// The string this value holds, or nil.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The Boolean this value holds, or nil.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }
}
