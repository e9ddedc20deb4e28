import Foundation
import Loupe
import LoupeYAML
import Testing

struct Service: Codable, Sendable, Equatable {
    var name = "api"
    var port = 8080
    var tags: [String] = []
}

@Suite("YAML files")
struct YAMLCodecTests {
    @Test func roundTripsThroughAFileStore() throws {
        let directory = NSTemporaryDirectory() + "loupe-yaml-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/service.yaml"
        let root = try RootLens(default: Service(), store: FileStore(path: path, format: .yaml))
        try root.update {
            $0.port = 9090
            $0.tags = ["blue", "green"]
        }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("port: 9090"))
        #expect(text.contains("- blue"))
        let reopened = try RootLens(default: Service(), store: FileStore(path: path, format: YAMLCodec()))
        #expect(reopened.value == root.value)
    }

    @Test func aWrongTypeNamesThePathAndTheValue() throws {
        let directory = NSTemporaryDirectory() + "loupe-yaml-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/service.yaml"
        try Data("name: api\nport: 80a\ntags: []\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try RootLens(default: Service(), store: FileStore(path: path, format: .yaml))
        } throws: { error in
            "\(error)".contains("YAML file \(path): port: expected Int, found String \"80a\"")
        }
    }
}

@Suite("YAML files that cannot be written as they are")
struct YAMLRefusedWriteTests {
    @Test func aWriteOverAFileWithAnchorsAndAliasesIsRefusedSayingWhyAndNothingIsWritten() throws {
        let directory = NSTemporaryDirectory() + "loupe-yaml-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/service.yaml"
        let text = "defaults: &tags [blue]\nname: api\ntags: *tags\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        struct WithDefaults: Codable, Sendable, Equatable {
            var defaults: [String] = []
            var name = "api"
            var port = 8080
            var tags: [String] = []
        }
        let root = try RootLens(default: WithDefaults(), store: FileStore(path: path, format: .yaml), watch: false)
        #expect(root.value.tags == ["blue"], "aliases are read")
        #expect {
            try root.port.set(9090)
        } throws: { error in
            (error as? SettingsError)?.code == .unwritable && "\(error)".contains("the file uses YAML anchors and aliases")
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
        #expect(root.value.port == 8080, "nothing was applied")
    }

    @Test func aFileWithSeveralDocumentsIsRefusedWhenRead() throws {
        #expect(throws: (any Error).self) { try YAMLCodec().parse(Data("a: 1\n---\na: 2\n".utf8)) }
    }
}

@Suite("YAML numbers")
struct YAMLNumberTests {
    @Test func numbersNoSwiftTypeHoldsAreKeptAsWrittenAndDoublesInFull() throws {
        let codec = YAMLCodec()
        let document = try codec.parse(Data("id: 18446744073709551615\nprice: 12345678901234567.89\nthird: 0.30000000000000004\n".utf8))
        #expect(document == JSONValue.object([
            "id": .exactNumber("18446744073709551615"), "price": .exactNumber("12345678901234567.89"),
            "third": .double(0.30000000000000004),
        ]))
        let written = String(decoding: try codec.serialize(document), as: UTF8.self)
        #expect(written.contains("id: 18446744073709551615") && written.contains("price: 12345678901234567.89")
                && written.contains("third: 0.30000000000000004"), "\(written)")
    }
}
