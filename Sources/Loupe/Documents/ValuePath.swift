/// A path to a part of a value's `Codable` encoding, as text: `server.port`, `features.beta`,
/// `items[3].name`, `"key.with.dots"`, `labels["app.kubernetes.io/name"]`.
public struct ValuePath: Sendable, Hashable, CustomStringConvertible {
    /// One step of a path.
    public enum Component: Sendable, Hashable {
        /// A key of an object (a property, a dictionary entry).
        case key(String)
        /// An element of an array.
        case index(Int)
    }

    /// The steps from the root; empty for the root itself.
    public var components: [Component]

    /// The root: the whole value, the path with no components.
    public static let root = ValuePath([])

    /// A path made of `components`.
    public init(_ components: [Component]) {
        self.components = components
    }

    /// Parses a path. Keys are separated by dots; a key with dots or other special characters is written
    /// in double quotes (`"a.b"`), or as `["a.b"]`; array elements are `[3]`. The empty path is the root.
    public init(parsing text: String) throws {
        var components: [Component] = []
        components.reserveCapacity(4)
        var rest = Substring(text)
        var expectKey = true
        func fail(_ reason: String) -> SettingsError { .invalidPath(text, reason: reason) }
        // The characters that shape a path are ASCII, so a byte tells which comes next.
        func dropFirstByte() { rest = Substring(rest.utf8.dropFirst()) }
        while let next = rest.utf8.first {
            if next == UInt8(ascii: "[") {
                dropFirstByte()
                if rest.utf8.first == UInt8(ascii: "\"") {
                    components.append(.key(try Self.quoted(&rest, in: text)))
                } else {
                    let digits = rest.utf8.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                    guard let index = Int(Substring(digits)) else {
                        throw fail("expected an index or a quoted key after [")
                    }
                    rest = Substring(rest.utf8[digits.endIndex...])
                    components.append(.index(index))
                }
                guard rest.utf8.first == UInt8(ascii: "]") else { throw fail("expected ]") }
                dropFirstByte()
                expectKey = false
            } else if next == UInt8(ascii: "]") {
                throw fail("unexpected ]")
            } else if next == UInt8(ascii: ".") {
                guard !components.isEmpty, !expectKey else { throw fail("empty key") }
                dropFirstByte()
                expectKey = true
            } else {
                guard expectKey else { throw fail("expected . or [ before \(String(reflecting: String(rest)))") }
                if next == UInt8(ascii: "\"") {
                    components.append(.key(try Self.quoted(&rest, in: text)))
                } else {
                    // Up to the next `.`, `[` or `]`.
                    let end =
                        rest.utf8.firstIndex {
                            $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]")
                        } ?? rest.endIndex
                    components.append(.key(String(rest[..<end])))
                    rest = rest[end...]
                }
                expectKey = false
            }
        }
        if expectKey && !components.isEmpty { throw fail("empty key at the end") }
        self.components = components
    }

    private static func quoted(_ rest: inout Substring, in text: String) throws -> String {
        rest.removeFirst()  // the opening quote
        var key = ""
        while let character = rest.first {
            rest.removeFirst()
            switch character {
            case "\"": return key
            case "\\":
                guard let escaped = rest.first else { break }
                rest.removeFirst()
                key.append(escaped)
            default: key.append(character)
            }
        }
        throw SettingsError.invalidPath(text, reason: "unterminated quoted key")
    }

    /// The path as text, quoting keys that need it; `<root>` for the root.
    public var description: String {
        guard !components.isEmpty else { return "<root>" }
        var text = ""
        for component in components {
            switch component {
            case .index(let index): text += "[\(index)]"
            case .key(let key):
                // The characters that need quotes are ASCII, so their bytes are enough to look for.
                let plain = !key.isEmpty && !key.utf8.contains(where: Self.needsQuotes)
                let shown =
                    plain
                    ? key
                    : "\""
                        + key.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                        + "\""
                text += text.isEmpty ? shown : "." + shown
            }
        }
        return text
    }

    /// Whether a key with this byte is written in quotes: `.`, `[`, `]`, `"`, `\\` and a space.
    private static func needsQuotes(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "."), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "\""), UInt8(ascii: "\\"),
            UInt8(ascii: " "):
            true
        default: false
        }
    }

    /// The path without its last step.
    var parent: ValuePath { ValuePath(Array(components.dropLast())) }

    /// The first `count` steps.
    func prefix(_ count: Int) -> ValuePath { ValuePath(Array(components.prefix(count))) }
}

