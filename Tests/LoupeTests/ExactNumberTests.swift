import Foundation
import Loupe
import LoupeTestSupport
import Testing

/// Numbers keep their exact value: a write touches only its path, and a number no Swift type holds as
/// written is kept as written.
@Suite("Numbers: kept exactly, rewritten never")
struct ExactNumberTests {
    struct Ledger: Codable, Sendable, Equatable {
        var price = 0.0
        var id: UInt64 = 0
        var count = 0
        var amount = Decimal(0)
    }

    static let awkward =
        #"{"price": 12345678901234567.89, "id": 18446744073709551615, "count": 1, "amount": 0.1000000000000000000000001}"#

    @Test func aPathWriteOfAnyDocumentLeavesEveryOtherNumberAsWritten() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("document.json")
        try replaceFile(
            path,
            with:
                #"{"price": 12345678901234567.89, "big": 123456789012345678901234567890, "tiny": 1e-400, "huge": 1e400, "id": 18446744073709551615, "half": 0.5}"#
        )
        let root = try RootLens(default: JSONValue.object([:]), store: FileStore(path: path))
        try root.set(atPath: "other", to: .integer(1))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for spelling in [
            "12345678901234567.89", "123456789012345678901234567890", "1e-400", "1e400", "18446744073709551615", "0.5",
        ] {
            #expect(text.contains(": \(spelling)"), "\(spelling) in \(text)")
        }
        #expect(try root.value(atPath: "id") == .exactNumber("18446744073709551615"))
        #expect(try root.value(atPath: "id").jsonText() == "18446744073709551615")
    }

    @Test func aTypedRootReadsWhatItCanHoldAndRespellsNothingItDidNotChange() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("ledger.json")
        try replaceFile(path, with: Self.awkward)
        let root = try RootLens(default: Ledger(), store: FileStore(path: path))
        #expect(root.value.id == UInt64.max)
        #expect(root.value.price == 12345678901234567.89)
        #expect(root.value.amount == Decimal(string: "0.1000000000000000000000001"))
        try root.count.set(2)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(
            text.contains("12345678901234567.89") && text.contains("18446744073709551615")
                && text.contains("0.1000000000000000000000001"), "\(text)")
        #expect(
            text == Self.awkward.replacingOccurrences(of: #""count": 1"#, with: #""count": 2"#),
            "only the changed value is rewritten")
        // A value the program sets is written exactly too: UInt64.max is not 1.8446744073709552e+19.
        try root.id.set(UInt64.max - 1)
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("18446744073709551614"))
        let reread = try RootLens(default: Ledger(), store: FileStore(path: path))
        #expect(reread.value.id == UInt64.max - 1)
    }

    struct Weighed: Codable, Sendable, Equatable {
        var weights: [Double] = []
        var grid: [[Double]] = []
        var count = 0
    }

    @Test func numbersInArraysKeepTheirSpellingThroughEveryUpdateElsewhere() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("weighed.json")
        let written = #"{"weights": [1.0, 2.5, 3.0], "grid": [[1.0, 2], [0.50]], "count": 1}"#
        try replaceFile(path, with: written)
        let root = try RootLens(default: Weighed(), store: FileStore(path: path))
        #expect(root.value.weights == [1, 2.5, 3] && root.value.grid == [[1, 2], [0.5]])
        // Twice: the second update starts from what the first one stored.
        for count in 2...3 {
            try root.count.set(count)
            #expect(
                try String(contentsOfFile: path, encoding: .utf8)
                    == written.replacingOccurrences(of: #""count": 1"#, with: #""count": \#(count)"#))
        }
        try root.weights.update { $0[1] = 4 }
        #expect(
            try String(contentsOfFile: path, encoding: .utf8)
                == #"{"weights": [1.0, 4, 3.0], "grid": [[1.0, 2], [0.50]], "count": 3}"#)
    }

    @Test func aNumberATypeCannotHoldIsAnErrorNotAWrappedValue() throws {
        struct Counter: Codable, Sendable { var id = 0 }
        let root = RootLens(Counter())
        #expect {
            try root.set(atPath: "id", to: JSONValue(parsing: "18446744073709551615"))
        } throws: { error in
            "\(error)".contains(
                "id: expected Int (-9223372036854775808 to 9223372036854775807), found number 18446744073709551615")
        }
        #expect {
            try root.set(atPath: "id", to: JSONValue(parsing: "12345678901234567.89"))
        } throws: { error in
            "\(error)".contains("id: expected Int (a whole number)")
        }
        #expect(root.value.id == 0)
    }

    @Test func aPropertyListRealStaysARealAndNullStaysAString() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.plist")
        try replaceFile(
            path,
            with: """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0"><dict><key>ratio</key><real>2</real><key>word</key><string>$null</string></dict></plist>
                """)
        let root = try RootLens(
            default: JSONValue.object([:]), store: FileStore(path: path, format: PropertyListCodec(format: .xml)))
        try root.set(atPath: "other", to: .integer(1))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("<key>ratio</key>") && !text.contains("<integer>2</integer>"), "\(text)")
        #expect(text.contains("<string>$null</string>"), "\(text)")
    }

    @Test func spellingsOfOneNumberAreOneNumber() throws {
        #expect(try JSONValue(parsing: "0.1") == .double(0.1))
        #expect(try JSONValue(parsing: "1.50") == .double(1.5))
        #expect(try JSONValue(parsing: "1e-7") == .double(1e-7))
        #expect(
            try JSONValue(parsing: "9007199254740993.0") == .exactNumber("9007199254740993.0"), "2^53 + 1 is no Double")
        #expect(try JSONValue(parsing: "-0.0") == .double(-0.0))
        #expect(try JSONValue(parsing: "1e400") == .exactNumber("1e400"))
    }
}
