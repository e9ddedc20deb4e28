@_spi(Reflection) import Swift

/// The ``LensPath`` segments a key path walks, in the document's vocabulary: the coding keys the values on
/// its way are encoded under, as the document names them (under the coding's key strategy).
///
/// `\Settings.upstream.apiToken` is found as the stored properties `upstream` then `apiToken`, by comparing
/// key paths (`==`) against the standard library's field reflection, never by reading their printed form;
/// each property is then named by the coding key its type encodes it under (``FieldKeys``), so with
/// `CodingKeys` in snake_case the path is `up_stream.api_token`, as the file says. A key path through a
/// computed property or a subscript matches no chain of stored properties, and a property that is not
/// encoded has no key: from there the path is unnamed. Results are kept per key path: deriving a lens
/// looks a key path up once.
enum KeyPathNames {
    /// The segments `keyPath` walks from `Whole`, named under `coding`'s key strategy. `sample`, a value of
    /// `Whole` when one is at hand, helps name the parts of types a probe cannot make up (see ``FieldKeys``).
    static func segments<Whole>(
        of keyPath: PartialKeyPath<Whole>, sample: @autoclosure () -> Whole? = nil,
        coding: DocumentCoding = DocumentCoding()
    ) -> [LensPath.Segment] {
        codingKeySegments(of: keyPath, sample: sample).map { segment in
            guard case .component(.key(let key)) = segment else { return segment }
            return .component(.key(coding.documentKey(forCodingKey: key)))
        }
    }

    /// The segments `keyPath` walks from the value of `node`, named under its graph's coding; the node's
    /// value is read only when the key path has not been named before.
    static func segments<Whole>(of keyPath: PartialKeyPath<Whole>, in node: any LensNode<Whole>) -> [LensPath.Segment] {
        segments(of: keyPath, sample: node.readUntracked(), coding: node.coding)
    }

    /// The segments `keyPath` walks from the value of an optional's `node`, as above.
    static func segments<Whole>(of keyPath: PartialKeyPath<Whole>, in node: any LensNode<Whole?>) -> [LensPath.Segment]
    {
        segments(of: keyPath, sample: node.readUntracked(), coding: node.coding)
    }

    /// The document's path of `keyPath` under `coding`, or `nil` where part of it is unnamed.
    static func documentPath<Whole>(
        of keyPath: PartialKeyPath<Whole>, sample: @autoclosure () -> Whole? = nil,
        coding: DocumentCoding = DocumentCoding()
    ) -> ValuePath? {
        LensPath(segments: segments(of: keyPath, sample: sample(), coding: coding)).valuePath
    }

    /// The segments in coding keys, before any key strategy.
    private static func codingKeySegments<Whole>(
        of keyPath: PartialKeyPath<Whole>, sample: () -> Whole?
    ) -> [LensPath.Segment] {
        if let known = resolved.withLock({ $0[keyPath] }) { return known }
        let (segments, complete) = resolve(keyPath, sample: sample())
        // A path left unnamed is worked out again with the next sample (``FieldKeys`` tries a few).
        if complete { resolved.withLock { $0[keyPath] = segments } }
        return segments
    }

    private static let resolved = Locked<[AnyKeyPath: [LensPath.Segment]]>([:])

    private static func resolve<Whole>(
        _ keyPath: PartialKeyPath<Whole>, sample: Whole?
    ) -> (segments: [LensPath.Segment], complete: Bool) {
        if keyPath == \Whole.self { return ([], true) }
        // A key path of stored properties only has an offset; one with a computed part has none, and no
        // chain of stored properties equals it.
        guard let target = MemoryLayout<Whole>.offset(of: keyPath) else { return ([.unnamed], true) }
        var search = Search<Whole>(target: keyPath, targetOffset: target)
        guard let keys = search.keys(in: Whole.self, sample: sample, prefix: nil, depth: 0) else {
            return ([.unnamed], true)
        }
        var segments: [LensPath.Segment] = []
        for key in keys {
            guard let key else { return (segments + [.unnamed], false) }
            segments.append(.component(.key(key)))
        }
        return (segments, true)
    }

    /// A depth-first search through stored properties whose byte range holds the target's offset; each
    /// property found is given as its coding key (`nil` where it has none).
    private struct Search<Whole> {
        let target: PartialKeyPath<Whole>
        let targetOffset: Int

        mutating func keys<Part>(
            in part: Part.Type, sample: Part?, prefix: PartialKeyPath<Whole>?, depth: Int
        ) -> [String?]? {
            guard depth < 16 else { return nil }
            let fields = StoredField.all(of: Part.self)
            func key(of index: Int) -> String? { FieldKeys.key(of: Part.self, field: index, sample: sample) }
            for (index, field) in fields.enumerated() {
                let path: PartialKeyPath<Whole>
                if let prefix {
                    guard let appended = prefix.appending(path: field.keyPath) else { continue }
                    path = appended
                } else {
                    guard let own = field.keyPath as? PartialKeyPath<Whole> else { continue }
                    path = own
                }
                if path == target { return [key(of: index)] }
                guard let offset = MemoryLayout<Whole>.offset(of: path),
                    offset <= targetOffset, targetOffset < offset + max(field.size, 1)
                else { continue }
                let inner = sample.flatMap { $0[keyPath: field.keyPath] }
                if let rest = descend(into: field.valueType, sample: inner, prefix: path, depth: depth + 1) {
                    return [key(of: index)] + rest
                }
            }
            return nil
        }

        private mutating func descend(
            into type: Any.Type, sample: Any?, prefix: PartialKeyPath<Whole>, depth: Int
        ) -> [String?]? {
            func open<Part>(_ part: Part.Type) -> [String?]? {
                keys(in: part, sample: sample as? Part, prefix: prefix, depth: depth)
            }
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
            fields.append(
                StoredField(name: String(cString: name), keyPath: keyPath, valueType: valueType, size: size(valueType)))
            return true
        }
        if !listed { fields = [] }
        cache.withLock { $0[id] = fields }
        return fields
    }

    private static let cache = Locked<[ObjectIdentifier: [StoredField]]>([:])
}
