/// Returns `==` for `V` when `V` conforms to `Equatable` at run time, or nil when it does not.
///
/// Lenses are generic over any `Sendable` value, so whether a value can be compared is only known at run
/// time. The comparator is built once per lens or graph; a comparison then costs one dynamically
/// dispatched `==` and allocates nothing, whatever the size of the value.
func runtimeEquality<V: Sendable>(for type: V.Type) -> (@Sendable (V, V) -> Bool)? {
    guard let equatable = type as? any Equatable.Type else { return nil }
    let opened = OpenedEquatable(type: equatable)
    return { lhs, rhs in
        withUnsafePointer(to: lhs) { lhs in
            withUnsafePointer(to: rhs) { rhs in opened.type._loupeEqual(lhs, rhs) }
        }
    }
}

/// A metatype is immutable, so sharing it between threads is safe.
private struct OpenedEquatable: @unchecked Sendable {
    let type: any Equatable.Type
}

extension Equatable {
    /// `==` on two values of this type behind raw pointers; the caller guarantees the type.
    fileprivate static func _loupeEqual(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) -> Bool {
        lhs.assumingMemoryBound(to: Self.self).pointee == rhs.assumingMemoryBound(to: Self.self).pointee
    }
}
