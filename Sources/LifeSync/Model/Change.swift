/// What kind of record a change is about (its code on the wire).
package enum ChangeKind: UInt8, Sendable {
    case entry = 1
    case recording = 2
}

/// One replicated version of a record: what a replica reads from its log and a peer applies.
/// A delete travels as a change with `stamp.deleted` and no content.
package struct Change: Equatable, Sendable {
    package var id: String
    package var kind: ChangeKind
    package var stamp: VersionStamp
    /// The entry's content (entry changes that are not deletes).
    package var entry: LogEntry?
    /// The recording's metadata (recording changes that are not deletes).
    package var recording: Recording?
    /// The fields of the entry this write changed (PROTOCOL.md §8): `.all` for a new entry, a
    /// delete, and every recording change.
    package var fields: FieldMask

    package init(id: String, stamp: VersionStamp, entry: LogEntry?, fields: FieldMask = .all) {
        precondition(stamp.deleted == (entry == nil), "a change carries an entry exactly when it is not a delete")
        self.id = id
        self.kind = .entry
        self.stamp = stamp
        self.entry = entry
        self.fields = entry == nil ? .all : fields
    }

    package init(id: String, stamp: VersionStamp, recording: Recording?) {
        precondition(stamp.deleted == (recording == nil), "a change carries metadata exactly when it is not a delete")
        self.id = id
        self.kind = .recording
        self.stamp = stamp
        self.recording = recording
        self.fields = .all
    }

    /// The write as the per-field merge takes it (entry changes).
    var write: EntryWrite { EntryWrite(stamp: stamp, fields: fields, entry: entry) }

    /// The content as canonical JSON bytes (empty for a delete).
    var payload: [UInt8] {
        if let entry { return Array(entry.json.canonicalText.utf8) }
        if let recording { return Array(recording.json.canonicalText.utf8) }
        return []
    }
}

/// A change ready for the wire: its content already as canonical JSON bytes (empty for a
/// delete). The sync path reads these straight from the replica's columns, without parsing.
package struct EncodedChange: Equatable, Sendable {
    package var id: String
    package var kind: ChangeKind
    package var stamp: VersionStamp
    package var payload: [UInt8]
    /// The fields the write changed (`Change.fields`).
    package var fields: FieldMask = .all
    /// A stored row that does not read back as a valid change (see `Replica.encodedChanges`):
    /// it keeps its place in its origin's log, and is never sent.
    package var isDamaged = false

    package init(id: String, kind: ChangeKind = .entry, stamp: VersionStamp, payload: [UInt8], fields: FieldMask = .all) {
        self.id = id
        self.kind = kind
        self.stamp = stamp
        self.payload = payload
        self.fields = fields
    }

    /// The place-holder of a damaged row of `origin` at `sequence`.
    static func damaged(id: String, origin: String, sequence: UInt64) -> EncodedChange {
        var change = EncodedChange(id: id, stamp: VersionStamp(hlc: .zero, origin: origin, sequence: sequence, vector: VersionVector(), deleted: false),
                                   payload: [])
        change.isDamaged = true
        return change
    }
}

extension Change {
    package var encoded: EncodedChange { EncodedChange(id: id, kind: kind, stamp: stamp, payload: payload, fields: fields) }
}
