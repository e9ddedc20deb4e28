import Foundation
import Loupe
import LoupeTestSupport
import LoupeYAML
import Testing

/// `text` written as an edit into `change` of the document it holds, through the store's path (which reads
/// every write back).
func editedYAML(_ text: String, _ change: (inout JSONValue) throws -> Void) throws -> String {
    let codec = YAMLCodec()
    let previous = try codec.parse(Data(text.utf8))
    var document = previous
    try change(&document)
    let data = try codec.serializeDocument(document, editing: (Data(text.utf8), previous), store: "test.yaml")
    return String(decoding: data, as: UTF8.self)
}

/// The issue's findings for YAML files people write: each write changes only the bytes of what changed.
@Suite("YAML edits in place")
struct YAMLEditorTests {
    let codec = YAMLCodec()

    func edited(_ text: String, _ change: (inout JSONValue) throws -> Void) throws -> String {
        try editedYAML(text, change)
    }

    static let playbook = """
        ---
        # Web servers
        - name: web servers
          hosts: webservers
          become: yes   # root for the packages
          vars:
            http_port: 80
            greeting: 'hello'
          tasks:
            # Packages first.
            - name: ensure apache is at the latest version
              ansible.builtin.yum:
                name: httpd
                state: latest
            - name: write the apache config file
              ansible.builtin.template:
                src: "/srv/httpd.j2"
                dest: /etc/httpd.conf

        """

    @Test func aPlaybookTaskEditKeepsTheRest() throws {
        let changed = try edited(Self.playbook) {
            try $0.set(
                .string("absent"),
                at: ValuePath([.index(0), .key("tasks"), .index(0), .key("ansible.builtin.yum"), .key("state")]))
        }
        #expect(changed == Self.playbook.replacingOccurrences(of: "state: latest", with: "state: absent"))
        let added = try edited(Self.playbook) {
            try $0.set(
                .array([
                    .object([
                        "name": .string("web servers"), "hosts": .string("webservers"), "become": .bool(true),
                        "vars": .object(["http_port": .integer(80), "greeting": .string("hello")]),
                        "tasks": try $0.value(at: "[0].tasks"),
                    ]),
                    .object(["name": .string("db"), "hosts": .string("dbservers")]),
                ]), at: "")
        }
        #expect(added == Self.playbook + "- hosts: dbservers\n  name: db\n")
        let port = try edited(Self.playbook) { try $0.set(.integer(8080), at: "[0].vars.http_port") }
        #expect(port == Self.playbook.replacingOccurrences(of: "http_port: 80", with: "http_port: 8080"))
    }

    static let workflow = """
        name: CI
        on:
          push:
            branches: [main]
        jobs:
          build:
            runs-on: ubuntu-latest
            steps:
              - uses: actions/checkout@v4
              - name: Build
                run: |
                  swift build
                  swift test --parallel

              - name: Lint
                run: >
                  swiftlint
                  --strict
            env:
              CI: "true"

        """

    @Test func aWorkflowWithBlockScalarsKeepsEveryOtherByte() throws {
        let changed = try edited(Self.workflow) { try $0.set(.string("ubuntu-24.04"), at: "jobs.build.runs-on") }
        #expect(changed == Self.workflow.replacingOccurrences(of: "ubuntu-latest", with: "ubuntu-24.04"))
        let step = try edited(Self.workflow) { try $0.set(.string("Lint all"), at: "jobs.build.steps[2].name") }
        #expect(step == Self.workflow.replacingOccurrences(of: "name: Lint", with: "name: Lint all"))
        let run = try edited(Self.workflow) {
            try $0.set(.string("swift build\nswift test\n"), at: "jobs.build.steps[1].run")
        }
        #expect(run == Self.workflow.replacingOccurrences(of: "swift test --parallel", with: "swift test"))
        let removed = try edited(Self.workflow) { try $0.remove(at: "jobs.build.steps[0]") }
        #expect(removed == Self.workflow.replacingOccurrences(of: "      - uses: actions/checkout@v4\n", with: ""))
    }

