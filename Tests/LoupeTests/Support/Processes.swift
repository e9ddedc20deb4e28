import Foundation
import Testing

/// A fresh directory under the system's temporary directory, removed by `cleanUp()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "loupe-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func cleanUp() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// What a finished process printed, and how it ended.
struct ProcessOutput {
    let status: Int32
    let output: String
    let error: String
}

/// Runs `executable` with `arguments` and waits for it.
@discardableResult
func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil) throws -> ProcessOutput {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    if let input {
        let pipe = Pipe()
        process.standardInput = pipe
        pipe.fileHandleForWriting.write(Data(input.utf8))
        try pipe.fileHandleForWriting.close()
    } else {
        process.standardInput = FileHandle.nullDevice
    }
    try process.run()
    let outData = output.fileHandleForReading.readDataToEndOfFile()
    let errData = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessOutput(
        status: process.terminationStatus,
        output: String(decoding: outData, as: UTF8.self),
        error: String(decoding: errData, as: UTF8.self))
}

/// The directory the test binary was built into, where the package's executables are too.
let buildProductsDirectory: String = {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: executable).deletingLastPathComponent().path
}()

/// The path of the test helper executable built with the tests.
let testHelper = buildProductsDirectory + "/LoupeTestHelper"

/// Runs a Python 3 snippet with `arguments` as `sys.argv[1:]` and returns what it printed.
func python(_ script: String, _ arguments: [String] = []) throws -> String {
    let result = try run("/usr/bin/env", ["python3", "-c", script] + arguments)
    guard result.status == 0 else {
        Issue.record("python3 failed: \(result.error)")
        return ""
    }
    return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Waits until `condition` holds, checking every 10 ms, for at most `limit`; returns whether it held.
/// A bound on waiting, not a timing assertion: the tests never fail because a machine is slow.
func eventually(within limit: Duration = .seconds(10), _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}
