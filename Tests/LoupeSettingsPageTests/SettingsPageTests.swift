#if SettingsPage
import DaemonSettings
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InMemoryLogging
import Logging
import Loupe
import LoupeSettingsPage
import LoupeTestSupport
import Testing

/// The settings page over HTTP, in process: what it shows, what it writes, what it refuses.
@Suite("Settings page over HTTP")
struct SettingsPageTests {
    @Test("the page and its API need the token; a wrong one is refused")
    func token() async throws {
        let fixture = try PageFixture()
        try await fixture.withClient { client in
            try await client.execute(uri: "/settings", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(response.text.contains("needs its token"))
            }
            try await client.execute(uri: "/settings?token=wrong", method: .get) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/settings?token=test-token", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/html") == true)
                #expect(response.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
                #expect(response.text.contains("<script>"))
            }
            try await client.execute(uri: "/settings/api/settings", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(response.json[path: "error"] != nil)
            }
            try await client.execute(uri: "/settings/api/events", method: .get, headers: pageHeaders(token: "nope")) {
                response in
                #expect(response.status == .unauthorized)
            }
        }
    }

    @Test("an application's authenticator decides instead of the token")
    func authenticator() async throws {
        let fixture = try PageFixture(
            configuration: SettingsPage.Configuration(authenticator: { request in
                request.headers[HTTPField.Name("X-User")!] == "admin"
            }))
        try await fixture.withClient { client in
            try await client.execute(uri: "/settings/api/settings", method: .get) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(
                uri: "/settings/api/settings", method: .get, headers: [HTTPField.Name("X-User")!: "admin"]
            ) {
                #expect($0.status == .ok)
            }
        }
    }

    @Test("every setting of the example daemon, with its schema, value and provenance")
    func settingsModel() async throws {
        let fixture = try PageFixture()
        try await fixture.withClient { client in
            try await client.execute(uri: "/settings/api/settings?token=test-token", method: .get) { response in
                #expect(response.status == .ok)
                let model = response.json
                let paths = [
                    "logLevel", "ticker.intervalSeconds", "ticker.greeting", "upstream.url", "upstream.timeoutSeconds",
                    "upstream.token",
                ]
                for path in paths { #expect(model.setting(path) != nil, "missing \(path)") }
                #expect(model.setting("$version") == nil)

                let logLevel = try #require(model.setting("logLevel"))
                #expect(logLevel[path: "editor"] == .string("choice"))
                #expect(logLevel[path: "value"] == .string("debug"))
                #expect(logLevel[path: "default"] == .string("info"))
                #expect(logLevel[path: "description"] == .string("How much the daemon logs."))
                #expect(logLevel[path: "source.name"] == .string(fixture.settingsFile))
                #expect(logLevel[path: "line"] == .integer(4), "the line of the user's file that sets it")
                if case .array(let choices)? = logLevel[path: "choices"] {
                    #expect(choices.contains(.string("warning")))
                } else {
                    Issue.record("logLevel has no choices")
                }

                let interval = try #require(model.setting("ticker.intervalSeconds"))
                #expect(interval[path: "editor"] == .string("number"))
                #expect(interval[path: "type"] == .string("number"))
                #expect(interval[path: "source.kind"] == .string("default"))
                #expect(interval[path: "line"] == nil)
                #expect(interval[path: "constraints.maximum"] != nil)

                let timeout = try #require(model.setting("upstream.timeoutSeconds"))
                #expect(timeout[path: "value"] == .integer(7))
                #expect(timeout[path: "source.name"] == .string(fixture.directory.file("vendor.json")))
                #expect(timeout[path: "line"] == .integer(1))
                #expect(
                    timeout[path: "overrides"]
                        == .array([.object(["kind": .string("default"), "name": .string("default")])]))

                let url = try #require(model.setting("upstream.url"))
                #expect(url[path: "editable"] == .bool(false))
                #expect(url[path: "lock.file"] == .string(fixture.lockFile))
                #expect(url[path: "lock.line"] == .integer(2))

                #expect(model.setting("ticker.greeting")?[path: "editable"] == .bool(true))
            }
            // A file store has no fleet to report on.
            try await client.execute(uri: "/settings/api/status?token=test-token", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.json == .null)
            }
        }
    }

    @Test("secrets are masked in every response, and revealed only where the page allows it")
    func secrets() async throws {
        let fixture = try PageFixture()
        try await fixture.withClient { client in
            try await client.execute(uri: "/settings/api/settings?token=test-token", method: .get) { response in
                #expect(!response.text.contains("s3cret"))
                let token = try #require(response.json.setting("upstream.token"))
                #expect(token[path: "isSecret"] == .bool(true))
                #expect(token[path: "value"] == .string("********"))
                #expect(token[path: "source.kind"] == .string("override"))
            }
            try await client.execute(uri: "/settings/api/reveal?path=upstream.token&token=test-token", method: .get) {
                response in
                #expect(response.status == .forbidden)
                #expect(!response.text.contains("s3cret"))
            }
        }
        let revealing = try PageFixture(
            configuration: SettingsPage.Configuration(token: "test-token", revealsSecrets: true))
        try await revealing.withClient { client in
            try await client.execute(
                uri: "/settings/api/reveal?path=upstream.token", method: .get, headers: pageHeaders()
            ) { response in
                #expect(response.status == .ok)
                #expect(response.json[path: "value"] == .string("s3cret-upstream-token"))
            }
            try await client.execute(uri: "/settings/api/settings", method: .get, headers: pageHeaders()) { response in
                #expect(!response.text.contains("s3cret"))
            }
        }
    }

    @Test("a save is one write through the root, in place: the file's comments are still there")
    func save() async throws {
        let fixture = try PageFixture()
        try await fixture.withClient { client in
            let body = #"{"path": "ticker.greeting", "value": "bonjour", "expected": "hi"}"#
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: pageHeaders(), body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status == .ok, "\(response.text)")
                #expect(response.json.setting("ticker.greeting")?[path: "value"] == .string("bonjour"))
            }
        }
        #expect(fixture.root.ticker.greeting.value == "bonjour")
        let text = fixture.fileText
        #expect(text == PageFixture.userFile.replacingOccurrences(of: "\"hi\"", with: "\"bonjour\""))
        #expect(text.contains("// said every tick") && text.contains("// Chatty while we debug."))
    }

    @Test("a value the rules refuse answers with the message loupe prints, and changes nothing")
    func refused() async throws {
        let fixture = try PageFixture()
        // What `loupe set ticker.intervalSeconds -1` prints: the root's own refusal.
        let expected = try refusal { try fixture.root.erased.set(atPath: "ticker.intervalSeconds", to: .integer(-1)) }
        try await fixture.withClient { client in
            let body = #"{"path": "ticker.intervalSeconds", "value": -1}"#
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: pageHeaders(), body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.json[path: "error"] == .string(expected))
            }
            let wrongType = #"{"path": "upstream.timeoutSeconds", "value": "soon"}"#
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: pageHeaders(), body: ByteBuffer(string: wrongType)
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.json[path: "error"] != nil)
            }
        }
        #expect(fixture.fileText == PageFixture.userFile)
    }

    @Test("a locked setting cannot be written: 423 naming the lock's file and line")
    func locked() async throws {
        let fixture = try PageFixture()
        try await fixture.withClient { client in
            let body = #"{"path": "upstream.url", "value": "https://elsewhere.example"}"#
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: pageHeaders(), body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status.code == 423)
                let message = response.json[path: "error"]
                #expect(message.map { "\($0)".contains(fixture.lockFile) } == true)
            }
        }
        #expect(fixture.fileText == PageFixture.userFile)
    }

    @Test("writes need the token in a header and the page's own origin: no cross-site request forgery")
    func crossSite() async throws {
        let fixture = try PageFixture()
        let body = #"{"path": "ticker.greeting", "value": "pwned"}"#
        try await fixture.withClient { client in
            // The token in the address (a link, a form's action) is not enough for a write.
            var queryOnly = pageHeaders()
            queryOnly[HTTPField.Name("X-Loupe-Token")!] = nil
            try await client.execute(
                uri: "/settings/api/value?token=test-token", method: .put, headers: queryOnly,
                body: ByteBuffer(string: body)
            ) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: pageHeaders(origin: "http://evil.example"),
                body: ByteBuffer(string: body)
            ) {
                #expect($0.status == .forbidden)
                #expect($0.text.contains("cross-origin"))
            }
            var crossSite = pageHeaders(origin: nil)
            crossSite[HTTPField.Name("Sec-Fetch-Site")!] = "cross-site"
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: crossSite, body: ByteBuffer(string: body)
            ) {
                #expect($0.status == .forbidden)
            }
            // A form's body (which another site may post without asking) is not taken.
            var form = pageHeaders()
            form[.contentType] = "application/x-www-form-urlencoded"
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: form, body: ByteBuffer(string: body)
            ) {
                #expect($0.status == .unsupportedMediaType)
            }
        }
        #expect(fixture.fileText == PageFixture.userFile)
    }

    @Test("request bodies are bounded; malformed requests get a status and a message")
    func badRequests() async throws {
        let fixture = try PageFixture(
            configuration: SettingsPage.Configuration(token: "test-token", maxBodyBytes: 1024))
        try await fixture.withClient { client in
            let large = #"{"path": "ticker.greeting", "value": "\#(String(repeating: "x", count: 4096))"}"#
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: pageHeaders(), body: ByteBuffer(string: large)
            ) {
                #expect($0.status == .contentTooLarge)
                #expect($0.json[path: "error"] == .string("the request body is larger than 1024 bytes"))
            }
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: pageHeaders(), body: ByteBuffer(string: "{nope")
            ) {
                #expect($0.status == .badRequest)
            }
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: pageHeaders(),
                body: ByteBuffer(string: #"{"path": "a..b", "value": 1}"#)
            ) {
                #expect($0.status == .badRequest)
            }
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: pageHeaders(),
                body: ByteBuffer(string: #"{"path": "nothing.here", "value": 1}"#)
            ) {
                #expect($0.status.code >= 400 && $0.status.code < 500)
                #expect($0.json[path: "error"] != nil)
            }
            try await client.execute(
                uri: "/settings/api/rollback", method: .post, headers: pageHeaders(),
                body: ByteBuffer(string: #"{"revision": "x"}"#)
            ) {
                #expect($0.status == .badRequest)
            }
        }
        #expect(fixture.fileText == PageFixture.userFile)
    }

    @Test("a read-only page shows the settings and refuses every write")
    func readOnly() async throws {
        let fixture = try PageFixture(configuration: SettingsPage.Configuration(token: "test-token", readOnly: true))
        try await fixture.withClient { client in
            try await client.execute(uri: "/settings/api/settings", method: .get, headers: pageHeaders()) { response in
                #expect(response.status == .ok)
                #expect(response.json.setting("ticker.greeting")?[path: "editable"] == .bool(false))
                #expect(response.json[path: "readOnly"] == .bool(true))
            }
            let body = #"{"path": "ticker.greeting", "value": "no"}"#
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: pageHeaders(), body: ByteBuffer(string: body)
            ) {
                #expect($0.status == .forbidden)
            }
            try await client.execute(uri: "/settings/api/value?path=logLevel", method: .delete, headers: pageHeaders())
            {
                #expect($0.status == .forbidden)
            }
        }
        #expect(fixture.fileText == PageFixture.userFile)
    }

    @Test("a value changed meanwhile is a conflict: 409 with who changed it and its value now")
    func conflict() async throws {
        let fixture = try PageFixture()
        try await fixture.root.ticker.greeting.async.set("changed elsewhere")
        try await fixture.withClient { client in
            let body = #"{"path": "ticker.greeting", "value": "mine", "expected": "hi"}"#
            try await client.execute(
                uri: "/settings/api/value", method: .put, headers: pageHeaders(), body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status == .conflict)
                let json = response.json
                #expect(json[path: "current"] == .string("changed elsewhere"))
                #expect(json[path: "conflict"] == .bool(true))
                #expect("\(json[path: "error"] ?? .null)".contains("changed meanwhile by"))
            }
        }
        #expect(fixture.root.ticker.greeting.value == "changed elsewhere")
    }

    @Test("the history lists each change with its author and diff; rollback writes an old revision again")
    func historyAndRollback() async throws {
        let fixture = try PageFixture()
        try await fixture.root.ticker.greeting.async.set("first")
        try await fixture.root.ticker.greeting.async.set("second")
        try await fixture.withClient { client in
            let history = try await client.execute(uri: "/settings/api/history", method: .get, headers: pageHeaders()) {
                $0.json
            }
            guard case .array(let changes)? = history[path: "changes"], let newest = changes.first, changes.count >= 2
            else {
                Issue.record("no history: \(history)")
                return
            }
            #expect(newest[path: "paths[0].path"] == .string("ticker.greeting"))
            #expect(newest[path: "paths[0].old"] == .string("first"))
            #expect(newest[path: "paths[0].new"] == .string("second"))
            #expect(newest[path: "author"] != nil)
            let earlier = try #require(changes[1][path: "revision"])
            try await client.execute(
                uri: "/settings/api/rollback", method: .post, headers: pageHeaders(),
                body: ByteBuffer(string: #"{"revision": \#(earlier)}"#)
            ) {
                #expect($0.status == .ok, "\($0.text)")
            }
        }
        #expect(fixture.root.ticker.greeting.value == "first")
        #expect(fixture.fileText.contains("// said every tick"))
    }

    @Test("an outside edit reaches an open page's event stream")
    func liveUpdates() async throws {
        let fixture = try PageFixture()
        let address = Recorder<String>()
        let server = SettingsPageServer(page: fixture.page, address: .loopback(port: 0)) { url in address.append(url) }
        let serving = Task { try await server.run() }
        defer { serving.cancel() }
        #expect(await eventually(deadline: pageDeadline) { address.count == 1 })
        let url = try #require(address.all.first)
        #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/?token=test-token"))
        let events = try ChildProcess(
            "curl", ["-sN", "--max-time", "30", url.replacingOccurrences(of: "/?token=", with: "/api/events?token=")])
        defer { events.kill(SIGTERM) }
        // The stream opens with the settings as they are.
        #expect(
            await eventually(deadline: pageDeadline) {
                events.output.contains("event: settings") && events.output.contains("\"hi\"")
            })
        // An editor's save: the file replaced whole.
        let edited = PageFixture.userFile.replacingOccurrences(of: "\"hi\"", with: "\"from an editor\"")
        try edited.write(toFile: fixture.settingsFile, atomically: true, encoding: .utf8)
        #expect(
            await eventually(deadline: pageDeadline) { events.output.contains("from an editor") }, "\(events.output)")
        // And a write through the root.
        try await fixture.root.logLevel.async.set(.warning)
        #expect(await eventually(deadline: pageDeadline) { events.output.contains("\"warning\"") })
        // An edit the root cannot take is reported to the page, not applied.
        try "{ broken".write(toFile: fixture.settingsFile, atomically: true, encoding: .utf8)
        #expect(
            await eventually(deadline: pageDeadline) { events.output.contains("event: problem") }, "\(events.output)")
        #expect(fixture.root.logLevel.value == .warning)
        #expect(!events.output.contains("s3cret"))
        serving.cancel()
        #expect(await eventually(deadline: pageDeadline) { fixture.page.openEventStreams == 0 })
    }

    @Test("a server whose task is cancelled stops as a graceful shutdown has it, and logs no error")
    func aCancelledServerStopsQuietly() async throws {
        let fixture = try PageFixture()
        let logs = InMemoryLogHandler()
        let address = Recorder<String>()
        let server = SettingsPageServer(
            page: fixture.page, address: .loopback(port: 0), logger: Logger(label: "page") { _ in logs }
        ) { url in address.append(url) }
        let serving = Task { try await server.run() }
        #expect(await eventually(deadline: pageDeadline) { address.count == 1 })
        let url = try #require(address.all.first)
        let events = try ChildProcess(
            "curl", ["-sN", "--max-time", "60", url.replacingOccurrences(of: "/?token=", with: "/api/events?token=")])
        defer { events.kill(SIGTERM) }
        #expect(await eventually(deadline: pageDeadline) { events.output.contains("event: settings") })

        serving.cancel()
        let stopped = await serving.result
        #expect(throws: Never.self, "it returns") { try stopped.get() }
        #expect(fixture.page.openEventStreams == 0)
        #expect(
            await eventually(deadline: pageDeadline) { events.wait(limit: .zero) != nil },
            "the open page's stream ended, and its connection closed")
        #expect(!logs.entries.contains { $0.level >= .error }, "\(logs.entries.map(\.message))")
    }
}

