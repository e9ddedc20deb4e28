#if canImport(Glibc)
import Glibc
#endif
import Foundation
import InMemoryLogging
import Logging
import Loupe
import LoupeTestSupport
import LoupeTesting
import Testing

/// Settings in layers: vendor defaults, the administrator's file and drop-ins, the user's file on top, and
/// locks, all real files in real directories, watched through inotify. The layers' logic on its own (the
/// order of drop-ins, a layer that breaks and is fixed) is in `LayerLogicTests`, in memory.
@Suite("LayeredStore: vendor, admin, drop-ins, user, locks, provenance")
struct LayeredStoreTests {
    struct Settings: Codable, Sendable, Equatable {
        struct Upstream: Codable, Sendable, Equatable {
            var url = "http://127.0.0.1:9000"
            var timeoutSeconds = 5
        }
        var greeting = "hello"
        var logLevel = "info"
        var upstream = Upstream()
        var features: [String: Bool] = [:]
    }

    /// A deployment in a temporary directory: `usr/share/app/settings.json`, `etc/app/settings.json`,
    /// `etc/app/settings.d/`, `etc/app/locks/` and `home/settings.json`.
    struct Deployment {
        let directory: TemporaryDirectory
        var vendor: String { directory.file("usr/share/app/settings.json") }
        var admin: String { directory.file("etc/app/settings.json") }
        var dropIns: String { directory.file("etc/app/settings.d") }
        var locks: String { directory.file("etc/app/locks") }
        var user: String { directory.file("home/settings.json") }

        init() throws {
            directory = try TemporaryDirectory()
            for folder in ["usr/share/app", "etc/app/settings.d", "etc/app/locks", "home"] {
                try FileManager.default.createDirectory(
                    atPath: directory.file(folder), withIntermediateDirectories: true)
            }
        }

        func dropIn(_ name: String) -> String { dropIns + "/" + name }

        var store: LayeredStore {
            LayeredStore(
                layers: [.file(vendor), .file(admin), .directory(dropIns)],
                top: FileStore(path: user), locks: [locks])
        }

        func root(watch: Bool = true) throws -> RootLens<Settings> {
            try RootLens(default: Settings(), store: store, watch: watch)
        }

        func cleanUp() { directory.cleanUp() }
    }

    static func write(_ text: String, to path: String) throws {
        try replaceFile(path, with: text)
    }

    /// The document the file at `path` holds.
    static func stored(_ path: String) throws -> JSONValue {
        try JSONValue(parsing: String(contentsOfFile: path, encoding: .utf8))
    }

