import Foundation

/// A settings type whose values must keep rules: every commit is checked before it is saved, whatever its
/// origin (an update, the CLI, an outside edit, a load).
///
/// Declare rules on parts, by key path, and check whatever spans several parts in ``validate()``. A rule
/// names its part as the document does, by the coding keys the key path's properties are encoded under
/// (`\.upstream.apiToken` is `up_stream.api_token` where `CodingKeys` say so):
///
/// ```swift
/// extension Settings: Validated {
///     static let rules: [Rule<Settings>] = [
///         Rule(\.ticker.intervalSeconds, .greaterThan(0)),
///         Rule(\.upstream.timeoutSeconds, .within(1...300)),
///         Rule(\.upstream.url, .matching("^https?://", "an http or https URL")),
///     ]
///
///     func validate() throws {
///         if tls.enabled && tls.certificate.isEmpty {
///             throw RuleViolation(path: "tls.certificate", rule: "is needed when tls.enabled is true")
///         }
///     }
/// }
/// ```
///
/// - An update that breaks a rule throws a ``SettingsError`` with code ``SettingsError/Code/outOfRange``
///   whose reason is the rule's message (`ticker.intervalSeconds: must be greater than 0, got -5`) and whose
///   cause is the ``RuleViolation``, and changes nothing.
/// - An outside edit that breaks one is refused like an edit that does not decode: logged, reported on
///   ``RootLens/errors``, and the good value stays.
/// - A stored document that breaks one is a ``SettingsError`` at load naming the store and the path; it is
///   never overwritten.
///
/// The defaults are not checked: they are the program's own.
public protocol Validated: SendableMetatype {
    /// The rules on parts of the value, checked in order; the first broken one is reported. None by
    /// default.
    static var rules: [Rule<Self>] { get }

    /// Checks what the rules cannot say (several parts at once); throw ``RuleViolation`` naming the part.
    /// Any other error is reported against the whole value. Does nothing by default.
    func validate() throws
}

extension Validated {
    public static var rules: [Rule<Self>] { [] }

    public func validate() throws {}

    /// Throws the first rule this value breaks, as ``RuleViolation``.
    public func check() throws(RuleViolation) {
        if let violation = violation(quotingValues: true) { throw violation }
    }

    /// Every rule this value breaks, in order, then what ``validate()`` throws; without the values found
    /// when `quotingValues` is false. For tools that report every problem at once (`check`).
    func violations(quotingValues: Bool, coding: DocumentCoding = DocumentCoding()) -> [RuleViolation] {
        var found: [RuleViolation] = []
        for rule in Self.rules {
            if var violation = rule.check(self) {
                violation.path = rule.path(in: self, coding: coding)
                if !quotingValues { violation.found = nil }
                found.append(violation)
            }
        }
        do {
            try validate()
        } catch var violation as RuleViolation {
            if !quotingValues { violation.found = nil }
            found.append(violation)
        } catch {
            found.append(RuleViolation(rule: quotingValues ? "\(error)" : "is not valid"))
        }
        return found
    }

    /// The first rule this value breaks; without the value found when `quotingValues` is false. A rule's
    /// path is named under `coding`'s key strategy.
    func violation(quotingValues: Bool, coding: DocumentCoding = DocumentCoding()) -> RuleViolation? {
        violations(quotingValues: quotingValues, coding: coding).first
    }
}

/// A rule on one part of a `Root`: its path, and the constraint its value keeps.
public struct Rule<Root>: Sendable {
    /// The stored part the rule is about.
    let keyPath: PartialKeyPath<Root> & Sendable
    /// What the rule says, as a JSON Schema could say it (for tools); `rule` in words.
    public let constraint: RuleConstraint
    /// Checks a root; a violation's path is named by ``path(in:coding:)``, only when there is one.
    let check: @Sendable (Root) -> RuleViolation?

    /// A rule on the part at `keyPath`, a path of stored properties, named as the document names it.
    public init<Value: Sendable>(_ keyPath: KeyPath<Root, Value> & Sendable, _ constraint: Constraint<Value>) {
        self.keyPath = keyPath
        self.constraint = constraint.description
        check = { root in
            let value = root[keyPath: keyPath]
            guard !constraint.holds(value) else { return nil }
            return RuleViolation(rule: constraint.description.rule, found: describe(value))
        }
    }

    /// The part the rule is about, as a document names it: the coding keys its key path's properties are
    /// encoded under (with no key strategy). Empty for a key path no coding key names.
    ///
    /// The keys are learnt by decoding the types on the way with made-up values; a type that has a part
    /// no value can be made up for (an enum that is not `CaseIterable`) is named from the first value of
    /// `Root` a rule checks or a lens reads, and is empty until then.
    public var path: ValuePath { KeyPathNames.documentPath(of: keyPath) ?? ValuePath([]) }

    /// The part's path under `coding`'s key strategy; `root` helps name parts of types a probe cannot make
    /// up (see ``FieldKeys``).
    func path(in root: Root, coding: DocumentCoding) -> ValuePath {
        KeyPathNames.documentPath(of: keyPath, sample: root, coding: coding) ?? ValuePath([])
    }
}

/// What a value must be, for ``Rule``.
public struct Constraint<Value: Sendable>: Sendable {
    let holds: @Sendable (Value) -> Bool
    let description: RuleConstraint

