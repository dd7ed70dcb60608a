/// One replicated version of a record: what a replica reads from its log and a peer applies.
/// A delete travels as a change with `stamp.deleted` and no entry.
public struct Change: Equatable, Sendable {
    public var id: String
    public var stamp: VersionStamp
    /// The entry's content; nil for a delete.
    public var entry: LogEntry?

    public init(id: String, stamp: VersionStamp, entry: LogEntry?) {
        precondition(stamp.deleted == (entry == nil), "a change carries an entry exactly when it is not a delete")
        self.id = id
        self.stamp = stamp
        self.entry = entry
    }
}

/// A change ready for the wire: its entry already as canonical JSON bytes (empty for a delete).
/// The sync path reads these straight from the replica's columns, without parsing the entry.
public struct EncodedChange: Equatable, Sendable {
    public var id: String
    public var stamp: VersionStamp
    public var entryJSON: [UInt8]

    public init(id: String, stamp: VersionStamp, entryJSON: [UInt8]) {
        self.id = id
        self.stamp = stamp
        self.entryJSON = entryJSON
    }
}

extension Change {
    public var encoded: EncodedChange {
        EncodedChange(id: id, stamp: stamp, entryJSON: entry.map { Array($0.json.canonicalText.utf8) } ?? [])
    }
}
