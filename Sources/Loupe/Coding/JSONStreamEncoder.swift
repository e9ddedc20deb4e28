import Foundation

/// Writes a value's JSON straight into one byte buffer, the fast path behind ``JSONCodec``.
///
/// Foundation's `JSONEncoder` first builds a tree of boxed values (a class and a dictionary per object),
/// then serializes it; for a settings file of a few hundred kilobytes that costs several times more than
/// writing the file durably. This encoder writes each value as the `Codable` calls arrive: an object's
/// entries go out in the order they are encoded, each recorded as a byte range, and when the object
/// closes they are put in sorted-key order in place. Its output is byte for byte what `JSONEncoder`
/// writes with `.sortedKeys` (plus `.prettyPrinted` and `.withoutEscapingSlashes` when pretty); the tests
/// compare the two over many shapes of value.
///
/// The streaming model covers what synthesized and hand-written `Codable` conformances do: keyed,
/// unkeyed and single-value containers, nested containers, and Foundation's `Data`, `URL`, `Decimal` and
/// `Date`. Where a value uses the API in a way it does not cover (a super encoder, a key encoded twice,
/// a container written to after its value was done), ``encode(_:pretty:memo:)`` returns nil and the
/// caller encodes with `JSONEncoder`, so the output never differs.
///
/// With a ``JSONEncodingMemo``, large collections that are the very same storage as in the previous
/// encode (copy-on-write values share storage until changed) reuse their bytes from that encode.
final class JSONStreamEncoder {
    /// Encodes `value`, or returns nil when it uses the `Codable` API in a way this encoder leaves to
    /// `JSONEncoder`.
    static func encode<T: Encodable>(_ value: T, pretty: Bool, memo: JSONEncodingMemo? = nil) throws -> [UInt8]? {
        let encoder = JSONStreamEncoder(pretty: pretty, memo: memo)
        do {
            try encoder.encodeTopLevel(value)
        } catch {
            if encoder.unsupported { return nil }
            throw error
        }
        if encoder.unsupported { return nil }
        memo?.replace(with: encoder.memoNext, size: encoder.bytes.count)
        return encoder.bytes
    }

    // MARK: State

    /// An open object or array.
    struct Frame {
        var isObject: Bool
        /// Opened by `nestedContainer`: it has no end of its own, so it closes when its parent is written
        /// to again or closes.
        var isLazy: Bool
        /// Nesting depth of the brackets (the top level is 0).
        var depth: Int
        /// Elements or entries written so far.
        var count = 0
        /// Index in `entries` of this object's first entry.
        var entryBase: Int
        /// Tells a container whose frame closed from the one now at the same index.
        var serial: UInt32
        /// How much of `path` is this container's coding path.
        var pathLength: Int
    }

    /// One object entry: `"key" : value`, as byte offsets into `bytes`.
    struct Entry {
        /// Where the opening quote of the key is.
        var start: Int
        /// The key's bytes, between its quotes.
        var keyStart: Int
        var keyEnd: Int
        /// The key as given, when writing it needed escapes (the bytes then do not sort as the key does).
        var rawKey: String?
    }

    /// Where the next value goes: the value a container is encoding, through `value.encode(to: self)`.
    struct Slot {
        enum State: Equatable {
            case empty
            case container(frame: Int, serial: UInt32, isObject: Bool)
            case single
        }
        var depth: Int
        var serial: UInt32
        var state: State = .empty
        /// How many frames were open when the value started; it may write only to frames above these.
        var mark: Int
    }

    private(set) var bytes: [UInt8] = []
    let pretty: Bool
    let escapeSlashes: Bool
    var frames: [Frame] = []
    var entries: [Entry] = []
    var path: [any CodingKey] = []
    var slot: Slot
    var serialCounter: UInt32 = 1
    /// Set when the value used the API in a way left to `JSONEncoder`; everything written is then dropped.
    var unsupported = false
    let memoPrevious: [JSONEncodingMemo.Key: JSONEncodingMemo.Entry]?
    var memoNext: [JSONEncodingMemo.Key: JSONEncodingMemo.Entry] = [:]

    private init(pretty: Bool, memo: JSONEncodingMemo?) {
        self.pretty = pretty
        self.escapeSlashes = !pretty
        self.memoPrevious = memo?.current()
        self.slot = Slot(depth: 0, serial: 0, mark: 0)
        bytes.reserveCapacity(memo?.lastSize ?? 256)
    }

