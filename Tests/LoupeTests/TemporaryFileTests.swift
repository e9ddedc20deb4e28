#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import Loupe
import LoupeTestSupport
import Testing

/// The temporary file every write stages its new version in, beside the file it replaces.
@Suite("Temporary files: private, closed on exec, never reused")
struct TemporaryFileTests {
    @Test func aTemporaryFileIsTheOwnersAloneAndClosedOnExec() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let prefix = directory.file(".settings.json.tmp-")
        let (fd, path) = try FileSystem.createTemporaryFile(named: prefix, in: directory.path, mode: 0o600)
        defer { close(fd) }
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "a process started meanwhile does not inherit it")
        var info = stat()
        #expect(fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && info.st_mode & 0o7777 == 0o600)
        #expect(stat(path, &info) == 0, "it is at the path returned")
        let suffix = path.dropFirst(prefix.count)
        #expect(
            path.hasPrefix(prefix) && suffix.count == 6
                && suffix.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }, "\(path)")
    }

    @Test func aTemporaryFileHasTheModeAskedForLessTheUmask() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let mask = try processUmask()
        let (fd, _) = try FileSystem.createTemporaryFile(
            named: directory.file(".s.json.tmp-"), in: directory.path, mode: 0o664)
        defer { close(fd) }
        var info = stat()
        #expect(fstat(fd, &info) == 0 && info.st_mode & 0o7777 == 0o664 & ~mask)
    }

    @Test func eachTemporaryFileIsNew() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let prefix = directory.file(".settings.json.tmp-")
        var paths: Set<String> = []
        for _ in 0..<500 {
            let (fd, path) = try FileSystem.createTemporaryFile(named: prefix, in: directory.path, mode: 0o600)
            close(fd)
            paths.insert(path)
        }
        #expect(paths.count == 500)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).count == 500)
    }

    @Test func aMissingDirectoryIsAnErrorNamingIt() throws {
        let missing = try TemporaryDirectory()
        missing.cleanUp()
        #expect {
            _ = try FileSystem.createTemporaryFile(named: missing.file(".s.json.tmp-"), in: missing.path, mode: 0o600)
        } throws: { error in
            let description = "\(error)"
            return description.contains("create a temporary file in \(missing.path)")
                && description.contains("No such file or directory")
        }
    }
}
