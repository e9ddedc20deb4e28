// swift-tools-version:6.1
import PackageDescription

// A user of only `Loupe` resolves swift-log and nothing else. Each store or integration that needs another
// package is a product of its own behind a package trait of the same concern, enabled where it is used:
//
//     .package(url: "https://github.com/…/loupe", from: "2.0.0", traits: ["YAML", "Etcd"])
//
// SwiftPM resolves a dependency only for the traits enabled, and never for test targets, examples or
// plugins of a package it depends on. This package's own scripts build with `--enable-all-traits`.
let traits: Set<Trait> = [
    .trait(name: "YAML", description: "LoupeYAML: YAML files through Yams."),
    .trait(name: "Etcd", description: "LoupeEtcd: settings a fleet shares in etcd, over async-http-client."),
    .trait(name: "Configuration", description: "LoupeConfiguration: lenses as swift-configuration providers."),
    .trait(name: "ServiceLifecycle", description: "LoupeServiceLifecycle: a root as a swift-service-lifecycle Service."),
    .trait(name: "Commands", description: "LoupeCommands: a settings command group (get, set, edit, …) over swift-argument-parser."),
    .trait(name: "SOPS", description: "LoupeSOPS: sops-compatible encrypted values under age keys, over swift-crypto."),
    .trait(name: "SettingsPage", description: "LoupeSettingsPage: a settings page in the browser over Hummingbird."),
    .default(enabledTraits: []),
]

