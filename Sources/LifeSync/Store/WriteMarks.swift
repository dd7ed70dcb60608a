/// How far a node's own writes went, noted outside its replica: the incarnation and the last
/// sequence number it used.
package struct WriteMark: Equatable, Sendable {
    package var incarnation: String
    package var sequence: UInt64

    package init(incarnation: String, sequence: UInt64) {
        self.incarnation = incarnation
        self.sequence = sequence
    }
}

/// Where a node keeps its `WriteMark`, somewhere a copy of the replica's files does not carry
/// (the runtime: a small file per node ID in the user's state folder; the simulator: the
/// simulated device). A replica put back from an older copy is then noticed before it writes:
/// the mark is ahead of it (PROTOCOL.md §7.2.2).
///
/// A store that loses a mark, or cannot keep one, only loses that protection; it never fails a
/// write. Implementations are called from the replica's thread.
package protocol WriteMarkStore: AnyObject {
    /// The last mark recorded for `nodeID`, or nil when there is none (or it cannot be read).
    func mark(nodeID: String) -> WriteMark?
    /// Records `mark` for `nodeID`, replacing the one before.
    func record(_ mark: WriteMark, nodeID: String)
}

/// Why a replica starts a new incarnation before its next write (see `Replica.startsFresh`).
package enum RestoreEvidence: Equatable, Sendable {
    /// The replica is a copy `lifesync backup` made: whatever happened since the copy, its next
    /// write must not reuse a number the original may have used after it.
    case backupCopy
    /// The write mark outside the replica is ahead of it: this node wrote `mark`, and the replica
    /// holds less — it was put back from an older copy.
    case behindMark(WriteMark, holds: UInt64)
    /// The write mark names an incarnation this replica never had: it is older than a rotation.
    case unknownIncarnation(String)
}

extension RestoreEvidence: CustomStringConvertible {
    package var description: String {
        switch self {
        case .backupCopy: return "it is a copy made by `lifesync backup`"
        case .behindMark(let mark, let holds):
            return "this node wrote \(mark.sequence) changes under incarnation \(mark.incarnation) and the replica holds \(holds) of them"
        case .unknownIncarnation(let incarnation): return "this node last wrote under incarnation \(incarnation), which the replica has never had"
        }
    }
}

extension Replica {
    /// The meta key a backup copy carries, so that the replica restored from it starts a new
    /// incarnation before its first write.
    public static let backupCopyKey = "backup_copy_of"

    /// What says this replica was restored from an older copy, or nil. Read at the start of every
    /// local write's transaction (`writeTransaction`), before a sequence number is taken.
    func restoreEvidence() throws -> RestoreEvidence? {
        if try database.firstRow("SELECT 1 FROM meta WHERE key = ?", [.text(Replica.backupCopyKey)], { _ in true }) != nil {
            return .backupCopy
        }
        guard let marks = writeMarks, let mark = marks.mark(nodeID: identity.nodeID) else { return nil }
        if mark.incarnation == identity.incarnation {
            let holds = try currentSequence()
            return mark.sequence > holds ? .behindMark(mark, holds: holds) : nil
        }
        return try ownOrigins().contains(mark.incarnation) ? nil : .unknownIncarnation(mark.incarnation)
    }

    /// Starts a new incarnation when the replica was restored from an older copy (inside the
    /// caller's transaction), so no write made from here on reuses a number the lost history
    /// spent. Returns the evidence acted on.
    @discardableResult
    func startFreshIfRestored() throws -> RestoreEvidence? {
        guard let evidence = try restoreEvidence() else { return nil }
        let old = identity.incarnation
        try startIncarnation()
        try database.run("DELETE FROM meta WHERE key = ?", [.text(Replica.backupCopyKey)])
        onRestoreNoticed?(evidence, old, identity.incarnation)
        return evidence
    }

    /// Starts a new incarnation now if the replica was restored from an older copy (rather than
    /// at its next write): a node does so as it starts serving, so its peers see the new history
    /// in its first HELLO (and offer again what it confirmed under the old one). Returns the
    /// evidence acted on, or nil.
    @discardableResult
    package func startFreshIfRestoredNow() throws -> RestoreEvidence? {
        try database.transaction { try startFreshIfRestored() }
    }

    /// Notes this node's last sequence number outside the replica, once a write committed.
    func recordWriteMark(after before: WriteMark) {
        guard let marks = writeMarks, let now = try? currentSequence() else { return }
        let mark = WriteMark(incarnation: identity.incarnation, sequence: now)
        if mark != before { marks.record(mark, nodeID: identity.nodeID) }
    }

    /// Marks this database — a copy just made of a replica — as a backup: the replica restored
    /// from it starts a new incarnation before its first write.
    package static func markAsBackupCopy(_ database: Database, of nodeID: String, at time: Timestamp) throws {
        try database.run("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [.text(backupCopyKey), .text("\(nodeID) \(time.iso8601)")])
    }
}