    @Test func aFlowListStaysFlow() throws {
        let text = "healthcheck:\n  test: [\"CMD-SHELL\", \"curl -f http://localhost\"]\n  interval: 30s\n"
        #expect(
            try edited(text) { try $0.set(.string("curl -f http://localhost:8080"), at: "healthcheck.test[1]") }
                == text.replacingOccurrences(of: "localhost\"", with: "localhost:8080\""))
        #expect(
            try edited(text) { try $0.remove(at: "healthcheck.test[0]") }
                == "healthcheck:\n  test: [\"curl -f http://localhost\"]\n  interval: 30s\n")
        #expect(
            try edited(text) {
                try $0.set(
                    .array([.string("CMD-SHELL"), .string("curl -f http://localhost"), .string("x")]),
                    at: "healthcheck.test")
            }
                == "healthcheck:\n  test: [\"CMD-SHELL\", \"curl -f http://localhost\", x]\n  interval: 30s\n")
    }

    @Test func aFlowMappingWithAComment() throws {
        let text = "m: {a: 1, b: 2} # c\n"
        #expect(try edited(text) { try $0.set(.integer(3), at: "m.b") } == "m: {a: 1, b: 3} # c\n")
        #expect(try edited(text) { try $0.set(.integer(30), at: "m.a") } == "m: {a: 30, b: 2} # c\n")
        #expect(try edited(text) { try $0.set(.integer(3), at: "m.c") } == "m: {a: 1, b: 2, c: 3} # c\n")
        #expect(try edited(text) { try $0.remove(at: "m.a") } == "m: {b: 2} # c\n")
        #expect(
            try edited("m: {a: , b}\n") {
                try $0.set(.array([.integer(1), .integer(2)]), at: "m.a"); try $0.set(.integer(3), at: "m.b")
            }
                == "m: {a: [1, 2] , b: 3}\n")
    }

    @Test func aNullValueSetGetsItsSpace() throws {
        #expect(try edited("a:\nb: 2\n") { try $0.set(.integer(1), at: "a") } == "a: 1\nb: 2\n")
        #expect(try edited("a: # none yet\nb: 2\n") { try $0.set(.integer(1), at: "a") } == "a: 1 # none yet\nb: 2\n")
    }

    @Test func keysAndStringsOtherReadersTypeAreQuoted() throws {
        let written = try edited("name: x\n") {
            try $0.set(.string("a"), at: ValuePath([.key("yes")]))
            try $0.set(.string("b"), at: ValuePath([.key("1")]))
            try $0.set(.string("yes"), at: "name")
        }
        #expect(written == "name: \"yes\"\n\"1\": b\n\"yes\": a\n")
        let independent = try IndependentParser.yaml.parse([written])
        #expect(independent == [.object(["yes": .string("a"), "1": .string("b"), "name": .string("yes")])])
    }

    @Test func anAliasElsewhereInTheListRefusesNothing() throws {
        let text = "base: &b {x: 1}\nlist:\n  - *b\n  - 2\n"
        #expect(
            try edited(text) { try $0.set(.integer(3), at: "list[1]") } == "base: &b {x: 1}\nlist:\n  - *b\n  - 3\n")
        #expect(try edited(text) { try $0.remove(at: "list[1]") } == "base: &b {x: 1}\nlist:\n  - *b\n")
        // An alias may go: nothing else shows it.
        #expect(try edited(text) { try $0.remove(at: "list[0]") } == "base: &b {x: 1}\nlist:\n  - 2\n")
    }

    /// A change through an alias writes that alias out in full (in its anchored mapping's key order); a
    /// change inside an anchored mapping is made in place, and every place that shows it keeps what it
    /// showed: an alias written out, a key a merge key brings in made the merging mapping's own. Taking out
    /// the anchored mapping, or a key a merge key would bring in again, is refused with the path.
    @Test func editsThroughAliasesAndAnchorsKeepWhatElseShowsThemAndRefusalsNameThePath() throws {
        let text = "base: &b\n  y: 2\n  x: 1\nalias: *b\nservice:\n  <<: *b\n  y: 3\n"
        #expect(
            try edited(text) { try $0.set(.integer(5), at: "alias.x") }
                == text.replacingOccurrences(of: "alias: *b", with: "alias:\n  y: 2\n  x: 5"))
        #expect(
            try edited(text) { try $0.set(.integer(5), at: "base.x") }
                == "base: &b\n  y: 2\n  x: 5\nalias:\n  y: 2\n  x: 1\nservice:\n  <<: *b\n  y: 3\n  x: 1\n")
        // Where every place that shows it changes with it, it changes in the anchored mapping alone.
        #expect(
            try edited(text) {
                for path: ValuePath in ["base.x", "alias.x", "service.x"] { try $0.set(.integer(5), at: path) }
            } == text.replacingOccurrences(of: "x: 1", with: "x: 5"))
        // A key the anchored mapping gains that a merging mapping does not hold would come in: refused.
        #expect {
            try edited(text) { try $0.set(.integer(5), at: "base.z") }
        } throws: { error in
            "\(error)".contains("test.yaml: service.z: ") && "\(error)".contains("merge key")
        }
        for (change, path, why) in [
            ({ (d: inout JSONValue) in try d.remove(at: "base") }, "base", "anchored (&b)"),
            ({ (d: inout JSONValue) in try d.set(.integer(5), at: "base") }, "base", "anchored (&b)"),
            ({ (d: inout JSONValue) in try d.remove(at: "service.x") }, "service.x", "merge key"),
        ] as [((inout JSONValue) throws -> Void, String, String)] {
            #expect {
                try edited(text, change)
            } throws: { error in
                "\(error)".contains("test.yaml: \(path): ") && "\(error)".contains(why)
            }
        }
        // The mapping's own key is edited where it stands; a key only the merge brings in becomes its own.
        #expect(
            try edited(text) { try $0.set(.integer(4), at: "service.y") }
                == text.replacingOccurrences(of: "y: 3", with: "y: 4"))
        #expect(try edited(text) { try $0.set(.integer(5), at: "service.x") } == text + "  x: 5\n")
    }

    @Test func severalDocumentsAreRefusedNamingTheFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("two.yaml")
        try Data("a: 1\n---\na: 2\n".utf8).write(to: URL(fileURLWithPath: path))
        struct A: Codable, Sendable, Equatable { var a = 0 }
        #expect {
            _ = try RootLens(default: A(), store: FileStore(path: path, format: YAMLCodec()), watch: false)
        } throws: { error in
            "\(error)".contains(path)
        }
    }

    @Test func anEmptyFileIsAnEmptyDocumentAWriteFills() throws {
        #expect(try codec.parse(Data()) == .object([:]))
        #expect(try codec.parse(Data("# nothing yet\n".utf8)) == .object([:]))
        #expect(try edited("") { try $0.set(.integer(1), at: "a") } == "a: 1\n")
        #expect(
            try edited("# nothing yet\n") { try $0.set(.object(["b": .bool(true)]), at: "a") }
                == "# nothing yet\na:\n  b: true\n")
    }

    @Test(
        "a comment above a list element, at its content's indentation after a blank line, is that element's; right under the element before, it is that one's"
    )
    func commentsAboveElementsAtTheirContentsIndentation() throws {
        let text = """
            steps:
              - name: fmt
                run: cargo fmt

                # If changing these settings also change toolkit.nu
              - name: Clippy
                run: cargo clippy
                # run: cargo clippy --all
              - name: Test
                run: cargo test

            """
        let clippyGone = try edited(text) { try $0.remove(at: "steps[1]") }
        #expect(
            clippyGone
                == text.replacingOccurrences(
                    of:
                        "\n    # If changing these settings also change toolkit.nu\n  - name: Clippy\n    run: cargo clippy\n    # run: cargo clippy --all\n",
                    with: "\n"))
        let testGone = try edited(text) { try $0.remove(at: "steps[2]") }
        #expect(
            testGone == text.replacingOccurrences(of: "  - name: Test\n    run: cargo test\n", with: ""),
            "the commented-out setting stays with Clippy")
    }

    @Test("a typed Double that is infinite goes through a YAML store as .inf, and reads back so")
    func infinityThroughAStore() throws {
        struct Limits: Codable, Sendable, Equatable { var ceiling = 1.0 }
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.file("limits.yaml")
        try Data("# the ceiling\nceiling: 2.5\n".utf8).write(to: URL(fileURLWithPath: path))
        let root = try RootLens(default: Limits(), store: FileStore(path: path, format: codec), watch: false)
        try root.ceiling.set(.infinity)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "# the ceiling\nceiling: .inf\n")
        let again = try RootLens(default: Limits(), store: FileStore(path: path, format: codec), watch: false)
        #expect(again.value.ceiling == .infinity)
    }

    @Test func infinitiesAndNaNAreDoubles() throws {
        let document = try codec.parse(Data("a: .inf\nb: -.inf\nc: .nan\n".utf8))
        #expect(document[path: "a"] == .double(.infinity) && document[path: "b"] == .double(-.infinity))
        if case .double(let nan)? = document[path: "c"] {
            #expect(nan.isNaN)
        } else {
            Issue.record("c is \(String(describing: document[path: "c"]))")
        }
        #expect(try edited("a: 1\n") { try $0.set(.double(.infinity), at: "a") } == "a: .inf\n")
    }

    @Test func removingAListElementTakesItsOwnCommentOnly() throws {
        let text = "hosts:\n  # the first\n  - a   # primary\n  # the second\n  - b\n  - c\n"
        #expect(try edited(text) { try $0.remove(at: "hosts[0]") } == "hosts:\n  # the second\n  - b\n  - c\n")
        #expect(
            try edited(text) { try $0.remove(at: "hosts[1]") } == "hosts:\n  # the first\n  - a   # primary\n  - c\n")
        #expect(
            try edited(text) { try $0.set(.array([.string("a"), .string("b")]), at: "hosts") }
                == "hosts:\n  # the first\n  - a   # primary\n  # the second\n  - b\n")
    }

    @Test func aRootSequenceKeepsItsMarkerAndValuesKeepTheirSpelling() throws {
        let text = "---\n- name: x\n  enabled: yes\n  mode: 'fast'\n- name: y\n  enabled: no\n"
        #expect(
            try edited(text) { try $0.set(.string("z"), at: "[1].name") }
                == text.replacingOccurrences(of: "name: y", with: "name: z"))
        #expect(
            try edited(text) { try $0.set(.string("slow"), at: "[0].mode") }
                == text.replacingOccurrences(of: "'fast'", with: "'slow'"))
        #expect(
            try edited(text) { try $0.set(.string("on"), at: "[0].mode") }
                == text.replacingOccurrences(of: "'fast'", with: "'on'"))
    }

    @Test func aScalarBecomesACollectionInItsContainersStyle() throws {
        #expect(try edited("a: 1\nb: 2\n") { try $0.set(.object(["x": .integer(1)]), at: "a") } == "a:\n  x: 1\nb: 2\n")
        #expect(try edited("a: [1, 2]\n") { try $0.set(.object(["x": .integer(1)]), at: "a[0]") } == "a: [{x: 1}, 2]\n")
        #expect(try edited("a:\n  x: 1\nb: 2\n") { try $0.set(.string("s"), at: "a") } == "a: s\nb: 2\n")
        #expect(
            try edited("l:\n  - 1\n") { try $0.set(.object(["a": .integer(1), "b": .integer(2)]), at: "l[0]") }
                == "l:\n  - a: 1\n    b: 2\n")
    }

    @Test func aRemovedKeyTakesItsCommentLinesAndItsNestedLines() throws {
        let text = "a: 1\n# about b\nb:  # b's\n  c: 2\n  d:\n    - 3\nz: 4\n"
        #expect(try edited(text) { try $0.remove(at: "b") } == "a: 1\nz: 4\n")
        #expect(
            try edited(text) { try $0.set(.integer(5), at: "b.e") }
                == "a: 1\n# about b\nb:  # b's\n  c: 2\n  d:\n    - 3\n  e: 5\nz: 4\n")
    }
}