    struct Unsupported: Error {}

    /// Notes that the value is left to `JSONEncoder` and returns the error that unwinds to ``encode(_:pretty:memo:)``.
    func giveUp() -> Unsupported {
        unsupported = true
        return Unsupported()
    }

    func nextSerial() -> UInt32 {
        serialCounter &+= 1
        return serialCounter
    }

    // MARK: Values

    private func encodeTopLevel<T: Encodable>(_ value: T) throws {
        if try writeScalar(value, key: nil) { return }
        slot = Slot(depth: 0, serial: nextSerial(), mark: 0)
        try value.encode(to: self)
        try closeFrames(downTo: 0)
        if slot.state == .empty {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
    }

    /// Writes `value`, which is not a scalar (see ``writeScalar(_:key:)``), at the current position as a
    /// value at `depth`; its coding path is `path`.
    func encodeValue<T: Encodable>(_ value: T, depth: Int) throws {
        guard depth < 512 else { throw giveUp() }

        var memoKey: JSONEncodingMemo.Key?
        if memoPrevious != nil, MemoryLayout<T>.size == MemoryLayout<Int>.size,
           let collection = value as? any JSONMemoizable, let identity = collection.memoIdentity,
           identity.count >= JSONEncodingMemo.minimumCount {
            let key = JSONEncodingMemo.Key(storage: identity.storage, count: identity.count, depth: depth, type: ObjectIdentifier(T.self))
            if let entry = memoPrevious?[key] {
                bytes.append(contentsOf: entry.bytes)
                memoNext[key] = entry
                return
            }
            memoKey = key
        }
        let start = bytes.count

        let mark = frames.count
        let saved = slot
        slot = Slot(depth: depth, serial: nextSerial(), mark: mark)
        try value.encode(to: self)
        try closeFrames(downTo: mark)
        if slot.state == .empty { writeEmptyObject(depth: depth) }  // as JSONEncoder: a value that wrote nothing is {}
        slot = saved

        if let memoKey {
            memoNext[memoKey] = JSONEncodingMemo.Entry(value: value, bytes: Array(bytes[start...]))
        }
    }

    /// Writes `value` when it is a scalar JSON has a form for (or `Data`, `URL`, `Decimal`), and says whether
    /// it did. `key` completes the coding path in an error.
    @inline(__always)
    func writeScalar<T>(_ value: T, key: (any CodingKey)?) throws -> Bool {
        if T.self == String.self { writeString(unsafeBitCast(value, to: String.self)) }
        else if T.self == Int.self { writeSigned(Int64(unsafeBitCast(value, to: Int.self))) }
        else if T.self == Bool.self { writeBool(unsafeBitCast(value, to: Bool.self)) }
        else if T.self == Double.self { try writeFloat(unsafeBitCast(value, to: Double.self), key: key) }
        else if T.self == Float.self { try writeFloat(unsafeBitCast(value, to: Float.self), key: key) }
        else if T.self == Int64.self { writeSigned(unsafeBitCast(value, to: Int64.self)) }
        else if T.self == Int32.self { writeSigned(Int64(unsafeBitCast(value, to: Int32.self))) }
        else if T.self == Int16.self { writeSigned(Int64(unsafeBitCast(value, to: Int16.self))) }
        else if T.self == Int8.self { writeSigned(Int64(unsafeBitCast(value, to: Int8.self))) }
        else if T.self == UInt.self { writeUnsigned(UInt64(unsafeBitCast(value, to: UInt.self))) }
        else if T.self == UInt64.self { writeUnsigned(unsafeBitCast(value, to: UInt64.self)) }
        else if T.self == UInt32.self { writeUnsigned(UInt64(unsafeBitCast(value, to: UInt32.self))) }
        else if T.self == UInt16.self { writeUnsigned(UInt64(unsafeBitCast(value, to: UInt16.self))) }
        else if T.self == UInt8.self { writeUnsigned(UInt64(unsafeBitCast(value, to: UInt8.self))) }
        else if T.self == Data.self { writeString(unsafeBitCast(value, to: Data.self).base64EncodedString()) }
        else if T.self == URL.self { writeString(unsafeBitCast(value, to: URL.self).absoluteString) }
        else if T.self == Decimal.self { writeASCII(unsafeBitCast(value, to: Decimal.self).description) }
        else { return false }
        return true
    }

    // MARK: Frames

    /// Opens an object or array at the current position.
    func openFrame(isObject: Bool, depth: Int, isLazy: Bool) -> Int {
        bytes.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
        frames.append(Frame(isObject: isObject, isLazy: isLazy, depth: depth, entryBase: entries.count,
                            serial: nextSerial(), pathLength: path.count))
        return frames.count - 1
    }

    /// Makes frame `index` the one written to: it must still be open, belong to the value being encoded,
    /// and have only nested containers above it, which close now.
    func prepare(_ index: Int, _ serial: UInt32) throws {
        guard !unsupported, index < frames.count, frames[index].serial == serial, index >= slot.mark else { throw giveUp() }
        while frames.count - 1 > index {
            guard frames[frames.count - 1].isLazy else { throw giveUp() }
            try closeTopFrame()
        }
    }

    func closeFrames(downTo mark: Int) throws {
        while frames.count > mark { try closeTopFrame() }
    }

    private func closeTopFrame() throws {
        let frame = frames.removeLast()
        if frame.isObject {
            if frame.count > 1 { try sortEntries(of: frame) }
            entries.removeLast(entries.count - frame.entryBase)
        }
        if frame.isLazy { path.removeLast() }
        if pretty {
            bytes.append(UInt8(ascii: "\n"))
            if frame.count == 0 { bytes.append(UInt8(ascii: "\n")) }
            writeIndent(frame.depth)
        }
        bytes.append(frame.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
    }

    /// Begins the next element of frame `index`: the separator and indentation.
    func beginElement(_ index: Int) {
        if frames[index].count > 0 { bytes.append(UInt8(ascii: ",")) }
        frames[index].count += 1
        if pretty {
            bytes.append(UInt8(ascii: "\n"))
            writeIndent(frames[index].depth + 1)
        }
    }

    /// Begins the entry `key` of object frame `index`, up to where its value goes.
    func beginEntry(_ index: Int, key: String) {
        beginElement(index)
        let start = bytes.count
        bytes.append(UInt8(ascii: "\""))
        let keyStart = bytes.count
        let escaped = writeStringContents(key)
        entries.append(Entry(start: start, keyStart: keyStart, keyEnd: bytes.count, rawKey: escaped ? key : nil))
        bytes.append(UInt8(ascii: "\""))
        if pretty {
            bytes.append(UInt8(ascii: " ")); bytes.append(UInt8(ascii: ":")); bytes.append(UInt8(ascii: " "))
        } else {
            bytes.append(UInt8(ascii: ":"))
        }
    }

    /// Puts the entries of a closing object in key order (by UTF-8 bytes, as `JSONEncoder` does), in place.
    private func sortEntries(of frame: Frame) throws {
        let range = frame.entryBase..<entries.count
        let end = bytes.count
        let separatorLength = pretty ? 2 + 2 * (frame.depth + 1) : 1
        // Each entry runs to the separator before the next one.
        func entryEnd(_ i: Int) -> Int { i + 1 < range.upperBound ? entries[i + 1].start - separatorLength : end }

        let order: [Int]? = try bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            let hasRawKeys = entries[range].contains { $0.rawKey != nil }
            let rawKeys = hasRawKeys
                ? range.map { i in entries[i].rawKey.map { Array($0.utf8) } ?? Array(buffer[entries[i].keyStart..<entries[i].keyEnd]) }
                : []
            // The keys' order as bytes (escaped keys by the key as given): <0, 0 or >0.
            func compare(_ a: Int, _ b: Int) -> Int {
                if hasRawKeys {
                    let x = rawKeys[a - range.lowerBound], y = rawKeys[b - range.lowerBound]
                    return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
                }
                let x = entries[a], y = entries[b]
                let lengthX = x.keyEnd - x.keyStart, lengthY = y.keyEnd - y.keyStart
                let common = memcmp(base + x.keyStart, base + y.keyStart, min(lengthX, lengthY))
                if common != 0 { return Int(common) }
                return lengthX - lengthY
            }
            var inOrder = true
            for i in range.dropFirst() {
                let c = compare(i - 1, i)
                if c == 0 { throw giveUp() }  // a key encoded twice: JSONEncoder decides which wins
                if c > 0 { inOrder = false }
            }
            if inOrder { return nil }
            let sorted = range.sorted { compare($0, $1) < 0 }
            for (a, b) in zip(sorted, sorted.dropFirst()) where compare(a, b) == 0 { throw giveUp() }
            return sorted
        }
        guard let order else { return }

        let regionStart = entries[range.lowerBound].start
        let original = Array(bytes[regionStart..<end])
        let separator = Array(bytes[(entryEnd(range.lowerBound))..<(entryEnd(range.lowerBound) + separatorLength)])
        var position = regionStart
        bytes.withUnsafeMutableBufferPointer { target in
            original.withUnsafeBufferPointer { source in
                for (n, i) in order.enumerated() {
                    if n > 0 {
                        for byte in separator { target[position] = byte; position += 1 }
                    }
                    let from = entries[i].start - regionStart, length = entryEnd(i) - entries[i].start
                    (target.baseAddress! + position).update(from: source.baseAddress! + from, count: length)
                    position += length
                }
            }
        }
    }

    // MARK: Writing

    func writeEmptyObject(depth: Int) {
        bytes.append(UInt8(ascii: "{"))
        if pretty {
            bytes.append(UInt8(ascii: "\n")); bytes.append(UInt8(ascii: "\n"))
            writeIndent(depth)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    func writeNull() { writeASCII("null") }

    func writeBool(_ value: Bool) { writeASCII(value ? "true" : "false") }

    func writeASCII(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    func writeASCII(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
    private static let spaces = [UInt8](repeating: UInt8(ascii: " "), count: 64)

    func writeIndent(_ depth: Int) {
        var remaining = depth * 2
        while remaining > 0 {
            let n = min(remaining, Self.spaces.count)
            bytes.append(contentsOf: Self.spaces[0..<n])
            remaining -= n
        }
    }

    func writeSigned(_ value: Int64) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            writeUnsigned(value.magnitude)
        } else {
            writeUnsigned(UInt64(value))
        }
    }

    func writeUnsigned(_ value: UInt64) {
        if value < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(value))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var value = value
            var index = 20
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") &+ UInt8(value % 10)
                value /= 10
            } while value > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[index..<20]))
        }
    }

    /// A finite number as `description` writes it, less a trailing `.0`; NaN and infinity are errors, as
    /// in `JSONEncoder`.
    func writeFloat<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F, key: (any CodingKey)?) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: path + (key.map { [$0] } ?? []),
                                                          debugDescription: "Unable to encode \(F.self).\(value) directly in JSON."))
        }
        if F.self == Double.self, value == value.rounded(.towardZero), value.magnitude < 1e15 {
            // An integral value: "1.0" less ".0", with the sign of -0.0 kept.
            if value == 0, value.sign == .minus { bytes.append(UInt8(ascii: "-")) }
            writeSigned(Int64(value))
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        writeASCII(text)
    }

    func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        writeStringContents(string)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes `string` escaped as `JSONEncoder` does, without quotes; returns whether anything was escaped.
    @discardableResult
    func writeStringContents(_ string: String) -> Bool {
        var string = string
        return string.withUTF8 { utf8 in
            var mark = 0
            var escaped = false
            for index in 0..<utf8.count {
                let byte = utf8[index]
                let escape: StaticString
                switch byte {
                case UInt8(ascii: "\""): escape = "\\\""
                case UInt8(ascii: "\\"): escape = "\\\\"
                case UInt8(ascii: "/") where escapeSlashes: escape = "\\/"
                case 0x08: escape = "\\b"
                case 0x0C: escape = "\\f"
                case 0x0A: escape = "\\n"
                case 0x0D: escape = "\\r"
                case 0x09: escape = "\\t"
                case 0x00..<0x20: escape = "\\u00"
                default: continue
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<index]))
                writeASCII(escape)
                if escape.utf8CodeUnitCount == 4 {  // \u00XX
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0xF)])
                }
                mark = index + 1
                escaped = true
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<utf8.count]))
            return escaped
        }
    }
}

