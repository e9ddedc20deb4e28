/// The formats a settings template is written in (``SettingsSchema/template(format:)``).
public enum TemplateFormat: String, Sendable, CaseIterable {
    /// TOML: `# key = value`, tables as `# [table]`.
    case toml
    /// YAML: `# key: value`, nested parts indented.
    case yaml
    /// JSONC: JSON with `//` comments: `// "key": value,` inside the braces.
    case jsonc
}

extension SettingsSchema {
    /// A settings file in `format` in which every setting appears commented out at its default, with its
    /// description (``DescribedSettings``) and what it allows as comments above it, as systemd's vendor
    /// files show theirs: a person uncomments a line to change a setting.
    ///
    /// ```swift
    /// print(try SettingsSchema(for: Settings.self, default: Settings()).template(format: .toml))
    /// ```
    ///
    /// The file holds no setting, so a program reading it has its defaults. Written in JSONC, it keeps its
    /// comments through every later write (a write edits the text in place).
    public func template(format: TemplateFormat) -> String {
        var writer = TemplateWriter(format: format)
        writer.header(document)
        writer.table(document, at: [])
        return writer.finished
    }
}

/// Writes a template, part by part, from a schema.
private struct TemplateWriter {
    let format: TemplateFormat
    private var lines: [String] = []

    init(format: TemplateFormat) {
        self.format = format
    }

    var finished: String {
        switch format {
        case .jsonc: (["{"] + lines.map { $0.isEmpty ? "" : "  " + $0 } + ["}"]).joined(separator: "\n") + "\n"
        case .toml, .yaml: lines.joined(separator: "\n") + "\n"
        }
    }

    private var comment: String { format == .jsonc ? "//" : "#" }

    mutating func header(_ schema: JSONValue) {
        let title =
            schema[path: "title"].flatMap { if case .string(let text) = $0 { text } else { nil } } ?? "the settings"
        lines.append("\(comment) Settings of \(title).")
        if case .string(let description)? = schema[path: "description"] { lines.append("\(comment) \(description)") }
        lines.append("\(comment) Every setting is shown commented out at its default: uncomment one to change it.")
    }

    /// The settings of the object schema `schema`, at `path`: its leaves first, then its nested objects.
    mutating func table(_ schema: JSONValue, at path: [String], depth: Int = 0) {
        guard case .object(let properties)? = schema[path: "properties"] else { return }
        // The version stamp is Loupe's, not a setting.
        let keys = properties.keys.sorted().filter { !(path.isEmpty && $0 == SettingsSchema.stampKey) }
        let leaves = keys.filter { Self.nestedProperties(properties[$0]!) == nil }
        let tables = keys.filter { Self.nestedProperties(properties[$0]!) != nil }
        for key in leaves { leaf(key, properties[key]!, depth: depth) }
        for key in tables {
            let part = Self.withoutNull(properties[key]!)
            switch format {
            case .toml:
                lines.append("")
                describe(part, prefix: "")
                lines.append("# [\((path + [key]).map(TOMLWriter.key).joined(separator: "."))]")
                table(part, at: path + [key])
            case .yaml:
                lines.append("")
                describe(part, prefix: indentation(depth))
                lines.append("# \(indentation(depth))\(Self.yamlKey(key)):")
                table(part, at: path + [key], depth: depth + 1)
            case .jsonc:
                lines.append("")
                describe(part, prefix: indentation(depth))
                lines.append("// \(indentation(depth))\(Self.jsonText(.string(key))): {")
                table(part, at: path + [key], depth: depth + 1)
                lines.append("// \(indentation(depth))},")
            }
        }
    }

    private mutating func leaf(_ key: String, _ schema: JSONValue, depth: Int) {
        let part = Self.withoutNull(schema)
        lines.append("")
        describe(part, prefix: indentation(depth))
        guard let value = part[path: "default"] ?? schema[path: "default"], value != .null else {
            lines.append("\(comment) \(indentation(depth))(\(key) is not set by default)")
            return
        }
        switch format {
        case .toml:
            // What TOML cannot hold (a null inside) is shown as JSON, for the person to write.
            let text = (try? TOMLWriter.inlineText(of: value)) ?? Self.jsonText(value)
            lines.append("# \(TOMLWriter.key(key)) = \(text)")
        case .yaml:
            lines.append("# \(indentation(depth))\(Self.yamlKey(key)): \(Self.jsonText(value))")
        case .jsonc:
            lines.append("// \(indentation(depth))\(Self.jsonText(.string(key))): \(Self.jsonText(value)),")
        }
    }

    /// A part's description and what it allows, as comment lines.
    private mutating func describe(_ schema: JSONValue, prefix: String) {
        let lead = format == .jsonc ? "// \(prefix)// " : "# \(prefix)# "
        let plain = "\(comment) \(prefix)"
        let start = prefix.isEmpty ? plain : lead
        if case .string(let description)? = schema[path: "description"] {
            for line in description.split(separator: "\n", omittingEmptySubsequences: false) {
                lines.append(start + line)
            }
        }
        var allows: [String] = []
        if case .array(let choices)? = schema[path: "enum"] {
            allows.append("one of " + choices.map(Self.jsonText).joined(separator: ", "))
        }
        for (keyword, words) in [
            ("minimum", "at least"), ("exclusiveMinimum", "greater than"), ("maximum", "at most"),
            ("exclusiveMaximum", "less than"),
        ] {
            if let bound = schema[path: ValuePath([.key(keyword)])], !SettingsSchema.isTypesOwnBound(bound) {
                allows.append("\(words) \(Self.jsonText(bound))")
            }
        }
        if case .string(let pattern)? = schema[path: "pattern"] { allows.append("matching \(pattern)") }
        if !allows.isEmpty { lines.append(start + "Allowed values: " + allows.joined(separator: "; ") + ".") }
    }

    private func indentation(_ depth: Int) -> String { String(repeating: "  ", count: depth) }

    /// The properties of a part that is an object with named parts (a nested settings type), nil for any
    /// other part (a value, an array, a dictionary).
    private static func nestedProperties(_ schema: JSONValue) -> [String: JSONValue]? {
        guard case .object(let properties)? = withoutNull(schema)[path: "properties"], !properties.isEmpty else {
            return nil
        }
        return properties
    }

    /// An optional part's schema without the `null` it also takes.
    private static func withoutNull(_ schema: JSONValue) -> JSONValue {
        guard case .array(let choices)? = schema[path: "anyOf"], choices.count == 2,
            let other = choices.first(where: { $0 != .object(["type": .string("null")]) })
        else { return schema }
        return other
    }

    private static func jsonText(_ value: JSONValue) -> String {
        value.jsonText()
    }

    private static func yamlKey(_ key: String) -> String {
        key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" } && !key.isEmpty
            ? key : jsonText(.string(key))
    }
}