    @Test func theValueIsTheDefaultsMergedWithEveryLayerInOrder() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write(
            #"{"greeting": "vendor", "logLevel": "notice", "upstream": {"timeoutSeconds": 30}, "features": {"a": true, "b": true}}"#,
            to: site.vendor)
        try Self.write(#"{"greeting": "admin", "upstream": {"url": "https://admin.example"}}"#, to: site.admin)
        // Name order, bytewise: 10 before 20 before 9; hidden and other extensions are not layers.
        try Self.write(#"{"logLevel": "debug"}"#, to: site.dropIn("10-first.json"))
        try Self.write(#"{"logLevel": "warning", "features": {"b": null}}"#, to: site.dropIn("20-second.json"))
        try Self.write(#"{"greeting": "nine"}"#, to: site.dropIn("9-last.json"))
        try Self.write(#"{"greeting": "hidden"}"#, to: site.dropIn(".hidden.json"))
        try Self.write(#"{"greeting": "text"}"#, to: site.dropIn("notes.txt"))
        try Self.write(#"{"upstream": {"timeoutSeconds": 7}}"#, to: site.user)

        let root = try site.root(watch: false)
        var expected = Settings()
        expected.greeting = "nine"
        expected.logLevel = "warning"
        expected.upstream = .init(url: "https://admin.example", timeoutSeconds: 7)
        expected.features = ["a": true]
        #expect(root.value == expected)

        let greeting = try root.provenance(ofPath: "greeting")
        #expect(greeting.source == .layer(site.dropIn("9-last.json")))
        #expect(greeting.overrides == [.layer(site.admin), .layer(site.vendor), .defaultValue])
        #expect(greeting.value == .string("nine"))
        let timeout = try root.provenance(ofPath: "upstream.timeoutSeconds")
        #expect(timeout.source == .layer(site.user))
        #expect(timeout.overrides == [.layer(site.vendor), .defaultValue])
        let beta = try root.provenance(ofPath: "features.b")
        #expect(beta.source == .layer(site.dropIn("20-second.json")))
        #expect(beta.value == nil)
        let url = try root.provenance(ofPath: "upstream.url")
        #expect(url.source == .layer(site.admin))
        #expect(
            url.description == #"upstream.url = "https://admin.example" from \#(site.admin) line 1 (overrides default)"#
        )
        #expect(try root.provenance(ofPath: "features.a").overrides == [])

        let layers = try root.layers()
        #expect(
            layers.map(\.source) == [
                .defaultValue, .layer(site.vendor), .layer(site.admin), .layer(site.dropIn("10-first.json")),
                .layer(site.dropIn("20-second.json")), .layer(site.dropIn("9-last.json")), .layer(site.user),
            ])
        #expect(layers.map(\.isWritable) == [false, false, false, false, false, false, true])
        #expect(layers.last?.document == (try JSONValue(parsing: #"{"upstream": {"timeoutSeconds": 7}}"#)))
    }

    @Test func provenanceNamesTheLineOfTheFileThatSetsAValueAsLastReadOrWritten() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write(
            "{\n  \"greeting\": \"vendor\",\n  \"upstream\": {\n    \"timeoutSeconds\": 30\n  }\n}\n", to: site.vendor)
        try Self.write(
            "# the site's\n\n[upstream]\n# nearer\nurl = \"https://site.example\"\n", to: site.dropIn("10-site.toml"))
        try Self.write("// mine\n{\n  \"logLevel\": \"debug\"\n}\n", to: site.user)
        let store = LayeredStore(
            layers: [.file(site.vendor), .directory(site.dropIns, format: TOMLCodec())],
            top: FileStore(path: site.user, format: JSONCCodec()))
        let root = try RootLens(default: Settings(), store: store, watch: false)

        let timeout = try root.provenance(ofPath: "upstream.timeoutSeconds")
        #expect(timeout.source == .layer(site.vendor) && timeout.position?.line == 4, "\(timeout)")
        let url = try root.provenance(ofPath: "upstream.url")
        #expect(url.source == .layer(site.dropIn("10-site.toml")) && url.position?.line == 5, "\(url)")
        let level = try root.provenance(ofPath: "logLevel")
        #expect(level.position?.line == 3)
        #expect(level.description == #"logLevel = "debug" from \#(site.user) line 3 (overrides default)"#)
        #expect(try root.provenance(ofPath: "features").position == nil, "a default is in no file")
        // Each path's line, one reading of each file.
        let each = try root.provenance(ofEach: [ValuePath(parsing: "upstream.url"), ValuePath(parsing: "greeting")])
        #expect(each.map { $0.position?.line } == [5, 2])

        // After the root's own write, the line is where the file holds the value now.
        try root.greeting.set("mine")
        let greeting = try root.provenance(ofPath: "greeting")
        let lines = try String(contentsOfFile: site.user, encoding: .utf8).components(separatedBy: "\n")
        let line = try #require(greeting.position?.line)
        #expect(greeting.source == .layer(site.user) && lines[line - 1].contains(#""greeting": "mine""#), "\(lines)")
    }

    @Test func aWriteStoresOnlyThePatchOverTheLayersBelowSoALaterAdminChangeStillReachesTheUser() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write(#"{"greeting": "vendor", "upstream": {"timeoutSeconds": 30}}"#, to: site.vendor)
        try Self.write(#"{"upstream": {"url": "https://one.example"}}"#, to: site.admin)
        let root = try site.root(watch: false)
        try root.greeting.set("mine")
        // The same value as below is not stored: the user does not override it.
        try root.upstream.timeoutSeconds.set(30)
        #expect(try Self.stored(site.user) == JSONValue(parsing: #"{"greeting": "mine"}"#))

        try Self.write(
            #"{"upstream": {"url": "https://two.example", "timeoutSeconds": 9}, "greeting": "admin"}"#, to: site.admin)
        try root.reload()
        #expect(root.value.upstream == .init(url: "https://two.example", timeoutSeconds: 9))
        #expect(root.value.greeting == "mine")

        // Unset takes the value of the layers below again, and stores nothing for it.
        try root.reset(atPath: "greeting")
        #expect(root.value.greeting == "admin")
        #expect(try Self.stored(site.user) == JSONValue.object([:]))
        // Removing the user's file leaves the layers below.
        try root.greeting.set("again")
        try root.remove()
        #expect(root.value.greeting == "admin")
        #expect(!FileManager.default.fileExists(atPath: site.user))
    }

    @Test func keysALowerLayerHoldsThatTheTypeDoesNotKnowStayThereAndAreNotCopiedUp() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write(#"{"newerSetting": {"x": 1}, "upstream": {"retries": 3}}"#, to: site.admin)
        try Self.write(#"{"mine": "kept"}"#, to: site.user)
        let root = try site.root(watch: false)
        try root.greeting.set("changed")
        #expect(try Self.stored(site.user) == JSONValue(parsing: #"{"mine": "kept", "greeting": "changed"}"#))
        // Removing an entry that a lower layer holds stores its removal.
        try Self.write(#"{"features": {"beta": true, "gamma": true}}"#, to: site.vendor)
        try root.reload()
        try root.update { $0.features["beta"] = nil }
        #expect(
            try Self.stored(site.user)
                == JSONValue(parsing: #"{"mine": "kept", "greeting": "changed", "features": {"beta": null}}"#))
        #expect(root.value.features == ["gamma": true])
    }

    @Test func anEditInAnyLayerReachesObserversLikeALocalUpdate() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write(#"{"greeting": "vendor"}"#, to: site.vendor)
        try Self.write(#"{"logLevel": "notice"}"#, to: site.user)
        let root = try site.root()
        let seen = Locked<[Settings]>([])
        let token = root.observe { value in seen.withLock { $0.append(value) } }
        defer { token.cancel() }

        try Self.write(#"{"greeting": "admin"}"#, to: site.admin)  // a layer that did not exist
        #expect(eventually { root.value.greeting == "admin" })
        try Self.write(#"{"greeting": "drop-in"}"#, to: site.dropIn("50-site.json"))  // a new drop-in
        #expect(eventually { root.value.greeting == "drop-in" })
        try Self.write(#"{"greeting": "drop-in 2"}"#, to: site.dropIn("50-site.json"))  // an edited drop-in
        #expect(eventually { root.value.greeting == "drop-in 2" })
        #expect(unlink(site.dropIn("50-site.json")) == 0)  // a drop-in removed
        #expect(eventually { root.value.greeting == "admin" })
        try Self.write(#"{"greeting": "vendor 2"}"#, to: site.vendor)  // overridden: no change to observe
        try Self.write(#"{"logLevel": "error"}"#, to: site.user)  // the top layer, edited by hand
        #expect(eventually { root.value.logLevel == "error" })
        #expect(root.value.greeting == "admin")
        #expect(seen.withLock { $0.map(\.greeting) }.contains("drop-in 2"))
    }

    @Test(
        "a layer saved in place at the size it had, in the clock tick of its last change (its identity as it was), reaches a watching root"
    )
    func aLayerSavedInPlaceWithItsIdentityIsSeen() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write(#"{"greeting": "admin 1"}"#, to: site.admin)
        let root = try site.root()
        #expect(root.value.greeting == "admin 1")
        var before = stat()
        #expect(stat(site.admin, &before) == 0)
        // Truncated and written again, as an editor that saves in place does; then the modification time it
        // had, as a save within the same tick of the kernel's clock leaves it.
        let descriptor = open(site.admin, O_WRONLY | O_TRUNC)
        #expect(descriptor >= 0)
        let text = #"{"greeting": "admin 2"}"#
        #expect(text.withCString { Glibc.write(descriptor, $0, strlen($0)) } == text.utf8.count)
        close(descriptor)
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, site.admin, &times, 0) == 0)
        var after = stat()
        #expect(stat(site.admin, &after) == 0)
        #expect(after.st_ino == before.st_ino && after.st_size == before.st_size)
        #expect(eventually { root.value.greeting == "admin 2" }, "the root holds \(root.value.greeting)")
        // And an update through the top layer goes on over the layer as it is now.
        try root.update { $0.logLevel = "debug" }
        #expect(root.value.greeting == "admin 2")
    }

    @Test func aLockedPathKeepsTheValueOfTheLayersBelowTheTop() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write(#"{"upstream": {"url": "https://admin.example"}}"#, to: site.admin)
        try Self.write(
            #"{"upstream": {"url": "https://mine.example", "timeoutSeconds": 2}, "greeting": "mine"}"#, to: site.user)
        try Self.write(
            "# the administrator's locks\n\nupstream.url   # users keep ours\n/logLevel\n", to: site.locks + "/00-admin"
        )
        try Self.write("upstream.url\n", to: site.locks + "/.hidden")

        let root = try site.root()
        // The value the user's file held at the locked path is ignored; the rest of it applies.
        #expect(root.value.upstream == .init(url: "https://admin.example", timeoutSeconds: 2))
        #expect(root.value.greeting == "mine")
        #expect(
            root.locks == [
                SettingsLock(path: "upstream.url", file: site.locks + "/00-admin", line: 3),
                SettingsLock(path: "logLevel", file: site.locks + "/00-admin", line: 4),
            ])

        let before = try String(contentsOfFile: site.user, encoding: .utf8)
        #expect {
            try root.upstream.url.set("https://other.example")
        } throws: { error in
            guard let error = error as? SettingsError, error.code == .locked else { return false }
            return error.path == "upstream.url" && error.reason.contains(site.locks + "/00-admin")
                && error.reason.contains("line 3")
        }
        #expect(throws: SettingsError.self) { try root.update { $0.upstream = .init(url: "x", timeoutSeconds: 1) } }
        #expect(throws: SettingsError.self) { try root.set(atPath: "logLevel", to: .string("debug")) }
        #expect(try String(contentsOfFile: site.user, encoding: .utf8) == before)
        #expect(root.value.upstream.url == "https://admin.example")
        // Elsewhere the user writes as usual.
        try root.upstream.timeoutSeconds.set(3)
        #expect(root.value.upstream.timeoutSeconds == 3)
        // The user's value at the locked path stays in the user's file, ignored while the lock holds.
        #expect(try Self.stored(site.user)[path: "upstream.url"] == .string("https://mine.example"))
        let provenance = try root.provenance(ofPath: "upstream.url")
        #expect(provenance.source == .layer(site.admin))
        #expect(provenance.lock?.line == 3)

        // A lock added while the program runs applies at once.
        try Self.write("greeting\n", to: site.locks + "/10-more")
        #expect(eventually { root.value.greeting == "hello" })
        #expect(throws: SettingsError.self) { try root.greeting.set("mine again") }
        // A lock removed lets the user's value through again.
        #expect(unlink(site.locks + "/10-more") == 0)
        #expect(eventually { root.value.greeting == "mine" })
    }

    @Test func numbersAnAdministratorSpellsDifferentlyAreNeitherCopiedUpNorTakenForALockedWrite() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write(#"{"upstream": {"timeoutSeconds": 30.0}}"#, to: site.admin)
        try Self.write("upstream\n", to: site.locks + "/admin")
        let root = try site.root(watch: false)
        try root.greeting.set("mine")
        #expect(try Self.stored(site.user) == JSONValue(parsing: #"{"greeting": "mine"}"#))
        #expect(root.value.upstream.timeoutSeconds == 30)
    }

    @Test func aTopLayerStoringTheWholeValueIsRefusedOnlyWhereItChangesALockedPath() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write(#"{"upstream": {"url": "https://admin.example"}}"#, to: site.admin)
        try Self.write("upstream.url\n", to: site.locks + "/admin")
        let root = try RootLens(default: Settings(), store: site.store, storing: .wholeValue, watch: false)
        try root.greeting.set("mine")
        #expect(try Self.stored(site.user)[path: "upstream.url"] == .string("https://admin.example"))
        #expect(throws: SettingsError.self) { try root.upstream.url.set("https://mine.example") }
    }

    /// Lock files written on Windows or an old Mac: CRLF and CR end lines as LF does ("\r\n" is one Swift
    /// Character, and a split on "\n" saw one line).
    @Test func crlfAndCRLockFilesLockEveryLine() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write(
            #"{"upstream": {"url": "https://mine.example"}, "greeting": "mine", "logLevel": "debug"}"#, to: site.user)
        try Self.write("# the administrator's locks\r\nupstream.url\r\ngreeting\r\n", to: site.locks + "/00-crlf")
        try Self.write("# old Mac\rlogLevel\r", to: site.locks + "/10-cr")
        let root = try site.root(watch: false)
        #expect(root.locks.map(\.path) == ["upstream.url", "greeting", "logLevel"])
        #expect(root.locks.map(\.line) == [2, 3, 2])
        #expect(
            root.value.upstream.url == Settings().upstream.url && root.value.greeting == "hello"
                && root.value.logLevel == "info")
    }

    /// A lock line that names no setting of the type (a misspelled path) locks nothing: a warning names its
    /// file and line, once.
    @Test func aLockNamingNoSettingIsAWarningNamingItsFileAndLine() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write("upstream.url\nupstraem.url\nfeatures.beta\n/\n", to: site.locks + "/admin")
        let logs = InMemoryLogHandler()
        let root = try RootLens(
            default: Settings(), store: site.store, watch: false, logger: Logger(label: "test") { _ in logs })
        try root.reload()
        let warnings = logs.entries.filter { "\($0.message)".contains("a lock names no setting") }
        #expect(warnings.count == 1, "\(logs.entries.map(\.message))")
        #expect(
            warnings.first.map {
                "\($0.metadata)".contains(site.locks + "/admin:2") && "\($0.metadata)".contains("upstraem.url")
            } == true)
    }

    /// dconf's root lock, `/`, locks the whole document: the user's file is ignored, and every write refused.
    @Test func theRootLockLocksEverything() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write(#"{"greeting": "admin"}"#, to: site.admin)
        try Self.write(#"{"greeting": "mine", "logLevel": "debug"}"#, to: site.user)
        try Self.write("/\n", to: site.locks + "/all")
        let root = try site.root(watch: false)
        #expect(root.value.greeting == "admin" && root.value.logLevel == "info")
        let before = try String(contentsOfFile: site.user, encoding: .utf8)
        #expect {
            try root.logLevel.set("warning")
        } throws: { error in
            (error as? SettingsError)?.code == .locked
        }
        #expect(try String(contentsOfFile: site.user, encoding: .utf8) == before)
    }

    @Test func aLockFileThatDoesNotParseIsAnErrorNamingItsLine() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write("upstream.url\nupstream..url\n", to: site.locks + "/admin")
        #expect {
            try site.root(watch: false)
        } throws: { error in
            "\(error)".contains(site.locks + "/admin") && "\(error)".contains("line 2")
        }
    }

    @Test func aSingleLockFileAndDropInsBehindKubernetesSymlinks() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        // A ConfigMap mounted as the drop-in directory: each file is a link through `..data`, which the
        // kubelet swaps to a new timestamped directory on each update.
        let mount = site.directory.file("configmap")
        try FileManager.default.createDirectory(atPath: mount + "/..2026_01", withIntermediateDirectories: true)
        try Self.write(#"{"greeting": "first"}"#, to: mount + "/..2026_01/site.json")
        #expect(symlink("..2026_01", mount + "/..data") == 0)
        #expect(symlink("..data/site.json", mount + "/site.json") == 0)
        let lockFile = site.directory.file("locks.list")
        try Self.write("features\n", to: lockFile)
        let store = LayeredStore(layers: [.directory(mount)], top: FileStore(path: site.user), locks: [lockFile])
        let root = try RootLens(default: Settings(), store: store)
        #expect(root.value.greeting == "first")
        #expect(throws: SettingsError.self) { try root.update { $0.features["x"] = true } }
        for (index, greeting) in ["second", "third", "fourth", "fifth"].enumerated() {
            let next = "..2026_0\(index + 2)"
            try FileManager.default.createDirectory(atPath: mount + "/" + next, withIntermediateDirectories: true)
            try Self.write(#"{"greeting": "\#(greeting)"}"#, to: mount + "/" + next + "/site.json")
            #expect(symlink(next, mount + "/..data_tmp") == 0)
            #expect(rename(mount + "/..data_tmp", mount + "/..data") == 0)
            #expect(eventually { root.value.greeting == greeting }, "swap \(index + 1)")
        }
    }

    @Test func aReadOnlyStoreAsALayer() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        let fleet = MemoryStore()
        let fleetDocument = try JSONValue(parsing: #"{"upstream": {"url": "https://fleet.example"}}"#)
        try fleet.overwrite(with: fleetDocument)
        let store = LayeredStore(layers: [.store(fleet), .file(site.admin)], top: FileStore(path: site.user))
        let root = try RootLens(default: Settings(), store: store, watch: false)
        #expect(root.value.upstream.url == "https://fleet.example")
        #expect(try root.provenance(ofPath: "upstream.url").source == .layer(fleet.description))
        try root.greeting.set("mine")
        #expect(try fleet.storedDocument() == fleetDocument)
        #expect(store.description == "JSON file \(site.user) over 2 layers")
        // Locks without layers, and neither: the top's own name says which file a log line is about.
        #expect(
            LayeredStore(layers: [], top: FileStore(path: site.user), locks: [site.locks]).description
                == "JSON file \(site.user) with locks")
        #expect(LayeredStore(layers: [], top: FileStore(path: site.user)).description == "JSON file \(site.user)")
    }

    @Test func aLayeredStorePassesTheConformanceSuiteAsItsTopLayer() async throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try await StoreConformanceTest { site.store }.run()
    }

    @Test func migrationsRunOnEveryLayerFromItsOwnStamp() throws {
        let site = try Deployment()
        defer { site.cleanUp() }
        try Self.write(#"{"hello": "vendor"}"#, to: site.vendor)  // version 1: the old name
        try Self.write(#"{"$version": 2, "greeting": "admin"}"#, to: site.admin)
        try Self.write(#"{"hello": "mine"}"#, to: site.dropIn("10-old.json"))
        let root = try RootLens(
            default: Settings(), store: site.store, version: 2,
            migrations: [2: { try $0.move(from: "hello", to: "greeting") }], watch: false)
        #expect(root.value.greeting == "mine")
        #expect(
            try root.provenance(ofPath: "greeting").overrides == [
                .layer(site.admin), .layer(site.vendor), .defaultValue,
            ])
        // Lower layers are never written.
        #expect(try String(contentsOfFile: site.vendor, encoding: .utf8) == #"{"hello": "vendor"}"#)
    }
}
