import Foundation
import Loupe
import LoupeTestSupport
import LoupeTesting
import Testing

/// The layers' logic on an ``InMemoryFileSystem``: which files are layers and in which order, what a layer
/// that breaks does and what fixing it does, locks that come and go. The in-memory file system reports a
/// change before the write returns, so each step is checked at once: no disk, no waiting. What only a disk
/// shows (inotify, symbolic link swaps on disk, permissions) is in `LayeredStoreTests`.
@Suite("Layers' logic, on an in-memory file system")
struct LayerLogicTests {
    struct Settings: Codable, Sendable, Equatable {
        var greeting = "hello"
        var logLevel = "info"
        var timeoutSeconds = 5
    }

    /// `/etc/app/settings.json`, `/etc/app/settings.d/` and `/etc/app/locks/` in memory, under a top
    /// layer in memory.
    struct Site {
        let files = InMemoryFileSystem()
        let top = MemoryStore()
        let admin = "/etc/app/settings.json"
        let dropIns = "/etc/app/settings.d"
        let locks = "/etc/app/locks"

        init() {
            files.createDirectory(dropIns)
            files.createDirectory(locks)
        }

        func dropIn(_ name: String) -> String { dropIns + "/" + name }

        func root(watch: Bool = true) throws -> RootLens<Settings> {
            let store = LayeredStore(
                layers: [.file(admin), .directory(dropIns)], top: top, locks: [locks], fileSystem: files)
            return try RootLens(default: Settings(), store: store, watch: watch)
        }

        /// The sources of the root's layers above the defaults and below the top.
        func layerSources(_ root: RootLens<Settings>) throws -> [String] {
            try root.layers().compactMap { layer in
                guard case .layer(let source) = layer.source, !layer.isWritable else { return nil }
                return source
            }
        }
    }

