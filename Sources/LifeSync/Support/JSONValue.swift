/// A JSON document as a value: what LifeSync reads from users and peers before validating it.
///
/// Objects keep their members as an ordered list so that parsing is deterministic and duplicate
/// keys can be refused; ``canonicalText`` sorts keys, which makes equal values encode to equal
/// bytes on every replica.
///
/// ```swift
/// let value = try JSONValue.parse(#"{"text": "hello", "tags": ["a"]}"#)
/// value["text"]?.stringValue   // "hello"
/// ```
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            let sa = a.sorted { $0.0 < $1.0 }, sb = b.sorted { $0.0 < $1.0 }
            return sa.count == sb.count && zip(sa, sb).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The member named `key` of an object, or nil.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var numberValue: Double? {
        if case .number(let n) = self { return n }
        return nil
    }

    /// A short name of the value's JSON type, for error messages.
    package var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
