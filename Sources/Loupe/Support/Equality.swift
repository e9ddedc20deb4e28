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
