@_spi(Reflection) import Swift
import Foundation

/// The one "same bytes" check: two values with the same bytes are the same value, and encode the same way,
/// for a type made of values all the way down.
///
/// A fast path, and a fix. Comparing bytes costs nothing however large a value is (a collection's bytes
/// are its storage's address), so an update that left a part alone is found unchanged without `==` or an
/// encode; and it tells a no-op update apart where `==` cannot (a `Double` that is NaN is not `==` to
/// itself). It is a quick check before `==`, never instead of it: equal values may differ in their bytes
/// (two copies of a string's storage, padding), and those are left to `==`.
///
/// Rows it holds (`Benchmarks/README.md`, "Fast paths"), through ``JSONValue/isShared(with:)``: a commit, a merge
/// and the edit walk pass over parts that share their storage. Measured on the 2-core machine, one release build,
/// `isShared` answering false when turned off: the one-value updates of a 2,211-line TOML file and of a 40,000-key
/// JSON object, edited in place (target ≤ 1.30× their floor), 1.28× and 1.31× with it, 1.48× and 1.44× without it
/// on a calm machine (1.48× and 1.47× among other builds); the ~157 KB durable update (≤ 2.00×) 1.18× with it,
/// 1.43× without it among other builds; the loads unchanged. Every row of the encoder's memo (``DocumentEncoder``)
/// needs it too: the memo compares each remembered part by its bytes first. And it is not only a fast path: without
/// it a root holding NaN would count every no-op update as a change.
///
/// **The soundness rule.** The bytes of a value hold its stored properties, and for a collection or a
/// string a reference to storage the standard library never changes while it is shared: a copy left alone
/// keeps its bytes, and a change gives it other bytes. A class instance is a reference to state anyone
/// holding it may change (a `Sendable` class with locked state, say): a part that holds one may encode
/// differently with the same bytes. So the check is sound for a type that holds no class instance and
/// nothing that may be one (`any P`, `AnyObject`, an enum with payloads, which reflection cannot look into),
/// through its stored properties, the elements of its arrays, sets and dictionaries, and the value of its
/// optionals: ``isSound(for:)``. Every use keeps to it:
/// - a commit (`GraphCore.commit`) takes a root with the same bytes for unchanged only when the check is
///   sound for the root's type; otherwise it compares by `==` and by the encoded document;
/// - the encoder keeps a memo (whose parts it compares by their bytes) only for a root type the check is
///   sound for (`DocumentPipeline.memo`): a settings type that holds references is encoded whole on each
///   update, and a change made through a class is saved;
/// - ``JSONValue/isShared(with:)`` compares documents, which are values;
/// - a lens's delivery (`Notifier`) compares the value it delivered last with the new one: for a part that
///   holds a reference, the same bytes are the same instance, which `==` takes for equal as well, so the
///   bytes decide nothing `==` would not.
enum SameBytes {
    /// Whether two values of `type` with the same bytes are the same value: whether `type` is made of values
    /// all the way down. Worked out once per type.
    static func isSound(for type: Any.Type) -> Bool {
        let id = ObjectIdentifier(type)
        if let known = known.withLock({ $0[id] }) { return known }
        var visiting: Set<ObjectIdentifier> = []
        let result = holdsOnlyValues(type, visiting: &visiting)
        known.withLock { $0[id] = result }
        return result
    }

    /// Whether `lhs` and `rhs` have the same bytes (compared by `memcmp`: an encode compares every unchanged
    /// member of a dictionary of settings groups so, each some tens of bytes).
    static func equal<Value>(_ lhs: Value, _ rhs: Value) -> Bool {
        withUnsafePointer(to: rhs) { equal(lhs, asAt: $0) }
    }

    /// Whether `value` has the same bytes as the value at `pointer`, compared where that one is (an element
    /// of an array, which reading would copy).
    static func equal<Value>(_ value: Value, asAt pointer: UnsafePointer<Value>) -> Bool {
        withUnsafeBytes(of: value) { bytes in
            guard let base = bytes.baseAddress, bytes.count > 0 else { return true }
            return memcmp(base, pointer, bytes.count) == 0
        }
    }

    private static let known = Locked<[ObjectIdentifier: Bool]>([:])

    /// The leaves known to be values: their storage, where they have any, is never changed while shared.
    private static let leaves: Set<ObjectIdentifier> = [
        Bool.self, String.self, Substring.self, Character.self, Double.self, Float.self,
        Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self, UInt16.self, UInt32.self,
        UInt64.self,
        Date.self, Data.self, URL.self, UUID.self, Decimal.self, JSONValue.self, ValuePath.self,
    ].reduce(into: []) { $0.insert(ObjectIdentifier($1)) }

    private static func holdsOnlyValues(_ type: Any.Type, visiting: inout Set<ObjectIdentifier>) -> Bool {
        let id = ObjectIdentifier(type)
        if leaves.contains(id) { return true }
        if type is AnyObject.Type { return false }
        if let container = type as? any ValueContainer.Type {
            return container.elementTypes.allSatisfy { holdsOnlyValues($0, visiting: &visiting) }
        }
        switch MetadataKind(type) {
        case .struct:
            // A recursive type (through an array, say) is as its other parts are.
            guard visiting.insert(id).inserted else { return true }
            defer { visiting.remove(id) }
            var fields: [Any.Type] = []
            _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1 << 1)) { _, _, fieldType, _ in
                fields.append(fieldType)
                return true
            }
            return fields.allSatisfy { holdsOnlyValues($0, visiting: &visiting) }
        case .enum:
            // An enum that fits in fewer bytes than a reference holds none (`enum Level: String` is its tag);
            // one with payloads that may hold one is not known to (reflection does not list payloads).
            return size(of: type) < MemoryLayout<UnsafeRawPointer>.size
        case .other:
            // A class, `any P`, a function, a tuple, a metatype: a reference, or not known not to hold one.
            return false
        }
    }

    /// The size of a value of `type`.
    private static func size(of type: Any.Type) -> Int {
        func size<T>(_: T.Type) -> Int { MemoryLayout<T>.size }
        return _openExistential(type, do: size)
    }
}

/// The kind of a type's metadata, as the runtime tells it (`swift_getMetadataKind`, the function the
/// standard library's own reflection asks): whether its fields may be listed at all. Listing the fields
/// of an existential or a function type is not defined.
private enum MetadataKind {
    case `struct`, `enum`, other

    init(_ type: Any.Type) {
        switch swiftMetadataKind(type) {
        case 0x200: self = .struct
        case 0x201: self = .enum
        default: self = .other  // a class (0), an optional (0x202, a container above), anything else
        }
    }
}

@_silgen_name("swift_getMetadataKind")
private func swiftMetadataKind(_ type: Any.Type) -> UInt

/// A generic value type whose values are made of values of its parameters: it is made of values when they
/// are.
private protocol ValueContainer {
    static var elementTypes: [Any.Type] { get }
}

extension Optional: ValueContainer {
    fileprivate static var elementTypes: [Any.Type] { [Wrapped.self] }
}

extension Array: ValueContainer {
    fileprivate static var elementTypes: [Any.Type] { [Element.self] }
}

extension ContiguousArray: ValueContainer {
    fileprivate static var elementTypes: [Any.Type] { [Element.self] }
}

extension Set: ValueContainer {
    fileprivate static var elementTypes: [Any.Type] { [Element.self] }
}

extension Dictionary: ValueContainer {
    fileprivate static var elementTypes: [Any.Type] { [Key.self, Value.self] }
}
