import Loupe
import Testing

/// How every tool (the CLI, the settings page) shows a secret: `JSONValue.masked` and `masking(_:at:)`.
@Suite("Masking secrets")
struct MaskingTests {
    @Test func everyScalarIsMaskedAndTheShapeStays() {
        let value: JSONValue = .object([
            "pin": .integer(1234), "on": .bool(true), "none": .null, "list": .array([.string("a")]),
        ])
        #expect(
            value.masked
                == .object([
                    "pin": .string("********"), "on": .string("********"), "none": .null,
                    "list": .array([.string("********")]),
                ]))
    }

    @Test func aPartIsMaskedWhereASecretHoldsItOrLiesInside() {
        let upstream: JSONValue = .object(["url": .string("https://x"), "token": .string("s3cr3t")])
        let secrets = [ValuePath([.key("upstream"), .key("token")])]
        #expect(
            upstream.masking(secrets, at: ValuePath([.key("upstream")]))
                == .object(["url": .string("https://x"), "token": .string("********")]))
        #expect(
            JSONValue.string("s3cr3t").masking(secrets, at: ValuePath([.key("upstream"), .key("token")]))
                == .string("********"))
        #expect(
            JSONValue.string("https://x").masking(secrets, at: ValuePath([.key("upstream"), .key("url")]))
                == .string("https://x"))
    }
}