extension ValuePath: ExpressibleByStringLiteral {
    /// A path from a literal; a malformed literal is a programming error.
    public init(stringLiteral text: String) {
        do {
            try self.init(parsing: text)
        } catch {
            preconditionFailure("\(error)")
        }
    }
}

// MARK: - Reading and writing a JSON tree by path

extension JSONValue {
    /// The value at `path`.
    public func value(at path: ValuePath) throws -> JSONValue {
        var current = self
        for (depth, component) in path.components.enumerated() {
            guard let child = current.child(component) else {
                throw current.notFound(path, depth: depth)
            }
            current = child
        }
        return current
    }

    /// Sets the value at `path`, creating missing objects on the way; an index one past an array's end
    /// appends an element (`upstreams[2]` of an array of two), as an override's index does.
    public mutating func set(_ value: JSONValue, at path: ValuePath) throws {
        try modify(path, depth: 0) { $0 = value }
    }

    /// Removes the value at `path` (an object's key, an array's element).
    public mutating func remove(at path: ValuePath) throws {
        guard let last = path.components.last else { self = .null; return }
        try modify(path.parent, depth: 0, creating: false) { parent in
            // Each container is taken out of `parent` before it changes, so that it is not copied.
            switch last {
            case .key(let key):
                guard case .object(var object) = parent, object[key] != nil else {
                    throw parent.notFound(path, depth: path.components.count - 1)
                }
                parent = .null
                object[key] = nil
                parent = .object(object)
            case .index(let index):
                guard case .array(var array) = parent, array.indices.contains(index) else {
                    throw parent.notFound(path, depth: path.components.count - 1)
                }
                parent = .null
                array.remove(at: index)
                parent = .array(array)
            }
        }
    }

    private mutating func modify(
        _ path: ValuePath, depth: Int, creating: Bool = true, _ body: (inout JSONValue) throws -> Void
    ) throws {
        guard depth < path.components.count else { return try body(&self) }
        // The object or array and the child are taken out before they change, so that neither is copied
        // (a switch over a tuple holding `self` would keep a second reference to them while they change).
        // A step that fails below undoes what this one made (a null made a container, a key, an element), so
        // that a write that fails leaves the value as it was.
        let madeHere: Bool
        if case .null = self, creating { madeHere = true } else { madeHere = false }
        switch path.components[depth] {
        case .key(let key):
            if madeHere { self = .object([:]) }
            guard case .object(var object) = self, creating || object[key] != nil else {
                throw notFound(path, depth: depth)
            }
            self = .null
            // A missing part is made by the step below it: an object for a key, an array for `[0]`.
            let existing = object.removeValue(forKey: key)
            var child = existing ?? .null
            do {
                try child.modify(path, depth: depth + 1, creating: creating, body)
            } catch {
                if existing != nil { object[key] = child }
                self = madeHere ? .null : .object(object)
                throw error
            }
            object[key] = child
            self = .object(object)
        case .index(let index):
            if madeHere, index == 0 { self = .array([]) }
            guard case .array(var array) = self,
                array.indices.contains(index) || (creating && index == array.count)
            else {
                throw notFound(path, depth: depth, appending: creating)
            }
            self = .null
            let appended = index == array.count
            if appended { array.append(.null) }
            do {
                try array[index].modify(path, depth: depth + 1, creating: creating, body)
            } catch {
                if appended { array.removeLast() }
                self = madeHere ? .null : .array(array)
                throw error
            }
            self = .array(array)
        }
    }

    private func child(_ component: ValuePath.Component) -> JSONValue? {
        switch (self, component) {
        case (.object(let object), .key(let key)): object[key]
        case (.array(let array), .index(let index)): array.indices.contains(index) ? array[index] : nil
        default: nil
        }
    }

    /// "Nothing at `path`", naming this value (at `depth` steps down `path`) and what it holds; for a
    /// write (`appending`), an array names the index that adds an element too.
    func notFound(_ path: ValuePath, depth: Int, appending: Bool = false) -> SettingsError {
        let parent = path.prefix(depth)
        switch self {
        case .object(let object):
            return .notFound(
                path, parent: parent,
                validKeys: object.keys.sorted().map {
                    ValuePath([.key($0)]).description
                })
        case .array(let array):
            let valid = array.isEmpty ? [] : ["[0]" + (array.count > 1 ? "…[\(array.count - 1)]" : "")]
            let adding = ValuePath(parent.components + [.index(array.count)])
            return .notFound(
                path, parent: parent, validKeys: valid, note: appending ? "\(adding) adds an element" : nil)
        default:
            return .notFound(path, parent: parent, shownParent: "\(parent) (\(kind))", validKeys: [])
        }
    }
}
