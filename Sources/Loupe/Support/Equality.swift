import Foundation

/// `==` for a type that conforms to `Equatable` at run time.
///
/// Lenses are generic over any `Sendable` value, so whether a value can be compared is often only known at
/// run time. This is made once per lens or graph, where the type's `==` is found and taken as a closure on
/// `Value` (the one dynamic cast, of a function to the type it already has); a comparison then costs that
/// `==` alone, as much as where the type is known to be `Equatable`.
///
/// Hot paths keep ``areEqual``, a plain closure: an optional closure is tested without looking up any
/// generic type's metadata, where an optional `RuntimeEquality<Root>` is not.
struct RuntimeEquality<Value>: Sendable {
    /// `==` on two values of the type.
    let areEqual: @Sendable (Value, Value) -> Bool

    /// `==` for `Value`, or nil when `Value` is not `Equatable` (and `Sendable`, as every value a lens
    /// reads is).
    init?(_ value: Value.Type) {
        guard let type = value as? any (Equatable & Sendable).Type, let areEqual = Self.equality(of: type) else {
            return nil
        }
        self.areEqual = areEqual
    }

    /// `Equatable`'s `==`, as a closure on `Value`: `Equatable` is `Value` itself.
    private static func equality<Equatable: Swift.Equatable & Sendable>(
        of _: Equatable.Type
    ) -> (@Sendable (Value, Value) -> Bool)? {
        let equal: @Sendable (Equatable, Equatable) -> Bool = { $0 == $1 }
        return equal as? @Sendable (Value, Value) -> Bool
    }

    func callAsFunction(_ lhs: Value, _ rhs: Value) -> Bool {
        areEqual(lhs, rhs)
    }
}

/// `==` on two values of `Value`, whose type `Equatable` is (an `Equatable` metatype found at run time):
/// each value is cast to the type it already has, which neither boxes it nor makes an optional.
func areEqual<Value, Equatable: Swift.Equatable>(_ lhs: Value, _ rhs: Value, as _: Equatable.Type) -> Bool {
    (lhs as! Equatable) == (rhs as! Equatable)
}

/// Whether `lhs` and `rhs` are the same bytes, and so the same value, whatever `==` says.
///
/// A value copied and left alone keeps its bytes, so this tells a commit or a delivery that nothing
/// changed even where `==` cannot: a `Double` that is NaN is not `==` to itself, and a root holding one
/// would otherwise count every no-op update as a change. It is a quick check before `==`, never instead of
/// it: equal values may differ in their bytes (two copies of a string's storage, padding), and those are
/// left to `==`.
///
/// The bytes are compared by `memcmp`, not one by one: an encode compares every unchanged member of a
/// dictionary of settings groups so, each some tens of bytes.
func haveSameBytes<Value>(_ lhs: Value, _ rhs: Value) -> Bool {
    withUnsafePointer(to: rhs) { haveSameBytes(lhs, asAt: $0) }
}

/// Whether `value` has the same bytes as the value at `pointer`, compared where that one is (an element of
/// an array, which reading would copy).
func haveSameBytes<Value>(_ value: Value, asAt pointer: UnsafePointer<Value>) -> Bool {
    withUnsafeBytes(of: value) { bytes in
        guard let base = bytes.baseAddress, bytes.count > 0 else { return true }
        return memcmp(base, pointer, bytes.count) == 0
    }
}
