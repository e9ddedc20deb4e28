import Foundation
import Logging

// Errors of outside changes the root could not apply: logged, and handed to whoever observes them.
extension GraphCore {
    func observeErrors(_ handler: @escaping @Sendable (any Error) -> Void) -> ObservationToken {
        let id = nextErrorHandlerID.add(1, ordering: .relaxed).newValue
        errorHandlers.withLock { $0[id] = handler }
        return ObservationToken { [weak self] in
            _ = self?.errorHandlers.withLock { $0.removeValue(forKey: id) }
        }
    }

    func report(_ error: any Error) {
        logger.error(
            "ignored an outside change that could not be applied",
            metadata: ["store": "\(storeName)", "error": "\(logDescription(of: error))"])
        let handlers = errorHandlers.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
        for handler in handlers { handler(error) }
    }
}
