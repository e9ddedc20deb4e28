import Foundation
import Loupe
import LoupeTestSupport

/// The settings graph of the README and the issue.
struct Server: Codable, Sendable, Equatable {
    var host = "localhost"
    var port = 8080
}

struct Protection: Codable, Sendable, Equatable {
    var enabled = false
    var passcode: String?
}

struct Settings: Codable, Sendable, Equatable {
    var server = Server()
    var features: [String: Bool] = [:]
    var protection: Protection? = nil
}

/// A graph that is not `Equatable`, to check the fallback comparison.
struct Opaque: Codable, Sendable {
    var counter = 0
    var names: [String] = []
}

/// A real store over memory that counts saves and can be told to fail: it checks what the core asks of a
/// store, and stands in for a store whose disk or server has gone away.
final class RecordingStore: DocumentStore {
    private let inner: MemoryStore
    private let state = Locked((saves: 0, failure: SettingsError.Code?.none))

    init(_ document: JSONValue? = nil) { inner = MemoryStore(document) }

    /// A store that holds `value`'s document.
    convenience init<Value: Encodable>(holding value: Value) {
        self.init(try! DocumentCoding().encode(value))
    }

    var saves: Int { state.withLock { $0.saves } }
    /// Makes every save fail with `code` (a lost disk by default; `.conflict` for a writer that always wins).
    func fail(_ failing: Bool, with code: SettingsError.Code = .unwritable) {
        state.withLock { $0.failure = failing ? code : nil }
    }

    func load() throws -> StoredDocument { try inner.load() }
    /// The stored document read as a root over `defaultValue` reads it.
    func load<Value: Codable>(over defaultValue: Value) throws -> Value? {
        try inner.load().document.map { try decodeStored(over: defaultValue, $0) }
    }
    func save(_ document: JSONValue, replacing token: ChangeToken) throws -> ChangeToken {
        try state.withLock { state in
            if let code = state.failure { throw SettingsError(code, store: description, reason: "the disk is gone") }
            state.saves += 1
        }
        return try inner.save(document, replacing: token)
    }
    func remove(replacing token: ChangeToken) throws -> ChangeToken { try inner.remove(replacing: token) }
    var description: String { "recording store" }
}

struct Boom: Error, Equatable {}

/// The failure a test expects: settings errors compare by code, path and store, never by their words, so a
/// test that cares about the words checks the caught error's `description` as well.
func failure(_ code: SettingsError.Code, at path: ValuePath? = nil, store: String? = nil) -> SettingsError {
    SettingsError(code, path: path, store: store, reason: "")
}
