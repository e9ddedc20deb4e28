import Foundation
import Loupe
import Synchronization

/// A graph three levels deep, for reads.
struct Deep: Codable, Sendable, Equatable {
    struct Inner: Codable, Sendable, Equatable {
        struct Leaf: Codable, Sendable, Equatable {
            var port = 8080
            var host = "localhost"
        }
        var leaf = Leaf()
    }
    var inner = Inner()
    var name = "deep"
}

/// A graph with a 1,000-element array and a 1,000-entry dictionary, for copy-on-write updates.
struct Big: Codable, Sendable, Equatable {
    var counter = 0
    var items = Array(0..<1_000)
    var table = Dictionary(uniqueKeysWithValues: (0..<1_000).map { ("key-\($0)", $0) })
}

/// About twenty fields: a typical settings file.
struct Small: Codable, Sendable, Equatable {
    struct Server: Codable, Sendable, Equatable {
        var host = "localhost"
        var port = 8080
        var tls = false
        var timeoutSeconds = 30.0
        var maxConnections = 512
    }
    struct Logging: Codable, Sendable, Equatable {
        var level = "info"
        var format = "json"
        var destination = "stderr"
    }
    var counter = 0
    var name = "service"
    var server = Server()
    var logging = Logging()
    var features: [String: Bool] = ["beta": true, "dark-mode": false, "new-ui": true]
    var allowedOrigins = ["https://example.org", "https://example.com"]
    var region = "eu-west-1"
    var replicas = 3
}

/// About 100 KB of JSON.
struct Large: Codable, Sendable, Equatable {
    struct Entry: Codable, Sendable, Equatable {
        var id: Int
        var name: String
        var enabled: Bool
        var weight: Double
        var tags: [String]
    }
    var counter = 0
    var entries = (0..<900).map {
        Entry(
            id: $0, name: "entry number \($0)", enabled: $0 % 2 == 0, weight: Double($0) / 7,
            tags: ["a", "tag-\($0 % 10)"])
    }
}

/// A dictionary of `count` entries, for how cost grows.
struct Sized: Codable, Sendable, Equatable {
    var counter = 0
    var entries: [String: Int]
    init(count: Int) {
        entries = Dictionary(uniqueKeysWithValues: (0..<count).map { ("entry-\($0)", $0) })
    }
}

/// The in-memory update case: one leaf of a `Big` updated while an old snapshot is held, through Loupe and
/// by hand. By hand is as thread-safe as Loupe's update (and as the read row's baseline): the struct held
/// by a class, the snapshot read under a `pthread_rwlock` read lock, the copy-on-write mutation under its
/// write lock.
final class InMemoryUpdates {
    let root = RootLens(Big())
    lazy var counter = root.counter
    let bare = RWLocked(Big())
    var held = Big()

    func loupe(_ n: Int) throws {
        for _ in 0..<n {
            held = root.value  // an old snapshot, held while the update runs
            try counter.update { $0 += 1 }
        }
    }

    /// The floor: the same copy-on-write update by hand, with Swift Observation told of it, as every commit
    /// of a lens's graph must.
    private let observation = ObservationAlone()

    func byHand(_ n: Int) {
        for _ in 0..<n {
            held = bare.read { $0 }
            bare.write { value in
                var copy = value
                copy.counter += 1
                value = copy
            }
            observation.mutated()
        }
    }
}

/// Loupe's and the by-hand cost of one in-memory update, interleaved.
func compareInMemoryUpdates(_ n: Int) throws -> Comparison {
    let updates = InMemoryUpdates()
    let comparison = try compare(operations: n, loupe: { try updates.loupe(n) }, baseline: { updates.byHand(n) })
    blackHole(updates.held)
    return comparison
}

/// Reads per second from 1, 2 and 4 threads while one thread updates the same graph as fast as it can,
/// with the updates per second it made meanwhile: one table row per reader count.
func readsDuringUpdates(operations: Int) -> [[String]] {
    final class Writer: @unchecked Sendable {
        let stop = Atomic<Bool>(false)
        let updates = Atomic<Int>(0)
    }
    let port = RootLens(Deep()).inner.leaf.port
    var rows: [[String]] = []
    for threads in [1, 2, 4] {
        let writer = Writer()
        let done = DispatchSemaphore(value: 0)
        Thread {
            var i = 0
            while !writer.stop.load(ordering: .relaxed) { i += 1; try? port.set(i) }
            writer.updates.store(i, ordering: .relaxed)
            done.signal()
        }.start()
        let start = ContinuousClock.now
        let perSecond = median(
            (0..<3).map { _ in throughput(threads: threads, operations: operations) { blackHole(port.value) } })
        writer.stop.store(true, ordering: .relaxed)
        done.wait()
        let (seconds, attoseconds) = (ContinuousClock.now - start).components
        let updates = Double(writer.updates.load(ordering: .relaxed)) / (Double(seconds) + Double(attoseconds) / 1e18)
        rows.append(["\(threads)", rate(perSecond), rate(perSecond / Double(threads)), rate(updates)])
    }
    return rows
}

/// A settings file as programs grow them: a few dozen top-level settings and 200 groups of eight, for
/// loading. Groups take what they lack from their own default.
struct Wide: Codable, Sendable, Equatable {
    struct Group: Codable, Sendable, Equatable, DefaultProviding {
        var name = "group"
        var enabled = true
        var limit = 100
        var ratio = 0.5
        var tags = ["a", "b"]
        var url = "https://example.org/path"
        var retries = 3
        var label = "label"
        static var defaultValue: Group { Group() }
    }
    var server = Small.Server()
    var logging = Small.Logging()
    var groups: [String: Group] = [:]

    /// The value the files hold: every group differs from the default in every key.
    static var stored: Wide {
        var wide = Wide()
        wide.server.port = 9090
        wide.logging.level = "debug"
        for index in 0..<200 {
            wide.groups["group-\(index)"] = Group(
                name: "group \(index)", enabled: index % 2 == 0, limit: index, ratio: Double(index) / 8,
                tags: ["t\(index % 7)"], url: "https://example.org/\(index)", retries: index % 5, label: "l\(index)")
        }
        return wide
    }
}
