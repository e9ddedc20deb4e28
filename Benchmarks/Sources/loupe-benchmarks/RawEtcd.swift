import AsyncHTTPClient
import Foundation

/// etcd by hand, for the baseline: one blocking POST of a compare-and-swap transaction to the v3 gateway,
/// with the JSON written out directly.
final class RawEtcd {
    private let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: {
            var configuration = HTTPClient.Configuration()
            configuration.httpVersion = .http1Only
            return configuration
        }())
    private let endpoint: String
    private let key: String
    /// The key's mod_revision after the last put (0 before it exists).
    private(set) var revision = 0

    init(endpoint: String, key: String) throws {
        self.endpoint = endpoint
        self.key = Data(key.utf8).base64EncodedString()
    }

    deinit { try? client.syncShutdown() }

    /// One transaction: if the key is at `revision`, put `value`.
    func compareAndPut(_ value: Data) throws {
        let body: [String: Any] = [
            "compare": [["key": key, "target": "MOD", "result": "EQUAL", "mod_revision": "\(revision)"]],
            "success": [["request_put": ["key": key, "value": value.base64EncodedString()]]],
        ]
        let answer = try post("/v3/kv/txn", body)
        guard answer["succeeded"] as? Bool == true else { throw RawEtcdError() }
        revision = Int((answer["header"] as? [String: Any])?["revision"] as? String ?? "") ?? 0
    }

    /// A plain put.
    func put(_ value: Data) throws {
        _ = try post("/v3/kv/put", ["key": key, "value": value.base64EncodedString()])
    }

    private func post(_ path: String, _ body: [String: Any]) throws -> [String: Any] {
        var request = try HTTPClient.Request(url: endpoint + path, method: .POST)
        request.body = .bytes(try JSONSerialization.data(withJSONObject: body))
        let response = try client.execute(request: request).wait()
        guard response.status == .ok, let buffer = response.body,
            let answer = try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any]
        else { throw RawEtcdError() }
        return answer
    }
}

struct RawEtcdError: Error {}
