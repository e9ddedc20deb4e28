import AsyncHTTPClient
import MallocInterposerSwift
import Foundation
import Loupe
import Configuration
import LoupeSOPS
import LoupeYAML

/// `--profile NAME`: loops one case for a profiler (perf record, callgrind).
func runProfile(_ name: String, _ bench: Bench) throws {
    let scratch = bench.scratch
    switch name {
    case "read":
        let port = RootLens(Deep()).inner.leaf.port
        for _ in 0..<20_000_000 { blackHole(port.value) }
    case "inline-read":
        // A lens derived and read in one expression, as the reads area's row against ConfigReader has it.
        let root = RootLens(Deep())
        let start = ContinuousClock.now
        for _ in 0..<2_000_000 { blackHole(root.inner.leaf.port.value) }
        print("inline read: \((ContinuousClock.now - start) / 2_000_000) each")
    case "read2":
        let port = RootLens(Deep()).inner.leaf.port
        for _ in 0..<5 { blackHole(throughput(threads: 2, operations: 10_000_000) { blackHole(port.value) }) }
    case "readers-ratio":
        let port = RootLens(Deep()).inner.leaf.port
        let (readers, machine) = compareThreads(operations: 2_000_000) { blackHole(port.value) }
        print(
            "2 readers: \(rate(median(readers.loupe))) vs \(rate(median(readers.baseline))) on 1 thread: \(format(readers.ratio))×",
            zip(readers.loupe, readers.baseline).map { format($0 / $1) })
        print(
            "the machine: 2 threads of independent work do \(format(machine.ratio))× one",
            zip(machine.loupe, machine.baseline).map { format($0 / $1) })
    case "read-ratio":
        let port = RootLens(Deep()).inner.leaf.port
        let bare = RWLocked(Deep())
        let keyPath = \Deep.inner.leaf.port
        let n = 2_000_000
        let reads = compare(
            operations: n,
            loupe: { for _ in 0..<n { blackHole(port.value) } },
            baseline: { for _ in 0..<n { blackHole(bare.read { $0[keyPath: keyPath] }) } })
        print(
            "derived read: \(duration(median(reads.loupe))) vs \(duration(median(reads.baseline))) bare: \(format(reads.ratio))×"
        )
    case "steady":
        printTable(
            "Reads during updates", ["reader threads", "reads/s in all", "per thread", "updates/s meanwhile"],
            readsDuringUpdates(operations: 500_000))
    case "update-ratio":
        let updates = try compareInMemoryUpdates(200_000)
        print(
            "update: \(duration(median(updates.loupe))) vs \(duration(median(updates.baseline))) by hand: \(format(updates.ratio))×"
        )
    case "update-by-hand":
        let updates = InMemoryUpdates()
        print("update by hand: \(duration(timeOnce(1_000_000) { updates.byHand(1_000_000) }))")
    case "update":
        let updates = InMemoryUpdates()
        print("update: \(duration(try timeOnce(1_000_000) { try updates.loupe(1_000_000) })) per update")
    case "observers":
        final class Sink: @unchecked Sendable { var count = 0 }
        let sink = Sink()
        let port = RootLens(Deep()).inner.leaf.port
        let tokens = (0..<10_000).map { _ in port.observe { _ in sink.count &+= 1 } }
        var next = 0
        let perCommit = try timeOnce(2_000) {
            for _ in 0..<2_000 { next += 1; try port.set(next) }
        }
        blackHole(tokens)
        print("observers: \(duration(perCommit)) per commit delivered to 10,000 observers")
    case "floors":
        let floors = observationFloors(scale: 1)
        print(
            "ObservationRegistrar.access alone: \(duration(median(floors.access.loupe))) vs \(duration(median(floors.access.baseline))) bare read: \(format(floors.access.ratio))×"
        )
        print(
            "ObservationRegistrar.withMutation alone: \(duration(median(floors.mutation.loupe))) vs \(duration(median(floors.mutation.baseline))) by-hand update: \(format(floors.mutation.ratio))×"
        )
        let (provider, watcher, received) = watchedProvider()
        let sets = compareObservedSetByHand(with: provider, operations: 100_000)
        print(
            "observed set by hand, telling Observation: \(duration(median(sets.loupe))) vs \(duration(median(sets.baseline))) MutableInMemoryProvider: \(format(sets.ratio))× (its watcher received \(received.value) updates)"
        )
        watcher.cancel()
    case "set":
        let counter = RootLens(Small()).counter
        print(
            "set with no observer: \(duration(try timeOnce(1_000_000) { for i in 0..<1_000_000 { try counter.set(i) } }))"
        )
    case "observed-set":
        final class Sink: @unchecked Sendable { var count = 0 }
        let sink = Sink()
        let counter = RootLens(Small()).counter
        let token = counter.observe { _ in sink.count &+= 1 }
        print(
            "set with one observer: \(duration(try timeOnce(1_000_000) { for i in 0..<1_000_000 { try counter.set(i) } }))"
        )
        token.cancel()
    case "large-ratio":
        let root = try RootLens(
            default: Large(entries: []), store: FileStore(path: scratch + "/large.json"), watch: false)
        try root.entries.set(Large().entries)
        let counter = root.counter
        let encoder = JSONEncoder()  // as prettyEncoder, which is not yet initialized here
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let bytes = try encoder.encode(Large())
        let n = 100
        let writes = try compare(
            operations: n,
            loupe: { for _ in 0..<n { try counter.update { $0 += 1 } } },
            baseline: { for _ in 0..<n { writeByHand(bytes, to: scratch + "/large-by-hand.json") } })
        print(
            "durable update of ~\(bytes.count / 1024) KB: \(duration(median(writes.loupe))) vs \(duration(median(writes.baseline))) by hand: \(format(writes.ratio))×"
        )
    case "load":
        // As the table's row: the file as prettyEncoder (not yet initialized here) writes it, one decoder.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let complete = try encoder.encode(Wide.stored)
        try complete.write(to: URL(fileURLWithPath: scratch + "/wide.json"))
        let n = 20
        let decoder = JSONDecoder()
        let loads = try compare(
            operations: n,
            loupe: {
                for _ in 0..<n {
                    blackHole(
                        try RootLens(default: Wide(), store: FileStore(path: scratch + "/wide.json"), watch: false)
                            .value)
                }
            },
            baseline: { for _ in 0..<n { blackHole(try decoder.decode(Wide.self, from: complete)) } })
        print(
            "load: \(duration(median(loads.loupe))) vs \(duration(median(loads.baseline))) JSONDecoder: \(format(loads.ratio))×"
        )
    case "overrides-load":
        // The loading area's override row, its Loupe side only, for `perf`: the whole, each part alone over a
        // layered store, and what the environment and the schema cost alone.
        let directory = try makeOverrideSite(in: scratch)
        try Data(JSONValue(encoding: Wide.stored).jsonText(pretty: true).utf8).write(
            to: URL(fileURLWithPath: directory + "/plain.json"))
        let variants: [(String, [LayeredStore.Layer], String)] = [
            (
                "all", [.environment(prefix: "WIDEBENCH_"), .directory(credentials: directory + "/credentials")],
                "wide.json"
            ),
            ("environment", [.environment(prefix: "WIDEBENCH_")], "plain.json"),
            ("credentials", [.directory(credentials: directory + "/credentials")], "plain.json"),
            ("references", [], "wide.json"),
            (
                "environment and credentials",
                [.environment(prefix: "WIDEBENCH_"), .directory(credentials: directory + "/credentials")], "plain.json"
            ),
            ("layered, nothing", [], "plain.json"),
        ]
        // LOUPE_VARIANT=NAME loops one variant ten times as long, for `perf record`.
        let only = ProcessInfo.processInfo.environment["LOUPE_VARIANT"]
        let loops = only == nil ? 300 : 3000
        for (name, layers, file) in variants where only == nil || only == name {
            let start = ContinuousClock.now
            for _ in 0..<loops {
                blackHole(
                    try RootLens(
                        default: Wide(),
                        store: LayeredStore(layers: layers, top: FileStore(path: directory + "/" + file)), watch: false
                    ).value)
            }
            print("overrides-load \(name): \((ContinuousClock.now - start) / loops) each")
        }
        let environmentStart = ContinuousClock.now
        for _ in 0..<300 { blackHole(ProcessInfo.processInfo.environment) }
        print("ProcessInfo.environment: \((ContinuousClock.now - environmentStart) / 300) each")
        let schemaStart = ContinuousClock.now
        for _ in 0..<300 { blackHole(try SettingsSchema(for: Wide.self, default: Wide())) }
        print("SettingsSchema: \((ContinuousClock.now - schemaStart) / 300) each")
        let start = ContinuousClock.now
        for _ in 0..<300 {
            blackHole(
                try RootLens(default: Wide(), store: FileStore(path: directory + "/plain.json"), watch: false).value)
        }
        print("overrides-load, a file store: \((ContinuousClock.now - start) / 300) each")
    case "toml-update", "yaml-update":
        let format = name == "toml-update" ? "toml" : "yaml"
        let codec: any DocumentCodec = format == "toml" ? TOMLCodec() : YAMLCodec()
        let path = scratch + "/hand-written." + format
        try Data(
            commented(
                String(decoding: try codec.serialize(try JSONValue(encoding: Wide.stored)), as: UTF8.self),
                format: format
            ).utf8
        )
        .write(to: URL(fileURLWithPath: path))
        let limit = try RootLens(
            default: Wide(), store: FileStore(path: path, format: codec, history: .off), watch: false)[
                \.groups["group-100"]
            ].limit
        // LOUPE_UPDATES=N makes N updates (500 unless set), for a longer `perf record`.
        let updates = ProcessInfo.processInfo.environment["LOUPE_UPDATES"].flatMap { Int($0) } ?? 500
        for step in 0..<updates { try limit.set(100 + step % 2) }
        // Heap allocations per update, counted by the malloc interposer over 100 more.
        MallocInterposerSwift.reset()
        MallocInterposerSwift.hook()
        for step in 0..<100 { try limit.set(100 + step % 2) }
        MallocInterposerSwift.unhook()
        print("\(name): \(Double(MallocInterposerSwift.getStatistics().mallocCount) / 100) allocations per update")
    case "json-update":
        // The 40,000-key JSON row's update alone, for `perf record`.
        var members: [String: Int] = [:]
        for index in 0..<40_000 { members["key-\(index)"] = index }
        let path = scratch + "/wide.json"
        try JSONCodec().serialize(try JSONValue(encoding: members)).write(to: URL(fileURLWithPath: path))
        let entry = try RootLens(default: [String: Int](), store: FileStore(path: path, history: .off), watch: false)[
            \.["key-20000"]]
        let updates = ProcessInfo.processInfo.environment["LOUPE_UPDATES"].flatMap { Int($0) } ?? 100
        for step in 0..<updates { try entry.set(20_000 + step % 2) }
    case "toml-by-hand":
        // The toml-update profile's baseline alone: a durable write of the same bytes, for `perf trace` or
        // `strace` beside it.
        let text = commented(
            String(decoding: try TOMLCodec().serialize(try JSONValue(encoding: Wide.stored)), as: UTF8.self),
            format: "toml")
        let updates = ProcessInfo.processInfo.environment["LOUPE_UPDATES"].flatMap { Int($0) } ?? 500
        for step in 0..<updates {
            writeByHand(
                Data(text.replacingOccurrences(of: "limit = 100\n", with: "limit = \(100 + step % 2)\n").utf8),
                to: scratch + "/by-hand.toml")
        }
    case "memory-entry-update":
        // The in-place rows' update without the file: the lens's write, the encode and the stored document.
        let root = try RootLens(default: Wide(), store: MemoryStore(try JSONValue(encoding: Wide.stored)), watch: false)
        let limit = root[\.groups["group-100"]].limit
        let updates = ProcessInfo.processInfo.environment["LOUPE_UPDATES"].flatMap { Int($0) } ?? 200_000
        let start = ContinuousClock.now
        for step in 0..<updates { try limit.set(100 + step % 2) }
        print("memory-entry-update: \((ContinuousClock.now - start) / updates) each")
        // The same updates, each after a durable write of a small file (the caches and the clock after
        // waiting on the disk, as an update of a file meets them): the updates alone timed.
        var spent = Duration.zero
        for step in 0..<2_000 {
            writeByHand(Data("x".utf8), to: scratch + "/cold.txt")
            let before = ContinuousClock.now
            try limit.set(100 + step % 2)
            spent += ContinuousClock.now - before
        }
        print("memory-entry-update after a durable write: \(spent / 2_000) each")
    case "toml-parse":
        let data = try TOMLCodec().serialize(try JSONValue(encoding: Wide.stored))
        for _ in 0..<200 { blackHole(try TOMLCodec().parse(data)) }
    case "journaled-update", "plain-update":
        // A durable update with the history journal, or without it (`history: .off`).
        let history: FileStore.HistoryPolicy = name == "plain-update" ? .off : .kept()
        let root = try RootLens(
            default: Small(), store: FileStore(path: scratch + "/\(name).json", history: history), watch: false)
        let start = ContinuousClock.now
        for _ in 0..<2_000 { try root.counter.update { $0 += 1 } }
        print("\(name): \((ContinuousClock.now - start) / 2_000) each")
    case "sops-load":
        // The sops load row's parts: the whole load, sealed and plain, and the YAML parse of each text alone.
        let identity = AgeIdentity.generate()
        let values = Dictionary(
            uniqueKeysWithValues: (0..<200).map { ("key-\($0)", "value-\($0)-\(String(repeating: "x", count: 24))") })
        let document = JSONValue.object(["values": .object(values.mapValues(JSONValue.string))])
        let codec = YAMLCodec()
        let sealedPath = scratch + "/sealed.yaml"
        let plainPath = scratch + "/plain.yaml"
        _ = try SOPSFileStore(
            path: sealedPath, format: codec, identities: .identities([identity]), recipients: [identity.recipient],
            history: .off
        ).save(document, replacing: .absent)
        _ = try FileStore(path: plainPath, format: codec, history: .off).save(document, replacing: .absent)
        let loops = ProcessInfo.processInfo.environment["LOUPE_LOOPS"].flatMap { Int($0) } ?? 300
        // LOUPE_PARTS="sealed update,plain load" runs only the parts named (all by default), to profile one.
        let parts = ProcessInfo.processInfo.environment["LOUPE_PARTS"].map { $0.split(separator: ",").map(String.init) }
        func time(_ label: String, _ body: () throws -> Void) rethrows {
            if let parts, !parts.contains(label) { return }
            let start = ContinuousClock.now
            for _ in 0..<loops { try body() }
            print("\(label): \((ContinuousClock.now - start) / loops) each")
        }
        let sealedText = try Data(contentsOf: URL(fileURLWithPath: sealedPath))
        let plainText = try Data(contentsOf: URL(fileURLWithPath: plainPath))
        print("bytes: sealed \(sealedText.count), plain \(plainText.count)")
        try time("sealed load") {
            blackHole(
                try RootLens(
                    default: SealedSettings(),
                    store: SOPSFileStore(
                        path: sealedPath, format: codec, identities: .identities([identity]), history: .off),
                    watch: false
                ).value)
        }
        try time("plain load") {
            blackHole(
                try RootLens(
                    default: SealedSettings(), store: FileStore(path: plainPath, format: codec, history: .off),
                    watch: false
                ).value)
        }
        try time("sealed parse") { blackHole(try codec.parse(sealedText)) }
        try time("plain parse") { blackHole(try codec.parse(plainText)) }
        // The update row's Loupe side: one value changed, sealed in place.
        let sealedRoot = try RootLens(
            default: SealedSettings(),
            store: SOPSFileStore(path: sealedPath, format: codec, identities: .identities([identity]), history: .off),
            watch: false)
        var round = 0
        try time("sealed update") {
            round += 1
            try sealedRoot.update { $0.values["key-7"] = "changed-\(round)" }
        }
    case "page-edit":
        // The page edit row alone, run LOUPE_LOOPS times (3 by default): its medians, and a run to profile.
        let loops = ProcessInfo.processInfo.environment["LOUPE_LOOPS"].flatMap { Int($0) } ?? 3
        try waitFor {
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool = .init(
                idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 32)
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            for _ in 0..<loops {
                let edits = try await measurePageEdits(scratch: scratch, scale: 1, client: client)
                print("page edit: \(edits.ratio)×")
            }
            try await client.shutdown()
        }
    case "coalesced":
        let root = try RootLens(
            default: Small(), store: FileStore(path: scratch + "/p.json", writePolicy: .coalesced(.seconds(1))),
            watch: false)
        for _ in 0..<200_000 { try root.counter.update { $0 += 1 } }
    default: break
    }
}