/// Which plain strings another reader would take for another type.
@Suite("YAML plain scalars")
struct YAMLPlainScalarTests {
    static let typed = [
        "yes", "No", "ON", "off", "true", "null", "~", "=", "<<", "1", "-1", "+1", "1.5", ".5", "1e3", "1.0e+3", "0x1F",
        "0o17", "017",
        "0b101", "1_000", "12:30", ".inf", "-.inf", ".nan",
        "2001-12-14", "2001-12-14 21:59:43.10 -5",
    ]
    static let strings = [
        "alpha", "1.2.3", "v1", "y", "n", "web-1", "http://a.example", "release/v2", "0xZZ", "1e", "infinity", "nan",
    ]

    /// Each word written as a new value stays plain exactly when no reader takes it for another type, and
    /// PyYAML reads every one back as the string.
    @Test func plainTextIsQuotedExactlyWhereAnotherReaderSeesAnotherType() throws {
        let codec = YAMLCodec()
        let words = Self.typed + Self.strings
        var written: [String] = []
        for word in words {
            let previous = try codec.parse(Data("v: x\n".utf8))
            let data = try codec.serializeDocument(
                .object(["v": .string(word)]), editing: (Data("v: x\n".utf8), previous), store: "test")
            written.append(String(decoding: data, as: UTF8.self))
        }
        for (index, word) in words.enumerated() {
            #expect(
                (written[index] == "v: \(word)\n") == Self.strings.contains(word), "\(word) written \(written[index])")
        }
        let plainly = try IndependentParser.yaml.answers(Self.typed.map { "v: \($0)\n" })
        // Each word taken for another type is, by PyYAML (1.1) or Yams (1.2); PyYAML's dates come back here
        // as their text.
        for (word, answer) in zip(Self.typed, plainly) where !word.hasPrefix("2001") {
            let yams = try? codec.parse(Data("v: \(word)\n".utf8))
            #expect(
                (try? answer.get()) != .object(["v": .string(word)]) || yams != .object(["v": .string(word)]),
                "PyYAML or Yams takes \(word) for another type")
        }
        for (word, answer) in zip(words, try IndependentParser.yaml.answers(written)) {
            #expect(try answer.get() == .object(["v": .string(word)]), "\(word)")
        }
    }
}

