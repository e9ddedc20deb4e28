/// `==` for a type that conforms to `Equatable` at run time.
///
/// Lenses are generic over any `Sendable` value, so whether a value can be compared is often only known at
/// run time. This is made once per lens or graph; a comparison then costs two dynamic casts to the type
/// the values already have and one `==`. Where the type is known to be `Equatable`, ``init(_:)-(Value,Value)->Bool``
/// takes `==` directly.
struct RuntimeEquality<Value>: @unchecked Sendable {  // holds a metatype or a @Sendable closure, both immutable
    private let type: (any Equatable.Type)?
    private let areEqual: (@Sendable (Value, Value) -> Bool)?

    /// `==` for `Value`, or nil when `Value` is not `Equatable`.
    init?(_ value: Value.Type) {
        guard let type = value as? any Equatable.Type else { return nil }
        self.type = type
        areEqual = nil
    }

    /// `==` known statically.
    init(_ areEqual: @escaping @Sendable (Value, Value) -> Bool) {
        type = nil
        self.areEqual = areEqual
    }

    func callAsFunction(_ lhs: Value, _ rhs: Value) -> Bool {
        if let areEqual { return areEqual(lhs, rhs) }
        return type?.isEqual(lhs, rhs) ?? false
    }
}

extension Equatable {
    /// `==` on two values that the caller guarantees are of this type.
    fileprivate static func isEqual(_ lhs: Any, _ rhs: Any) -> Bool {
        guard let lhs = lhs as? Self, let rhs = rhs as? Self else { return false }
        return lhs == rhs
    }
}
