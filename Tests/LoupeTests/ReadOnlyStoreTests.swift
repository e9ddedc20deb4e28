import Foundation
import Loupe
import LoupeTestSupport
import LoupeTesting
import Testing

/// A store that can only be read: a file another program owns, read through its bytes.
final class ReadOnlyFile: DocumentStore {
    let path: String
    init(path: String) { self.path = path }
    func load() throws -> StoredDocument {
        guard let data = FileManager.default.contents(atPath: path) else { return .empty }
        var hasher = Hasher()
        hasher.combine(data)
        return StoredDocument(
            try JSONCodec().parseDocument(data, store: description), token: ChangeToken(Int64(hasher.finalize())))
    }
    var description: String { "read-only file \(path)" }
}

@Suite("Read-only stores are first-class")
struct ReadOnlyStoreTests {
    @Test func aRootOverAReadOnlyStoreReadsAndRefusesWrites() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("vendor.json")
        try Data(#"{"server": {"host": "vendor", "port": 7}, "features": {"beta": true}}"#.utf8).write(
            to: URL(fileURLWithPath: path))
        let root = try RootLens(default: Settings(), store: ReadOnlyFile(path: path))
        #expect(root.server.host.value == "vendor")
        #expect(root.features["beta"].value == true)
        let refused = #expect(throws: failure(.readOnly, at: "server.port")) {
            try root.server.port.set(1)
        }
        #expect(refused?.description == "cannot write server.port: read-only file \(path) is read-only")
        #expect(throws: SettingsError.self) { try root.remove() }
        await #expect(throws: SettingsError.self) { try await root.async.update { $0.server.port = 2 } }
        #expect(root.server.port.value == 7)
        try await root.async.reload()
        try await StoreConformanceTest { ReadOnlyFile(path: directory.file("absent.json")) }.run()
    }
}

@Suite("The root's errors, as an AsyncSequence")
struct OutsideChangeErrorTests {
    @Test func aCorruptOutsideEditArrivesOnErrors() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.json")
        let root = try RootLens(default: Settings(), store: FileStore(path: path))
        try await root.server.port.async.set(1)
        var iterator = root.errors.makeAsyncIterator()
        try Data(#"{"server": {"host": "h", "port": "eighty"}, "features": {}}"#.utf8).write(
            to: URL(fileURLWithPath: path))
        let error = await iterator.next()
        #expect((error as? SettingsError)?.code == .corrupt)
        #expect("\(error.map { "\($0)" } ?? "")".contains(#"server.port: expected Int, found String "eighty""#))
        #expect(root.server.port.value == 1)
    }
}

@Suite("JSON as Loupe reads it")
struct JSONReaderTests {
    @Test func syntaxErrorsNameTheLineAndColumn() throws {
        #expect(throws: DocumentSyntaxError("line 3, column 5: expected , or } in an object, found '\"'")) {
            try JSONValue(parsing: "{\n  \"a\": 1\n    \"b\": 2\n}")
        }
        #expect(throws: DocumentSyntaxError("line 1, column 8: the key \"a\" appears twice in one object")) {
            try JSONValue(parsing: #"{"a":1,"a":2}"#)
        }
        // One key in two Unicode normalizations: Swift takes them for one key; the error says why they clash.
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect {
            try JSONCodec().parse(Data("{\"\(composed)\": 1, \"\(decomposed)\": 2}".utf8))
        } throws: { error in
            "\(error)".contains("look the same but are written differently (Unicode normalization")
        }
        #expect(throws: DocumentSyntaxError.self) { try JSONValue(parsing: String(repeating: "[", count: 10_000)) }
        // A number beyond every Swift type is valid JSON, kept as written; a type that cannot hold it says so.
        #expect(try JSONValue(parsing: "1e999") == .exactNumber("1e999"))
        #expect(throws: DecodingError.self) { try JSONValue.exactNumber("1e999").decode(Double.self) }
    }

    @Test func numbersKeepTheirExactValue() throws {
        #expect(try JSONValue(parsing: "1.0000000000000002e-06") == .double(1.0000000000000002e-06))
        #expect(
            try JSONValue(parsing: "[9007199254740993, -0.5, 1e2, 0]")
                == .array([.integer(9_007_199_254_740_993), .double(-0.5), .double(100), .integer(0)]))
        #expect(try JSONValue(parsing: #""\u00e9\ud83d\udd0d\n""#) == .string("é🔍\n"))
        for number in [0.1, 1.0 / 3.0, 1e-300, 123_456.789, -2.5e15] {
            #expect(try JSONValue(parsing: JSONValue.double(number).jsonText()) == .double(number))
        }
    }
}
