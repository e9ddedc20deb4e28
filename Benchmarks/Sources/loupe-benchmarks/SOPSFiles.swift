import Foundation
import Loupe
import LoupeSOPS
import LoupeYAML

/// A sops file of 200 encrypted values (YAML, one age recipient) against the same settings in plaintext:
/// a root's load (the age unwrap, every value opened and the MAC checked, counted: a new store each time)
/// and a durable one-value update (the value sealed in place, `lastmodified` and `mac` updated).
func measureSOPSFiles(_ bench: Bench, _ report: Report) throws {
    let scratch = bench.scratch
    let identity = AgeIdentity.generate()
    let values = Dictionary(
        uniqueKeysWithValues: (0..<200).map { ("key-\($0)", "value-\($0)-\(String(repeating: "x", count: 24))") })
    let document = JSONValue.object(["values": .object(values.mapValues(JSONValue.string))])
    let sealedPath = scratch + "/sealed.yaml"
    let plainPath = scratch + "/plain.yaml"
    let codec = YAMLCodec()
    _ = try SOPSFileStore(
        path: sealedPath, format: codec, identities: .identities([identity]), recipients: [identity.recipient],
        history: .off
    )
    .save(document, replacing: .absent)
    _ = try FileStore(path: plainPath, format: codec, history: .off).save(document, replacing: .absent)

    func sealedStore() -> SOPSFileStore {
        SOPSFileStore(path: sealedPath, format: codec, identities: .identities([identity]), history: .off)
    }
    let n = max(2, 20 / max(1, bench.scale / 5))
    let loads = try compare(
        operations: n,
        loupe: {
            for _ in 0..<n {
                blackHole(try RootLens(default: SealedSettings(), store: sealedStore(), watch: false).value)
            }
        },
        baseline: {
            for _ in 0..<n {
                blackHole(
                    try RootLens(
                        default: SealedSettings(), store: FileStore(path: plainPath, format: codec, history: .off),
                        watch: false
                    ).value)
            }
        })
    report.add(
        "load a sops YAML file of 200 encrypted values (age unwrap counted) vs the same file in plaintext", loads,
        .atMost(1.5))

    let sealedRoot = try RootLens(default: SealedSettings(), store: sealedStore(), watch: false)
    let plainRoot = try RootLens(
        default: SealedSettings(), store: FileStore(path: plainPath, format: codec, history: .off), watch: false)
    var round = 0
    let updates = try compare(
        operations: n,
        loupe: { for _ in 0..<n { round += 1; try sealedRoot.update { $0.values["key-7"] = "changed-\(round)" } } },
        baseline: { for _ in 0..<n { round += 1; try plainRoot.update { $0.values["key-7"] = "changed-\(round)" } } })
    // Every write reads its text back before it replaces the file, and that check is never skipped: it
    // parses the sealed text, about four times the plaintext's bytes (each `ENC[…]` holds an IV and a tag),
    // so the row is measured against the floor it sets, as the rows of files people write by hand are: a
    // durable write of the same sealed bytes, their read-back by the format's reader, and the compare.
    round += 1
    try sealedRoot.update { $0.values["key-7"] = "changed-\(round)" }
    let edited = try Data(contentsOf: URL(fileURLWithPath: sealedPath))
    let meant = try codec.parse(edited)
    let floorPath = scratch + "/sealed-by-hand.yaml"
    let floor = try compare(
        operations: n,
        loupe: { for _ in 0..<n { round += 1; try sealedRoot.update { $0.values["key-7"] = "changed-\(round)" } } },
        baseline: {
            for _ in 0..<n {
                writeByHand(edited, to: floorPath)
                let readBack = try codec.parseWritten(edited)
                precondition(readBack.isSameValue(as: meant), "the bytes read back as meant")
            }
        })
    report.add(
        "one-value update of that sops file, vs a durable write of the same sealed bytes plus their read-back, parsed and compared (the check's floor)",
        floor, .atMost(1.3),
        baselineNote: " (vs the same update in plaintext: \(String(format: "%.2f", updates.ratio))×)")
}

/// The settings of the sops rows: 200 string values.
struct SealedSettings: Codable, Equatable, Sendable {
    var values: [String: String] = [:]
}
