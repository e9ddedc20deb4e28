import Foundation
import Testing

/// The core module must build on Apple platforms too. No macOS compiler runs here, so this checks what
/// breaks such a build: Linux-only API (Glibc, inotify, epoll, Linux `stat` fields) used outside an
/// `#if os(Linux)` / `#if canImport(Glibc)` (or Musl) branch, or the `#else` of a `canImport(Darwin)` one.
@Suite("The core is portable")
struct PortabilityTests {
    static let linuxOnly = [
        "import Glibc", "Glibc.", "inotify_", "IN_NONBLOCK", "IN_CLOEXEC", "epoll_", "st_mtim.", "explicit_bzero",
    ]
    static let linuxConditions = ["os(Linux)", "canImport(Glibc)", "canImport(Musl)", "not Darwin"]

    @Test func linuxOnlyCodeInTheCoreIsGuarded() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/Loupe").resolvingSymlinksInPath()
        let files =
            FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }.filter {
                $0.hasSuffix(".swift")
            } ?? []
        #expect(files.count > 10)
        var unguarded: [String] = []
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            // The conditions of the branches enclosing each line; an #else branch counts as not Linux.
            var branches: [String] = []
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("#if ") {
                    branches.append(String(trimmed.dropFirst(4)))
                } else if trimmed.hasPrefix("#elseif ") {
                    branches[branches.count - 1] = String(trimmed.dropFirst(8))
                } else if trimmed.hasPrefix("#else") {
                    // The branch after an Apple-platform one is not built on Apple platforms.
                    let previous = branches[branches.count - 1]
                    branches[branches.count - 1] = previous.contains("canImport(Darwin)") ? "not Darwin" : "else"
                } else if trimmed.hasPrefix("#endif") {
                    branches.removeLast()
                } else if !trimmed.hasPrefix("//"), Self.linuxOnly.contains(where: { trimmed.contains($0) }) {
                    let guarded = branches.contains { branch in
                        !branch.contains("!") && Self.linuxConditions.contains { branch.contains($0) }
                    }
                    if !guarded { unguarded.append("\(file):\(number + 1): \(trimmed)") }
                }
            }
        }
        #expect(
            unguarded.isEmpty,
            "Linux-only code outside #if os(Linux) / canImport(Glibc):\n\(unguarded.joined(separator: "\n"))")
    }
}
