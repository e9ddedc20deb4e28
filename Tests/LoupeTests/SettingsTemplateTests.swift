import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// Documented templates: every setting commented out at its default, with its description and what it
/// allows; uncommenting the settings gives a file that independent parsers read as the defaults.
@Suite("Settings templates: every setting commented out at its default")
struct SettingsTemplateTests {
    struct Daemon: Codable, Sendable, Equatable, Validated, DescribedSettings {
        enum Level: String, Codable, Sendable, CaseIterable { case debug, info }
        struct Server: Codable, Sendable, Equatable, DescribedSettings {
            var host = "localhost"
            var port: UInt16 = 8080
            static let descriptions: [ValuePath: String] = ["port": "The TCP port.\nBelow 1024 needs privileges."]
        }
        var level = Level.info
        var server = Server()
        var tags = ["a", "b"]
        var limits: [String: Int] = ["cpu": 2]
        var nickname: String?

        static let rules: [Rule<Daemon>] = [Rule(\.server.port, .atLeast(1024))]
        static let descriptions: [ValuePath: String] = [
            "": "Everything the daemon reads.", "level": "How much it logs.", "server": "Where it listens.",
        ]
    }

    func template(_ format: TemplateFormat) throws -> String {
        try SettingsSchema(for: Daemon.self, default: Daemon()).template(format: format)
    }

    /// `text` with its setting lines uncommented (not its descriptions).
    static func uncommented(_ text: String, _ format: TemplateFormat) -> String {
        let pattern =
            switch format {
            case .toml: #"^# (?=([A-Za-z0-9_-]+|"[^"]*") = |\[)"#
            case .yaml: #"^# (?= *([A-Za-z0-9_-]+|"[^"]*"):( |$))"#
            case .jsonc: #"^  // (?= *"| *\},)"#
            }
        let setting = try! Regex(pattern)
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.replacing(setting, with: "") }.joined(separator: "\n")
    }

    @Test func eachSettingIsDescribedWithWhatItAllowsAndCommentedOutAtItsDefault() throws {
        let toml = try template(.toml)
        #expect(
            toml.contains(
                """
                # How much it logs.
                # Allowed values: one of "debug", "info".
                # level = "info"
                """))
        #expect(
            toml.contains(
                """
                # Where it listens.
                # [server]
                """))
        #expect(
            toml.contains(
                """
                # The TCP port.
                # Below 1024 needs privileges.
                # Allowed values: at least 1024; at most 65535.
                # port = 8080
                """))
        #expect(toml.contains("# (nickname is not set by default)"))
        #expect(toml.hasPrefix("# Settings of Daemon.\n# Everything the daemon reads.\n"))
        let yaml = try template(.yaml)
        #expect(
            yaml.contains(
                "#   # The TCP port.\n#   # Below 1024 needs privileges.\n#   # Allowed values: at least 1024; at most 65535.\n#   port: 8080"
            ))
        let jsonc = try template(.jsonc)
        #expect(jsonc.contains("  // \"server\": {\n"))
        #expect(jsonc.contains("  //   \"port\": 8080,\n"))
    }

    @Test func aTemplateHoldsNoSettingAndUncommentedItHoldsTheDefaultsForIndependentParsers() throws {
        let defaults = try DocumentCoding().encode(Daemon())
        // As written: no setting.
        #expect(try TOMLCodec().parse(Data(template(.toml).utf8)) == .object([:]))
        #expect(try JSONCCodec().parse(Data(template(.jsonc).utf8)) == .object([:]))
        // Uncommented, read by Python's tomllib, PyYAML and json (comments and trailing commas taken out).
        let toml = try python(
            "import tomllib,sys,json; print(json.dumps(tomllib.loads(sys.argv[1])))",
            [Self.uncommented(try template(.toml), .toml)])
        #expect(try JSONValue(parsing: toml) == defaults)
        let yaml = try python(
            "import yaml,sys,json; print(json.dumps(yaml.safe_load(sys.argv[1])))",
            [Self.uncommented(try template(.yaml), .yaml)])
        #expect(try JSONValue(parsing: yaml) == defaults)
        let jsonc = try python(
            """
            import json,sys,re
            text = "\\n".join(l for l in sys.argv[1].split("\\n") if not l.strip().startswith("//"))
            print(json.dumps(json.loads(re.sub(r",(\\s*[}\\]])", r"\\1", text))))
            """, [Self.uncommented(try template(.jsonc), .jsonc)])
        #expect(try JSONValue(parsing: jsonc) == defaults)
    }

    @Test func aJSONCFileMadeFromTheTemplateKeepsEveryCommentThroughWrites() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("daemon.jsonc")
        let template = try template(.jsonc)
        try replaceFile(path, with: template)
        let root = try RootLens(default: Daemon(), store: FileStore(path: path, format: JSONCCodec()), watch: false)
        try root.server.port.set(9090)
        try root.level.set(.debug)
        let written = try String(contentsOfFile: path, encoding: .utf8)
        let lines = Set(written.split(separator: "\n"))
        #expect(
            template.split(separator: "\n").allSatisfy { lines.contains($0) },
            "every line of the template is still there:\n\(written)")
        #expect(
            try JSONCCodec().parse(Data(written.utf8))
                == JSONValue(parsing: #"{"server": {"port": 9090}, "level": "debug"}"#))
        #expect(
            try RootLens(default: Daemon(), store: FileStore(path: path, format: JSONCCodec()), watch: false).value
                == root.value)
    }

    @Test("an Int's or a Float's own range is not shown as what a setting allows; a rule's bounds are")
    func aTypesOwnRangeIsNotShown() throws {
        struct Tuning: Codable, Sendable, Equatable, Validated, DescribedSettings {
            var workers = 4
            var ratio: Float = 0.5
            var retries = 3
            static let rules: [Rule<Tuning>] = [Rule(\.retries, .within(0...10))]
            static let descriptions: [ValuePath: String] = [
                "workers": "Threads.", "ratio": "A share.", "retries": "Tries.",
            ]
        }
        let text = try SettingsSchema(for: Tuning.self, default: Tuning()).template(format: .toml)
        #expect(!text.contains("922337203685477580") && !text.contains("e+38"), "\(text)")
        #expect(text.contains("# Tries.\n# Allowed values: at least 0; at most 10.\n# retries = 3"), "\(text)")
        #expect(text.contains("# Threads.\n# workers = 4"), "\(text)")
    }
}
