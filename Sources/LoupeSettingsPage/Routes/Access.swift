#if SettingsPage
import Foundation
import HTTPTypes
import Hummingbird
import Loupe
import NIOCore

/// A request the page refuses, and why: the status and the message the response carries.
struct PageError: Error, Sendable {
    var status: HTTPResponse.Status
    var message: String
    /// More for the page: the current value after a conflict, say.
    var details: [String: JSONValue] = [:]

    static let locked = HTTPResponse.Status(code: 423, reasonPhrase: "Locked")

    /// The response: `{"error": message, …details}` as JSON.
    var response: Response {
        var body = details
        body["error"] = .string(message)
        return Response.json(.object(body), status: status)
    }

    /// The status and message for an error of Loupe's, with the message `loupe` prints for it.
    init(_ error: any Error) {
        if let error = error as? PageError {
            self = error
            return
        }
        let message = "\(error)".replacingOccurrences(of: "\n", with: " ")
        switch error {
        case let error as SettingsError:
            switch error.code {
            case .invalidPath: status = .badRequest
            case .notFound: status = .notFound
            case .invalidValue, .notRemovable, .missingParent, .notOptional, .outOfRange, .reentrantUpdate:
                status = .unprocessableContent
            case .conflict: status = .conflict
            case .locked: status = Self.locked
            case .readOnly: status = .forbidden
            default: status = .serviceUnavailable
            }
            self.message = message
            if let path = error.path { details["path"] = .string(path.description) }
        case is DecodingError, is RuleViolation:
            status = .unprocessableContent
            self.message = message
        case let error as HTTPError:
            status = error.status
            self.message = error.body ?? error.status.reasonPhrase
        default:
            status = .internalServerError
            self.message = message
        }
    }

    init(_ status: HTTPResponse.Status, _ message: String, details: [String: JSONValue] = [:]) {
        self.status = status
        self.message = message
        self.details = details
    }
}

extension Response {
    /// `value` as a JSON response, never cached (it may change any moment, and may hold what a person
    /// revealed).
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: value.jsonText())))
    }
}

extension HTTPField.Name {
    static let loupeToken = HTTPField.Name("X-Loupe-Token")!
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
}

/// The page's checks of each request: who may read, who may write.
struct Access: Sendable {
    let configuration: SettingsPage.Configuration

    /// Lets through a request that carries the token (or passes the authenticator); for a write, one that
    /// carries it in a header and comes from the page's own origin, on a page that is not read-only.
    func check(_ request: Request, writing: Bool) async throws {
        if let authenticator = configuration.authenticator {
            guard await authenticator(request) else {
                throw PageError(.unauthorized, "not signed in: the application refused this request")
            }
        } else {
            let header =
                request.headers[.loupeToken]
                ?? request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
            let query = writing ? nil : request.uri.queryParameters.get("token")
            guard let given = header ?? query else {
                throw PageError(
                    .unauthorized, "this page needs its token: open the address printed at start (…?token=…)")
            }
            guard Self.same(given, configuration.token) else {
                throw PageError(.unauthorized, "wrong token: open the address printed at start")
            }
        }
        guard writing else { return }
        guard !configuration.readOnly else {
            throw PageError(.forbidden, "the settings page is read-only: nothing was written")
        }
        try checkSameOrigin(request)
    }

    /// Refuses a write another site's page sent: its `Origin` names another host, or the browser says it is
    /// cross-site (`Sec-Fetch-Site`).
    func checkSameOrigin(_ request: Request) throws {
        if let site = request.headers[.secFetchSite], site != "same-origin", site != "none" {
            throw PageError(.forbidden, "cross-site write refused (Sec-Fetch-Site: \(site))")
        }
        guard let origin = request.headers[.origin] else { return }
        guard let host = request.head.authority, let url = URL(string: origin), let originHost = url.host,
            originHost + (url.port.map { ":\($0)" } ?? "") == host
        else {
            throw PageError(
                .forbidden, "cross-origin write refused: the request came from \(origin), not from this page")
        }
    }

    /// Compares two tokens in time that depends on their lengths only.
    static func same(_ given: String, _ expected: String) -> Bool {
        let a = Array(given.utf8), b = Array(expected.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// The request's body as JSON, refused with 413 past the configured bound and 400 when not JSON.
    func body(of request: Request) async throws -> JSONValue {
        var request = request
        let limit = configuration.maxBodyBytes
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw PageError(.contentTooLarge, "the request body is larger than \(limit) bytes")
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw PageError(.contentTooLarge, "the request body is larger than \(limit) bytes")
        }
        guard request.headers[.contentType]?.hasPrefix("application/json") == true else {
            throw PageError(.unsupportedMediaType, "send the body as JSON (Content-Type: application/json)")
        }
        do {
            return try JSONValue(parsing: String(buffer: buffer))
        } catch {
            throw PageError(.badRequest, "the request body is not JSON: \(error)")
        }
    }
}

/// Runs `work` (which reads or writes files) on a Dispatch queue, without holding a thread of the
/// cooperative pool while it does.
func offPool<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result(catching: work)) }
    }
}
#endif
