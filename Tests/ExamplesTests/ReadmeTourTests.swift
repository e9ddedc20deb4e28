import Foundation
import LoupeTestSupport
import Testing

/// The README's tour lives in `Examples/readme-tour/main.swift`, top-level code as a new user writes it: the
/// package builds it (with no warning) and these tests run it and check that README.md shows it verbatim.
@Suite("README")
struct ReadmeTourTests {
    private static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theTourRunsAndPrintsWhatItsCommentsSay() throws {
        let result = try run(buildProductsDirectory + "/readme-tour", [])
        #expect(result.status == 0, "\(result.error)")
        let printed = result.output.components(separatedBy: "\n")
        #expect(printed.contains("port is now 9090"))
        #expect(printed.contains("port is now 9091"))
        #expect(printed.contains("9091"))
        #expect(printed.contains("9091 true https://b.example"))
    }

    @Test func readmeShowsTheTourVerbatim() throws {
        let readme = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(
            contentsOf: Self.packageRoot.appendingPathComponent("Examples/readme-tour/main.swift"), encoding: .utf8)
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
        return Array(all[(from + 1)..<to])
    }
}
