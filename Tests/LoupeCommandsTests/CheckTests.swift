import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// `myapp config check FILE…` and `myapp config diff --files A B`: settings files checked and compared
/// before they ship, as CI and a pre-commit hook run them.
@Suite("check and diff --files: settings files checked against the type, its rules and the locks")
struct CheckTests {
    /// One problem as `--format json` prints it.
    struct Reported: Hashable, CustomStringConvertible {
        var file: String
        var line: Int
        var column: Int
        var path: String
        var code: String

        var description: String { "\(file):\(line):\(column): \(path) (\(code))" }
    }

    /// Writes `files` (name: text) in the app's directory and runs `myapp config check` on them.
    private func check(
        _ app: App, _ files: [(String, String)], _ options: [String] = [], environment: [String: String] = [:]
    ) throws -> ProcessOutput {
        for (name, text) in files {
            try text.write(toFile: app.directory.file(name), atomically: true, encoding: .utf8)
        }
        return try app(
            arguments: ["config", "check"] + options + files.map { app.directory.file($0.0) }, environment: environment)
    }

    /// The problems `--format json` printed, with the files' names rather than their paths.
    private func reported(_ output: String) throws -> (problems: Set<Reported>, messages: [String: String]) {
        guard case .array(let entries) = try JSONValue(parsing: output) else {
            throw CheckFailure("not a JSON array: \(output)")
        }
        var problems: Set<Reported> = []
        var messages: [String: String] = [:]
        for entry in entries {
            guard case .string(let file)? = entry[path: "file"], case .integer(let line)? = entry[path: "line"],
                case .integer(let column)? = entry[path: "column"], case .string(let path)? = entry[path: "path"],
                case .string(let code)? = entry[path: "code"], case .string(let message)? = entry[path: "message"]
            else { throw CheckFailure("an entry without file, line, column, path, code or message: \(entry)") }
            let name = URL(fileURLWithPath: file).lastPathComponent
            problems.insert(Reported(file: name, line: line, column: column, path: path, code: code))
            messages["\(name) \(path)"] = message
        }
        return (problems, messages)
    }

