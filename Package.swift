// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Loupe",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Loupe", targets: ["Loupe"]),
        .library(name: "LoupeYAML", targets: ["LoupeYAML"]),
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
        .testTarget(
            name: "LoupeYAMLTests",
            dependencies: ["LoupeYAML"]
        ),
        .testTarget(
            name: "LoupeTests",
            dependencies: [
                "Loupe",
                "LoupeTestHelper",
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        // A separate process for the tests: another writer, a process to kill mid-write, an unprivileged
        // user, a process with a file-size limit.
        .executableTarget(
            name: "LoupeTestHelper",
            dependencies: ["Loupe"],
            path: "Tests/LoupeTestHelper"
        ),
    ],
    swiftLanguageModes: [.v6]
)