/// Files as people write them (compose, CloudFormation, Kubernetes, CI): an edit anywhere changes only the
/// bytes of what changed.
@Suite("YAML files from the world, edited in place")
struct YAMLWorldFileTests {
    let codec = YAMLCodec()

    func edited(_ text: String, _ change: (inout JSONValue) throws -> Void) throws -> String {
        try editedYAML(text, change)
    }

    static let compose = """
        x-defaults: &defaults
          restart: unless-stopped
          logging:
            driver: json-file

        services:
          web:
            <<: *defaults
            image: "nginx:1.27"
            ports:
              - "8080:80"   # public
            healthcheck:
              test: ["CMD-SHELL",
                     "curl -f http://localhost || exit 1"]
              interval: 30s
          db:
            <<: *defaults
            image: postgres:16
            environment:
              POSTGRES_PASSWORD: example

        """

    /// Random writes of one to three changes each (sets, removals, additions, at keys of services that merge
    /// anchors, inside the values the merges bring in, and at the anchors themselves), seeded: each write
    /// either is refused (an alias's, an anchor's, a merged key removed) and leaves the text as it was, or
    /// writes a text that this reader and PyYAML read as the document meant, the anchors' own values kept.
    @Test(arguments: Array(UInt64(1)...8))
    func randomWritesThroughMergeKeysWriteWhatWasMeantOrAreRefused(seed: UInt64) throws {
        let start = """
            x-env: &env
              A: "1"
              B: "2"
            x-common: &common
              image: app:1 # pinned
              environment: *env
              labels: {tier: back}
              volumes:
                - data:/data
            services:
              web:
                <<: *common
                ports: ["80:80"]
              worker:
                <<: *common
                environment:
                  <<: *env
                  C: "3"   # own
              db:
                image: postgres:16

            """
        let paths = [
            "services.web.image", "services.web.environment.A", "services.web.environment.Z",
            "services.web.labels.tier",
            "services.web.volumes[0]", "services.web.ports[0]", "services.worker.environment.B",
            "services.worker.environment.C", "services.worker.image", "services.db.image", "services.db.environment.A",
            "x-env.A", "x-common.image", "services.web.new",
        ].map { try! ValuePath(parsing: $0) }
        let codec = YAMLCodec()
        var generator = SeededGenerator(seed: seed)
        var text = start
        var model = try codec.parse(Data(text.utf8))
        var written: [(text: String, model: JSONValue)] = []
        var refused = 0
        for step in 0..<120 {
            var next = model
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let path = paths.randomElement(using: &generator)!
                if Bool.random(using: &generator), (try? next.value(at: path)) != nil {
                    try? next.remove(at: path)
                } else {
                    let values: [JSONValue] = [
                        .string("v\(step)"), .integer(step), .object(["k": .string("s\(step)")]),
                        .array([.string("a"), .integer(step)]),
                    ]
                    try? next.set(values.randomElement(using: &generator)!, at: path)
                }
            }
            do {
                let data = try codec.serializeDocument(next, editing: (Data(text.utf8), model), store: "compose.yaml")
                text = String(decoding: data, as: UTF8.self)
                model = next
                #expect(try codec.parse(data) == model, "step \(step):\n\(text)")
                written.append((text, model))
            } catch let error as SettingsError where error.cause is TextEditRefusal {
                refused += 1
            }
        }
        #expect(written.count > 40, "most writes land (\(refused) refused)")
        let independent = try IndependentParser.yaml.parse(written.map(\.text))
        for (index, reading) in independent.enumerated() {
            #expect(reading == written[index].model, "\(written[index].text)")
        }
    }

    /// A mapping that is its parent's last entry, and that parent, both gaining keys in one write (here the
    /// parent a key its merge key brings in, made its own, which the edits may name before the inner one's):
    /// the lines go at one place, the inner mapping's first. Written the other way, the outer key would end
    /// the inner mapping, and its new key would not read.
    @Test func anInnerAndAnOuterMappingGainingKeysAtOnePlace() throws {
        let text = "base: &b\n  m: 0\nx:\n  <<: *b\n  y:\n    c: 1\nz: 0\n"
        for _ in 0..<8 {
            #expect(
                try edited(text) {
                    try $0.set(.integer(1), at: "x.m")
                    try $0.set(.integer(2), at: "x.y.d")
                } == "base: &b\n  m: 0\nx:\n  <<: *b\n  y:\n    c: 1\n    d: 2\n  m: 1\nz: 0\n")
        }
    }

    /// A collection an edit writes is laid out as the file's own are: a Kubernetes manifest's sequences with
    /// their dashes at their key's column, a file indented by four by four; a file with no nested
    /// collection by two.
    @Test func newCollectionsFollowTheFilesLayout() throws {
        let manifest = """
            spec:
              containers:
              - name: app
                args:
                - --verbose

            """
        #expect(
            try edited(manifest) {
                try $0.set(.array([.object(["containerPort": .integer(80)])]), at: "spec.containers[0].ports")
            } == manifest + "    ports:\n    - containerPort: 80\n")
        let byFour = "a:\n    b:\n        c: 1\n    d:\n        - 1\n"
        #expect(
            try edited(byFour) {
                try $0.set(.object(["f": .object(["g": .array([.integer(1)])])]), at: "a.e")
            } == byFour + "    e:\n        f:\n            g:\n                - 1\n")
        #expect(
            try edited("a: 1\n") { try $0.set(.object(["b": .array([.integer(1)])]), at: "c") }
                == "a: 1\nc:\n  b:\n    - 1\n")
    }

    /// A mapping a merge key brings in, changed inside for one service: where it is anchored, the service's
    /// own merges that anchor and holds what differs (as the file's authors write it); a key taken out of it,
    /// or one that is not anchored, is the mapping as it is now. Every other service, and the anchor, stay.
    @Test func aMergedMappingChangedForOneServiceBecomesItsOwn() throws {
        let text = """
            x-common: &common
              image: app:1 # pinned
              environment: &env
                A: "1"
                B: "2"
              labels:
                tier: back
            services:
              web:
                <<: *common
                ports: ["80:80"]
              worker:
                <<: *common

            """
        #expect(
            try edited(text) {
                try $0.set(.string("7"), at: "services.web.environment.A")
                try $0.set(.string("z"), at: "services.web.environment.Z")
            }
                == text.replacingOccurrences(
                    of: "    ports: [\"80:80\"]\n",
                    with: "    ports: [\"80:80\"]\n    environment:\n      <<: *env\n      A: \"7\"\n      Z: z\n"))
        #expect(
            try edited(text) { try $0.remove(at: "services.web.environment.B") }
                == text.replacingOccurrences(
                    of: "    ports: [\"80:80\"]\n", with: "    ports: [\"80:80\"]\n    environment:\n      A: \"1\"\n"))
        #expect(
            try edited(text) { try $0.set(.string("front"), at: "services.worker.labels.tier") }
                == text + "    labels:\n      tier: front\n")
    }

    @Test func aComposeFileWithAnchorsAndMergeKeys() throws {
        #expect(
            try edited(Self.compose) { try $0.set(.string("nginx:1.28"), at: "services.web.image") }
                == Self.compose.replacingOccurrences(of: "nginx:1.27", with: "nginx:1.28"))
        #expect(
            try edited(Self.compose) {
                try $0.set(.array([.string("8080:80"), .string("8443:443")]), at: "services.web.ports")
            }
                == Self.compose.replacingOccurrences(
                    of: "\"8080:80\"   # public\n", with: "\"8080:80\"   # public\n      - \"8443:443\"\n"))
        #expect(
            try edited(Self.compose) { try $0.set(.string("30s"), at: "services.web.healthcheck.timeout") }
                == Self.compose.replacingOccurrences(of: "interval: 30s\n", with: "interval: 30s\n      timeout: 30s\n")
        )
        #expect(
            try edited(Self.compose) {
                try $0.set(.string("curl -f http://localhost:8080"), at: "services.web.healthcheck.test[1]")
            }
                == Self.compose.replacingOccurrences(
                    of: "\"curl -f http://localhost || exit 1\"", with: "\"curl -f http://localhost:8080\""))
        #expect(
            try edited(Self.compose) { try $0.remove(at: "services.db.environment") }
                == Self.compose.replacingOccurrences(
                    of: "    environment:\n      POSTGRES_PASSWORD: example\n", with: ""))
        // A key the merge brings in, set: the service's own, after its last entry; the anchor and the other
        // service that merges it stay as they were.
        #expect(
            try edited(Self.compose) { try $0.set(.string("always"), at: "services.db.restart") }
                == Self.compose.replacingOccurrences(
                    of: "POSTGRES_PASSWORD: example\n", with: "POSTGRES_PASSWORD: example\n    restart: always\n"))
        // A value inside one the merge brings in, changed: that value, as it is now, the service's own.
        #expect(
            try edited(Self.compose) { try $0.set(.string("local"), at: "services.db.logging.driver") }
                == Self.compose.replacingOccurrences(
                    of: "POSTGRES_PASSWORD: example\n",
                    with: "POSTGRES_PASSWORD: example\n    logging:\n      driver: local\n"))
        // Taken out, a key the merge brings in would show again: refused.
        #expect {
            try edited(Self.compose) { try $0.remove(at: "services.db.restart") }
        } throws: { error in
            "\(error)".contains("services.db.restart: it comes from a YAML merge key (<<)")
        }
        // A value inside the anchor's mapping, changed: changed there, and each service that merges it keeps
        // what it showed, as its own.
        #expect(
            try edited(Self.compose) { try $0.set(.string("local"), at: "x-defaults.logging.driver") }
                == Self.compose.replacingOccurrences(of: "driver: json-file", with: "driver: local")
                .replacingOccurrences(
                    of: "      interval: 30s\n", with: "      interval: 30s\n    logging:\n      driver: json-file\n"
                )
                .replacingOccurrences(
                    of: "POSTGRES_PASSWORD: example\n",
                    with: "POSTGRES_PASSWORD: example\n    logging:\n      driver: json-file\n"))
    }

    static let cloudFormation = """
        %YAML 1.2
        ---
        AWSTemplateFormatVersion: "2010-09-09"
        Description: >-
          A bucket and its policy,
          for the logs.
        Resources:
          Logs:
            Type: AWS::S3::Bucket
            Properties:
              BucketName: !Sub "${AWS::StackName}-logs"
              Tags:
              - Key: team
                Value: platform
              - Key: cost
                Value: '1234'
        ...

        """

    @Test func aTemplateWithDirectivesTagsAndIndentlessSequences() throws {
        #expect(
            try edited(Self.cloudFormation) {
                try $0.set(.string("5678"), at: "Resources.Logs.Properties.Tags[1].Value")
            }
                == Self.cloudFormation.replacingOccurrences(of: "'1234'", with: "'5678'"))
        #expect(
            try edited(Self.cloudFormation) {
                try $0.set(.string("${AWS::StackName}-audit"), at: "Resources.Logs.Properties.BucketName")
            }
                == Self.cloudFormation.replacingOccurrences(of: "-logs\"", with: "-audit\""))
        #expect(
            try edited(Self.cloudFormation) {
                try $0.set(
                    .array([
                        .object(["Key": .string("team"), "Value": .string("platform")]),
                        .object(["Key": .string("cost"), "Value": .string("1234")]),
                        .object(["Key": .string("env"), "Value": .string("prod")]),
                    ]), at: "Resources.Logs.Properties.Tags")
            }
                == Self.cloudFormation.replacingOccurrences(
                    of: "Value: '1234'\n", with: "Value: '1234'\n      - Key: env\n        Value: prod\n"))
        #expect(
            try edited(Self.cloudFormation) {
                try $0.set(.string("Buckets for the logs,\nkept a year.\n"), at: "Description")
            }
                == Self.cloudFormation.replacingOccurrences(
                    of: ">-\n  A bucket and its policy,\n  for the logs.",
                    with: ">\n  Buckets for the logs,\n\n  kept a year."))
    }

    static let deployment = """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: api
          labels: {app: api, tier: backend}
        spec:
          replicas: 2
          template:
            spec:
              containers:
              - name: api
                image: registry.example/api:1.4.2
                args: ["--port", "8080",
                  "--verbose"]
                env:
                - name: GREETING
                  value: "hello,
                    world"
                - name: MODE
                  value: plain text
                    continued
        """

    @Test func aManifestWithMultiLineScalarsAndFlowOverLines() throws {
        #expect(
            try edited(Self.deployment) { try $0.set(.integer(3), at: "spec.replicas") }
                == Self.deployment.replacingOccurrences(of: "replicas: 2", with: "replicas: 3"))
        #expect(
            try edited(Self.deployment) { try $0.set(.string("frontend"), at: "metadata.labels.tier") }
                == Self.deployment.replacingOccurrences(of: "tier: backend", with: "tier: frontend"))
        #expect(
            try edited(Self.deployment) {
                try $0.set(.string("bonjour"), at: "spec.template.spec.containers[0].env[0].value")
            }
                == Self.deployment.replacingOccurrences(of: "\"hello,\n            world\"", with: "\"bonjour\""))
        #expect(
            try edited(Self.deployment) {
                try $0.set(.string("strict"), at: "spec.template.spec.containers[0].env[1].value")
            }
                == Self.deployment.replacingOccurrences(of: "plain text\n            continued", with: "strict"))
        #expect(
            try edited(Self.deployment) { try $0.remove(at: "spec.template.spec.containers[0].args[2]") }
                == Self.deployment.replacingOccurrences(of: "\"8080\",\n          \"--verbose\"]", with: "\"8080\"]"))
        #expect(
            try edited(Self.deployment) {
                try $0.set(.string("registry.example/api:1.4.3"), at: "spec.template.spec.containers[0].image")
            }
                == Self.deployment.replacingOccurrences(of: "1.4.2", with: "1.4.3"))
    }

    @Test func tagsStayWhileTheyStillSayWhatTheValueIs() throws {
        let text = "a: !!str 5\nb: !Ref bucket  # ref\nc: &unused 1\n"
        #expect(
            try edited(text) { try $0.set(.string("6"), at: "a") }
                == "a: !!str 6\nb: !Ref bucket  # ref\nc: &unused 1\n")
        #expect(try edited(text) { try $0.set(.integer(7), at: "a") } == "a: 7\nb: !Ref bucket  # ref\nc: &unused 1\n")
        #expect(
            try edited(text) { try $0.set(.string("logs"), at: "b") }
                == "a: !!str 5\nb: !Ref logs  # ref\nc: &unused 1\n")
        // An anchor no alias refers to refuses nothing.
        #expect(
            try edited(text) { try $0.set(.integer(2), at: "c") } == "a: !!str 5\nb: !Ref bucket  # ref\nc: &unused 2\n"
        )
    }

    @Test func anIndentlessSequenceIsEditedAtItsColumn() throws {
        let text = "hosts:\n- a\n- b\nport: 1\n"
        #expect(try edited(text) { try $0.remove(at: "hosts[0]") } == "hosts:\n- b\nport: 1\n")
        #expect(
            try edited(text) { try $0.set(.array([.string("a"), .string("b"), .string("c")]), at: "hosts") }
                == "hosts:\n- a\n- b\n- c\nport: 1\n")
        #expect(try edited(text) { try $0.set(.array([]), at: "hosts") } == "hosts: []\nport: 1\n")
    }

    @Test func blockScalarsKeepTheirStyleAndIndentation() throws {
        #expect(
            try edited("s: |-\n    a\n    b\nn: 1\n") { try $0.set(.string("x\ny"), at: "s") }
                == "s: |-\n    x\n    y\nn: 1\n")
        #expect(try edited("s: |\n  a\nn: 1\n") { try $0.set(.string("x\n\n"), at: "s") } == "s: |+\n  x\n\nn: 1\n")
        #expect(
            try edited("s: >\n  one two\n  three\nn: 1\n") { try $0.set(.string("alpha beta\ngamma\n"), at: "s") }
                == "s: >\n  alpha beta\n\n  gamma\nn: 1\n")
        #expect(try edited("s: |  # a comment\n  a\nn: 1\n") { try $0.set(.integer(5), at: "s") } == "s: 5\nn: 1\n")
    }
}
