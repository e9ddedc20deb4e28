import Foundation

/// `==` for a type that conforms to `Equatable` at run time.
///
/// Lenses are generic over any `Sendable` value, so whether a value can be compared is often only known at
/// run time. This is made once per lens or graph; a comparison then costs two dynamic casts to the type
/// the values already have (which find it at once) and one `==`. Where the type is known to be `Equatable`, ``init(_:)-(Value,Value)->Bool``
/// takes `==` directly.
///
/// Hot paths keep ``areEqual``, a plain closure: an optional closure is tested without looking up any
/// generic type's metadata, where an optional `RuntimeEquality<Root>` is not.
struct RuntimeEquality<Value>: Sendable {
    /// `==` on two values of the type.
    let areEqual: @Sendable (Value, Value) -> Bool

    /// `==` for `Value`, or nil when `Value` is not `Equatable`.
    init?(_ value: Value.Type) {
        guard let type = value as? any Equatable.Type else { return nil }
        // A metatype is immutable; `any Equatable.Type` is only not declared `Sendable`.
        nonisolated(unsafe) let equatable = type
        areEqual = { Loupe.areEqual($0, $1, as: equatable) }
    }

    /// `==` known statically.
    init(_ areEqual: @escaping @Sendable (Value, Value) -> Bool) {
        self.areEqual = areEqual
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