    @Test("every problem of a JSON, a TOML and a YAML file, each at its line and column")
    func everyProblemOfEachFormatAtItsPosition() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let json = """
            {
              "greeting": "",
              "server": {"host": 5, "port": 80},
              "level": "loud",
              "unknownKey": true
            }
            """
        let toml = """
            # myapp
            greeting = ""
            level = "loud"

            [server]
            host = 5
            port = 80
            """
        let yaml = """
            # myapp
            greeting: ""
            level: loud
            server:
              host: 5
              port: 80
            mirrors: [1, "b"]
            """
        let result = try check(app, [("a.json", json), ("b.toml", toml), ("c.yaml", yaml)], ["--format", "json"])
        #expect(result.status == 65, "\(result.error)")
        let (problems, messages) = try reported(result.output)
        #expect(
            problems == [
                Reported(file: "a.json", line: 2, column: 15, path: "greeting", code: "rule"),
                Reported(file: "a.json", line: 3, column: 22, path: "server.host", code: "invalid-value"),
                Reported(file: "a.json", line: 3, column: 33, path: "server.port", code: "rule"),
                Reported(file: "a.json", line: 4, column: 12, path: "level", code: "invalid-value"),
                Reported(file: "b.toml", line: 2, column: 12, path: "greeting", code: "rule"),
                Reported(file: "b.toml", line: 3, column: 9, path: "level", code: "invalid-value"),
                Reported(file: "b.toml", line: 6, column: 8, path: "server.host", code: "invalid-value"),
                Reported(file: "b.toml", line: 7, column: 8, path: "server.port", code: "rule"),
                Reported(file: "c.yaml", line: 2, column: 11, path: "greeting", code: "rule"),
                Reported(file: "c.yaml", line: 3, column: 8, path: "level", code: "invalid-value"),
                Reported(file: "c.yaml", line: 5, column: 9, path: "server.host", code: "invalid-value"),
                Reported(file: "c.yaml", line: 6, column: 9, path: "server.port", code: "rule"),
                Reported(file: "c.yaml", line: 7, column: 11, path: "mirrors[0]", code: "invalid-value"),
            ], "a key the type does not know is kept, not a problem")
        #expect(messages["b.toml server.port"] == "must be at least 1024, got 80")
        #expect(messages["c.yaml level"] == #"expected one of quiet, normal, verbose, found "loud""#)
        #expect(messages["a.json server.host"] == "expected String, found number 5")

        // The same as text: FILE:LINE:COLUMN: PATH: message, in the file's order.
        let text = try app(arguments: ["config", "check", app.directory.file("b.toml")])
        #expect(text.status == 65)
        #expect(
            text.output == """
                \(app.directory.file("b.toml")):2:12: greeting: must not be empty, got ""
                \(app.directory.file("b.toml")):3:9: level: expected one of quiet, normal, verbose, found "loud"
                \(app.directory.file("b.toml")):6:8: server.host: expected String, found number 5
                \(app.directory.file("b.toml")):7:8: server.port: must be at least 1024, got 80

                """, "\(text.output)")
        #expect(text.error.contains("4 problems in 1 of 1 file"), "\(text.error)")
    }

    @Test("a rule the file breaks is a problem (65); a file that keeps every rule has none (0)")
    func ruleViolationAndExitStatuses() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let bad = try check(app, [("bad.toml", "[server]\nport = 1000\n")])
        #expect(bad.status == 65)
        #expect(
            bad.output == "\(app.directory.file("bad.toml")):2:8: server.port: must be at least 1024, got 1000\n",
            "\(bad.output)")

        let good = try check(
            app, [("good.toml", "greeting = \"bonjour\"\n[server]\nport = 9000\n"), ("good.yaml", "level: verbose\n")])
        #expect(good.status == 0, "\(good.output) \(good.error)")
        #expect(good.output.isEmpty)
        #expect(good.error.contains("checked 2 files: no problems"), "\(good.error)")
        let none = try check(app, [("good.json", "{}")], ["--format", "json"])
        #expect(none.status == 0, "\(none.output)")
        #expect(try JSONValue(parsing: none.output) == .array([]), "\(none.output)")
    }

    @Test("--strict: a key the type does not know (a misspelt one) is a problem at its line; without it, none")
    func strictReportsUnknownKeys() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let file = ("typo.toml", "greting = \"hi\"\n[server]\nport = 9000\nhots = \"example.org\"\n")
        let lenient = try check(app, [file])
        #expect(lenient.status == 0 && lenient.output.isEmpty, "\(lenient.output) \(lenient.error)")
        let strict = try check(app, [file], ["--strict", "--format", "json"])
        #expect(strict.status == 65, "\(strict.output) \(strict.error)")
        let (problems, messages) = try reported(strict.output)
        #expect(
            problems == [
                Reported(file: "typo.toml", line: 1, column: 11, path: "greting", code: "unknown-key"),
                Reported(file: "typo.toml", line: 4, column: 8, path: "server.hots", code: "unknown-key"),
            ], "\(problems)")
        #expect(messages["typo.toml server.hots"]?.contains("the type knows host, port here") == true, "\(messages)")
    }

    @Test("a path the administrator locked, set to another value in the file, is a problem at its line")
    func lockedPathSetInTheFile() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let locks = app.directory.file("locks")
        try "# the administrator's\nserver.port\n".write(toFile: locks, atomically: true, encoding: .utf8)
        let result = try check(
            app, [("locked.yaml", "greeting: hi\nserver:\n  port: 9000\n")], environment: ["MYAPP_LOCKS": locks])
        #expect(result.status == 65)
        #expect(
            result.output
                == "\(app.directory.file("locked.yaml")):3:9: server.port: locked by \(locks) line 2: the value here is ignored, the layers below give it\n",
            "\(result.output)")
        let json = try check(
            app, [("locked.yaml", "greeting: hi\nserver:\n  port: 9000\n")], ["--format", "json"],
            environment: ["MYAPP_LOCKS": locks])
        #expect(
            try reported(json.output).problems == [
                Reported(file: "locked.yaml", line: 3, column: 9, path: "server.port", code: "locked")
            ])

        // The value the layers below give anyway changes nothing: no problem.
        let same = try check(app, [("same.yaml", "server:\n  port: 8080\n")], environment: ["MYAPP_LOCKS": locks])
        #expect(same.status == 0, "\(same.output)")
    }

    @Test(
        "a syntax error is reported where the parser stopped, in JSON, TOML and YAML, and the other files are still checked"
    )
    func syntaxErrorsPositions() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let result = try check(
            app,
            [
                ("broken.json", "{\n  \"greeting\": \"hi\",\n  \"level\" \"verbose\"\n}\n"),
                ("broken.toml", "greeting = \"hi\"\nlevel = = 2\n"),
                ("broken.yaml", "server:\n  port: [1,\n  host: x\n"),
                ("fine.toml", "[server]\nport = 80\n"),
            ], ["--format", "json"])
        #expect(result.status == 65)
        let (problems, messages) = try reported(result.output)
        #expect(
            problems == [
                Reported(file: "broken.json", line: 3, column: 11, path: "", code: "syntax"),
                Reported(file: "broken.toml", line: 2, column: 9, path: "", code: "syntax"),
                Reported(file: "broken.yaml", line: 4, column: 1, path: "", code: "syntax"),
                Reported(file: "fine.toml", line: 2, column: 8, path: "server.port", code: "rule"),
            ], "\(result.output)")
        #expect(messages["broken.toml "] == "a value was expected, not '='")
        #expect(
            messages["broken.yaml "]?.contains("while parsing a flow sequence from line 2, column 9") == true,
            "\(messages)")
    }

    @Test("--format json is an array Python's json reads, with file, line, column, path, message and code")
    func jsonOutputReadsInPython() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let result = try check(
            app, [("a.toml", "greeting = \"\"\ntoken = 42\n[server]\nport = 80\n")], ["--format", "json"])
        #expect(result.status == 65)
        let python = try run(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import json, sys
                problems = json.load(sys.stdin)
                assert isinstance(problems, list), problems
                for p in problems:
                    assert set(p) == {"file", "line", "column", "path", "message", "code"}, p
                    print(f"{p['line']}:{p['column']} {p['path']} {p['code']} {p['message']}")
                """,
            ], input: result.output)
        #expect(python.status == 0, "\(python.error)")
        #expect(
            python.output == """
                1:12 greeting rule must not be empty, got ""
                2:9 token invalid-value expected String
                4:8 server.port rule must be at least 1024, got 80

                """, "a secret's value is never quoted: \(python.output)")
    }

    @Test("--schema checks against another type the program registers; an unknown one is a usage error (64)")
    func namedSettingsTypes() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let plugins = try check(
            app, [("plugins.json", #"{"retries": 11, "enabled": ["a"]}"#)], ["--schema", "plugins"])
        #expect(plugins.status == 65)
        #expect(
            plugins.output == "\(app.directory.file("plugins.json")):1:13: retries: must be between 0 and 10, got 11\n",
            "\(plugins.output)")
        let asApp = try check(app, [("plugins.json", #"{"retries": 11, "enabled": ["a"]}"#)], ["--schema", "app"])
        #expect(asApp.status == 0, "the app's type keeps the keys it does not know: \(asApp.output)")
        let unknown = try check(app, [("plugins.json", "{}")], ["--schema", "nope"])
        #expect(unknown.status == 64 && unknown.error.contains("app, plugins"), "\(unknown.error)")
    }

    @Test("the program's own settings file is checked like any other, even when it does not read")
    func theProgramsOwnFile() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        try "{\n  \"server\": {\"port\": 80},\n  \"level\": 3\n}\n".write(
            toFile: app.settings, atomically: true, encoding: .utf8)
        #expect(try app("config", "get", "server.port").status == 69, "the program refuses it")
        let checked = try app(arguments: ["config", "check", app.settings])
        #expect(checked.status == 65, "\(checked.error)")
        #expect(
            checked.output == """
                \(app.settings):2:22: server.port: must be at least 1024, got 80
                \(app.settings):3:12: level: expected String, found number 3

                """, "\(checked.output)")
    }

    @Test("a file that does not exist exits 66; an extension no format has, 64")
    func missingFileAndUnknownFormat() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let missing = try app(arguments: ["config", "check", app.directory.file("nothing.toml")])
        #expect(missing.status == 66 && missing.error.contains("nothing.toml"), "\(missing.error)")
        let unknown = try check(app, [("settings.ini", "a=1")])
        #expect(unknown.status == 64 && unknown.error.contains(".toml"), "\(unknown.error)")
    }

    @Test("diff --files: what changes from a JSON file to a TOML file, path by path, the secret masked unless --reveal")
    func diffFilesAcrossFormats() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let base = app.directory.file("base.json")
        let changed = app.directory.file("settings.toml")
        try #"{"token": "s3cret-base", "server": {"port": 8080}, "mirrors": ["a"], "shouting": true}"#
            .write(toFile: base, atomically: true, encoding: .utf8)
        try """
        # reviewed
        token = "s3cret-new"
        greeting = "hi"
        mirrors = ["a", "b"]

        [server]
        port = 9000
        """.write(toFile: changed, atomically: true, encoding: .utf8)
        let diff = try app(arguments: ["config", "diff", "--files", base, changed])
        #expect(diff.status == 0, "\(diff.error)")
        #expect(
            diff.output == """
                greeting: (none) -> "hi"
                mirrors[1]: (none) -> "b"
                server.port: 8080 -> 9000
                shouting: true -> (none)
                token: "********" -> "********"

                """, "\(diff.output)")
        #expect(!diff.output.contains("s3cret") && !diff.error.contains("s3cret"))
        let revealed = try app(arguments: ["config", "diff", "--reveal", "--files", base, changed])
        #expect(revealed.output.contains(#"token: "s3cret-base" -> "s3cret-new""#), "\(revealed.output)")

        let same = try app(arguments: ["config", "diff", "--files", base, base])
        #expect(
            same.status == 0 && same.output.isEmpty && same.error.contains("hold the same settings"), "\(same.error)")
        #expect(try app(arguments: ["config", "diff", "--files", base]).status == 64, "--files takes two files")
        #expect(try app(arguments: ["config", "diff", "--files", base, app.directory.file("none.yaml")]).status == 66)
    }

    /// An array of tables compared as a review reads it: a value changed in one element is that value's
    /// line; elements added or taken out are theirs, at their index in the file that holds them; elements
    /// that moved are the whole array, before and after.
    @Test("diff --files: an array's changes element by element, where its elements stay in place")
    func diffFilesComparesArraysElementByElement() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let servers = ["a", "b", "c"].enumerated().map { "[[servers]]\nhost = \"\($1)\"\nport = \($0 + 1)\n" }
        func file(_ name: String, mirrors: String, _ servers: [String]) throws -> String {
            let path = app.directory.file(name)
            try "mirrors = \(mirrors)\n\(servers.joined())".write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let base = try file("base.toml", mirrors: #"["a", "b", "c", "d"]"#, servers)
        func diff(_ mirrors: String, _ servers: [String]) throws -> String {
            let output = try app(arguments: [
                "config", "diff", "--files", base, try file("new.toml", mirrors: mirrors, servers),
            ])
            #expect(output.status == 0, "\(output.error)")
            return output.output
        }
        let changed = servers.enumerated().map {
            $0 == 1 ? $1.replacingOccurrences(of: "port = 2", with: "port = 20") : $1
        }
        #expect(try diff(#"["a", "x", "c", "d"]"#, changed) == "mirrors[1]: \"b\" -> \"x\"\nservers[1].port: 2 -> 20\n")
        #expect(
            try diff(#"["a", "d"]"#, Array(servers.dropFirst()))
                == """
                mirrors[1]: "b" -> (none)
                mirrors[2]: "c" -> (none)
                servers[0].host: "a" -> (none)
                servers[0].port: 1 -> (none)

                """)
        #expect(
            try diff(#"["a", "b", "c", "d", "e"]"#, servers + ["[[servers]]\nhost = \"d\"\n"])
                == "mirrors[4]: (none) -> \"e\"\nservers[3].host: (none) -> \"d\"\n")
        // Moved: one taken from the front and one added at the end is not four elements changed.
        #expect(
            try diff(#"["b", "c", "d", "e"]"#, servers)
                == #"mirrors: ["a","b","c","d"] -> ["b","c","d","e"]"# + "\n")
        // Some added and others taken out: the whole array.
        #expect(
            try diff(#"["a", "x", "y"]"#, servers) == #"mirrors: ["a","b","c","d"] -> ["a","x","y"]"# + "\n")
    }
}

/// A test's own failure, with what it found.
struct CheckFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension App {
    /// `myapp` run on the test's settings file with `arguments`, as an array.
    func callAsFunction(arguments: [String], environment: [String: String] = [:]) throws -> ProcessOutput {
        try run(myapp, arguments, environment: environment.merging(["MYAPP_SETTINGS": settings]) { $1 })
    }
}
