import Foundation
import Loupe
import LoupeTestSupport
import Testing

// The README's tour, compiled. `readmeShowsThisTourVerbatim` checks that README.md shows exactly the lines
// between the markers, so the README cannot drift from code that builds and runs.
private func tour() async throws {
    // README tour begin
    struct Server: Codable, Sendable, Equatable { var host = "localhost"; var port = 8080 }
    struct Settings: Codable, Sendable, Equatable {
        var server = Server()
        var features: [String: Bool] = [:]
        var upstreams = ["https://a.example"]
    }

    let file = FileManager.default.temporaryDirectory.appendingPathComponent("tour-\(UUID()).json").path
    let root = try RootLens(default: Settings(), store: FileStore(path: file))
    let port: MutableLens<Int> = root.server.port              // a lens names only its own value type
    let beta: MutableLens<Bool?> = root[\.features["beta"]]
    let second: MutableLens<String?> = root.upstreams[index: 1]  // nil while there is no second one

    let token = port.observe { print("port is now", $0) }       // after each commit that changes it
    try await port.set(9090)                                    // saved, then visible, then observed
    try await root.update { $0.server.port += 1; $0.features["beta"] = true }
    try await root.upstreams.update { $0.append("https://b.example") }
    for await p in port.values { print(p); break }              // the current value, then each change
    print(root.value.server.port, beta.value ?? false, second.value ?? "none")  // 9091 true https://b.example
    token.cancel()
    try await root.remove()                                     // only the root: delete the file, back to defaults
    // README tour end
}

@Suite("README")
struct ReadmeTourTests {
    @Test func theTourRuns() async throws {
        try await tour()
    }

    @Test func readmeShowsThisTourVerbatim() throws {
        let here = URL(fileURLWithPath: #filePath)
        let packageRoot = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        let tourLines = lines(of: source, between: "// README tour begin", and: "// README tour end")
        let readmeLines = lines(of: readme, between: "<!-- tour begin -->", and: "<!-- tour end -->")
            .filter { !$0.hasPrefix("```") }
        #expect(!tourLines.isEmpty)
        #expect(readmeLines == tourLines)
    }

    private func lines(of text: String, between start: String, and end: String) -> [String] {
        let all = text.components(separatedBy: "\n")
        guard let from = all.firstIndex(where: { $0.contains(start) }),
            let to = all[from...].firstIndex(where: { $0.contains(end) })
        else { return [] }
        let body = all[(from + 1)..<to]
        let indent = body.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            .map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return body.map { $0.count >= indent ? String($0.dropFirst(indent)) : $0 }
    }
}
