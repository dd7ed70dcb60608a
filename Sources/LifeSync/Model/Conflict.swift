/// A concurrent version that lost a merge and is kept instead of dropped
/// ("keep the local copy as backup").
package struct Conflict: Equatable, Sendable {
    package var entryID: String
    package var loser: VersionStamp
    /// The losing content; nil when the loser was a delete.
    package var loserEntry: LogEntry?
    package var winner: VersionStamp
    /// When this replica detected the conflict (its own clock).
    package var detectedAt: Timestamp
    /// The entry as it stands on this replica now (nil: deleted): what keeping the winner keeps.
    /// It is the winner's content unless a later version replaced it since.
    package var current: LogEntry?
    /// The fields the loser lost when it lost only some (a concurrent edit of the same fields,
    /// PROTOCOL.md §8); nil when it lost whole (a delete on either side, or a whole-entry write).
    package var lostFields: FieldMask?

    package init(entryID: String, loser: VersionStamp, loserEntry: LogEntry?, winner: VersionStamp, detectedAt: Timestamp,
                current: LogEntry? = nil, lostFields: FieldMask? = nil) {
        self.entryID = entryID
        self.loser = loser
        self.loserEntry = loserEntry
        self.winner = winner
        self.detectedAt = detectedAt
        self.current = current
        self.lostFields = lostFields
    }

    /// The fields on which the loser differs from what stands now (only those it lost, when it
    /// lost only some).
    package var fields: [FieldDifference] {
        let differences = LogEntry.differences(winner: current, loser: loserEntry)
        guard let lostFields else { return differences }
        let names = Set(lostFields.fields.map(\.name))
        return differences.filter { names.contains($0.field) }
    }

    /// The conflict as JSON; `device` names the node behind an origin (incarnation) when known.
    package func json(device: (String) -> Device? = { _ in nil }) -> JSONValue {
        func side(_ stamp: VersionStamp) -> [(String, JSONValue)] {
            var members: [(String, JSONValue)] = [("hlc", .string(stamp.hlc.description)), ("origin", .string(stamp.origin)),
                                                  ("sequence", .number(Double(stamp.sequence))), ("deleted", .bool(stamp.deleted))]
            if let known = device(stamp.origin) {
                members.append(("node_id", .string(known.nodeID)))
                members.append(("role", known.role.map { .string($0.rawValue) } ?? .null))
                members.append(("name", known.name.map(JSONValue.string) ?? .null))
            }
            return members
        }
        var loserMembers = side(loser)
        loserMembers.append(("entry", loserEntry?.json ?? .null))
        var winnerMembers = side(winner)
        winnerMembers.append(("current", current?.json ?? .null))
        return .object([
            ("entry_id", .string(entryID)),
            ("loser", .object(loserMembers)),
            ("winner", .object(winnerMembers)),
            ("fields", .array(fields.map { difference in
                .object([("field", .string(difference.field)), ("winner", difference.winner ?? .null), ("loser", difference.loser ?? .null)])
            })),
            ("lost_fields", lostFields.map { .array($0.fields.map { .string($0.name) }) } ?? .null),
            ("detected_at", .string(detectedAt.iso8601)),
        ])
    }

    /// The node an origin (one incarnation of a replica) belongs to, as a user knows it.
    package struct Device: Equatable, Sendable {
        package var nodeID: String
        package var role: Role?
        /// Its device name (Replica+DeviceNames), if it has one.
        package var name: String?

        package init(nodeID: String, role: Role?, name: String? = nil) {
            self.nodeID = nodeID
            self.role = role
            self.name = name
        }
    }
}

/// Which side of a conflict a resolution keeps.
package enum ConflictSide: String, Sendable, CaseIterable {
    /// What stands now (the winner, or what later replaced it).
    case winner
    /// The kept losing version (or, with a field, that field of it).
    case loser
}
