// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Loupe",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Loupe", targets: ["Loupe"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "Loupe",
            dependencies: [.product(name: "Logging", package: "swift-log")]
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