let package = Package(
    name: "Loupe",
    platforms: [.macOS(.v15)],
    // The examples (`loupe`, `settings-daemon`) are executables of this package only, not products, so a
    // dependent never resolves what they use.
    products: [
        .library(name: "Loupe", targets: ["Loupe"]),
        .library(name: "LoupeTesting", targets: ["LoupeTesting"]),
        .library(name: "LoupeYAML", targets: ["LoupeYAML"]),
        // Linux only: libsecret and the freedesktop Secret Service.
        .library(name: "LoupeKeyring", targets: ["LoupeKeyring"]),
        .library(name: "LoupeEtcd", targets: ["LoupeEtcd"]),
        .library(name: "LoupeConfiguration", targets: ["LoupeConfiguration"]),
        .library(name: "LoupeServiceLifecycle", targets: ["LoupeServiceLifecycle"]),
        .library(name: "LoupeCommands", targets: ["LoupeCommands"]),
        .library(name: "LoupeSOPS", targets: ["LoupeSOPS"]),
        .library(name: "LoupeSettingsPage", targets: ["LoupeSettingsPage"]),
    ],
    traits: traits,
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
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // The URL as the packages that already depend on swift-crypto (swift-certificates) spell it.
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    ],
    targets: [
        // The core: lenses, the graph, the document pipeline, files, UserDefaults, memory.
        .target(
            name: "Loupe",
            dependencies: ["CLoupeSystem", .product(name: "Logging", package: "swift-log")]
        ),
        // renameat2(2), which Swift's Glibc module does not declare: how a write swaps its file in.
        .target(name: "CLoupeSystem"),
        // The conformance suite every store passes, for third-party stores too.
        .target(
            name: "LoupeTesting",
            dependencies: ["Loupe"]
        ),
        .target(
            name: "LoupeYAML",
            dependencies: ["Loupe", .product(name: "Yams", package: "Yams", condition: .when(traits: ["YAML"]))]
        ),
        .systemLibrary(
            name: "CLibSecret",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]
        ),
        .target(
            name: "LoupeKeyring",
            dependencies: [
                "Loupe", .target(name: "CLibSecret", condition: .when(platforms: [.linux])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // etcd, for settings shared by a fleet: its v3 HTTP/JSON gateway over async-http-client.
        .target(
            name: "LoupeEtcd",
            dependencies: [
                "Loupe",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Etcd"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Etcd"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Etcd"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Etcd"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Etcd"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "LoupeConfiguration",
            dependencies: [
                "Loupe",
                .product(name: "Configuration", package: "swift-configuration", condition: .when(traits: ["Configuration"])),
            ]
        ),
        .target(
            name: "LoupeServiceLifecycle",
            dependencies: [
                "Loupe",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
            ]
        ),
        // A settings command group any program mounts: `myapp config get server.port`.
        .target(
            name: "LoupeCommands",
            dependencies: [
                // `check` and `diff --files` read YAML files where the YAML trait is on (empty without it).
                "Loupe", "LoupeYAML",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Commands"])),
            ]
        ),
        // A settings page in the browser for any root, with its own server: `loupe serve`.
        .target(
            name: "LoupeSettingsPage",
            dependencies: [
                "Loupe",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["SettingsPage"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // sops files: values sealed in place under age keys (AES-256-GCM, X25519, ChaCha20-Poly1305 from swift-crypto).
        .target(
            name: "LoupeSOPS",
            dependencies: [
                "Loupe",
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["SOPS"])),
                .product(name: "Yams", package: "Yams", condition: .when(traits: ["SOPS"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The examples: a CLI that edits settings by path, and a daemon whose settings change live.
        .target(
            name: "DaemonSettings",
            dependencies: ["Loupe"],
            path: "Examples/DaemonSettings"
        ),
        .executableTarget(
            name: "loupe",
            dependencies: [
                "Loupe", "LoupeCommands", "LoupeYAML", "LoupeKeyring", "LoupeEtcd", "LoupeSOPS", "DaemonSettings", "LoupeSettingsPage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Examples/loupe-cli"
        ),
        .executableTarget(
            name: "settings-daemon",
            dependencies: [
                "Loupe", "LoupeKeyring", "LoupeEtcd", "LoupeServiceLifecycle", "DaemonSettings", "LoupeSettingsPage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/settings-daemon"
        ),

        // The README's tour, as top-level code in a `main.swift`.
        .executableTarget(
            name: "readme-tour",
            dependencies: ["Loupe"],
            path: "Examples/readme-tour"
        ),

        .testTarget(
            name: "LoupeTests",
            dependencies: [
                "Loupe", "LoupeTesting", "LoupeTestSupport", "LoupeTestHelper",
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "LoupeSOPSTests",
            dependencies: [
                "LoupeSOPS", "LoupeYAML", "LoupeTesting", "LoupeTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "LoupeYAMLTests",
            dependencies: ["LoupeYAML", "LoupeTesting", "LoupeTestSupport"]
        ),
        // Real configuration files from public repositories, edited at random: every write changes only what changed.
        .testTarget(
            name: "LoupeCorpusTests",
            dependencies: ["Loupe", "LoupeYAML", "LoupeTestSupport"],
            resources: [.copy("Corpus")]
        ),
        .testTarget(
            name: "LoupeKeyringTests",
            dependencies: [
                "LoupeKeyring", "LoupeTesting", "LoupeTestSupport", "LoupeTestHelper",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "LoupeEtcdTests",
            dependencies: [
                "LoupeEtcd", "LoupeTesting", "LoupeTestSupport", "LoupeTestHelper",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "LoupeConfigurationTests",
            dependencies: [
                "LoupeConfiguration", "LoupeTestSupport",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ConfigurationTesting", package: "swift-configuration"),
            ]
        ),
        .testTarget(
            name: "LoupeServiceLifecycleTests",
            dependencies: [
                "LoupeServiceLifecycle", "LoupeTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "LoupeSettingsPageTests",
            dependencies: [
                "LoupeSettingsPage", "LoupeTestSupport", "DaemonSettings", "LoupeEtcd",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ExamplesTests",
            dependencies: ["Loupe", "LoupeTestSupport", "loupe", "settings-daemon", "readme-tour"]
        ),
        // LoupeCommands, through a small program that mounts it for its own settings type.
        .testTarget(
            name: "LoupeCommandsTests",
            dependencies: ["Loupe", "LoupeTestSupport", "myapp"]
        ),
        .executableTarget(
            name: "myapp",
            dependencies: [
                "Loupe", "LoupeCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/MyApp"
        ),
        // What the test targets share: temporary directories, running processes, waiting for conditions.
        .target(
            name: "LoupeTestSupport",
            dependencies: ["Loupe", "LoupeTesting"],
            path: "Tests/LoupeTestSupport"
        ),
        // A separate process for the tests: another writer, a process to kill mid-write, an unprivileged
        // user, a process with a file-size limit.
        .executableTarget(
            name: "LoupeTestHelper",
            dependencies: [
                "Loupe", "LoupeKeyring", "LoupeEtcd", "LoupeYAML", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/LoupeTestHelper"
        ),
    ],
    swiftLanguageModes: [.v6]
)
