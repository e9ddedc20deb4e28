import Foundation
@testable import Loupe
import LoupeTestSupport
import Testing

/// The stored document keeps the keys and the number spellings of the one before in one walk
/// (`keepingKeysAndSpellings`), and passes over the parts it shares with it. These tests hold that walk to
/// the plain definition: keys kept by looking each one up, then spellings kept by looking each one up, over
/// documents that share parts and documents that share none.
@Suite("The stored document's walk")
struct StoredDocumentWalkTests {
    /// 3,000 seeded cases: a random value's whole document over random defaults, the document the store
    /// held (some keys pinned at the defaults' values, numbers spelled otherwise, keys the value no longer
    /// has, parts shared with the new patch), and random released paths.
    @Test func keysAndSpellingsKeptInOneWalkAreWhatKeepingKeysThenSpellingsMakes() {
        var generator = SeededGenerator(seed: 29)
        for _ in 0..<3_000 {
            let whole = Self.randomObject(depth: 3, using: &generator)
            // Defaults that differ from the value in a part or two (so that the patch leaves much out), or
            // in everything.
            var base = Self.randomObject(depth: 2, using: &generator)
            if Bool.random(using: &generator) {
                base = whole
                for _ in 0..<Int.random(in: 1...2, using: &generator) {
                    base[path: Self.randomPath(using: &generator)] =
                        Bool.random(using: &generator) ? nil : Self.randomValue(depth: 1, using: &generator)
                }
            }
            let patch = base.mergePatch(to: whole)
            var held = Self.respelled(
                Bool.random(using: &generator) ? patch : Self.randomObject(depth: 3, using: &generator),
                using: &generator)
            // Pins: parts of the whole document the patch leaves out, written in the file.
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                let path = Self.randomPath(using: &generator)
                if let value = whole[path: path], held[path: path] == nil { held[path: path] = value }
            }
            // Parts the held document shares with the patch (made from the last write).
            if case .object(var members) = held, case .object(let patched) = patch,
                let key = patched.keys.randomElement(using: &generator)
            {
                members[key] = patched[key]
                held = .object(members)
            }
            let released = (0..<Int.random(in: 0...1, using: &generator)).map { _ in Self.randomPath(using: &generator)
            }
            let expected = patch.referenceKeepingKeys(of: held, whole: whole, releasing: released)
                .referenceKeepingNumberSpellings(of: held)
            let walked = patch.keepingKeysAndSpellings(of: held, whole: whole, releasing: released)
            #expect(walked == expected, "patch \(patch)\nheld \(held)\nwhole \(whole)\nreleased \(released)")
            // With nothing held, the patch is stored as it is.
            #expect(patch.keepingKeysAndSpellings(of: nil, whole: whole, releasing: released) == patch)
        }
    }

    /// Members walked side by side in the order of the object they were made from, and members of objects
    /// of any other origin (looked up from the first key out of step on), are the same members.
    @Test func membersWalkedInStepOrLookedUpAreTheSame() {
        var generator = SeededGenerator(seed: 31)
        for _ in 0..<2_000 {
            guard case .object(let old) = Self.randomObject(depth: 1, using: &generator) else { continue }
            var new = old
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                switch Int.random(in: 0...2, using: &generator) {
                case 0: if let key = new.keys.randomElement(using: &generator) { new[key] = .string("changed") }
                case 1: if let key = new.keys.randomElement(using: &generator) { new[key] = nil }
                default: new["new-\(Int.random(in: 0...40, using: &generator))"] = .integer(1)
                }
            }
            // Rebuilt: the same members in storage of its own, in another order.
            let rebuilt = Dictionary(uniqueKeysWithValues: Array(new).shuffled(using: &generator))
            for object in [new, rebuilt] {
                var visited: [String: JSONValue?] = [:]
                let found = object.forEachMember(notSharedWith: old) { key, value, before in
                    visited[key] = .some(before)
                }
                #expect(found == object.keys.filter { old[$0] != nil }.count)
                let expected = object.filter { key, value in old[key].map { !value.isShared(with: $0) } ?? true }
                #expect(Set(visited.keys) == Set(expected.keys))
                for (key, before) in visited { #expect(before == old[key]) }
            }
        }
    }

    private static let keys = ["a", "b", "c", "d"]

    private static func randomPath(using generator: inout SeededGenerator) -> ValuePath {
        ValuePath(
            (0..<Int.random(in: 1...3, using: &generator)).map { _ in .key(keys.randomElement(using: &generator)!) })
    }

    private static func randomObject(depth: Int, using generator: inout SeededGenerator) -> JSONValue {
        var members: [String: JSONValue] = [:]
        for key in keys where Bool.random(using: &generator) {
            members[key] = randomValue(depth: depth - 1, using: &generator)
        }
        return .object(members)
    }

    private static func randomValue(depth: Int, using generator: inout SeededGenerator) -> JSONValue {
        switch Int.random(in: 0...(depth > 0 ? 7 : 5), using: &generator) {
        case 0: .integer(Int.random(in: 0...3, using: &generator))
        case 1: .double(Double(Int.random(in: 0...3, using: &generator)) / 2)
        case 2: .string(["x", "y"].randomElement(using: &generator)!)
        case 3: .bool(Bool.random(using: &generator))
        case 4: .null
        case 5:
            .array(
                (0..<Int.random(in: 0...2, using: &generator)).map { _ in
                    .integer(Int.random(in: 0...2, using: &generator))
                })
        default: randomObject(depth: depth, using: &generator)
        }
    }

    /// `document` with some of its numbers spelled otherwise: `2.0` for 2, `1.50` for 1.5.
    private static func respelled(_ document: JSONValue, using generator: inout SeededGenerator) -> JSONValue {
        switch document {
        case .integer(let integer) where Bool.random(using: &generator): .exactNumber("\(integer).0")
        case .double(let double) where Bool.random(using: &generator): .exactNumber("\(double)0")
        case .object(let members): .object(members.mapValues { respelled($0, using: &generator) })
        case .array(let elements): .array(elements.map { respelled($0, using: &generator) })
        default: document
        }
    }
}