    /// A constraint that holds when `holds` says so; `rule` says what it asks in words (`must be even`).
    public static func satisfying(_ rule: String, _ holds: @escaping @Sendable (Value) -> Bool) -> Constraint {
        Constraint(holds: holds, description: RuleConstraint(rule: rule))
    }
}

extension Constraint where Value: Comparable & Sendable {
    /// More than `bound`.
    public static func greaterThan(_ bound: Value) -> Constraint {
        Constraint(
            holds: { $0 > bound },
            description: RuleConstraint(
                rule: "must be greater than \(describe(bound))", exclusiveMinimum: schemaNumber(bound)))
    }

    /// `bound` or more.
    public static func atLeast(_ bound: Value) -> Constraint {
        Constraint(
            holds: { $0 >= bound },
            description: RuleConstraint(rule: "must be at least \(describe(bound))", minimum: schemaNumber(bound)))
    }

    /// Less than `bound`.
    public static func lessThan(_ bound: Value) -> Constraint {
        Constraint(
            holds: { $0 < bound },
            description: RuleConstraint(
                rule: "must be less than \(describe(bound))", exclusiveMaximum: schemaNumber(bound)))
    }

    /// `bound` or less.
    public static func atMost(_ bound: Value) -> Constraint {
        Constraint(
            holds: { $0 <= bound },
            description: RuleConstraint(rule: "must be at most \(describe(bound))", maximum: schemaNumber(bound)))
    }

    /// Within `range`, its bounds included.
    public static func within(_ range: ClosedRange<Value>) -> Constraint {
        Constraint(
            holds: { range.contains($0) },
            description: RuleConstraint(
                rule: "must be between \(describe(range.lowerBound)) and \(describe(range.upperBound))",
                minimum: schemaNumber(range.lowerBound), maximum: schemaNumber(range.upperBound)))
    }
}

extension Constraint where Value: Equatable & Sendable {
    /// One of `choices`.
    public static func oneOf(_ choices: [Value]) -> Constraint {
        Constraint(
            holds: { choices.contains($0) },
            description: RuleConstraint(
                rule: "must be one of \(choices.map(describe).joined(separator: ", "))",
                choices: choices.compactMap(schemaValue)))
    }
}

extension Constraint where Value == String {
    /// A string that `pattern` (a regular expression, as JSON Schema's `pattern`: it may match anywhere
    /// unless anchored) matches; `meaning` says what it asks in words (`an http or https URL`).
    public static func matching(_ pattern: String, _ meaning: String) -> Constraint {
        let expression = try? NSRegularExpression(pattern: pattern)
        return Constraint(
            holds: { value in
                guard let expression else { return false }
                return expression.firstMatch(in: value, range: NSRange(value.startIndex..., in: value)) != nil
            },
            description: RuleConstraint(rule: "must be \(meaning)", pattern: pattern))
    }
}

/// What a rule asks, in words and as JSON Schema keywords where it can say it.
public struct RuleConstraint: Sendable, Hashable {
    /// In words: `must be greater than 0`.
    public var rule: String
    public var minimum: JSONValue?
    public var exclusiveMinimum: JSONValue?
    public var maximum: JSONValue?
    public var exclusiveMaximum: JSONValue?
    /// The values allowed (JSON Schema's `enum`).
    public var choices: [JSONValue]?
    /// A regular expression the value matches (JSON Schema's `pattern`).
    public var pattern: String?
}

/// A value that breaks a rule: `ticker.intervalSeconds: must be greater than 0, got -5`.
public struct RuleViolation: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The part that breaks the rule.
    public var path: ValuePath
    /// The rule, in words: `must be greater than 0`.
    public var rule: String
    /// The value found, as written in messages; nil for stores that keep secrets.
    public var found: String?

    /// A violation of `rule` at `path` (the value validated, by default), for ``Validated/validate()``.
    public init(path: ValuePath = .root, rule: String, found: String? = nil) {
        self.path = path
        self.rule = rule
        self.found = found
    }

    public var description: String {
        let place = path.components.isEmpty ? "the value" : path.description
        return "\(place): \(rule)" + (found.map { ", got \($0)" } ?? "")
    }

    public var errorDescription: String? { description }
}

/// `-5`, `"ftp://x"`, for a message.
private func describe<Value>(_ value: Value) -> String {
    if let string = value as? String { return String(reflecting: string) }
    if let raw = value as? any RawRepresentable, let string = raw.rawValue as? String {
        return String(reflecting: string)
    }
    // Numbers as JSON writes them: 5, not 5.0.
    var text = "\(value)"
    if value is any BinaryFloatingPoint, text.hasSuffix(".0") { text.removeLast(2) }
    return text
}

/// A bound as a JSON number, for a schema.
private func schemaNumber<Value>(_ value: Value) -> JSONValue? {
    switch value {
    case let value as any BinaryInteger: Int(exactly: value).map(JSONValue.integer)
    case let value as Double: Int(exactly: value).map(JSONValue.integer) ?? .double(value)
    case let value as Float: Int(exactly: value).map(JSONValue.integer) ?? .double(Double(value))
    default: nil
    }
}

/// A choice as a JSON value, for a schema.
private func schemaValue<Value>(_ value: Value) -> JSONValue? {
    switch value {
    case let value as String: .string(value)
    case let value as Bool: .bool(value)
    case let raw as any RawRepresentable: schemaValue(raw.rawValue) ?? schemaNumber(raw.rawValue)
    default: schemaNumber(value)
    }
}
