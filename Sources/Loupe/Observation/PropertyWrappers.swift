/// A component's lens, held as a property: the property reads the current value, `$property` is the lens
/// (to write, to observe, or to derive lenses onto parts). Written as ``Lensed`` for a lens that writes
/// and ``LensedReader`` for one that only reads.
@propertyWrapper
public struct LensedProperty<HeldLens: ReadableLens>: Sendable {
    /// The lens.
    public let projectedValue: HeldLens

    /// Holds `lens`.
    public init(_ lens: HeldLens) {
        projectedValue = lens
    }

    /// Holds `lens`, for a parameter declared `@Lensed` or `@LensedReader`: pass `$settings: lens`.
    public init(projectedValue lens: HeldLens) {
        projectedValue = lens
    }

    /// The lens's current value.
    public var wrappedValue: HeldLens.Value { projectedValue.value }
}

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
public typealias Lensed<Value: Sendable> = LensedProperty<MutableLens<Value>>

/// A component's read-only lens, held as a property: the property reads the current value, `$property` is
/// the lens (to observe, or to derive lenses onto parts).
///
/// ```swift
/// struct Banner {
///     @LensedReader var greeting: String
/// }
/// let banner = Banner(greeting: LensedReader(root.ticker.greeting.readOnly))
/// ```
public typealias LensedReader<Value: Sendable> = LensedProperty<Lens<Value>>
