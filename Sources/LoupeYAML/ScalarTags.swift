#if YAML
import Yams

/// The tag Yams's default resolver gives a scalar, found without its regular expressions where they
/// cannot match.
///
/// Yams resolves a plain scalar's type by running its resolver's patterns (bool, int, float, merge, null,
/// timestamp, value) on the text, through `NSRegularExpression`, which copies the text for each pattern: for
/// long values (a sops file's `ENC[…]`, a URL, a sentence) that costs more than the rest of a parse (the sops
/// rows of `Benchmarks/`). Every one of those patterns starts with one of `~ n N y Y t T f F o O 0-9 + - . < =`,
/// or matches the empty text: a plain scalar starting with any other character is a string, and only the
/// others are handed to Yams. `ScalarTagsTests` checks this against Yams's own resolver.
enum ScalarTags {
    /// The first characters some pattern of Yams's default resolver starts with.
    static let resolvable = Set("~nNyYtTfFoO0123456789+-.<=".utf8)

    /// The tag Yams's default resolver gives `node` (a scalar's, resolved), whatever resolver parsed it,
    /// without resolving it when its text cannot be anything but a string.
    static func tag(of node: Node) -> Tag.Name {
        // A tag not yet resolved says "resolve me" (the implicit tag, ""); any other is as written or resolved.
        if case .scalar(let scalar) = node, scalar.tag.description == Tag.Name.implicit.rawValue {
            if let first = scalar.string.utf8.first, !resolvable.contains(first) { return .str }
            return Resolver.default.resolveTag(of: node)
        }
        return Tag.Name(rawValue: node.tag.description)
    }

    /// Whether plain `text` reads as a string, as Yams's default resolver reads it.
    static func readsAsString(_ text: String) -> Bool {
        if let first = text.utf8.first, !resolvable.contains(first) { return true }
        return Node(text).tag.description == Tag.Name.str.rawValue
    }
}
#endif
