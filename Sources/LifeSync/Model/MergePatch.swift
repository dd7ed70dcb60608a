/// JSON Merge Patch (RFC 7396): members of the patch replace the target's, `null` removes one,
/// objects merge recursively, anything else replaces the target whole.
package enum MergePatch {
    package static func apply(_ patch: JSONValue, to target: JSONValue) -> JSONValue {
        guard case .object(let patchMembers) = patch else { return patch }
        var members: [(String, JSONValue)]
        if case .object(let existing) = target { members = existing } else { members = [] }
        for (key, value) in patchMembers {
            let index = members.firstIndex { $0.0 == key }
            if case .null = value {
                if let index { members.remove(at: index) }
                continue
            }
            let merged = apply(value, to: index.map { members[$0].1 } ?? .null)
            if let index { members[index].1 = merged } else { members.append((key, merged)) }
        }
        return .object(members)
    }
}