extension JSONValue {
    /// The stored document's keys kept as they were defined before the one walk: each key looked up.
    fileprivate func referenceKeepingKeys(
        of held: JSONValue?, whole: JSONValue, releasing released: [ValuePath], at path: [ValuePath.Component] = []
    ) -> JSONValue {
        guard let held, case .object(let heldMembers) = held, case .object(let wholeMembers) = whole,
            !released.contains(where: { path.starts(with: $0.components) })
        else { return self }
        guard case .object(var members) = self else { return self }
        func isReleased(_ key: String) -> Bool {
            let here = path + [.key(key)]
            return released.contains { here.starts(with: $0.components) }
        }
        for (key, heldValue) in heldMembers {
            let patched = members[key]
            guard let wholeValue = wholeMembers[key] else { continue }
            switch (heldValue, wholeValue, patched) {
            case (.object, .object, let patched):
                if isReleased(key) { continue }
                let kept = (patched ?? .object([:])).referenceKeepingKeys(
                    of: heldValue, whole: wholeValue, releasing: released, at: path + [.key(key)])
                if patched != nil || kept != .object([:]) { members[key] = kept }
            case (_, _, nil):
                if isReleased(key) { continue }
                members[key] = wholeValue
            default:
                break
            }
        }
        return .object(members)
    }

    /// The stored document's number spellings kept as they were defined before the one walk.
    fileprivate func referenceKeepingNumberSpellings(of previous: JSONValue?) -> JSONValue {
        guard let previous else { return self }
        switch (self, previous) {
        case (.object(var members), .object(let old)):
            for (key, value) in members {
                guard let before = old[key] else { continue }
                members[key] = value.referenceKeepingNumberSpellings(of: before)
            }
            return .object(members)
        case (.array(var elements), .array(let old)) where elements.count == old.count:
            for index in elements.indices {
                elements[index] = elements[index].referenceKeepingNumberSpellings(of: old[index])
            }
            return .array(elements)
        default:
            return isSameNumbers(as: previous) ? previous : self
        }
    }
}
