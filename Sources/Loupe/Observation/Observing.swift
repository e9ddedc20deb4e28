extension ReadableLens {
    /// Calls `handler` with the new value after each commit that changes this lens's value.
    ///
    /// "Changes" means `!=` for `Equatable` values; other values count as changed by every commit that does
    /// not leave them exactly as they were, byte for byte. A value left as it was is never a change, not even
    /// a NaN, which `==` calls unequal to itself. Handlers run in commit order, one at a time, never while a
    /// lock is held, on the thread that made the commit (or the thread already delivering earlier commits);
    /// they may read and update lenses. The observers of one lens are called in the order they were added.
    ///
    /// The observation lasts until the returned token is cancelled or released.
    public func observe(_ handler: @escaping @Sendable (_ newValue: Value) -> Void) -> ObservationToken {
        readOnly.node.subscribe(initial: nil, .newValue(handler))
    }

    /// Like ``observe(_:)``, with the value before the change as well.
    public func observeChanges(
        _ handler: @escaping @Sendable (_ oldValue: Value, _ newValue: Value) -> Void
    ) -> ObservationToken {
        readOnly.node.subscribe(initial: nil, .change(handler))
    }

    /// The current value, then each changed value, as an `AsyncSequence` that never throws.
    ///
    /// ```swift
    /// for await port in root.server.port.values { server.rebind(to: port) }
    /// ```
    ///
    /// Each iteration starts from the value current at the time it starts and buffers every later change
    /// until it is consumed. It ends when the iterating task is cancelled.
    public var values: LensValues<Value> { LensValues(node: readOnly.node) }
}

/// The values of a lens over time: the current one first, then each change, in commit order.
public struct LensValues<Value: Sendable>: AsyncSequence, Sendable {
    /// Each element is the lens's value.
    public typealias Element = Value
    /// The sequence never throws: it ends when the iterating task is cancelled.
    public typealias Failure = Never

    let node: any LensNode<Value>

    /// Iterates a lens's values; see ``ReadableLens/values``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Value>.Iterator

        public mutating func next() async -> Value? {
            await base.next()
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> Value? {
            await base.next(isolation: actor)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            base: subscriptionStream(buffering: .unbounded) { yield in
                node.subscribe(initial: { yield($0) }, .newValue { yield($0) })
            })
    }
}

/// An `AsyncStream` fed by a subscription: `subscribe` registers a callback that yields into the stream,
/// and the subscription is cancelled when the iteration ends. What ``LensValues`` and the root's
/// ``OutsideChangeErrors`` are made of.
func subscriptionStream<Element: Sendable>(
    buffering: AsyncStream<Element>.Continuation.BufferingPolicy,
    _ subscribe: (@escaping @Sendable (Element) -> Void) -> ObservationToken
) -> AsyncStream<Element>.Iterator {
    let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: buffering)
    let token = subscribe { continuation.yield($0) }
    continuation.onTermination = { _ in token.cancel() }
    return stream.makeAsyncIterator()
}
