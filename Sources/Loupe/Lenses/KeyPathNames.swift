@_spi(Reflection) import Swift

/// The ``LensPath`` segments a key path walks, found by matching it against the stored properties of the
/// types on its way, which the standard library's field reflection lists with their names and key paths.
///
/// `\Settings.server.port` is found as `server` then `port`, by comparing key paths (`==`), never by
/// reading their printed form. A key path through a computed property or a subscript matches no chain of
/// stored properties and is one unnamed segment. Results are kept per key path: deriving a lens looks a
/// key path up once.
enum KeyPathNames {
    /// The segments `keyPath` walks from `Whole`.
    static func segments<Whole>(of keyPath: PartialKeyPath<Whole>) -> [LensPath.Segment] {
        if let known = resolved.withLock({ $0[keyPath] }) { return known }
        let segments = resolve(keyPath)
        resolved.withLock { $0[keyPath] = segments }
        return segments
    }

    private static let resolved = Locked<[AnyKeyPath: [LensPath.Segment]]>([:])

    private static func resolve<Whole>(_ keyPath: PartialKeyPath<Whole>) -> [LensPath.Segment] {
        if keyPath == \Whole.self { return [] }
        // A key path of stored properties only has an offset; one with a computed part has none, and no
        // chain of stored properties equals it.
        guard let target = MemoryLayout<Whole>.offset(of: keyPath) else { return [.unnamed] }
        var search = Search<Whole>(target: keyPath, targetOffset: target)
        guard let names = search.names(in: Whole.self, prefix: nil, depth: 0) else { return [.unnamed] }
        return names.map { .component(.key($0)) }
    }

    /// A depth-first search through stored properties whose byte range holds the target's offset.
    private struct Search<Whole> {
        let target: PartialKeyPath<Whole>
        let targetOffset: Int

        mutating func names<Part>(in part: Part.Type, prefix: PartialKeyPath<Whole>?, depth: Int) -> [String]? {
            guard depth < 16 else { return nil }
            for field in StoredField.all(of: Part.self) {
                let path: PartialKeyPath<Whole>
                if let prefix {
                    guard let appended = prefix.appending(path: field.keyPath) else { continue }
                    path = appended
                } else {
                    guard let own = field.keyPath as? PartialKeyPath<Whole> else { continue }
                    path = own
                }
                if path == target { return [field.name] }
                guard let offset = MemoryLayout<Whole>.offset(of: path),
                    offset <= targetOffset, targetOffset < offset + max(field.size, 1)
                else { continue }
                if let rest = descend(into: field.valueType, prefix: path, depth: depth + 1) {
                    return [field.name] + rest
                }
            }
            return nil
        }

        private mutating func descend(into type: Any.Type, prefix: PartialKeyPath<Whole>, depth: Int) -> [String]? {
            func open<Part>(_ part: Part.Type) -> [String]? { names(in: part, prefix: prefix, depth: depth) }
            return open(type)
        }
    }
}

/// A stored property of a struct, as the standard library's field reflection lists them.
struct StoredField {
    let name: String
    let keyPath: AnyKeyPath
    let valueType: Any.Type
    let size: Int

    static func all<Whole>(of type: Whole.Type) -> [StoredField] {
        let id = ObjectIdentifier(type)
        if let known = cache.withLock({ $0[id] }) { return known }
        var fields: [StoredField] = []
        // Option 1 << 1 is `ignoreUnknown`: fields the runtime cannot describe are skipped. (The option's
        // static property is not concurrency-safe in Swift 6 mode, so it is spelled by its raw value.)
        let listed = _forEachFieldWithKeyPath(of: type, options: _EachFieldOptions(rawValue: 1 << 1)) { name, keyPath in
            let valueType = Swift.type(of: keyPath).valueType
            func size<Value>(_: Value.Type) -> Int { MemoryLayout<Value>.size }
            fields.append(StoredField(name: String(cString: name), keyPath: keyPath, valueType: valueType, size: size(valueType)))
            return true
        }
        if !listed { fields = [] }
        cache.withLock { $0[id] = fields }
        return fields
    }

    private static let cache = Locked<[ObjectIdentifier: [StoredField]]>([:])
}
