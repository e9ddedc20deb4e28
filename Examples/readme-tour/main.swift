// swift-format-ignore-file
// (README.md shows the tour verbatim, aligned comments and all: ReadmeTourTests.)
// The README's tour, as a new user pastes it into a `main.swift`: top-level code, built with the package
// (any compiler warning fails `Scripts/test`) and run by `ExamplesTests`, which also checks that README.md
// shows exactly the lines between the markers.
// README tour begin
import Foundation
import Loupe

struct Server: Codable, Sendable, Equatable { var host = "localhost"; var port = 8080 }
struct Settings: Codable, Sendable, Equatable {
    var server = Server()
    var features: [String: Bool] = [:]
    var upstreams = ["https://a.example"]
}

let file = FileManager.default.temporaryDirectory.appendingPathComponent("tour-\(UUID()).json").path
let root = try RootLens(default: Settings(), store: FileStore(path: file))
let port: MutableLens<Int> = root.server.port                // a lens names only its own value type
let beta: MutableLens<Bool?> = root[\.features["beta"]]
let second: MutableLens<String?> = root.upstreams[index: 1]    // nil while there is no second one

let token = port.observe { print("port is now", $0) }         // after each commit that changes it
try port.set(9090)                                            // saved, then visible, then observed
try await root.async.update { $0.server.port += 1; $0.features["beta"] = true }  // async: off the pool
try await root.upstreams.async.update { $0.append("https://b.example") }
for await p in port.values { print(p); break }                // the current value, then each change
print(root.value.server.port, beta.value ?? false, second.value ?? "none")  // 9091 true https://b.example
token.cancel()
try await root.async.remove()                                 // only the root: delete the file, back to defaults
// README tour end
