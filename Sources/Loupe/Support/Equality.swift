/// `==` for a type that conforms to `Equatable` at run time.
///
/// Lenses are generic over any `Sendable` value, so whether a value can be compared is only known at run
/// time. This is made once per lens or graph; a comparison then costs one dynamically dispatched `==` and
/// allocates nothing, whatever the size of the value.
struct RuntimeEquality<Value>: @unchecked Sendable {  // a metatype is immutable, so sharing it is safe
    private let type: any Equatable.Type

    /// `==` for `Value`, or nil when `Value` is not `Equatable`.
    init?(_ value: Value.Type) {
        guard let type = value as? any Equatable.Type else { return nil }
        self.type = type
    }

    /// Compares the values behind two pointers, copying neither.
    @inline(__always)
    func callAsFunction(_ lhs: UnsafePointer<Value>, _ rhs: UnsafePointer<Value>) -> Bool {
        type._loupeEqual(lhs, rhs)
    }

    func callAsFunction(_ lhs: Value, _ rhs: Value) -> Bool {
        withUnsafePointer(to: lhs) { lhs in withUnsafePointer(to: rhs) { rhs in self(lhs, rhs) } }
    }
}

extension Equatable {
    /// `==` on two values of this type behind raw pointers; the caller guarantees the type.
    fileprivate static func _loupeEqual(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) -> Bool {
        // Reached as `inout`, the values are compared in place; a `pointee` read would copy both first.
        // Nothing writes through these pointers.
        isEqual(
            &UnsafeMutableRawPointer(mutating: lhs).assumingMemoryBound(to: Self.self).pointee,
            &UnsafeMutableRawPointer(mutating: rhs).assumingMemoryBound(to: Self.self).pointee)
    }

    private static func isEqual(_ lhs: inout Self, _ rhs: inout Self) -> Bool { lhs == rhs }
}
