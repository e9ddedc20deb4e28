import Observation

/// A graph as Swift Observation sees it: reading any lens's `value` registers an access, and each commit
/// of the graph is a mutation, so `withObservationTracking { _ = lens.value }` fires on the next commit.
///
/// Observation tracks the graph as a whole: a commit that changes another part of the graph fires too.
/// That is what Observation allows (an `onChange` says "may have changed"); it keeps a read at a few
/// nanoseconds more, where tracking each lens would cost every read a lock. For exactly the changes of
/// one part, use ``Lens/observe(_:)`` or ``Lens/values``.
final class GraphObservation: Observable, Sendable {
    private let registrar = ObservationRegistrar()

    /// What accesses and mutations name: the graph's commits.
    private var commits: Void { () }
    /// The key path, made once: a literal is fetched from the runtime on every read.
    private let commitsKeyPath: KeyPath<GraphObservation, Void> & Sendable = \.commits

    @inline(__always)
    func access() {
        registrar.access(self, keyPath: commitsKeyPath)
    }

    func graphChanged() {
        registrar.withMutation(of: self, keyPath: commitsKeyPath) {}
    }
}