// MARK: - Encoder

extension JSONStreamEncoder: Encoder {
    var codingPath: [any CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedContainer<Key>(encoder: self, frame: openContainer(isObject: true)))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedContainer(encoder: self, frame: openContainer(isObject: false))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self, serial: slot.serial)
    }

    /// The frame of the current value's container: opened now, or the one it asked for before.
    private func openContainer(isObject: Bool) -> (index: Int, serial: UInt32) {
        switch slot.state {
        case .empty where frames.count == slot.mark && !unsupported:
            let index = openFrame(isObject: isObject, depth: slot.depth, isLazy: false)
            slot.state = .container(frame: index, serial: frames[index].serial, isObject: isObject)
            return (index, frames[index].serial)
        case let .container(index, serial, wasObject)
            where wasObject == isObject && index < frames.count && frames[index].serial == serial:
            return (index, serial)
        default:
            unsupported = true
            return (-1, 0)
        }
    }

    /// Opens a container nested in frame `parent` (whose entry or element has just begun) under `key`.
    func openNested(isObject: Bool, parent: Int, key: any CodingKey) -> (index: Int, serial: UInt32) {
        path.append(key)
        let index = openFrame(isObject: isObject, depth: frames[parent].depth + 1, isLazy: true)
        return (index, frames[index].serial)
    }

    func containerPath(_ frame: (index: Int, serial: UInt32)) -> [any CodingKey] {
        guard frame.index >= 0, frame.index < frames.count, frames[frame.index].serial == frame.serial else { return path }
        return Array(path.prefix(frames[frame.index].pathLength))
    }
}

