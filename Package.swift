// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Loupe",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Loupe", targets: ["Loupe"]),
        .library(name: "LoupeYAML", targets: ["LoupeYAML"]),
        .library(name: "LoupeKeyring", targets: ["LoupeKeyring"]),
        .library(name: "LoupeConfiguration", targets: ["LoupeConfiguration"]),
        .library(name: "LoupeEtcd", targets: ["LoupeEtcd"]),
        .executable(name: "loupe", targets: ["loupe-cli"]),
        .executable(name: "settings-daemon", targets: ["settings-daemon"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        .target(
            name: "Loupe",
            dependencies: [.product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "LoupeYAML",
            dependencies: ["Loupe", .product(name: "Yams", package: "Yams")]
        ),
        .systemLibrary(
            name: "CLibSecret",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]
        ),
        .target(
            name: "LoupeKeyring",
            dependencies: ["Loupe", "CLibSecret", .product(name: "Logging", package: "swift-log")]
        ),
        // etcd, for settings shared by a fleet: its v3 HTTP/JSON gateway over async-http-client.
        .target(
            name: "LoupeEtcd",
            dependencies: [
                "Loupe",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "LoupeEtcdTests",
            dependencies: [
                "LoupeEtcd", "LoupeTestSupport", "LoupeTestHelper",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),

        // The examples: a CLI that edits settings by path, and a daemon whose settings change live.
        .target(
            name: "DaemonSettings",
            path: "Examples/DaemonSettings"
        ),
        .executableTarget(
            name: "loupe-cli",
            dependencies: [
                "Loupe", "LoupeYAML", "LoupeKeyring", "LoupeEtcd", "DaemonSettings",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/loupe-cli"
        ),
        .executableTarget(
            name: "settings-daemon",
            dependencies: [
                "Loupe", "LoupeKeyring", "LoupeEtcd", "DaemonSettings",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/settings-daemon"
        ),
        .testTarget(
            name: "ExamplesTests",
            dependencies: ["LoupeTestSupport", "loupe-cli", "settings-daemon"]
        ),

        // Loupe against its baselines and peers: Scripts/bench runs it in release mode.
        .executableTarget(
            name: "loupe-benchmarks",
            dependencies: [
                "Loupe", "LoupeKeyring", "CLibSecret", "LoupeEtcd",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/Sources/loupe-benchmarks"
        ),

        .target(
            name: "LoupeConfiguration",
            dependencies: ["Loupe", .product(name: "Configuration", package: "swift-configuration")]
        ),
        .testTarget(
            name: "LoupeConfigurationTests",
            dependencies: ["LoupeConfiguration", "LoupeTestSupport", .product(name: "Configuration", package: "swift-configuration")]
        ),
        .testTarget(
            name: "LoupeYAMLTests",
            dependencies: ["LoupeYAML"]
        ),
        .testTarget(
            name: "LoupeTests",
            dependencies: [
                "Loupe",
                "LoupeTestSupport",
                "LoupeTestHelper",
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "LoupeKeyringTests",
            dependencies: [
                "LoupeKeyring", "LoupeTestSupport", "LoupeTestHelper",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What the test targets share: temporary directories, running processes, waiting for conditions.
        .target(
            name: "LoupeTestSupport",
            path: "Tests/LoupeTestSupport"
        ),
        // A separate process for the tests: another writer, a process to kill mid-write, an unprivileged
        // user, a process with a file-size limit.
        .executableTarget(
            name: "LoupeTestHelper",
            dependencies: ["Loupe", "LoupeKeyring", "LoupeEtcd"],
            path: "Tests/LoupeTestHelper"
        ),
    ],
    swiftLanguageModes: [.v6]
)
