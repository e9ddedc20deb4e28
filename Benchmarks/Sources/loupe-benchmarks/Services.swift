import Foundation
import Loupe
import CLibSecretBaseline
import LoupeEtcd
import LoupeKeyring

/// The keyring and etcd rows, when `Scripts/bench` started them. Each baseline makes by hand the calls an
/// update that loses no other writer's change needs: the keyring's a lookup and a store, etcd's one
/// transaction comparing the revision.
func measureServices(_ bench: Bench, _ report: Report) throws {
    let scale = bench.scale
    if bench.keyring {
        struct Token: Codable, Sendable, Equatable { var token = "" }
        let service = "org.loupe.bench.\(UUID().uuidString)"
        let root = try RootLens(default: Token(), store: KeyringStore(service: service, account: "loupe"))
        let n = 100 / scale
        var counter = 0
        let updates = try compare(
            repetitions: 5, operations: n,
            loupe: {
                for i in 0..<n { try root.token.set("token-\(i)-\(counter)") }; counter += 1
            },
            baseline: {
                for i in 0..<n {
                    let attributes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)!
                    g_hash_table_insert(attributes, g_strdup("service"), g_strdup(service))
                    g_hash_table_insert(attributes, g_strdup("account"), g_strdup("by-hand"))
                    var error: UnsafeMutablePointer<GError>?
                    // What an update that loses nothing does: read the item (to compare it with what was
                    // read before), then store the new secret.
                    if let current = secret_password_lookupv_sync(nil, attributes, nil, &error) {
                        secret_password_free(current)
                    }
                    if let error { g_error_free(error) }
                    error = nil
                    let secret = String(
                        decoding: try JSONEncoder().encode(Token(token: "token-\(i)-\(counter)")), as: UTF8.self)
                    _ = secret_password_storev_sync(nil, attributes, nil, "by hand", secret, nil, &error)
                    if let error { g_error_free(error) }
                    g_hash_table_unref(attributes)
                }
            })
        report.add(
            "KeyringStore update vs libsecret lookup + store by hand (the calls an update that loses nothing makes)",
            updates, .atMost(1.2))
        try root.remove()
        let byHand = KeyringStore(service: service, account: "by-hand")
        _ = (try? byHand.load().token).map { try? byHand.remove(replacing: $0) }
    } else {
        FileHandle.standardError.write(
            Data("skipped: the keyring row (run through Scripts/bench, which starts a keyring)\n".utf8))
    }

    if let etcdEndpoints = bench.etcdEndpoints {
        struct Flags: Codable, Sendable, Equatable { var generation = 0; var name = "fleet" }
        let key = "/loupe-bench/\(UUID().uuidString)"
        let root = try RootLens(default: Flags(), store: EtcdStore(endpoints: etcdEndpoints, key: key), watch: false)
        let raw = try RawEtcd(endpoint: etcdEndpoints[0], key: key + "-by-hand")
        let n = 200 / scale
        let updates = try compare(
            repetitions: 5, operations: n,
            loupe: { for _ in 0..<n { try root.generation.update { $0 += 1 } } },
            baseline: {
                for _ in 0..<n {
                    try raw.compareAndPut(JSONEncoder().encode(Flags(generation: raw.revision, name: "fleet")))
                }
            })
        report.add("EtcdStore update vs one raw txn put (compare mod_revision, put) by hand", updates, .atMost(1.2))

        // 50 async updates at once from tasks on the cooperative pool (each on a root of its own, as 50
        // components would), while a task ticks every 10 ms: how late does the ticker get?
        let roots = try (0..<50).map { index in
            try RootLens(
                default: Flags(), store: EtcdStore(endpoints: etcdEndpoints, key: key + "-async-\(index)"), watch: false
            )
        }
        var lateness: [Double] = []
        var spans: [Double] = []
        for _ in 0..<3 {
            let (worst, span) = try waitFor { () async throws -> (Double, Double) in
                let clock = ContinuousClock()
                let start = clock.now
                return try await withThrowingTaskGroup(of: Double.self) { group in
                    for root in roots {
                        group.addTask {
                            try await root.generation.async.update { $0 += 1 }; return 0
                        }
                    }
                    group.addTask {
                        var worst = Duration.zero
                        for _ in 0..<20 {
                            let before = clock.now
                            try await Task.sleep(for: .milliseconds(10))
                            worst = max(worst, clock.now - before - .milliseconds(10))
                        }
                        return Double(worst.components.seconds) * 1e9 + Double(worst.components.attoseconds) / 1e9
                    }
                    var worst = 0.0
                    for try await late in group { worst = max(worst, late) }
                    let span = clock.now - start
                    return (worst, Double(span.components.seconds) * 1e9 + Double(span.components.attoseconds) / 1e9)
                }
            }
            lateness.append(worst)
            spans.append(span)
        }
        let worst = lateness.max()!
        report.rows.append(
            Row(
                name:
                    "a 10 ms ticker's worst lateness while 50 async EtcdStore updates run (ratio: of the 20 ms allowed)",
                loupe: duration(worst), baseline: "50 updates took \(duration(median(spans)))",
                ratio: worst / 20_000_000,
                target: .atMost(1)))
    } else {
        FileHandle.standardError.write(
            Data("skipped: the etcd row (run through Scripts/bench, which starts etcd)\n".utf8))
    }
}
