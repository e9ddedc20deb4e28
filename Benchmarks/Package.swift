// swift-tools-version:6.1
import PackageDescription

// Loupe's benchmarks, a package of their own: Loupe's package graph holds no benchmark-only dependency
// (the malloc counter, the raw libsecret baseline). Run them with `Scripts/bench` from the repository.
let package = Package(
    name: "LoupeBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Loupe", path: "..", traits: ["Etcd", "Configuration", "YAML", "SOPS", "SettingsPage"]),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The TOML parse row's peer: toml++ through its Swift wrapper.
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // Counts heap allocations: the rows that promise a read allocates nothing.
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
    ],
    targets: [
        // libsecret called by hand: the keyring row's baseline.
        .systemLibrary(
            name: "CLibSecretBaseline",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]
        ),
        .executableTarget(
            name: "loupe-benchmarks",
            dependencies: [
                "CLibSecretBaseline",
                .product(name: "Loupe", package: "Loupe"),
                .product(name: "LoupeKeyring", package: "Loupe"),
                .product(name: "LoupeEtcd", package: "Loupe"),
                .product(name: "LoupeYAML", package: "Loupe"),
                .product(name: "LoupeSOPS", package: "Loupe"),
                .product(name: "LoupeSettingsPage", package: "Loupe"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
