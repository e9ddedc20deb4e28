import Foundation

/// The files that the secret references in a load's documents read (`{"$secret": "file:/run/secrets/token"}`,
/// `credential:NAME`): a source beside a ``LayeredStore``'s layers, whose token is those files' identities and
/// whose watch reports their changes. So a secret rotated in its file reaches the root as any outside
/// change does (the store's token changed), and a save made over a secret rotated since the load is a
/// conflict, after which the root loads the new secret.
///
/// Which files those are changes with each load (a reference added to a file, or taken out), so the watches
/// follow the last load. Files are watched through the store's ``ReadableFileSystem``.
final class ReferencedFiles: Sendable {
    private let fileSystem: any ReadableFileSystem
    private let state = Locked(State())

    private struct State {
        /// The files the references of the last load read, in the order met.
        var files: [String] = []
        /// Who is told of a change: the handlers of the store's watches, by number.
        var observers: [Int: @Sendable () -> Void] = [:]
        var lastObserver = 0
        /// A watch of each of `files`, while anyone observes.
        var watches: [String: any StoreWatch] = [:]
    }

    init(fileSystem: any ReadableFileSystem) {
        self.fileSystem = fileSystem
    }

    /// Takes in the documents a load read, each with who can change it (nil: the program's own), and
    /// returns the token of the files their references read. A reference that would not be followed where
    /// it is (``DocumentWriters``) has no file watched: its load fails.
    func read(_ documents: [(document: JSONValue, writers: DocumentWriters?)]) -> ChangeToken {
        var files: [String] = []
        for (document, writers) in documents {
            for (_, reference) in document.secretReferences {
                if let file = SecretReferences.file(readBy: reference, heldBy: writers), !files.contains(file) {
                    files.append(file)
                }
            }
        }
        let dropped = state.withLock { state in
            state.files = files
            return follow(&state)
        }
        // Cancelled off this thread: a load may run on the thread of a watch being dropped, or hold the
        // root's update lock that another watch's report waits for. A report of a dropped file is not passed on.
        if !dropped.isEmpty { DispatchQueue.global().async { dropped.forEach { $0.cancel() } } }
        return token(of: files)
    }

    /// The token of the files the last load's references read, as they are now.
    func token() -> ChangeToken {
        token(of: state.withLock { $0.files })
    }

    /// Starts reporting changes to the files the references of each load read, until the watch is cancelled.
    func watch(_ onChange: @escaping @Sendable () -> Void) -> any StoreWatch {
        let number = state.withLock { state in
            state.lastObserver += 1
            state.observers[state.lastObserver] = onChange
            _ = follow(&state)
            return state.lastObserver
        }
        return Observer { [weak self] in self?.stopObserving(number) }
    }

    /// Each file's path and identity (following links) now.
    private func token(of files: [String]) -> ChangeToken {
        ChangeToken(
            combining: files.flatMap { file in
                [
                    ChangeToken(file),
                    (try? fileSystem.identity(of: file)).map { $0?.token ?? .absent } ?? ChangeToken("unreadable"),
                ]
            })
    }

    /// Watches each of the state's files while anyone observes, and none otherwise; returns the watches
    /// no longer needed, to be cancelled once the state's lock is released.
    private func follow(_ state: inout State) -> [any StoreWatch] {
        let wanted = state.observers.isEmpty ? [] : state.files
        var dropped: [any StoreWatch] = []
        for (file, watch) in state.watches where !wanted.contains(file) {
            dropped.append(watch)
            state.watches[file] = nil
        }
        for file in wanted where state.watches[file] == nil {
            state.watches[file] = try? fileSystem.watch(file, contents: false) { [weak self] in
                self?.report(file)
            }.watch
        }
        return dropped
    }

    /// Tells every observer that `file` changed, while a reference reads it.
    private func report(_ file: String) {
        let observers = state.withLock { $0.files.contains(file) ? Array($0.observers.values) : [] }
        observers.forEach { $0() }
    }

    /// Stops telling observer `number`; the last one gone, the files are no longer watched.
    private func stopObserving(_ number: Int) {
        let dropped = state.withLock { state in
            state.observers[number] = nil
            return follow(&state)
        }
        dropped.forEach { $0.cancel() }
    }

    /// A watch of the referenced files, which stops its observer's reports.
    private struct Observer: StoreWatch {
        let stop: @Sendable () -> Void

        func cancel() { stop() }
    }
}