    @Test func dropInsAreLayersInBytewiseNameOrderAndOnlyVisibleFilesWithTheFormatsExtension() throws {
        let site = Site()
        site.files.write(#"{"greeting": "admin"}"#, to: site.admin)
        for name in ["9-last.json", "10-first.json", "20-second.json", "Zeta.json", "alpha.json", "é.json"] {
            site.files.write(#"{"greeting": "\#(name)"}"#, to: site.dropIn(name))
        }
        site.files.write(#"{"greeting": "hidden"}"#, to: site.dropIn(".hidden.json"))  // editors' and Loupe's own
        site.files.write(#"{"greeting": "text"}"#, to: site.dropIn("notes.txt"))  // another extension
        site.files.write(#"{"greeting": "nested"}"#, to: site.dropIn("30-folder.json/inner.json"))  // a directory

        let root = try site.root(watch: false)
        // Bytewise, as systemd orders drop-ins: digits, then capitals, then small letters, then what is
        // past ASCII ("é" is 0xC3 0xA9).
        #expect(
            try site.layerSources(root) == [site.admin]
                + ["10-first.json", "20-second.json", "9-last.json", "Zeta.json", "alpha.json", "é.json"].map(
                    site.dropIn))
        #expect(root.value.greeting == "é.json")
        #expect(try root.provenance(ofPath: "greeting").overrides.first == .layer(site.dropIn("alpha.json")))
    }

    @Test func aDropInThatAppearsChangesOrGoesIsTakenBeforeTheWriteReturnsAndObservedInOrder() throws {
        let site = Site()
        site.files.write(#"{"greeting": "admin"}"#, to: site.admin)
        let root = try site.root()
        let seen = Locked<[String]>([])
        let token = root.greeting.observe { greeting in seen.withLock { $0.append(greeting) } }
        defer { token.cancel() }

        site.files.write(#"{"greeting": "site"}"#, to: site.dropIn("50-site.json"))
        #expect(root.value.greeting == "site")
        site.files.write(#"{"greeting": "site 2"}"#, to: site.dropIn("50-site.json"))
        #expect(root.value.greeting == "site 2")
        site.files.write(#"{"greeting": "earlier"}"#, to: site.dropIn("40-earlier.json"))  // below 50: hidden by it
        #expect(root.value.greeting == "site 2")
        site.files.remove(site.dropIn("50-site.json"))
        #expect(root.value.greeting == "earlier")
        site.files.remove(site.dropIns)  // the whole directory: no drop-ins
        #expect(root.value.greeting == "admin")
        #expect(seen.withLock { $0 } == ["site", "site 2", "earlier", "admin"])
    }

    @Test func aDropInDirectoryBehindALinkFollowsTheLinkWhenItIsSwapped() throws {
        // Kubernetes mounts a ConfigMap as `..data -> ..2026_11_25_10_00_00.1`, swapped by rename.
        let site = Site()
        site.files.remove(site.dropIns)
        site.files.write(#"{"greeting": "first"}"#, to: "/etc/app/..v1/10-site.json")
        site.files.link("/etc/app/..data", to: "..v1")
        site.files.link(site.dropIns, to: "..data")
        let root = try site.root()
        #expect(root.value.greeting == "first")

        site.files.write(#"{"greeting": "second"}"#, to: "/etc/app/..v2/10-site.json")
        #expect(root.value.greeting == "first", "a version not yet linked is not read")
        site.files.link("/etc/app/..data", to: "..v2")
        #expect(root.value.greeting == "second")
    }

    @Test func aLayerThatBreaksKeepsItsLastGoodDocumentUntilItIsFixedAndTheOthersKeepWorking() throws {
        let site = Site()
        site.files.write(#"{"greeting": "good"}"#, to: site.dropIn("10-a.json"))
        site.files.write(#"{"logLevel": "notice"}"#, to: site.dropIn("20-b.json"))
        let root = try site.root()
        let errors = Locked<[SettingsError]>([])
        let token = root.observeErrors { error in errors.withLock { $0.append(error as! SettingsError) } }
        defer { token.cancel() }

        // Does not parse: reported once, naming the file; the last good document stays.
        site.files.write(#"{"greeting": "#, to: site.dropIn("10-a.json"))
        #expect(errors.withLock { $0.map(\.code) } == [.corrupt])
        #expect(errors.withLock { $0.first?.store } == "JSON file \(site.dropIn("10-a.json"))")
        #expect(root.value.greeting == "good")

        // Another layer's change still applies, over the broken layer's last good document.
        site.files.write(#"{"logLevel": "debug"}"#, to: site.dropIn("20-b.json"))
        #expect(root.value.logLevel == "debug")
        #expect(root.value.greeting == "good")

        // Parses but does not decode: reported naming the file and the path.
        site.files.write(#"{"timeoutSeconds": "soon"}"#, to: site.admin)
        #expect(errors.withLock { $0.count } == 2, "\(errors.withLock { $0 })")
        #expect(
            errors.withLock { $0.last } == failure(.corrupt, at: "timeoutSeconds", store: "JSON file \(site.admin)"))
        #expect(root.value.timeoutSeconds == 5)

        // Updates work over the last good layers, and store only the top's patch.
        try root.logLevel.set("error")
        #expect(try site.top.load().document == JSONValue(parsing: #"{"logLevel": "error"}"#))

        // A program starting now refuses settings it cannot read, naming the layer; so does a reload.
        let unparsable = failure(.corrupt, store: "JSON file \(site.dropIn("10-a.json"))")
        #expect(throws: unparsable) { try site.root(watch: false) }
        #expect(throws: unparsable) { try root.reload() }
        site.files.write(#"{"greeting": "fixed"}"#, to: site.dropIn("10-a.json"))
        let undecodable = failure(.corrupt, at: "timeoutSeconds", store: "JSON file \(site.admin)")
        #expect(throws: undecodable) { try site.root(watch: false) }
        #expect(throws: undecodable) { try root.reload() }
        #expect(root.value.greeting == "fixed")

        // Fixed: each layer takes its new document, and nothing more is reported.
        site.files.write(#"{"timeoutSeconds": 9}"#, to: site.admin)
        #expect(root.value == Settings(greeting: "fixed", logLevel: "error", timeoutSeconds: 9))
        #expect(errors.withLock { $0.count } == 2)
        #expect(try site.root(watch: false).value == root.value)
    }

    @Test func aLockThatAppearsAppliesAtOnceAndOneThatGoesLetsTheTopThroughAgain() throws {
        let site = Site()
        let root = try site.root()
        try root.greeting.set("mine")

        site.files.write("greeting   # users keep the vendor's\n", to: site.locks + "/10-greeting")
        site.files.write("logLevel\n", to: site.locks + "/10-greeting~")  // an editor's backup: not a lock file
        #expect(root.value.greeting == "hello")
        #expect(root.locks == [SettingsLock(path: "greeting", file: site.locks + "/10-greeting", line: 1)])
        #expect(throws: failure(.locked, at: "greeting")) { try root.greeting.set("mine again") }
        try root.logLevel.set("debug")
        #expect(try site.top.load().document == JSONValue(parsing: #"{"greeting": "mine", "logLevel": "debug"}"#))

        site.files.write("greeting\nline two is not a path: [\n", to: site.locks + "/10-greeting")
        #expect(root.value.greeting == "hello", "a lock file that breaks keeps its last good locks")
        site.files.remove(site.locks + "/10-greeting")
        #expect(root.value.greeting == "mine")
        #expect(root.locks.isEmpty)
    }

    @Test func aFileASecretReferenceReadsIsReportedThroughTheStoresWatchWhileAReferenceReadsIt() throws {
        let site = Site()
        let secret = "/run/secrets/greeting"
        site.files.write("hello\n", to: secret)
        site.files.write(#"{"greeting": {"$secret": "file:\#(secret)"}}"#, to: site.admin)
        let store = LayeredStore(layers: [.file(site.admin)], top: site.top, fileSystem: site.files)
        let read = try store.load().token
        let reports = Locked(0)
        let watch = try #require(try store.watch { reports.withLock { $0 += 1 } })
        defer { watch.cancel() }

        site.files.write("rotated\n", to: secret)
        #expect(reports.withLock { $0 } == 1)
        #expect(try store.load().token != read)
        // A save over the secret as it was read is a conflict: the root loads the new one and updates again.
        #expect(throws: failure(.conflict, store: store.description)) { try store.save(.object([:]), replacing: read) }

        // A file that no reference reads any more is not reported.
        site.files.write(#"{"greeting": "plain"}"#, to: site.admin)
        let plain = try store.load().token
        let reported = reports.withLock { $0 }
        site.files.write("rotated again\n", to: secret)
        #expect(reports.withLock { $0 } == reported)
        #expect(try store.load().token == plain)
    }
}

/// The in-memory double answers as the disk does, for what the layers ask of a file system: the same
/// steps, on both, give the same answers.
@Suite("InMemoryFileSystem answers as the disk does")
struct InMemoryFileSystemTests {
    /// A file system a test can change: the disk under a temporary directory, or memory.
    struct Changeable {
        let readable: any ReadableFileSystem
        let root: String
        let write: (String, String) throws -> Void
        let link: (String, String) throws -> Void
        let remove: (String) throws -> Void
    }

    static func disk(_ directory: TemporaryDirectory) -> Changeable {
        Changeable(
            readable: LocalFileSystem(), root: directory.path,
            write: { text, path in
                try FileManager.default.createDirectory(
                    atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try replaceFile(path, with: text)
            },
            link: { path, target in
                try? FileManager.default.removeItem(atPath: path)
                try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            },
            remove: { try FileManager.default.removeItem(atPath: $0) })
    }

    static func memory() -> Changeable {
        let files = InMemoryFileSystem()
        return Changeable(
            readable: files, root: "/tmp/in-memory",
            write: { files.write($0, to: $1) }, link: { files.link($0, to: $1) }, remove: { files.remove($0) })
    }

    /// The answers to every question the layers ask, after the same steps.
    static func answers(_ system: Changeable) throws -> [String] {
        let base = system.root
        let files = system.readable
        try system.write(#"{"a": 1}"#, "\(base)/d/v1/10-a.json")
        try system.write(#"{"b": 2}"#, "\(base)/d/v1/.hidden.json")
        try system.link("\(base)/d/data", "v1")
        try system.link("\(base)/d/settings.d", "data")
        var answers: [String] = []
        func ask(_ path: String) {
            let read = Result {
                try files.readSettled(path, maximumSize: 1 << 20) { String(decoding: $0, as: UTF8.self) }?.0
            }
            let readAnswer =
                switch read {
                case .success(let text): text ?? "no file"
                case .failure(let error): "\((error as? SettingsError)?.code.description ?? "\(error)")"
                }
            answers.append(
                [
                    String(describing: try? files.resolvingSymlinks(path)).replacingOccurrences(of: base, with: "BASE"),
                    "\((try? files.entries(of: path))??.sorted() ?? [])", "\(files.isRegularFile(path))",
                    "\(files.isDirectory(path))",
                    "\((try? files.identity(of: path)) != nil)",
                    readAnswer.replacingOccurrences(of: base, with: "BASE"),
                ].joined(separator: " | "))
        }
        for path in [
            "\(base)/d/settings.d", "\(base)/d/settings.d/10-a.json", "\(base)/d/missing.json", "\(base)/d/data",
        ] { ask(path) }
        let before = try files.identity(of: "\(base)/d/settings.d/10-a.json")
        try system.write(#"{"a": 3}"#, "\(base)/d/v2/10-a.json")
        try system.link("\(base)/d/data", "v2")
        answers.append("identity changed: \(try files.identity(of: "\(base)/d/settings.d/10-a.json") != before)")
        ask("\(base)/d/settings.d/10-a.json")
        try system.remove("\(base)/d/v2")
        ask("\(base)/d/settings.d/10-a.json")
        ask("\(base)/d/settings.d")
        return answers
    }

    @Test func theSameStepsGiveTheSameAnswersInMemoryAndOnDisk() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let onDisk = try Self.answers(Self.disk(directory))
        let inMemory = try Self.answers(Self.memory())
        #expect(inMemory.map { $0.replacingOccurrences(of: "/tmp/in-memory", with: "BASE") } == onDisk)
    }
}
