// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Loupe",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Loupe", targets: ["Loupe"]),
        .library(name: "LoupeYAML", targets: ["LoupeYAML"]),
        .library(name: "LoupeKeyring", targets: ["LoupeKeyring"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
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
            dependencies: ["Loupe", "LoupeKeyring"],
            path: "Tests/LoupeTestHelper"
        ),
    ],
    swiftLanguageModes: [.v6]
)
