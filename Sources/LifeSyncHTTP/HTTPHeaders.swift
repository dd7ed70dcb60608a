import LifeSync

/// Header fields in the order they came, looked up without regard to case (RFC 9110 §5.1).
package struct HTTPHeaders: Equatable, Sendable, Sequence {
    package private(set) var fields: [(name: String, value: String)] = []

    package init(_ fields: [(String, String)] = []) {
        for (name, value) in fields { add(name, value) }
    }

    package static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.count == b.fields.count && zip(a.fields, b.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    package mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Replaces every field called `name` with one.
    package mutating func set(_ name: String, _ value: String) {
        fields.removeAll { $0.name.lowercased() == name.lowercased() }
        fields.append((name, value))
    }

    /// The first value of `name`, or nil.
    package subscript(name: String) -> String? {
        let wanted = name.lowercased()
        return fields.first { $0.name.lowercased() == wanted }?.value
    }

    /// Every value of `name`, each split at commas into trimmed, non-empty list members
    /// (`Connection: keep-alive, Upgrade`).
    package func tokens(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return fields.filter { $0.name.lowercased() == wanted }.flatMap { field in
            field.value.split(separator: ",").map { $0.withoutOptionalWhitespace }.filter { !$0.isEmpty }
        }
    }

    package func values(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return fields.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    package func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}
