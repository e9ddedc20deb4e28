/// A component's lens, held as a property: the property reads the current value, `$property` is the lens.
///
/// ```swift
/// struct Ticker {
///     @Lensed var settings: TickerSettings
///
///     func tick() async throws {
///         print(settings.greeting)                          // the current value
///         try await $settings.intervalSeconds.async.set(2)        // the lens: write, derive, observe
///     }
/// }
/// let ticker = Ticker(settings: Lensed(root.ticker))
/// ```
@propertyWrapper
public struct Lensed<Value: Sendable>: Sendable {
    /// The lens.
    public let projectedValue: MutableLens<Value>

    /// Holds `lens`.
    public init(_ lens: MutableLens<Value>) {
        projectedValue = lens
    }

    /// Holds `lens`, for a parameter declared `@Lensed`: pass `$settings: lens`.
    public init(projectedValue lens: MutableLens<Value>) {
        projectedValue = lens
    }

    /// The lens's current value.
    public var wrappedValue: Value { projectedValue.value }
}

/// A component's read-only lens, held as a property: the property reads the current value, `$property` is
/// the lens (to observe, or to derive lenses onto parts).
///
/// ```swift
/// struct Banner {
///     @LensedReader var greeting: String
/// }
/// let banner = Banner(greeting: LensedReader(root.ticker.greeting.readOnly))
/// ```
@propertyWrapper
public struct LensedReader<Value: Sendable>: Sendable {
    /// The lens.
    public let projectedValue: Lens<Value>

    /// Holds `lens`.
    public init(_ lens: Lens<Value>) {
        projectedValue = lens
    }

    /// Holds `lens`, for a parameter declared `@LensedReader`.
    public init(projectedValue lens: Lens<Value>) {
        projectedValue = lens
    }

    /// The lens's current value.
    public var wrappedValue: Value { projectedValue.value }
}
