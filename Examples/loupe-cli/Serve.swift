import ArgumentParser
import Foundation
import Loupe
import LoupeCommands
import LoupeSettingsPage
import ServiceLifecycle
import Logging

/// `loupe [store options] serve`: the settings page in the browser, over the store the options choose.
///
/// Binds 127.0.0.1 unless told otherwise and prints the page's address with its token, as Jupyter does;
/// runs until SIGINT or SIGTERM.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loupe serve",
        abstract:
            "Serves a settings page in the browser: every setting with where its value comes from, editable, live.",
        discussion: """
            Give the store options before `serve`, as for every verb: loupe --file settings.toml --schema daemon serve. \
            Prints the page's address, with the token every request needs, and serves until interrupted. \
            Secrets are masked; --reveal lets the page show one when asked.
            """)

    @OptionGroup var store: LoupeStore

    @Option(help: "The address to listen on: 127.0.0.1 (this machine only) unless you mean otherwise.")
    var host = "127.0.0.1"

    @Option(help: "The port; 0 takes a free one (the printed address says which).")
    var port = 8123

    @Option(help: ArgumentHelp("Listen on a Unix domain socket instead of a port.", valueName: "path"))
    var socket: String?

    @Option(
        help:
            "The token every request carries (default: a new random one each start). Prefer the environment variable LOUPE_PAGE_TOKEN to keep it out of the process list."
    )
    var token: String?

    @Flag(name: .customLong("read-only"), help: "Show the settings without letting the page change them.")
    var readOnly = false

    mutating func run() async throws {
        let settings = try store.openSettings(watching: true)
        let configuration = SettingsPage.Configuration(
            token: token ?? ProcessInfo.processInfo.environment["LOUPE_PAGE_TOKEN"] ?? SettingsPage.randomToken(),
            readOnly: readOnly, revealsSecrets: store.reveal)
        let page = SettingsPage(settings.root, configuration: configuration)
        let address: SettingsPageServer.Address = socket.map { .unixSocket($0) } ?? .host(host, port: port)
        var logger = Logger(label: "loupe.serve")
        logger.logLevel = .warning
        let server = SettingsPageServer(page: page, address: address, logger: logger) { url in
            // Written whole and at once, so that a script reading the address never waits on a buffer.
            try? FileHandle.standardOutput.write(contentsOf: Data("Settings page: \(url)\n".utf8))
        }
        let group = ServiceGroup(services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }

    /// Whether `arguments` name the `serve` verb (after the store's options), and the arguments without it.
    static func serveArguments(_ arguments: [String]) -> [String]? {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { return nil }
            if LoupeStore.optionsTakingValues.contains(argument) {
                index += 2
                continue
            }
            if !argument.hasPrefix("-") {
                guard argument == "serve" else { return nil }
                var rest = arguments
                rest.remove(at: index)
                return rest
            }
            index += 1
        }
        return nil
    }
}