/// A key of a dictionary root as the page's model lists it.
func listed(_ key: String, _ path: String) -> JSONValue {
    .object(["key": .string(key), "path": .string(path)])
}

/// Settings with a part of every kind the page edits.
struct EveryKind: Codable, Sendable, Equatable {
    struct Endpoint: Codable, Sendable, Equatable { var host = "a"; var port = 1 }
    var tags = ["a", "b"]
    var limits: [String: Int] = ["x": 1]
    var retries: Int? = nil
    var ratio = 0.5
    var enabled = true
    var endpoints = [Endpoint()]
}

@Suite("Settings page: editors and addresses")
struct SettingsPageEditorTests {
    @Test("each kind of part gets its editor: list, dictionary, optional number, toggle, JSON for the rest")
    func editors() async throws {
        let root = RootLens(EveryKind())
        let page = SettingsPage(root, configuration: SettingsPage.Configuration(token: "t"))
        let router = Router()
        router.addRoutes(page.routes(), atPath: "/")
        try await Application(router: router).test(.router) { client in
            let model = try await client.execute(uri: "/api/settings?token=t", method: .get) { $0.json }
            #expect(model.setting("tags")?[path: "editor"] == .string("list"))
            #expect(model.setting("tags")?[path: "items"] == .string("string"))
            #expect(model.setting("limits")?[path: "editor"] == .string("dictionary"))
            #expect(model.setting("limits")?[path: "items"] == .string("integer"))
            #expect(model.setting("retries")?[path: "editor"] == .string("number"))
            #expect(model.setting("retries")?[path: "nullable"] == .bool(true))
            #expect(model.setting("retries")?[path: "reset"] == .string("default"), "back to none")
            #expect(model.setting("ratio")?[path: "reset"] == .string("default"))
            #expect(model.setting("enabled")?[path: "editor"] == .string("toggle"))
            #expect(model.setting("endpoints")?[path: "editor"] == .string("json"))
            let body = #"{"path": "limits", "value": {"x": 2, "y": 3}}"#
            try await client.execute(
                uri: "/api/value", method: .put, headers: pageHeaders(token: "t"), body: ByteBuffer(string: body)
            ) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/api/value?path=limits", method: .delete, headers: pageHeaders(token: "t")) {
                #expect($0.status == .ok)
            }
        }
        #expect(root.value.limits == ["x": 1])
    }

    @Test("a root that is a dictionary shows each entry it holds, under its values' type, and edits it in place")
    func aDictionaryRoot() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("limits.json")
        try #"{"api": 10, "web": 20}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let root = try RootLens(default: [String: Int](), store: FileStore(path: file), watch: false)
        let page = SettingsPage(root, configuration: SettingsPage.Configuration(token: "t"))
        let router = Router()
        router.addRoutes(page.routes(), atPath: "/")
        try await Application(router: router).test(.router) { client in
            let model = try await client.execute(uri: "/api/settings?token=t", method: .get) { $0.json }
            #expect(model.setting("api")?[path: "value"] == .integer(10))
            #expect(model.setting("web")?[path: "editor"] == .string("number"))
            #expect(model.setting("web")?[path: "source.name"] == .string(file))
            #expect(model.setting("web")?[path: "reset"] == .string("remove"), "an entry has no default to go back to")
            try await client.execute(
                uri: "/api/value", method: .put, headers: pageHeaders(token: "t"),
                body: ByteBuffer(string: #"{"path": "web", "value": 25}"#)
            ) { response in
                #expect(response.status == .ok)
            }
        }
        #expect(root.value == ["api": 10, "web": 25])
        #expect(try String(contentsOfFile: file, encoding: .utf8) == #"{"api": 10, "web": 25}"#)
    }

    @Test(
        "a root that is a dictionary lists its keys and a new entry's editor; an entry is added only where none is, and removed"
    )
    func aDictionaryRootsEntriesAreAddedAndRemoved() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("endpoints.jsonc")
        let original = """
            {
              // Where each service is.
              "api": {"host": "api.example", "port": 443}  // the public one
            }

            """
        try original.write(toFile: file, atomically: true, encoding: .utf8)
        let root = try RootLens(
            default: [String: EveryKind.Endpoint](), store: FileStore(path: file, format: JSONCCodec()), watch: false)
        let page = SettingsPage(root, configuration: SettingsPage.Configuration(token: "t"))
        let router = Router()
        router.addRoutes(page.routes(), atPath: "/")
        func put(_ body: String) async throws -> (HTTPResponse.Status, JSONValue) {
            try await Application(router: router).test(.router) { client in
                try await client.execute(
                    uri: "/api/value", method: .put, headers: pageHeaders(token: "t"), body: ByteBuffer(string: body)
                ) { ($0.status, $0.json) }
            }
        }
        try await Application(router: router).test(.router) { client in
            let model = try await client.execute(uri: "/api/settings?token=t", method: .get) { $0.json }
            #expect(model[path: "dictionary.keys"] == .array([listed("api", "api")]))
            #expect(model[path: "dictionary.new.editor"] == .string("json"))
            #expect(model[path: "dictionary.new.editable"] == .bool(true))
            #expect(
                model.setting("api.port")?[path: "constraints"] == .object([:]),
                "an Int's own range is no constraint to show")
            #expect(model.setting("api.port")?[path: "reset"] == nil, "a part of an entry goes only with its entry")
            #expect(
                model[path: "dictionary.new.value"] == .object(["host": .string(""), "port": .integer(0)]),
                "a new entry starts from its type's empty values: \(model[path: "dictionary.new"] ?? .null)")
        }

        // Added where no entry is: a key in quotes, as a path names it.
        let (added, model) = try await put(
            #"{"path": "\"web.internal\"", "value": {"host": "web", "port": 80}, "expected": null}"#)
        #expect(added == .ok)
        #expect(root.value["web.internal"] == EveryKind.Endpoint(host: "web", port: 80))
        #expect(
            model[path: "dictionary.keys"]
                == .array([
                    listed("api", "api"),
                    listed("web.internal", #""web.internal""#),
                ]))
        #expect(model.setting(#""web.internal".port"#)?[path: "value"] == .integer(80))
        // Not where one is: the entry someone added meanwhile stays as they wrote it.
        let (again, refusal) = try await put(
            #"{"path": "api", "value": {"host": "mine", "port": 1}, "expected": null}"#)
        #expect(again == .conflict)
        #expect(refusal[path: "current"] == .object(["host": .string("api.example"), "port": .integer(443)]))
        #expect(root.value["api"]?.host == "api.example")
        let (wrongType, problem) = try await put(#"{"path": "db", "value": {"host": "db"}, "expected": null}"#)
        #expect(wrongType == .unprocessableContent || wrongType == .badRequest, "\(wrongType) \(problem)")
        #expect(root.value["db"] == nil)

        try await Application(router: router).test(.router) { client in
            let removed = try await client.execute(
                uri: "/api/value?path=%22web.internal%22", method: .delete, headers: pageHeaders(token: "t")
            ) { ($0.status, $0.json) }
            #expect(removed.0 == .ok)
            #expect(removed.1[path: "dictionary.keys"] == .array([listed("api", "api")]))
        }
        #expect(root.value.keys.sorted() == ["api"])
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text == original, "an entry added, then removed, leaves the file as it was: \(text)")
    }

    /// The keys `Tests/Browser/settings_page.py` has the page name (its `pathOf`), with the same paths.
    @Test(
        "the paths the page names a new entry's key with are Loupe's own",
        arguments: [
            ("api", "api"), ("plain-key_1", "plain-key_1"), ("ünï", "ünï"), ("web.internal", #""web.internal""#),
            ("a b", #""a b""#), (#"q"t"#, #""q\"t""#), (#"back\slash"#, #""back\\slash""#), ("", #""""#),
            ("x[0]", #""x[0]""#),
        ])
    func entryKeyPaths(key: String, path: String) throws {
        #expect(ValuePath([.key(key)]).description == path)
        #expect(try ValuePath(parsing: path).components == [.key(key)])
    }

    @Test(
        "a document no type describes shows each value it holds, typed by its value; a save writes it in place"
    )
    func anUntypedDocument() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.file("settings.jsonc")
        let text = """
            {
              "$schema": "settings.schema.json",
              // Where it listens.
              "port": 8080,
              "server": {"host": "a.example", "tags": ["x", "y"], "tls": true, "extra": {}},
              "ratio": 0.5
            }

            """
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let root = try RootLens(
            default: JSONValue.object([:]), store: FileStore(path: file, format: JSONCCodec()), watch: false)
        let page = SettingsPage(root, configuration: SettingsPage.Configuration(token: "t"))
        let router = Router()
        router.addRoutes(page.routes(), atPath: "/")
        try await Application(router: router).test(.router) { client in
            let model = try await client.execute(uri: "/api/settings?token=t", method: .get) { $0.json }
            #expect(model[path: "title"] == .string("Settings"), "not the type's name, JSONValue")
            var paths: [String] = []
            if case .array(let groups)? = model[path: "groups"] {
                for case .array(let settings)? in groups.map({ $0[path: "settings"] }) {
                    for case .string(let path)? in settings.map({ $0[path: "path"] }) { paths.append(path) }
                }
            }
            #expect(
                paths == ["port", "ratio", "server.extra", "server.host", "server.tags", "server.tls"],
                "in key order, without the $schema an editor reads: \(paths)")
            let expected: [(String, String, String)] = [
                ("port", "integer", "number"), ("ratio", "number", "number"), ("server.host", "string", "text"),
                ("server.tags", "array", "list"), ("server.tls", "boolean", "toggle"),
                ("server.extra", "object", "json"),
            ]
            for (path, type, editor) in expected {
                #expect(model.setting(path)?[path: "type"] == .string(type), "\(path)")
                #expect(model.setting(path)?[path: "editor"] == .string(editor), "\(path)")
                #expect(model.setting(path)?[path: "reset"] == .string("remove"), "no default to go back to: \(path)")
            }
            #expect(model.setting("server.tags")?[path: "items"] == .string("string"))
            #expect(model.setting("port")?[path: "value"] == .integer(8080))
            #expect(model.setting("port")?[path: "source.name"] == .string(file))
            let body = #"{"path": "port", "value": 9090}"#
            try await client.execute(
                uri: "/api/value", method: .put, headers: pageHeaders(token: "t"), body: ByteBuffer(string: body)
            ) {
                #expect($0.status == .ok, "\($0.text)")
            }
        }
        #expect(
            try String(contentsOfFile: file, encoding: .utf8)
                == text.replacingOccurrences(of: "8080", with: "9090"), "in place, the comment kept")
    }

    @Test("the server listens on a Unix socket when asked")
    func unixSocket() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let socket = directory.file("page.sock")
        let page = SettingsPage(RootLens(EveryKind()), configuration: SettingsPage.Configuration(token: "t"))
        let ready = Recorder<String>()
        let serving = Task {
            try await SettingsPageServer(page: page, address: .unixSocket(socket)) { ready.append($0) }.run()
        }
        defer { serving.cancel() }
        #expect(await eventually(deadline: pageDeadline) { ready.count == 1 })
        #expect(ready.all.first == "unix:\(socket) /?token=t")
        let answer = try ChildProcess(
            "curl",
            [
                "-s", "--max-time", "10", "--unix-socket", socket, "-H", "X-Loupe-Token: t",
                "http://localhost/api/settings",
            ])
        #expect(await eventually(deadline: pageDeadline) { answer.wait(limit: .zero) != nil })
        #expect(answer.output.contains("\"path\":\"tags\""), "\(answer.output)")
    }
}

/// The message of the error `body` throws (a test failure when it throws none).
func refusal(_ body: () throws -> Void) throws -> String {
    do {
        try body()
    } catch {
        return "\(error)"
    }
    Issue.record("nothing was refused")
    return ""
}
#endif
