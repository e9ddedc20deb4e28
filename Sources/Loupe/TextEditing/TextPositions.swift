import Foundation

/// A place in a text, as editors and compilers name it: its line and its column, both from 1; the column
/// counts characters, not bytes. Places order as they stand in the text.
public struct TextPosition: Sendable, Hashable, Comparable {
    /// The line, from 1.
    public var line: Int
    /// The column, from 1, in characters.
    public var column: Int

    /// The place at `line` and `column`, both from 1.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// Whether `first` stands before `second` in the text: on an earlier line, or earlier on the same line.
    public static func < (first: TextPosition, second: TextPosition) -> Bool {
        (first.line, first.column) < (second.line, second.column)
    }
}

extension TextPosition: CustomStringConvertible {
    /// `3:7`.
    public var description: String { "\(line):\(column)" }
}

extension TextLines {
    /// The line and column of `offset`.
    package func position(of offset: Int) -> TextPosition {
        let offset = min(max(offset, 0), text.count)
        let start = lineStart(of: offset)
        return TextPosition(
            line: line(of: offset) + 1, column: String(decoding: text[start..<offset], as: UTF8.self).count + 1)
    }
}

extension JSONCodec {
    /// Where the part at `path` is written in `data`: its value's first character, or the nearest part
    /// above it the text writes; nil when `data` is not JSON (JSONC when comments are allowed).
    public func position(of path: ValuePath, in data: Data) -> TextPosition? {
        positions(of: [path], in: data)[0]
    }

    /// Where the parts at `paths` are written in `data`, the text read once: see ``position(of:in:)``.
    public func positions(of paths: [ValuePath], in data: Data) -> [TextPosition?] {
        let text = Array(TextEngine.withoutByteOrderMark(data))
        guard let syntax = try? JSONSyntax(text, comments: allowsComments, indexingKeys: false) else {
            return paths.map { _ in nil }
        }
        let lines = TextLines(text)
        return paths.map { path in
            var node = syntax.root
            for component in path.components {
                guard let container = node.container, let index = container.index(of: component) else { break }
                node = container.entries[index].value
            }
            return lines.position(of: node.range.lowerBound)
        }
    }
}

extension JSONCCodec {
    /// Where the part at `path` is written in `data`: see ``JSONCodec/position(of:in:)``.
    public func position(of path: ValuePath, in data: Data) -> TextPosition? {
        JSONCodec(allowsComments: true).position(of: path, in: data)
    }

    /// Where the parts at `paths` are written in `data`: see ``JSONCodec/positions(of:in:)``.
    public func positions(of paths: [ValuePath], in data: Data) -> [TextPosition?] {
        JSONCodec(allowsComments: true).positions(of: paths, in: data)
    }
}

extension TOMLCodec {
    /// Where the part at `path` is written in `data`: its value's first character (a table's: its
    /// header), or the nearest part above it the text writes; nil when `data` is not TOML.
    public func position(of path: ValuePath, in data: Data) -> TextPosition? {
        positions(of: [path], in: data)[0]
    }

    /// Where the parts at `paths` are written in `data`, the text read once: see ``position(of:in:)``.
    public func positions(of paths: [ValuePath], in data: Data) -> [TextPosition?] {
        let text = Array(TextEngine.withoutByteOrderMark(data))
        guard let syntax = try? TOMLReader.syntax(of: text).syntax else { return paths.map { _ in nil } }
        let lines = TextLines(text)
        return paths.map { lines.position(of: syntax.offset(of: $0.components)) }
    }
}

extension TOMLSyntax {
    /// Where the part at `path` is written: the value of the `key = value` line (or the entry of an
    /// array or inline table in it) that names the longest part of the path, or the header of the table
    /// it names (of an array of tables, its first); where the text writes nothing of the path, the start.
    func offset(of path: [ValuePath.Component]) -> Int {
        var best: (depth: Int, offset: Int) = (0, 0)
        for index in keyValues.indices {
            let named = self.path(of: index)
            guard path.starts(with: named) else { continue }
            var value = keyValues[index].value
            var depth = named.count
            // Into arrays and inline tables, as far as the path goes.
            walk: while depth < path.count, case .list(let list) = value {
                switch path[depth] {
                case .index(let position) where !list.isTable && list.items.indices.contains(position):
                    value = list.items[position].value
                    depth += 1
                case .key:
                    let keys = path[depth...].prefix { if case .key = $0 { true } else { false } }
                        .map { component -> String in if case .key(let key) = component { key } else { "" } }
                    guard let item = list.items.first(where: { !$0.key.isEmpty && keys.starts(with: $0.key) }) else {
                        break walk
                    }
                    value = item.value
                    depth += item.key.count
                default:
                    break walk
                }
            }
            if depth > best.depth { best = (depth, value.range.lowerBound) }
        }
        for section in sections.dropFirst() {
            if section.path.count > best.depth && path.starts(with: section.path) {
                best = (section.path.count, section.headerStart)
            } else if path.count > best.depth && section.path.starts(with: path) {
                // An array of tables, or a table only its subtables' headers write: the first header.
                best = (path.count, section.headerStart)
            }
        }
        return best.offset
    }
}