/// A coding key for an array index, in coding paths.
struct IndexCodingKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: JSONStreamEncoder
    let frame: (index: Int, serial: UInt32)

    var codingPath: [any CodingKey] { encoder.containerPath(frame) }

    private func begin(_ key: Key) throws {
        try encoder.prepare(frame.index, frame.serial)
        encoder.beginEntry(frame.index, key: key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws { try begin(key); encoder.writeNull() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try begin(key); encoder.writeBool(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { try begin(key); encoder.writeString(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try begin(key); try encoder.writeFloat(value, key: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try begin(key); try encoder.writeFloat(value, key: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try begin(key); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try begin(key); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try begin(key); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try begin(key); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try begin(key); encoder.writeSigned(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try begin(key); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try begin(key); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try begin(key); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try begin(key); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try begin(key); encoder.writeUnsigned(value) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try begin(key)
        if try encoder.writeScalar(value, key: key) { return }
        encoder.path.append(key)
        try encoder.encodeValue(value, depth: encoder.frames[frame.index].depth + 1)
        encoder.path.removeLast()
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, frame: nested(isObject: true, key)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        UnkeyedContainer(encoder: encoder, frame: nested(isObject: false, key))
    }

    private func nested(isObject: Bool, _ key: Key) -> (index: Int, serial: UInt32) {
        do { try begin(key) } catch { return (-1, 0) }
        return encoder.openNested(isObject: isObject, parent: frame.index, key: key)
    }

    mutating func superEncoder() -> any Encoder { encoder.unsupported = true; return encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder.unsupported = true; return encoder }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: JSONStreamEncoder
    let frame: (index: Int, serial: UInt32)

    var codingPath: [any CodingKey] { encoder.containerPath(frame) }

    var count: Int {
        guard frame.index >= 0, frame.index < encoder.frames.count, encoder.frames[frame.index].serial == frame.serial else { return 0 }
        return encoder.frames[frame.index].count
    }

    /// Begins the next element and returns its index.
    @discardableResult
    private func begin() throws -> Int {
        try encoder.prepare(frame.index, frame.serial)
        encoder.beginElement(frame.index)
        return encoder.frames[frame.index].count - 1
    }

    mutating func encodeNil() throws { try begin(); encoder.writeNull() }
    mutating func encode(_ value: Bool) throws { try begin(); encoder.writeBool(value) }
    mutating func encode(_ value: String) throws { try begin(); encoder.writeString(value) }
    mutating func encode(_ value: Double) throws { let i = try begin(); try encoder.writeFloat(value, key: IndexCodingKey(i)) }
    mutating func encode(_ value: Float) throws { let i = try begin(); try encoder.writeFloat(value, key: IndexCodingKey(i)) }
    mutating func encode(_ value: Int) throws { try begin(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int8) throws { try begin(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int16) throws { try begin(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int32) throws { try begin(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int64) throws { try begin(); encoder.writeSigned(value) }
    mutating func encode(_ value: UInt) throws { try begin(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { try begin(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { try begin(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { try begin(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { try begin(); encoder.writeUnsigned(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let index = try begin()
        if T.self == Double.self || T.self == Float.self {
            _ = try encoder.writeScalar(value, key: IndexCodingKey(index))
            return
        }
        if try encoder.writeScalar(value, key: nil) { return }
        encoder.path.append(IndexCodingKey(index))
        try encoder.encodeValue(value, depth: encoder.frames[frame.index].depth + 1)
        encoder.path.removeLast()
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, frame: nested(isObject: true)))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedContainer(encoder: encoder, frame: nested(isObject: false))
    }

    private func nested(isObject: Bool) -> (index: Int, serial: UInt32) {
        guard let index = try? begin() else { return (-1, 0) }
        return encoder.openNested(isObject: isObject, parent: frame.index, key: IndexCodingKey(index))
    }

    mutating func superEncoder() -> any Encoder { encoder.unsupported = true; return encoder }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let encoder: JSONStreamEncoder
    let serial: UInt32

    var codingPath: [any CodingKey] { encoder.path }

    /// Checks that this value has not been written yet, and marks it written.
    private func begin() throws {
        let slot = encoder.slot
        guard !encoder.unsupported, slot.serial == serial, slot.state == .empty, encoder.frames.count == slot.mark else {
            throw encoder.giveUp()
        }
        encoder.slot.state = .single
    }

    mutating func encodeNil() throws { try begin(); encoder.writeNull() }
    mutating func encode(_ value: Bool) throws { try begin(); encoder.writeBool(value) }
    mutating func encode(_ value: String) throws { try begin(); encoder.writeString(value) }
    mutating func encode(_ value: Double) throws { try begin(); try encoder.writeFloat(value, key: nil) }
    mutating func encode(_ value: Float) throws { try begin(); try encoder.writeFloat(value, key: nil) }
    mutating func encode(_ value: Int) throws { try begin(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int8) throws { try begin(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int16) throws { try begin(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int32) throws { try begin(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int64) throws { try begin(); encoder.writeSigned(value) }
    mutating func encode(_ value: UInt) throws { try begin(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { try begin(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { try begin(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { try begin(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { try begin(); encoder.writeUnsigned(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try begin()
        if try encoder.writeScalar(value, key: nil) { return }
        // The wrapped value takes this value's place: same depth, same coding path.
        try encoder.encodeValue(value, depth: encoder.slot.depth)
    }
}

// MARK: - Memo

/// The bytes of the large collections in the last value a store encoded, so that the next encode reuses
/// those still in the value unchanged.
///
/// A collection is known by its storage: copy-on-write collections share storage until one of them
/// changes, and the memo holds on to each collection it remembers, so storage it knows cannot change or be
/// reused. Loupe's values are values: an element that is a class mutated in place is not seen as a change.
final class JSONEncodingMemo: Sendable {
    struct Key: Hashable {
        var storage: UnsafeRawPointer
        var count: Int
        var depth: Int
        var type: ObjectIdentifier
    }

    /// A remembered collection (held, so its storage stays its own) and its JSON.
    struct Entry {
        var value: Any
        var bytes: [UInt8]
    }

    /// Collections smaller than this are encoded each time: remembering them costs more than it saves.
    static let minimumCount = 32

    private struct State {
        var entries: [Key: Entry] = [:]
        var lastSize = 0
    }

    private let state = Locked(State())

    init() {}

    func current() -> [Key: Entry] { state.withLock { $0.entries } }
    var lastSize: Int { state.withLock { $0.lastSize } }

    /// Remembers what the encode that just finished wrote: its collections, and its size.
    func replace(with entries: [Key: Entry], size: Int) {
        state.withLock { $0 = State(entries: entries, lastSize: size) }
    }
}

/// A collection the memo can know by its storage.
protocol JSONMemoizable {
    /// The collection's storage and count, or nil when it has none of its own.
    var memoIdentity: (storage: UnsafeRawPointer, count: Int)? { get }
}

extension Array: JSONMemoizable {
    var memoIdentity: (storage: UnsafeRawPointer, count: Int)? {
        withUnsafeBufferPointer { buffer in buffer.baseAddress.map { (UnsafeRawPointer($0), buffer.count) } }
    }
}

extension Dictionary: JSONMemoizable {
    var memoIdentity: (storage: UnsafeRawPointer, count: Int)? {
        // A dictionary is one reference to its hash table's storage (its layout is frozen in the standard library's ABI).
        guard MemoryLayout<Self>.size == MemoryLayout<UnsafeRawPointer>.size else { return nil }
        return (unsafeBitCast(self, to: UnsafeRawPointer.self), count)
    }
}

extension Set: JSONMemoizable {
    var memoIdentity: (storage: UnsafeRawPointer, count: Int)? {
        guard MemoryLayout<Self>.size == MemoryLayout<UnsafeRawPointer>.size else { return nil }
        return (unsafeBitCast(self, to: UnsafeRawPointer.self), count)
    }
}
