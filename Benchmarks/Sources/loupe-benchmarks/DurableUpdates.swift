import Foundation
import Loupe
#if canImport(Glibc)
import Glibc
#endif

/// Encodes, writes a temporary file, flushes it, renames it over `path` and flushes the directory.
func writeByHand(_ data: Data, to path: String) {
    let temporary = path + ".by-hand.tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    precondition(fd >= 0)
    data.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count { offset += write(fd, buffer.baseAddress! + offset, buffer.count - offset) }
    }
    fsync(fd)
    close(fd)
    rename(temporary, path)
    let directory = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_CLOEXEC)
    fsync(directory)
    close(directory)
}

/// The encoder the baselines write with: as Loupe's JSON files are written.
func prettyEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return encoder
}

/// Durable updates of a small and a large graph against writing their bytes by hand, the async form, and
/// coalesced writes.
func measureDurableUpdates(_ bench: Bench, _ report: Report) throws {
    let scale = bench.scale
    let scratch = bench.scratch
    do {
        // The file holds only what differs from the defaults; by hand writes those same bytes. Without the
        // history journal, which writes more than the same bytes: the history row measures what it adds.
        //
        // Every write keeps three promises with checks never skipped: it holds the file's lock, it replaces
        // the file only while it still holds the bytes the update read, and looks first at the versions it
        // replaced in the last second for a save an editor wrote into one after it left the path (a
        // person's save is never lost), and it reads what it wrote back with the codec's reader before the
        // file is replaced. The row's floor does the same by hand: a `flock`, the versions replaced lately
        // (eight, as a tight loop keeps) each looked at, and read until a look made after a write stamped
        // later than it finds it unchanged (as Loupe reads them), a read of the file about to be replaced
        // compared with what was read, the durable write of the same bytes, the file it replaced read again
        // (Loupe looks at what its swap took out), and the bytes read back, parsed and compared with the
        // document meant. Writing the bytes alone is printed beside it.
        struct Stored: Encodable { var counter: Int }
        let root = try RootLens(
            default: Small(), store: FileStore(path: scratch + "/small.json", history: .off), watch: false)
        let counter = root.counter
        let n = 200 / scale
        let path = scratch + "/small-by-hand.json"
        let lock = open(scratch + "/.small-by-hand.json.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        defer { close(lock) }
        let codec = JSONCodec()
        var byHand = Stored(counter: 0)
        var held = try prettyEncoder().encode(byHand)
        writeByHand(held, to: path)
        var replaced: [(fd: Int32, bytes: Data, modified: timespec, settled: Bool)] = []
        var lastWritten = timespec()
        defer { for file in replaced { close(file.fd) } }
        let floor = try compare(
            operations: n,
            loupe: { for _ in 0..<n { try counter.update { $0 += 1 } } },
            baseline: {
                for _ in 0..<n {
                    flock(lock, LOCK_EX)
                    func contents(of fd: Int32) -> Data {
                        var info = stat()
                        fstat(fd, &info)
                        var contents = Data(count: Int(info.st_size) + 1)
                        let count = contents.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
                        contents.count = max(count, 0)
                        return contents
                    }
                    // Each looked at; read while its identity is ambiguous, until a look after the file
                    // system's clock passed its time (the last write's stamp is later) finds it unchanged.
                    for index in replaced.indices {
                        var info = stat()
                        fstat(replaced[index].fd, &info)
                        precondition(
                            info.st_size == replaced[index].bytes.count, "no one wrote into a version replaced")
                        guard !replaced[index].settled else { continue }
                        precondition(
                            contents(of: replaced[index].fd) == replaced[index].bytes,
                            "no one wrote into a version replaced")
                        let (passed, modified) = (lastWritten, replaced[index].modified)
                        replaced[index].settled = (passed.tv_sec, passed.tv_nsec) > (modified.tv_sec, modified.tv_nsec)
                    }
                    precondition(FileManager.default.contents(atPath: path) == held, "the file is as read")
                    let old = open(path, O_RDONLY | O_CLOEXEC)
                    var oldInfo = stat()
                    fstat(old, &oldInfo)
                    byHand.counter += 1
                    let bytes = try prettyEncoder().encode(byHand)
                    writeByHand(bytes, to: path)
                    var written = stat()
                    stat(path, &written)
                    lastWritten = written.st_mtim
                    precondition(contents(of: old) == held, "the file replaced is the one read")
                    replaced.append((old, held, oldInfo.st_mtim, false))
                    if replaced.count > 8 { close(replaced.removeFirst().fd) }
                    let readBack = try codec.parseWritten(bytes)
                    precondition(
                        readBack.isSameValue(as: .object(["counter": .integer(byHand.counter)])),
                        "the bytes read back as meant")
                    held = bytes
                    flock(lock, LOCK_UN)
                }
            })
        let writeAlone = try compare(
            operations: n,
            loupe: { for _ in 0..<n { try counter.update { $0 += 1 } } },
            baseline: {
                for _ in 0..<n {
                    byHand.counter += 1
                    writeByHand(try prettyEncoder().encode(byHand), to: scratch + "/small-bytes-alone.json")
                }
            })
        report.add(
            "durable update, small graph (~20 fields, stores what differs from the defaults; no history journal) vs writing the same bytes under a lock, the file replaced checked before and after, the versions replaced lately checked, and the bytes read back (the checks' floor; vs the write alone: \(format(writeAlone.ratio))×)",
            floor, .atMost(1.2))
    }

    do {
        // Every entry differs from the (empty) default, so the whole graph is stored.
        let root = try RootLens(
            default: Large(entries: []), store: FileStore(path: scratch + "/large.json", history: .off), watch: false)
        try root.entries.set(Large().entries)
        let counter = root.counter
        let bytes = try prettyEncoder().encode(Large())
        let n = 100 / scale
        // Every write reads its text back with the codec's reader and compares it with the document meant
        // before the file is replaced (a promise kept, never skipped): the row's floor does the same, a
        // durable write of the bytes plus their read-back, parsed and compared. The write alone is printed
        // beside it.
        let codec = JSONCodec()
        let meant = try codec.parse(bytes)
        let writes = try compare(
            operations: n,
            loupe: { for _ in 0..<n { try counter.update { $0 += 1 } } },
            baseline: {
                for _ in 0..<n {
                    writeByHand(bytes, to: scratch + "/large-by-hand.json")
                    let readBack = try codec.parseWritten(bytes)
                    precondition(readBack.isSameValue(as: meant), "the bytes read back as meant")
                }
            })
        let writeAlone = try compare(
            operations: n,
            loupe: { for _ in 0..<n { try counter.update { $0 += 1 } } },
            baseline: { for _ in 0..<n { writeByHand(bytes, to: scratch + "/large-by-hand.json") } })
        let encodeOnly = timeOnce(n) { for _ in 0..<n { blackHole(try! prettyEncoder().encode(Large())) } }
        report.add(
            "durable update, ~\(bytes.count / 1024) KB graph (no history journal) vs a durable write of its encoded bytes plus their read-back, parsed and compared (the check's floor; vs the write alone: \(format(writeAlone.ratio))×; JSONEncoder alone: \(duration(encodeOnly)))",
            writes, .atMost(2))
    }

    do {
        // The async form runs the store's I/O on the graph's own queue, off the cooperative pool.
        let root = try RootLens(default: Small(), store: FileStore(path: scratch + "/async.json"), watch: false)
        let counter = root.counter
        let n = 200 / scale
        let updates = try compare(
            operations: n,
            loupe: { try waitFor { for _ in 0..<n { try await counter.async.update { $0 += 1 } } } },
            baseline: { for _ in 0..<n { try counter.update { $0 += 1 } } })
        report.add("async update vs the synchronous one, FileStore JSON", updates, .atMost(1.2))
    }

    do {
        let immediate = try RootLens(
            default: Small(), store: FileStore(path: scratch + "/immediate.json"), watch: false)
        let coalesced = try RootLens(
            default: Small(),
            store: FileStore(path: scratch + "/coalesced.json", writePolicy: .coalesced(.milliseconds(100))),
            watch: false)
        let immediateOps = 200 / scale
        let coalescedOps = 200_000 / scale
        let (immediateCounter, coalescedCounter) = (immediate.counter, coalesced.counter)
        var rates = Comparison()
        for _ in 0..<3 {
            rates.loupe.append(
                1e9
                    / (try timeOnce(coalescedOps) {
                        for _ in 0..<coalescedOps { try coalescedCounter.update { $0 += 1 } }
                    }))
            rates.baseline.append(
                1e9
                    / (try timeOnce(immediateOps) {
                        for _ in 0..<immediateOps { try immediateCounter.update { $0 += 1 } }
                    }))
        }
        try coalesced.flush()
        report.add("coalesced updates per second vs immediate, FileStore", rates, .atLeast(50), .rates)
    }
}
