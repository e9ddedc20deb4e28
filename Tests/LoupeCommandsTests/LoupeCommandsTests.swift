import Foundation
import Loupe
import LoupeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `myapp` (Tests/MyApp): a small program that mounts `LoupeCommands` as `myapp config` for its own type.
let myapp = buildProductsDirectory + "/myapp"

/// A settings file of the test's own, and `myapp` run on it.
struct App {
    let directory: TemporaryDirectory
    var settings: String { directory.file("settings.json") }

    init() throws {
        directory = try TemporaryDirectory()
    }

    @discardableResult
    func callAsFunction(
        _ arguments: String..., input: String? = nil, environment: [String: String] = [:]
    ) throws -> ProcessOutput {
        try run(myapp, arguments, environment: environment.merging(["MYAPP_SETTINGS": settings]) { $1 }, input: input)
    }

    /// The settings file, parsed.
    var stored: [String: Any] {
        get throws {
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: settings))) as? [String: Any]
                ?? [:]
        }
    }
}

@Suite("LoupeCommands, mounted by a program for its own settings type")
struct LoupeCommandsTests {
    @Test("--wait-applied takes no negative time: refused as a usage error (64), nothing written")
    func negativeWaitIsRefused() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        for wait in [["--wait-applied", "-1"], ["--wait-applied=-1"], ["--wait-applied=nan"]] {
            let refused = try run(
                myapp, ["config", "set", "server.port", "9000"] + wait, environment: ["MYAPP_SETTINGS": app.settings])
            #expect(refused.status == 64 && refused.error.contains("--wait-applied"), "\(wait): \(refused.error)")
        }
        #expect(!FileManager.default.fileExists(atPath: app.settings), "nothing was written")
    }

    @Test func getSetAndUnsetByPathThroughTheType() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        #expect(try app("config", "get", "server.port").output == "8080\n")
        #expect(try app("config", "set", "server.port", "9000").status == 0)
        #expect(try app("config", "get", "server.port").output == "9000\n")
        #expect(try app("config", "set", "greeting", "bonjour").status == 0)
        #expect(try app("greet").output == "bonjour\n", "the program reads what its config command wrote")
        #expect(try app("config", "set", "features.gamma", "true").status == 0)
        #expect(try app("config", "set", "mirrors", #"["https://a.example"]"#).status == 0)
        // A negative number needs no `--`; a value from standard input.
        let negative = try app("config", "set", "server.port", "-5")
        #expect(negative.status == 65 && negative.error.contains("server.port"), "\(negative.error)")
        #expect(try app("config", "set", "greeting", "-", input: #""from stdin""#).status == 0)
        #expect(try app("config", "get", "greeting").output == "\"from stdin\"\n")

        // unset: back to the default, which is then not stored.
        #expect(try app("config", "unset", "server.port").status == 0)
        #expect(try app("config", "get", "server.port").output == "8080\n")
        #expect(try app.stored["server"] == nil)
        #expect(try app("config", "unset", "features.gamma").status == 0)
        #expect(try app("config", "get", "features").output.contains("gamma") == false)
    }

    @Test func theTypeAndItsRulesRefuseBadValuesWithExitStatus65AndChangeNothing() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        try app("config", "set", "greeting", "hi")
        let before = try String(contentsOfFile: app.settings, encoding: .utf8)
        for (arguments, status, message) in [
            (["server.port", "80"], 65, "myapp: server.port: must be at least 1024, got 80"),
            (["server.port", "70000"], 65, "myapp: server.port: expected UInt16 (0 to 65535), found number 70000"),
            (
                ["server.port", "9000.5"], 65,
                "myapp: server.port: expected UInt16 (a whole number), found number 9000.5"
            ),
            (["greeting", #""""#], 65, "myapp: greeting: must not be empty"),
            (["level", "shouting"], 65, #"myapp: level: expected one of quiet, normal, verbose, found "shouting""#),
            (["server.port", "eighty"], 65, #"server.port: expected Int, found String "eighty""#),
            (["nothing.here", "1"], 66, "nothing.here"),
            (["server..port", "1"], 64, "server..port"),
        ] as [([String], Int32, String)] {
            let result = try run(myapp, ["config", "set"] + arguments, environment: ["MYAPP_SETTINGS": app.settings])
            #expect(
                result.status == status && result.error.contains(message),
                "\(arguments): \(result.status) \(result.error)")
        }
        #expect(try String(contentsOfFile: app.settings, encoding: .utf8) == before)
    }

    @Test func showPrintsTheValueTheStoredDocumentOrTheDefaults() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        try app("config", "set", "server.port", "9000")
        let whole = try JSONValue(parsing: try app("config", "show").output)
        #expect(try whole.value(at: "server.port") == .integer(9000))
        #expect(try whole.value(at: "greeting") == .string("hello"))
        let stored = try JSONValue(parsing: try app("config", "show", "--stored").output)
        #expect(stored == .object(["server": .object(["port": .integer(9000)])]), "only what differs from the defaults")
        let defaults = try JSONValue(parsing: try app("config", "show", "--defaults").output)
        #expect(try defaults.value(at: "server.port") == .integer(8080))
        #expect(try app("config", "show", "--stored", "--defaults").status == 64)
    }

    @Test func listPrintsEveryPathWithItsValue() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        try app("config", "set", "features.gamma", "true")
        let listed = try app("config", "list").output
        #expect(
            listed == """
                features.beta = false
                features.gamma = true
                greeting = "hello"
                level = "normal"
                mirrors = []
                server.host = "localhost"
                server.port = 8080
                shouting = false

                """, "\(listed)")
        #expect(try app("config", "list", "server").output == "server.host = \"localhost\"\nserver.port = 8080\n")
    }

    @Test func describeSaysTheTypeDefaultValueAllowedValuesAndDescription() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        try app("config", "set", "server.port", "9000")
        #expect(
            try app("config", "describe", "server.port").output == """
                path: server.port
                type: integer
                default: 8080
                value: 9000
                allowed: at least 1024, at most 65535
                description: The port the program listens on.

                """)
        #expect(
            try app("config", "describe", "level").output == """
                path: level
                type: string
                default: "normal"
                value: "normal"
                allowed: one of "quiet", "normal", "verbose"
                description: How much the program says.

                """)
        let nickname = try app("config", "describe", "nickname").output
        #expect(
            nickname.contains("type: string or null") && nickname.contains("default: none")
                && nickname.contains("value: none (not set)"), "\(nickname)")
        let features = try app("config", "describe", "features").output
        #expect(
            features.contains("type: object of boolean")
                && features.contains("description: Features turned on or off, by name."))
        #expect(try app("config", "describe", "nope").status == 66)
    }

    @Test func schemaPrintsTheTypesJSONSchema() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let printed = try app("config", "schema")
        #expect(printed.status == 0)
        let schema = try JSONValue(parsing: printed.output)
        #expect(try schema.value(at: "$schema") == .string("https://json-schema.org/draft/2020-12/schema"))
        #expect(try schema.value(at: "title") == .string("AppSettings"))
        #expect(try schema.value(at: "properties.server.properties.port.minimum") == .integer(1024))
        #expect(
            try schema.value(at: "properties.level.enum")
                == .array([.string("quiet"), .string("normal"), .string("verbose")]))
    }

    @Test func explainSaysWhereEachValueComesFrom() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        try app("config", "set", "greeting", "hey")
        let explained = try app("config", "explain").output
        #expect(
            explained.contains(#"greeting = "hey" from \#(app.settings) line 2 (overrides default)"#), "\(explained)")
        #expect(explained.contains("server.port = 8080 from default"), "\(explained)")
        #expect(
            try app("config", "explain", "greeting").output
                == #"greeting = "hey" from \#(app.settings) line 2 (overrides default)"# + "\n")
    }

    @Test func editChecksTheEditAgainstTheTypeAndReopensTheEditor() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let editor = app.directory.file("editor.sh")
        // A bad port first (refused by a rule), then a good one.
        try writeExecutable(
            editor,
            """
            #!/bin/sh
            count=$(cat "\(app.directory.path)/count" 2>/dev/null || echo 0)
            echo $((count + 1)) > "\(app.directory.path)/count"
            if [ "$count" = 0 ]; then
                sed -i 's/"port" : 8080/"port" : 80/' "$1"
            else
                sed -i 's/"port" : 80/"port" : 8081/' "$1"
            fi
            """)
        let edited = try app("config", "edit", environment: ["EDITOR": editor, "VISUAL": editor])
        #expect(edited.status == 0, "\(edited.error)")
        #expect(
            edited.error.contains("the edit is invalid: server.port: must be at least 1024, got 80"), "\(edited.error)")
        #expect(try app("config", "get", "server.port").output == "8081\n")

        // An editor that always leaves an invalid edit: given up after a few rounds, the file kept.
        let before = try String(contentsOfFile: app.settings, encoding: .utf8)
        let stubborn = app.directory.file("stubborn.sh")
        // Each round a different port, each below the rule's 1024.
        try writeExecutable(
            stubborn,
            """
            #!/bin/sh
            count=$(cat "\(app.directory.path)/rounds" 2>/dev/null || echo 0)
            echo $((count + 1)) > "\(app.directory.path)/rounds"
            sed -i "s/\\"port\\" : [0-9]*/\\"port\\" : $((count + 1))/" "$1"
            """)
        let givenUp = try app("config", "edit", environment: ["EDITOR": stubborn, "VISUAL": stubborn])
        #expect(givenUp.status == 65 && givenUp.error.contains("still invalid after 5 rounds"), "\(givenUp.error)")
        #expect(try String(contentsOfFile: app.directory.file("rounds"), encoding: .utf8) == "5\n")
        #expect(try String(contentsOfFile: app.settings, encoding: .utf8) == before)
    }

    @Test func aFailingEditorIsReportedAndNothingIsWritten() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        try app("config", "set", "greeting", "kept")
        let before = try String(contentsOfFile: app.settings, encoding: .utf8)
        let failed = try app("config", "edit", environment: ["EDITOR": "false", "VISUAL": "false"])
        #expect(
            failed.status == 69
                && failed.error.contains("the editor (false) failed with status 1; nothing was written"),
            "\(failed.status) \(failed.error)")
        #expect(try String(contentsOfFile: app.settings, encoding: .utf8) == before)
    }

    @Test func watchPrintsTheValueThenEachChangeAnotherProcessMakes() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let watcher = try ChildProcess(
            myapp, ["config", "watch", "greeting"], environment: ["MYAPP_SETTINGS": app.settings])
        #expect(eventually { watcher.output == "\"hello\"\n" })
        try app("config", "set", "greeting", "bonjour")
        try app("config", "set", "server.port", "9001")
        try app("config", "set", "greeting", "hallo")
        #expect(eventually { watcher.output == "\"hello\"\n\"bonjour\"\n\"hallo\"\n" }, "\(watcher.output)")
        watcher.kill(SIGINT)
        #expect(watcher.wait(limit: .seconds(10)) == 0)
    }

    @Test(
        "history --purge PATH takes an unset value out of every record: diff never prints it again, rollback leaves the path as it is"
    )
    func historyPurgeTakesAnUnsetValueOutOfTheHistory() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let token = "tok-9c1e5b"
        let journal = app.directory.file(".settings.json.history")
        #expect(try app("config", "set", "nickname", token).status == 0)
        #expect(try app("config", "set", "server.port", "9000").status == 0)
        #expect(try app("config", "unset", "nickname").status == 0)
        // What the issue found: the unset value stays readable in the history.
        #expect(try app("config", "diff", "3").output == "nickname: \"\(token)\" -> (none)\n")

        let purge = try app("config", "history", "--purge", "nickname")
        #expect(
            purge.status == 0 && purge.error == "myapp: purged the values at nickname from 2 records of the history\n",
            "\(purge.status) \(purge.error)")
        #expect(try !String(contentsOfFile: journal, encoding: .utf8).contains(token))
        #expect(try app("config", "diff", "3").output == "nickname: (purged)\n")
        #expect(try app("config", "diff", "1").output == "nickname: (purged)\n")
        let between = try app("config", "diff", "0", "3")
        #expect(
            between.status == 0 && !between.output.contains(token) && between.output.contains("nickname: (purged)"),
            "\(between.output)")
        #expect(
            try app("config", "diff", "2").output == "server.port: (none) -> 9000\n", "another path's record is kept")
        let history = try app("config", "history").output.split(separator: "\n")
        #expect(
            history.count == 3 && history[0].hasSuffix("nickname (purged)") && history[1].hasSuffix("server.port"),
            "\(history)")

        let again = try app("config", "history", "--purge", "nickname")
        #expect(again.status == 0 && again.error.contains("nothing was written"), "\(again.error)")
        for usage in [
            ["history", "--purge"], ["history", "nickname", "--purge", "nickname"], ["history", "--purge", "a..b"],
        ] {
            let refused = try run(myapp, ["config"] + usage, environment: ["MYAPP_SETTINGS": app.settings])
            #expect(refused.status == 64, "\(usage): \(refused.status) \(refused.error)")
        }

        // Revision 1 set the token; the history no longer knows it, so the rollback leaves nickname unset.
        let rollback = try app("config", "rollback", "1")
        #expect(
            rollback.status == 0 && rollback.error.contains("left nickname as it is now"),
            "\(rollback.status) \(rollback.error)")
        #expect(
            try app("config", "get", "server.port").output == "8080\n" && app.stored.isEmpty,
            "nickname stays unset, the port is restored")
    }

    @Test("diff REV compares an array element by element, as diff --files does, where its elements stay in place")
    func diffOfARevisionComparesArraysElementByElement() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        #expect(try app("config", "set", "mirrors", #"["a","b","c"]"#).status == 0)
        #expect(try app("config", "set", "mirrors[1]", "x").status == 0)
        #expect(try app("config", "set", "mirrors[3]", "d").status == 0)
        #expect(try app("config", "set", "mirrors", #"["d","a"]"#).status == 0)
        #expect(try app("config", "diff", "2").output == "mirrors[1]: \"b\" -> \"x\"\n")
        #expect(try app("config", "diff", "3").output == "mirrors[3]: (none) -> \"d\"\n")
        // Elements moved, or some changed while others were added, are the whole array, before and after.
        #expect(try app("config", "diff", "4").output == "mirrors: [\"a\",\"x\",\"c\",\"d\"] -> [\"d\",\"a\"]\n")
        #expect(
            try app("config", "diff", "1", "3").output == "mirrors: [\"a\",\"b\",\"c\"] -> [\"a\",\"x\",\"c\",\"d\"]\n")
        #expect(try app("config", "diff", "1").output == "mirrors: (none) -> [\"a\",\"b\",\"c\"]\n")
    }

    @Test func eachVerbHasItsOwnHelp() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let help = try app("config", "set", "--help")
        #expect(help.status == 0 && help.output.hasPrefix("OVERVIEW: Sets the value at a path."), "\(help.output)")
        #expect(try app("help", "config", "describe").output.contains("OVERVIEW: Describes the part at a path"))
        let group = try app("config", "--help").output
        for verb in ["get", "set", "unset", "show", "edit", "watch", "list", "describe", "schema", "explain"] {
            #expect(group.contains("  \(verb) "), "\(verb) in \(group)")
        }
        #expect(group.contains("Exit status: 0 success"))
    }
}

