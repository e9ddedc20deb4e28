// swift-tools-version:6.1
import PackageDescription

// The suites the sanitizers run, built alone: the core, YAML and the keyring, with their tests, from the
// package's own sources (the folders here are links to them). Loupe's package builds every product, and
// with them SwiftNIO, async-http-client and the other servers' dependencies; a build under a sanitizer
// compiles all it builds again, instrumented. These suites reach no such dependency, so this package
// lets `Scripts/test` run them under ThreadSanitizer and AddressSanitizer in a fraction of the time:
//
//     swift test --package-path Scripts/sanitizers --sanitize=thread
//
// The suites of processes (the examples, the CLI, writers killed or racing editors, an etcd cluster) run
// in the plain build only: under a sanitizer they measure its slowness, not Loupe.
let package = Package(
    name: "LoupeSanitized",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        .target(name: "Loupe", dependencies: ["CLoupeSystem", .product(name: "Logging", package: "swift-log")]),
        .target(name: "CLoupeSystem"),
        .target(name: "LoupeTesting", dependencies: ["Loupe"]),
        .target(name: "LoupeYAML", dependencies: ["Loupe", "Yams"], swiftSettings: [.define("YAML")]),
        .systemLibrary(name: "CLibSecret", pkgConfig: "libsecret-1"),
        .target(
            name: "LoupeKeyring",
            dependencies: ["Loupe", "CLibSecret", .product(name: "Logging", package: "swift-log")]),
        .target(name: "LoupeTestSupport", dependencies: ["Loupe", "LoupeTesting"], path: "Tests/LoupeTestSupport"),
        .executableTarget(
            name: "LoupeTestHelper",
            dependencies: ["Loupe", "LoupeKeyring", "LoupeYAML", .product(name: "Logging", package: "swift-log")],
            path: "Tests/LoupeTestHelper"),
        .testTarget(
            name: "LoupeTests",
            dependencies: [
                "Loupe", "LoupeTesting", "LoupeTestSupport", "LoupeTestHelper",
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(
            name: "LoupeYAMLTests", dependencies: ["LoupeYAML", "LoupeTesting", "LoupeTestSupport"],
            swiftSettings: [.define("YAML")]),
        .testTarget(
            name: "LoupeKeyringTests",
            dependencies: [
                "LoupeKeyring", "LoupeTesting", "LoupeTestSupport", "LoupeTestHelper",
                .product(name: "Logging", package: "swift-log"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
