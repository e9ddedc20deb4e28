import Foundation

/// A format's editor: reads a text into its lossless syntax tree and turns edits into splices of that text.
///
/// An editor is given the text without a byte-order mark and writes line breaks as `\n`: ``TextEngine``
/// takes the mark off and puts it back, and ends the lines an editor writes as the file ends its own.
package protocol TextEditor {
    /// The splices that make `text`, which holds `old`, hold the document `edits` make of it.
    ///
    /// - Throws: ``TextEditRefusal`` for an edit the format cannot make in place (taking out a key a YAML
    ///   merge key would bring in again, say).
    func splices(for edits: [DocumentEdit], in text: [UInt8], holding old: JSONValue) throws -> [TextSplice]
}

/// The one way a document is written as an edit of the text that held the previous one, for every text
/// format: the changes are worked out once (``DocumentEdit/changes(from:to:)``), the format's editor makes
/// them splices of the text, and the splices are made in one pass. Whether the result reads back as the
/// document is checked by ``DocumentCodec/serializeDocument(_:editing:store:)`` for every write.
package enum TextEngine {
    /// UTF-8's byte-order mark, which a JSON, JSONC or TOML file may start with and keeps through writes.
    package static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// `new` written as an edit of `text`, which holds `old`.
    package static func edit(
        _ text: Data, from old: JSONValue, to new: JSONValue, with editor: some TextEditor
    ) throws -> Data {
        let edits = DocumentEdit.changes(from: old, to: new)
        if edits.isEmpty { return text }
        let bytes = [UInt8](text)
        let hasMark = bytes.starts(with: byteOrderMark)
        let body = hasMark ? Array(bytes[byteOrderMark.count...]) : bytes
        let crlf = usesCRLF(body)
        var splices = try editor.splices(for: edits, in: body, holding: old)
        if crlf {
            for index in splices.indices { splices[index].replacement = withCRLF(splices[index].replacement) }
        }
        let edited = try body.applying(splices)
        return Data(hasMark ? byteOrderMark + edited : edited)
    }

    /// `bytes` without a leading byte-order mark.
    package static func withoutByteOrderMark(_ data: Data) -> Data {
        data.starts(with: byteOrderMark) ? data.dropFirst(byteOrderMark.count) : data
    }

    /// Whether the text's first line ends with `\r\n`.
    package static func usesCRLF(_ text: [UInt8]) -> Bool {
        guard let newline = text.firstIndex(of: UInt8(ascii: "\n")) else { return false }
        return newline > 0 && text[newline - 1] == UInt8(ascii: "\r")
    }

    /// `text` with each `\n` not already after a `\r` written `\r\n`.
    private static func withCRLF(_ text: [UInt8]) -> [UInt8] {
        guard text.contains(UInt8(ascii: "\n")) else { return text }
        var output: [UInt8] = []
        output.reserveCapacity(text.count + 8)
        var previous: UInt8 = 0
        for byte in text {
            if byte == UInt8(ascii: "\n"), previous != UInt8(ascii: "\r") { output.append(UInt8(ascii: "\r")) }
            output.append(byte)
            previous = byte
        }
        return output
    }
}

/// Where lines start and what their indentation is, for editors that write new lines in their neighbours'
/// style.
package struct TextLines: Sendable {
    package let text: [UInt8]
    /// The offset each line starts at.
    package let starts: [Int]

    package init(_ text: [UInt8]) {
        self.text = text
        var starts = [0]
        for index in text.indices where text[index] == UInt8(ascii: "\n") { starts.append(index + 1) }
        self.starts = starts
    }

    /// The index (from 0) of the line `offset` is on.
    package func line(of offset: Int) -> Int {
        var (low, high) = (0, starts.count)
        while low < high {
            let middle = (low + high) / 2
            if starts[middle] <= offset { low = middle + 1 } else { high = middle }
        }
        return max(0, low - 1)
    }

    /// Where the line `offset` is on starts.
    package func lineStart(of offset: Int) -> Int { starts[line(of: offset)] }

    /// Where the line `offset` is on ends: at its `\r\n` or `\n`, or the end of the text.
    package func lineEnd(of offset: Int) -> Int {
        let next = line(of: offset) + 1
        guard next < starts.count else { return text.count }
        let newline = starts[next] - 1
        return newline > 0 && text[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
    }

    /// The start of the line after the one `offset` is on (the end of the text for the last line).
    package func nextLineStart(after offset: Int) -> Int {
        let next = line(of: offset) + 1
        return next < starts.count ? starts[next] : text.count
    }

    /// The spaces and tabs that start the line `offset` is on.
    package func indentation(of offset: Int) -> [UInt8] {
        Array(text[lineStart(of: offset)...].prefix { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
    }

    /// Whether only spaces and tabs stand between the start of its line and `offset`.
    package func startsLine(_ offset: Int) -> Bool {
        text[lineStart(of: offset)..<offset].allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
    }
}
