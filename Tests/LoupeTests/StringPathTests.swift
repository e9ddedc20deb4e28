import Foundation
import Loupe
import LoupeTestSupport
import Testing

@Suite("String paths over the Codable encoding")
struct StringPathTests {
    struct Item: Codable, Sendable, Equatable {
        var name: String
        var weight = 1
    }

    struct Graph: Codable, Sendable, Equatable {
        var server = Server()
        var features: [String: Bool] = [:]
        var items: [Item] = [Item(name: "a"), Item(name: "b")]
        var labels: [String: String] = ["app.kubernetes.io/name": "loupe"]
        var protection: Protection?
    }

    @Test func pathsParseAndPrint() throws {
        #expect(try ValuePath(parsing: "server.port").components == [.key("server"), .key("port")])
        #expect(try ValuePath(parsing: "items[3].name").components == [.key("items"), .index(3), .key("name")])
        #expect(try ValuePath(parsing: #""key.with.dots""#).components == [.key("key.with.dots")])
        #expect(
            try ValuePath(parsing: #"labels["app.kubernetes.io/name"]"#).components == [
                .key("labels"), .key("app.kubernetes.io/name"),
            ])
        #expect(try ValuePath(parsing: #"labels."a\"b""#).components == [.key("labels"), .key(#"a"b"#)])
        #expect(try ValuePath(parsing: "").components.isEmpty)
        #expect(ValuePath([.key("labels"), .key("a.b"), .index(2)]).description == #"labels."a.b"[2]"#)
        for bad in ["a..b", ".a", "a.", "a[x]", "a[1", #""open"#, "a]b"] {
            #expect(throws: SettingsError.self, "\(bad)") { try ValuePath(parsing: bad) }
        }
    }

    @Test func readsByPath() throws {
        let root = RootLens(Graph())
        #expect(try root.value(atPath: "server.port") == .integer(8080))
        #expect(try root.value(atPath: "items[1].name") == .string("b"))
        #expect(try root.value(atPath: #"labels["app.kubernetes.io/name"]"#) == .string("loupe"))
        #expect(try root.server.value(atPath: "host") == .string("localhost"), "relative to the lens")
        #expect(try root.readOnly.value(atPath: "items[0].weight") == .integer(1))
    }

    @Test func unknownPathsNameTheNearestParentAndItsKeys() throws {
        let root = RootLens(Graph())
        let unknownKey = #expect(throws: failure(.notFound, at: "server.prot")) {
            try root.value(atPath: "server.prot")
        }
        #expect(unknownKey?.parent == "server" && unknownKey?.validKeys == ["host", "port"])
        #expect(unknownKey?.description == "no server.prot: server has host, port")
        let pastTheEnd = #expect(throws: failure(.notFound, at: "items[7]")) {
            try root.value(atPath: "items[7]")
        }
        #expect(pastTheEnd?.parent == "items" && pastTheEnd?.validKeys == ["[0]…[1]"])
        let written = #expect(throws: failure(.notFound, at: "server.prot")) {
            try root.set(atPath: "server.prot", to: .integer(1))
        }
        #expect(written?.validKeys == ["host", "port"])
        #expect(root.value == Graph())
    }

    @Test func writesAreTypeCheckedAgainstTheSwiftType() throws {
        let store = RecordingStore()
        let root = try RootLens(default: Graph(), store: store)
        #expect {
            try root.set(atPath: "server.port", to: .string("abc"))
        } throws: { error in
            "\(error)" == #"server.port: expected Int, found String "abc""#
        }
        #expect {
            try root.set(atPath: "items[0]", to: .object(["weight": .integer(2)]))
        } throws: { error in
            "\(error)" == "items[0].name: missing (a required key)"
        }
        #expect(root.value == Graph())
        #expect(store.saves == 0)

        try root.set(atPath: "server.port", to: .integer(9090))
        try root.set(atPath: "features.beta", to: .bool(true))
        try root.set(atPath: "items[1].name", to: .string("renamed"))
        try root.set(atPath: #"labels."tier""#, to: .string("web"))
        #expect(root.value.server.port == 9090)
        #expect(root.value.features == ["beta": true])
        #expect(root.value.items[1].name == "renamed")
        #expect(root.value.labels["tier"] == "web")
        #expect(store.saves == 4)
    }

    @Test func anOptionalPartCanBeSetMemberByMember() throws {
        let root = RootLens(Graph())
        try root.set(atPath: "protection.enabled", to: .bool(true))
        #expect(root.value.protection == Protection(enabled: true))
        try root.set(atPath: "protection", to: .null)
        #expect(root.value.protection == nil)
    }

    @Test("an index one past an array's end appends an element; one further names the index that would")
    func anIndexOnePastTheEndAppends() throws {
        let root = RootLens(Graph())
        try root.set(atPath: "items[2]", to: .object(["name": .string("c"), "weight": .integer(2)]))
        #expect(root.value.items.map(\.name) == ["a", "b", "c"])
        #expect(root.value.items[2].weight == 2)
        #expect(throws: failure(.invalidValue, at: "items[3].weight")) {
            try root.set(atPath: "items[3].name", to: .string("d"))
        }
        try root.set(atPath: "items[3]", to: .object(["name": .string("d"), "weight": .integer(1)]))

        let tooFar = #expect(throws: failure(.notFound, at: "items[9]")) {
            try root.set(atPath: "items[9]", to: .object(["name": .string("z")]))
        }
        #expect(tooFar?.description == "no items[9]: items has [0]…[3]; items[4] adds an element")
        #expect(tooFar?.validKeys == ["[0]…[3]"])
        let removing = #expect(throws: failure(.notFound, at: "items[4]")) { try root.remove(atPath: "items[4]") }
        #expect(removing?.description == "no items[4]: items has [0]…[3]", "a removal adds nothing")
        #expect(root.value.items.count == 4)

        var document = JSONValue.object([:])
        try document.set(.string("x"), at: ValuePath(parsing: "list[0]"))
        try document.set(.integer(1), at: ValuePath(parsing: "rows[0].cells[0]"))
        #expect(
            document
                == .object([
                    "list": .array([.string("x")]), "rows": .array([.object(["cells": .array([.integer(1)])])]),
                ]))
        // A write that fails changes nothing: neither the key nor the element it made on the way stays.
        let before = document
        #expect(throws: failure(.notFound, at: "other[1]")) {
            try document.set(.null, at: ValuePath(parsing: "other[1]"))
        }
        #expect(throws: failure(.notFound, at: "list[1][3]")) {
            try document.set(.null, at: ValuePath(parsing: "list[1][3]"))
        }
        #expect(throws: failure(.notFound, at: "rows[1].more[2]")) {
            try document.set(.null, at: ValuePath(parsing: "rows[1].more[2]"))
        }
        #expect(document == before)
    }

    @Test("an element appended by path is written into the file's own array, its comments kept")
    func anAppendedElementIsWrittenInPlace() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("settings.toml")
        let text = """
            # upstreams, tried in order
            upstreams = [
              "https://a.example",  # primary
              "https://b.example",  # fallback
            ]
            retries = 3

            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let root = try RootLens(
            default: JSONValue.object([:]), store: FileStore(path: path, format: TOMLCodec()), watch: false)
        try root.set(atPath: "upstreams[2]", to: .string("https://c.example"))
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(
            written == """
                # upstreams, tried in order
                upstreams = [
                  "https://a.example",  # primary
                  "https://b.example",  # fallback
                  "https://c.example",
                ]
                retries = 3

                """)
    }

    @Test func removeDeletesOptionalsEntriesAndElementsButNotRequiredParts() throws {
        let root = RootLens(Graph())
        try root.set(atPath: "features.beta", to: .bool(true))
        try root.set(atPath: "protection", to: .object(["enabled": .bool(true)]))
        try root.remove(atPath: "features.beta")
        try root.remove(atPath: "protection")
        try root.remove(atPath: "items[0]")
        #expect(root.value.features.isEmpty)
        #expect(root.value.protection == nil)
        #expect(root.value.items == [Item(name: "b")])
        #expect(throws: failure(.notRemovable, at: "server.port")) { try root.remove(atPath: "server.port") }
        #expect(throws: SettingsError.self) { try root.remove(atPath: "features.nothing") }
    }

    @Test func jsonValuesParseAndPrint() throws {
        #expect(
            try JSONValue(parsing: #"{"a": [1, 2.5, true, null, "x"]}"#)
                == .object(["a": .array([.integer(1), .double(2.5), .bool(true), .null, .string("x")])]))
        #expect(try JSONValue(parsing: "42") == .integer(42))
        #expect(JSONValue.object(["b": .integer(1), "a": .string("x")]).jsonText() == #"{"a":"x","b":1}"#)
        let roundTrip = try JSONDecoder().decode(
            JSONValue.self, from: JSONEncoder().encode(JSONValue.array([.bool(false), .double(1.5)])))
        #expect(roundTrip == .array([.bool(false), .double(1.5)]))
    }
}
