#if SettingsPage
import Foundation
import HTTPTypes
import Hummingbird
import Loupe

extension SettingsPage {
    /// The page's routes, to mount where the application likes (`router.addRoutes(page.routes(),
    /// atPath: "/settings")`):
    ///
    /// | Route | What it does |
    /// |---|---|
    /// | `GET /` | The page (HTML, CSS and script in one response). |
    /// | `GET /api/settings` | Every setting: schema, value, default, provenance, lock; secrets masked. For a root that is a dictionary, its keys and a new entry's editor (`dictionary`). |
    /// | `PUT /api/value` | `{"path", "value", "expected"?}`: one write through the root; 409 with the current value when it changed meanwhile (`"expected": null`: when something is there now, as for a new entry of a dictionary). |
    /// | `DELETE /api/value?path=` | Puts a setting back to its default. |
    /// | `GET /api/reveal?path=` | A secret's value, when the page allows it. |
    /// | `GET /api/history` | The changes with author, time and each path's old and new value. |
    /// | `POST /api/rollback` | `{"revision"}`: the settings as that revision left them, as a new change. |
    /// | `GET /api/status` | A shared store's rollout status: which reader runs which revision, who refused it. |
    /// | `GET /api/events` | Server-Sent Events: every setting first, then after each change, from anywhere, the settings it changed. |
    public func routes<Context: RequestContext>(
        context: Context.Type = BasicRequestContext.self
    ) -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        let handler = PageHandler(page: self)
        routes.get("/") { request, _ in await handler.respond { try await handler.page(request) } }
        routes.get("/api/settings") { request, _ in await handler.respond { try await handler.settings(request) } }
        routes.put("/api/value") { request, _ in await handler.respond { try await handler.save(request) } }
        routes.delete("/api/value") { request, _ in await handler.respond { try await handler.reset(request) } }
        routes.get("/api/reveal") { request, _ in await handler.respond { try await handler.reveal(request) } }
        routes.get("/api/history") { request, _ in await handler.respond { try await handler.history(request) } }
        routes.post("/api/rollback") { request, _ in await handler.respond { try await handler.rollback(request) } }
        routes.get("/api/status") { request, _ in await handler.respond { try await handler.status(request) } }
        routes.get("/api/events") { request, _ in await handler.respond { try await handler.events(request) } }
        return routes
    }
}

/// What each route does.
struct PageHandler: Sendable {
    let page: SettingsPage
    var access: Access { Access(configuration: page.configuration) }
    var model: PageModel { PageModel(root: page.root, configuration: page.configuration) }

    /// The response `body` gives, or the status and message of its failure: never a crash, never a
    /// bare 500 without a message.
    func respond(_ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch {
            return PageError(error).response
        }
    }

    func page(_ request: Request) async throws -> Response {
        do {
            try await access.check(request, writing: false)
        } catch let error as PageError {
            return Response(
                status: error.status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: PageAssets.refusal(error.message))))
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                // Everything the page runs is its own: no other origin's script, style, frame or form target.
                .contentSecurityPolicy:
                    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
                HTTPField.Name("Referrer-Policy")!: "no-referrer",
                HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: PageAssets.html)))
    }

    func settings(_ request: Request) async throws -> Response {
        try await read(request) { try $0.settings() }
    }

    /// What `answer` reads from the model, off the pool, for a caller allowed to read.
    private func read(
        _ request: Request, _ answer: @escaping @Sendable (PageModel) throws -> JSONValue
    ) async throws -> Response {
        try await access.check(request, writing: false)
        let model = self.model
        return .json(try await offPool { try answer(model) })
    }

    /// A write through the root, off the pool, answered with the settings after it (in the same trip).
    /// The caller has checked that the request may write.
    private func write(_ change: @escaping @Sendable (AnyRootLens) throws -> Void) async throws -> Response {
        let root = page.root, model = self.model
        return .json(
            try await offPool {
                try change(root)
                return try model.settings()
            })
    }

    /// One write through the root; refused values answer with the message `loupe` prints, and a value
    /// changed meanwhile with who changed it and what it holds now.
    func save(_ request: Request) async throws -> Response {
        try await access.check(request, writing: true)
        let body = try await access.body(of: request)
        guard case .string(let pathText)? = body[path: "path"] else {
            throw PageError(.badRequest, "the body names no \"path\"")
        }
        guard let value = body[path: "value"] else { throw PageError(.badRequest, "the body holds no \"value\"") }
        let expected = body[path: "expected"]
        let path = try ValuePath(parsing: pathText)
        do {
            return try await write { root in
                if let expected {
                    try root.set(atPath: pathText, to: value, ifUnchangedFrom: expected)
                } else {
                    try root.set(atPath: pathText, to: value)
                }
            }
        } catch let error as SettingsError where error.code == .conflict {
            throw try await conflict(at: path)
        }
    }

    /// 409: the value changed meanwhile, by whom (when the history says), and what it holds now.
    private func conflict(at path: ValuePath) async throws -> PageError {
        let root = page.root, model = self.model
        let (current, author) = try await offPool { () -> (JSONValue?, String?) in
            let current = try? root.value(atPath: path.description)
            let author = (try? root.history())?.changes.last?.author.map(PageModel.name(of:))
            return (current.map { model.shown($0, at: path, in: model.secretPaths(in: $0, at: path)) }, author)
        }
        var message = "\(path) changed meanwhile"
        if let author { message += " by \(author)" }
        message +=
            "; nothing was written. Its value is now \(current?.jsonText() ?? "(none)"): save again to replace it."
        var details: [String: JSONValue] = ["path": .string(path.description), "conflict": .bool(true)]
        if let current { details["current"] = current }
        if let author { details["author"] = .string(author) }
        return PageError(.conflict, message, details: details)
    }

    func reset(_ request: Request) async throws -> Response {
        try await access.check(request, writing: true)
        let pathText = try pathParameter(of: request)
        return try await write { try $0.reset(atPath: pathText) }
    }

    func reveal(_ request: Request) async throws -> Response {
        try await access.check(request, writing: false)
        guard page.configuration.revealsSecrets else {
            throw PageError(.forbidden, "this page does not reveal secrets (start it with reveal allowed)")
        }
        let pathText = try pathParameter(of: request)
        let root = page.root
        let value = try await offPool { try root.value(atPath: pathText) }
        return .json(.object(["path": .string(pathText), "value": value]))
    }

    /// The `?path=` a request names, checked to be a path.
    private func pathParameter(of request: Request) throws -> String {
        guard let pathText = request.uri.queryParameters.get("path") else {
            throw PageError(.badRequest, "name the setting: ?path=")
        }
        _ = try ValuePath(parsing: pathText)
        return pathText
    }

    func history(_ request: Request) async throws -> Response {
        try await read(request) { try $0.history() }
    }

    func rollback(_ request: Request) async throws -> Response {
        try await access.check(request, writing: true)
        let body = try await access.body(of: request)
        guard case .integer(let revision)? = body[path: "revision"] else {
            throw PageError(.badRequest, "the body names no \"revision\" (an integer)")
        }
        return try await write { try $0.rollback(to: revision) }
    }

    func status(_ request: Request) async throws -> Response {
        try await read(request) { try $0.status() }
    }

    func events(_ request: Request) async throws -> Response {
        try await access.check(request, writing: false)
        let stream = page.feed.subscribe()
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream", .cacheControl: "no-store",
                HTTPField.Name("X-Accel-Buffering")!: "no",
            ],
            body: ResponseBody { writer in
                for await event in stream {
                    try await writer.write(ByteBuffer(string: event))
                }
                try await writer.finish(nil)
            })
    }
}
#endif