@Suite("LoupeCommands masks the secrets the settings type declares")
struct DeclaredSecretCommandsTests {
    @Test func aDeclaredSecretFromTheFileIsMaskedByEveryVerbThatPrintsIt() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        #expect(try app("config", "set", "token", "s3cr3t-token").status == 0)
        #expect(try app("config", "get", "token").output == "\"********\"\n")
        for verb in [
            ["show"], ["show", "--stored"], ["show", "--layers"], ["list"], ["explain"], ["explain", "token"],
            ["describe", "token"],
        ] {
            let printed = try run(myapp, ["config"] + verb, environment: ["MYAPP_SETTINGS": app.settings])
            #expect(
                printed.status == 0 && !printed.output.contains("s3cr3t") && printed.output.contains("********"),
                "\(verb): \(printed.output)")
        }
        #expect(
            try JSONValue(parsing: try app("config", "show").output)[path: "greeting"] == .string("hello"),
            "other values are shown")
        let edit = try app("config", "edit", environment: ["EDITOR": "true", "VISUAL": "true"])
        #expect(edit.status == 64 && edit.error.contains("token") && !edit.error.contains("s3cr3t"), "\(edit.error)")
    }

    @Test func aDeclaredSecretFromTheEnvironmentIsMaskedAndNeverQuotedInAnError() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        let environment = ["MYAPP_ENV_TOKEN": "env-s3cr3t"]
        #expect(try app("config", "get", "token", environment: environment).output == "\"********\"\n")
        let shown = try app("config", "show", environment: environment)
        #expect(shown.status == 0 && !shown.output.contains("env-s3cr3t"), "\(shown.output)")
        let explained = try app("config", "explain", "token", environment: environment)
        #expect(
            explained.output.contains("environment variable MYAPP_ENV_TOKEN")
                && !explained.output.contains("env-s3cr3t"), "\(explained.output)")
        // A value the type refuses, from the command line or the environment: the error names the path, not the value.
        let refused = try app("config", "set", "token", "987654321")
        #expect(
            refused.status == 65 && refused.error.contains("token") && !refused.error.contains("987654321"),
            "\(refused.error)")
    }

    @Test func whatAFileThatDoesNotReadHoldsIsPrintedWithItsSecretsMasked() throws {
        let app = try App()
        defer { app.directory.cleanUp() }
        try replaceFile(app.settings, with: #"{"token": 31337, "greeting": "hi", "server": {"port": 80}}"#)
        let get = try app("config", "get", "token")
        #expect(
            get.status != 0 && get.output == "\"********\"\n" && !get.error.contains("31337"),
            "\(get.status) \(get.output) \(get.error)")
        let show = try app("config", "show")
        #expect(
            show.status != 0 && !show.output.contains("31337") && show.output.contains("\"hi\""),
            "\(show.output) \(show.error)")
        #expect(try app("config", "get", "greeting").output == "\"hi\"\n", "other values are printed")
        #expect(try app("config", "unset", "token").status == 0, "unset repairs it")
        #expect(try app("config", "get", "greeting").output == "\"hi\"\n")
    }
}
