import Foundation
import Loupe
import LoupeTestSupport
import LoupeTesting
import LoupeYAML
import Testing

@Suite("YAML files")
struct YAMLConformanceTests {
    @Test func aYAMLFileStorePassesTheConformanceSuite() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.yaml")
        try await StoreConformanceTest { FileStore(path: path, format: YAMLCodec()) }.run()
    }

    @Test func scalarsTakeTheirCoreSchemaTypes() throws {
        let document = try YAMLCodec().parse(
            Data("port: 8080\nquoted: \"8080\"\nratio: 0.25\nflag: true\nnothing: ~\nword: on\n".utf8))
        #expect(
            document
                == .object([
                    "port": .integer(8080), "quoted": .string("8080"), "ratio": .double(0.25), "flag": .bool(true),
                    "nothing": .null, "word": .bool(true),
                ]), "Yams resolves YAML 1.1's on/off/yes/no as booleans")
        // Strings that would read as another type are written so that they read back as strings.
        let awkward = JSONValue.object([
            "a": .string("on"), "b": .string("8080"), "c": .string("~"), "d": .string("0.5"), "e": .string(""),
        ])
        #expect(try YAMLCodec().parse(YAMLCodec().serialize(awkward)) == awkward)
    }

    @Test func anAliasBombIsRefusedQuickly() throws {
        var yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1..<9 {
            yaml +=
                "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
                + "]\n"
        }
        #expect(throws: DocumentSyntaxError.self) { try YAMLCodec().parse(Data(yaml.utf8)) }
    }
}
