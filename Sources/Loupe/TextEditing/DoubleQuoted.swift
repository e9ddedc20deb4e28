extension String {
    /// The string between double quotes, with the escapes TOML and YAML (and JSON) read alike: `\"`, `\\`,
    /// `\n`, `\t` and `\r`; `\b` and `\f` where `namesBackspaceAndFormFeed`; `\uXXXX` (upper-case hex) for
    /// any other scalar `needsEscape` names; every other scalar as it is.
    ///
    /// The TOML and YAML writers differ only in the scalars they escape and whether they name the two
    /// controls; each passes its own.
    package func doubleQuoted(
        namesBackspaceAndFormFeed: Bool, escaping needsEscape: (Unicode.Scalar) -> Bool
    ) -> String {
        var result = "\""
        for scalar in unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\u{08}" where namesBackspaceAndFormFeed: result += "\\b"
            case "\u{0C}" where namesBackspaceAndFormFeed: result += "\\f"
            case _ where needsEscape(scalar):
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
