/// JSON Merge Patch (RFC 7386): how a stored document lies over the defaults, and how the document to
/// store is found.
///
/// `merging(patch:)`: objects merge key by key, a `null` removes a key, anything else replaces whole
/// (arrays included). `mergePatch(to:)` is the smallest patch that turns this document into another: the
/// keys whose values differ (recursively, for objects on both sides), and `null` for keys that are gone.
extension JSONValue {
    /// This document with `patch` applied, as RFC 7386 defines it.
    ///
    /// ```swift
    /// let defaults: JSONValue = try JSONValue(parsing: #"{"port": 80, "tls": {"on": false, "ciphers": "any"}}"#)
    /// defaults.merging(patch: try JSONValue(parsing: #"{"tls": {"on": true}}"#))
    /// // {"port": 80, "tls": {"on": true, "ciphers": "any"}}
    /// ```
    public func merging(patch: JSONValue) -> JSONValue {
        guard case .object(let changes) = patch else { return patch }
        guard case .object(var result) = self else { return JSONValue.object([:]).merging(patch: patch) }
        for (key, change) in changes {
            if case .null = change {
                result[key] = nil
            } else if let current = result[key] {
                result[key] = current.merging(patch: change)
            } else {
                result[key] = JSONValue.object([:]).mergingNew(change)
            }
        }
        return .object(result)
    }

    /// `change` placed where nothing was: an object patch merged into nothing loses its `null`s.
    private func mergingNew(_ change: JSONValue) -> JSONValue {
        guard case .object = change else { return change }
        return merging(patch: change)
    }

    /// The merge patch that turns this document into `target`: `merging(patch: mergePatch(to: target))`
    /// equals `target` wherever `target` holds no `null` inside an object (which a merge patch cannot
    /// set, only remove).
    ///
    /// `{}` when the two are equal objects.
    public func mergePatch(to target: JSONValue) -> JSONValue {
        guard case .object(let old) = self, case .object(let new) = target else { return target }
        var patch: [String: JSONValue] = [:]
        for (key, value) in new {
            guard let previous = old[key] else {
                patch[key] = value
                continue
            }
            if previous == value { continue }
            patch[key] = previous.mergePatch(to: value)
        }
        for key in old.keys where new[key] == nil {
            patch[key] = .null
        }
        return .object(patch)
    }
}
