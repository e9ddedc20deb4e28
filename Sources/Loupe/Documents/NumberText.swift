/// A number written in decimal, as its significant digits and the place of the first: what tells
/// whether two spellings name the same number (`1.50`, `1.5` and `15e-1` do), and so whether a `Double`
/// holds a number as written.
package struct NumberText: Equatable {
    /// Whether the number is below zero (never for zero).
    package let negative: Bool
    /// The significant digits, without leading or trailing zeros; empty for zero.
    package let digits: Substring
    /// The number is `0.digits × 10^exponent`.
    package let exponent: Int

    /// Reads a JSON number's text (`-12.5e3`); nil for anything else.
    package init?(_ text: String) {
        var rest = Substring(text)
        let negative = rest.first == "-"
        if negative { rest = rest.dropFirst() }
        var exponent = 0
        if let marker = rest.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            var power = rest[rest.index(after: marker)...]
            if power.first == "+" { power = power.dropFirst() }
            guard let value = Int(power) else { return nil }
            exponent = value
            rest = rest[..<marker]
        }
        let point = rest.firstIndex(of: ".")
        let whole = point.map { rest[..<$0] } ?? rest
        let fraction = point.map { rest[rest.index(after: $0)...] } ?? ""
        guard !whole.isEmpty, (whole + fraction).allSatisfy(\.isASCII), (whole + fraction).allSatisfy(\.isNumber) else {
            return nil
        }
        let all = Substring(whole + fraction)
        let leading = all.prefix { $0 == "0" }.count
        var digits = all.dropFirst(leading)
        while digits.last == "0" { digits = digits.dropLast() }
        let (shift, overflow) = exponent.addingReportingOverflow(whole.count - leading)
        guard !overflow else { return nil }
        self.negative = negative && !digits.isEmpty
        self.digits = digits
        self.exponent = digits.isEmpty ? 0 : shift
    }

    /// Whether the number has no fractional part.
    package var isWhole: Bool { exponent >= digits.count }
}
