#if Etcd
import Foundation

// The JSON messages of etcd's v3 HTTP gateway (grpc-gateway over the v3 gRPC API): field names as in the
// protobuf definitions, 64-bit integers as decimal strings, keys and values as base64. Only the fields
// Loupe uses are declared; omitted fields are protobuf defaults (0, false, empty).

/// A 64-bit integer as the gateway writes it: a decimal string (`"12"`), or a number.
struct GatewayInt: Codable, Sendable, Equatable {
    var value: Int64

    init(_ value: Int64) { self.value = value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self), let value = Int64(text) {
            self.value = value
        } else {
            value = try container.decode(Int64.self)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(String(value))
    }
}

/// Bytes as the gateway carries them: base64 in a JSON string.
struct GatewayBytes: Codable, Sendable, Equatable {
    var data: Data

    init(_ data: Data) { self.data = data }
    init(_ text: String) { data = Data(text.utf8) }

    init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let data = Data(base64Encoded: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not base64"))
        }
        self.data = data
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(data.base64EncodedString())
    }
}

struct ResponseHeader: Decodable, Sendable {
    var revision: GatewayInt?
}

struct KeyValue: Decodable, Sendable {
    var key: GatewayBytes?
    var value: GatewayBytes?
    var mod_revision: GatewayInt?
    var create_revision: GatewayInt?
}

// MARK: Requests

struct RangeRequest: Encodable {
    var key: GatewayBytes
    /// With it, every key from `key` up to (not including) it: a prefix's keys.
    var range_end: GatewayBytes?
    /// With it, the keys as they were at that revision.
    var revision: GatewayInt?

    init(key: GatewayBytes, range_end: GatewayBytes? = nil, revision: GatewayInt? = nil) {
        self.key = key
        self.range_end = range_end
        self.revision = revision
    }

    /// Every key that starts with `prefix`.
    init(prefix: Data) {
        var end = [UInt8](prefix)
        while let last = end.last, last == 0xff { end.removeLast() }
        if !end.isEmpty { end[end.count - 1] += 1 }
        self.init(key: GatewayBytes(prefix), range_end: GatewayBytes(Data(end.isEmpty ? [0] : end)))
    }
}

struct PutRequest: Encodable {
    var key: GatewayBytes
    var value: GatewayBytes
    /// The lease the key lives with: it goes when the lease does.
    var lease: GatewayInt?
}

struct LeaseGrantRequest: Encodable {
    var TTL: GatewayInt
}

struct LeaseRequest: Encodable {
    var ID: GatewayInt
}

struct DeleteRangeRequest: Encodable {
    var key: GatewayBytes
}

struct Compare: Encodable {
    var key: GatewayBytes
    var target = "MOD"
    var result = "EQUAL"
    var mod_revision: GatewayInt
}

struct RequestOp: Encodable {
    var request_range: RangeRequest?
    var request_put: PutRequest?
    var request_delete_range: DeleteRangeRequest?
}

struct TxnRequest: Encodable {
    var compare: [Compare]
    var success: [RequestOp]
    var failure: [RequestOp]
}

struct AuthenticateRequest: Encodable {
    var name: String
    var password: String
}

struct WatchRequest: Encodable {
    struct Create: Encodable {
        var key: GatewayBytes
        var start_revision: GatewayInt
        var progress_notify = true
    }
    var create_request: Create
}

// MARK: Responses

struct RangeResponse: Decodable, Sendable {
    var header: ResponseHeader?
    var kvs: [KeyValue]?
}

struct DeleteRangeResponse: Decodable, Sendable {
    var header: ResponseHeader?
}

struct PutResponse: Decodable, Sendable {
    var header: ResponseHeader?
}

struct LeaseGrantResponse: Decodable, Sendable {
    var ID: GatewayInt?
    var TTL: GatewayInt?
}

/// A keep-alive's one answer, as the gateway streams it: a lease that is gone has no `TTL`.
struct LeaseKeepAliveResponse: Decodable, Sendable {
    struct Result: Decodable, Sendable {
        var TTL: GatewayInt?
    }
    var result: Result?
}

struct TxnResponse: Decodable, Sendable {
    struct ResponseOp: Decodable, Sendable {
        var response_range: RangeResponse?
    }
    var header: ResponseHeader?
    var succeeded: Bool?
    var responses: [ResponseOp]?
}

struct AuthenticateResponse: Decodable {
    var token: String?
}

/// What the gateway answers instead of a response when the call fails: a gRPC status.
struct GatewayError: Decodable, Sendable {
    /// The gRPC status code.
    var status: Int?
    /// What went wrong, in the gateway's words.
    var text: String
}

extension GatewayError {
    // Calls answer `{"error", "code", "message"}`; watch streams `{"error": {"grpc_code", "message"}}`.
    private enum CodingKeys: String, CodingKey {
        case error, message, code, grpc_code
    }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        let code = try fields.decodeIfPresent(Int.self, forKey: .code)
        let grpcCode = try fields.decodeIfPresent(Int.self, forKey: .grpc_code)
        let message = try fields.decodeIfPresent(String.self, forKey: .message)
        let error = try fields.decodeIfPresent(String.self, forKey: .error)
        self.init(status: code ?? grpcCode, text: message ?? error ?? "unknown error")
    }
}

/// One message of a watch stream: a response, or the error that ended the stream.
struct WatchEnvelope: Decodable, Sendable {
    struct Result: Decodable, Sendable {
        var header: ResponseHeader?
        var created: Bool?
        var canceled: Bool?
        var compact_revision: GatewayInt?
        var cancel_reason: String?
        var events: [Event]?
    }
    struct Event: Decodable, Sendable {
        /// `DELETE`, or absent for a put.
        var type: String?
        var kv: KeyValue?
    }
    var result: Result?
    var error: GatewayError?
}
#endif
