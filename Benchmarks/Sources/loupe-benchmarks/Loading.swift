import Foundation
import Loupe
#if canImport(Glibc)
import Glibc
#endif

/// Loads of a complete file, of half the keys, and of layers and drop-ins; durable updates through layers
/// and an edit of a drop-in reaching an observer.
func measureLoadsAndLayers(_ bench: Bench, _ report: Report) throws {
    let scale = bench.scale
    let quick = bench.quick
    let scratch = bench.scratch
    do {
        // A root's load reads the file, parses it, merges it over the encoded defaults, decodes it and notes
        // which keys the type read; the baseline is JSONDecoder alone, on the complete file's bytes in memory.
        let complete = try prettyEncoder().encode(Wide.stored)
        try complete.write(to: URL(fileURLWithPath: scratch + "/wide.json"))
        // Half the keys: each group and section holds every other key; the rest come from the defaults.
        var half = try JSONValue(encoding: Wide.stored)
        for (index, key) in ["name", "enabled", "limit", "ratio", "tags", "url", "retries", "label"].enumerated()
        where index % 2 == 1 {
            for group in 0..<200 { half[path: ValuePath([.key("groups"), .key("group-\(group)"), .key(key)])] = nil }
        }
        for key in ["host", "tls", "maxConnections"] { half[path: ValuePath([.key("server"), .key(key)])] = nil }
        try Data(half.jsonText(pretty: true).utf8).write(to: URL(fileURLWithPath: scratch + "/wide-half.json"))
        let n = 20 / max(1, scale / 5)
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
        report.add(
            "load a complete file (\(complete.count / 1024) KB) vs JSONDecoder alone on its bytes", loads, .atMost(1.5))
        let halfLoads = try compare(
            operations: n,
            loupe: {
                for _ in 0..<n {
                    blackHole(
                        try RootLens(default: Wide(), store: FileStore(path: scratch + "/wide-half.json"), watch: false)
                            .value)
                }
            },
            baseline: { for _ in 0..<n { blackHole(try decoder.decode(Wide.self, from: complete)) } })
        report.add(
            "load a file holding half the keys vs JSONDecoder alone on the complete file's bytes", halfLoads, .atMost(2)
        )
    }

    do {
        // The same file with secret references, environment variables and credentials; the baseline loads
        // the file alone.
        let directory = try makeOverrideSite(in: scratch)
        func overridden() throws -> RootLens<Wide> {
            try RootLens(
                default: Wide(),
                store: LayeredStore(
                    layers: [.environment(prefix: "WIDEBENCH_"), .directory(credentials: directory + "/credentials")],
                    top: FileStore(path: directory + "/wide.json")),
                watch: false)
        }
        let check = try overridden()
        precondition(
            check.value == Wide.stored && check.secretPaths.count == 25,
            "the overrides and references give the stored value")
        let n = 20 / max(1, scale / 5)
        let loads = try compare(
            operations: n,
            loupe: { for _ in 0..<n { blackHole(try overridden().value) } },
            baseline: {
                for _ in 0..<n {
                    blackHole(
                        try RootLens(default: Wide(), store: FileStore(path: scratch + "/wide.json"), watch: false)
                            .value)
                }
            })
        report.add(
            "load with 100 environment variables, 20 credential files and 5 secret references vs the same load without them",
            loads, .atMost(1.3))
    }

    do {
        // Wide's stored value split across a vendor file, an admin file, 5 drop-ins and the user's file, each
        // a patch over the ones below; the baseline loads one file holding the merged document.
        let layers = scratch + "/layers"
        try FileManager.default.createDirectory(atPath: layers + "/settings.d", withIntermediateDirectories: true)
        let merged = try JSONValue(encoding: Wide.stored)
        func part(_ groups: Range<Int>, server: Bool = false) -> JSONValue {
            var members: [String: JSONValue] = [:]
            for index in groups {
                members["group-\(index)"] = merged[path: ValuePath([.key("groups"), .key("group-\(index)")])]
            }
            var document = JSONValue.object(["groups": .object(members)])
            if server {
                document[path: "server"] = merged[path: "server"]
                document[path: "logging"] = merged[path: "logging"]
            }
            return document
        }
        func write(_ document: JSONValue, _ name: String) throws {
            try Data(document.jsonText(pretty: true).utf8).write(to: URL(fileURLWithPath: layers + "/" + name))
        }
        try write(part(0..<60, server: true), "vendor.json")
        try write(part(60..<110), "admin.json")
        for dropIn in 0..<5 {
            try write(part((110 + dropIn * 16)..<(126 + dropIn * 16)), "settings.d/\(10 + dropIn)-part.json")
        }
        try write(part(190..<200), "user.json")
        func layered() -> LayeredStore {
            LayeredStore(
                layers: [
                    .file(layers + "/vendor.json"), .file(layers + "/admin.json"), .directory(layers + "/settings.d"),
                ],
                top: FileStore(path: layers + "/user.json"))
        }
        let check = try RootLens(default: Wide(), store: layered(), watch: false).value
        precondition(check == Wide.stored, "the layers hold the merged document")
        let n = 20 / max(1, scale / 5)
        let loads = try compare(
            operations: n,
            loupe: {
                for _ in 0..<n { blackHole(try RootLens(default: Wide(), store: layered(), watch: false).value) }
            },
            baseline: {
                for _ in 0..<n {
                    blackHole(
                        try RootLens(default: Wide(), store: FileStore(path: scratch + "/wide.json"), watch: false)
                            .value)
                }
            })
        report.add("load 3 layers + 5 drop-ins vs one file holding the merged document", loads, .atMost(2))
    }

    do {
        // The same small update, durable, through a layered store (vendor, admin, 5 drop-ins, user) and
        // through one file: before each, the layered root checks every layer for outside changes.
        let layers = scratch + "/small-layers"
        try FileManager.default.createDirectory(atPath: layers + "/settings.d", withIntermediateDirectories: true)
        try Data(#"{"name": "vendor", "replicas": 5}"#.utf8).write(to: URL(fileURLWithPath: layers + "/vendor.json"))
        try Data(#"{"region": "us-east-1"}"#.utf8).write(to: URL(fileURLWithPath: layers + "/admin.json"))
        for dropIn in 0..<5 {
            try Data(#"{"features": {"flag-\#(dropIn)": true}}"#.utf8).write(
                to: URL(fileURLWithPath: layers + "/settings.d/\(dropIn).json"))
        }
        let store = LayeredStore(
            layers: [
                .file(layers + "/vendor.json"), .file(layers + "/admin.json"), .directory(layers + "/settings.d"),
            ],
            top: FileStore(path: layers + "/user.json"))
        let layeredCounter = try RootLens(default: Small(), store: store, watch: false).counter
        let singleCounter = try RootLens(
            default: Small(), store: FileStore(path: scratch + "/single.json"), watch: false
        ).counter
        let n = 200 / scale
        let updates = try compare(
            operations: n,
            loupe: { for _ in 0..<n { try layeredCounter.update { $0 += 1 } } },
            baseline: { for _ in 0..<n { try singleCounter.update { $0 += 1 } } })
        report.add("durable update through 3 layers + 5 drop-ins vs through one file", updates, .atMost(1.3))

        // An administrator's edit of a drop-in (renamed over it) reaching an observer of the layered root.
        let watched = try RootLens(
            default: Small(),
            store: LayeredStore(
                layers: [
                    .file(layers + "/vendor.json"), .file(layers + "/admin.json"), .directory(layers + "/settings.d"),
                ],
                top: FileStore(path: layers + "/user.json")))
        let arrived = DispatchSemaphore(value: 0)
        let token = watched.replicas.observe { _ in arrived.signal() }
        let latencies = try renameLatencies(
            layers + "/settings.d/2.json", arrived: arrived, edits: 1...(quick ? 6 : 31)
        ) { edit in
            Data(#"{"features": {"flag-2": true}, "replicas": \#(10 + edit)}"#.utf8)
        }
        token.cancel()
        let latency = median(latencies)
        report.rows.append(
            Row(
                name:
                    "a drop-in edit reaching an observer of a layered root (median of \(latencies.count); ratio: of the 5 ms allowed)",
                loupe: duration(latency), baseline: "slowest \(duration(latencies.max()!))", ratio: latency / 5_000_000,
                target: .atMost(1)))
    }
}

/// Writes, under `scratch/overrides`, `Wide`'s stored value with 5 groups' URLs as secret references to
/// files (`wide.json`), and a credential directory of 20 files that set 20 groups' labels
/// (`credentials/`); sets 100 real environment variables under `WIDEBENCH_` that set 100 groups' limits.
/// Returns the directory. Together they give `Wide.stored`.
func makeOverrideSite(in scratch: String) throws -> String {
    let directory = scratch + "/overrides"
    try FileManager.default.createDirectory(atPath: directory + "/credentials", withIntermediateDirectories: true)
    var referencing = try JSONValue(encoding: Wide.stored)
    for group in 0..<5 {
        let secret = directory + "/url-\(group)"
        try Data("https://example.org/\(group)\n".utf8).write(to: URL(fileURLWithPath: secret))
        referencing[path: ValuePath([.key("groups"), .key("group-\(group)"), .key("url")])] = .object([
            "$secret": .string("file:" + secret)
        ])
    }
    try Data(referencing.jsonText(pretty: true).utf8).write(to: URL(fileURLWithPath: directory + "/wide.json"))
    for group in 0..<100 { setenv("WIDEBENCH_GROUPS__GROUP_\(group)__LIMIT", "\(group)", 1) }
    for group in 100..<120 {
        try Data("l\(group)\n".utf8).write(
            to: URL(fileURLWithPath: directory + "/credentials/groups.group-\(group).label"))
    }
    return directory
}
