/// What this replica holds of a recording's bytes.
package enum RecordingFileState: String, Sendable {
    /// The verified file is in permanent storage.
    case present
    /// Part of it has arrived (in a temporary file) and been checked chunk by chunk.
    case partial
    /// The local copy was removed: on a watch after a phone confirmed it, or by a user delete.
    case removed
}

/// A recording as `lifesync recordings` lists it: metadata, local state, confirmations.
package struct RecordingStatus: Equatable, Sendable {
    package var recording: Recording
    package var deleted: Bool
    package var file: RecordingFileState?
    package var received: UInt64
    /// Peers that proved, by a CONFIRM after bytes this node sent them, that they hold it.
    package var confirmedBy: [(nodeID: String, role: Role)]
    /// The peer this node received the verified bytes from (no confirmation: it sent them).
    package var receivedFrom: String?
    /// Why the local copy is not sent (it no longer matches its checksum, or is missing).
    package var damage: String?

    package static func == (a: RecordingStatus, b: RecordingStatus) -> Bool {
        a.recording == b.recording && a.deleted == b.deleted && a.file == b.file && a.received == b.received
            && a.confirmedBy.map(\.nodeID) == b.confirmedBy.map(\.nodeID) && a.receivedFrom == b.receivedFrom && a.damage == b.damage
    }

    /// In words: pending until a peer confirmed it, synced after (or once received here and
    /// verified); damaged with the reason; what a receiver still awaits.
    package var state: String {
        if deleted { return "deleted" }
        if let damage, file == .present { return "damaged: " + damage }
        switch file {
        case .present?: return confirmedBy.isEmpty && receivedFrom == nil ? "pending" : "synced"
        case .partial?: return "transferring"
        case .removed?: return "synced (local copy removed)"
        case nil: return "awaiting bytes"
        }
    }
}

extension Replica {
    /// Registers a recording whose verified file is already in this node's storage: a local write
    /// that replicates, signed by this node (`signer`, its node key), and the file marked present.
    package func addRecording(_ recording: Recording, signedBy signer: RecordingSigner) throws {
        guard recording.originNode == identity.nodeID else {
            throw ReplicaError.invalid(ValidationError(field: "origin_node", reason: "a recording attached here has this node (\(identity.nodeID)) as its origin"))
        }
        let signed = try recording.signed(by: signer)
        try writeTransaction {
            if try storedRecording(id: recording.id) != nil {
                throw ReplicaError.invalid(ValidationError(field: "id", reason: "recording \(recording.id) already exists"))
            }
            try bindOriginKey(nodeID: identity.nodeID, publicKey: signer.publicKey)
            let stamp = try nextStamp(previous: nil, deleted: false)
            try storeRecording(signed, id: recording.id, stamp: stamp)
            try setRecordingFile(id: recording.id, state: .present, sha256: recording.sha256, received: recording.size)
        }
    }

    /// Deletes a recording (an explicit user delete): a tombstone that replicates. Returns its
    /// storage name so the caller removes the file; the metadata stays, marked deleted.
    @discardableResult
    public func deleteRecording(id: String) throws -> String {
        try writeTransaction {
            guard let current = try storedRecording(id: id), !current.stamp.deleted, let recording = current.recording else {
                throw ReplicaError.notFound(id: id)
            }
            let stamp = try nextStamp(previous: current.stamp, deleted: true)
            try storeRecording(recording, id: id, stamp: stamp)
            return recording.storageName
        }
    }

    /// An explicit user delete with the bytes that go with it: the tombstone replicates, and this
    /// node's file and any partial download are removed.
    package func deleteRecording(id: String, from storage: RecordingStorage) throws {
        let fileName = try deleteRecording(id: id)
        if let file = try recordingFile(id: id) {
            try setRecordingFile(id: id, state: .removed, sha256: file.sha256, received: 0)
        }
        if storage.exists(fileName) { try storage.remove(fileName) }
        storage.discardTemporary(id)
    }

    /// Whether `id` names a recording (live or deleted) rather than an entry.
    public func isRecording(id: String) throws -> Bool { try storedRecording(id: id) != nil }

    /// The recording's metadata, live or deleted, or nil.
    package func recording(id: String) throws -> (recording: Recording, deleted: Bool)? {
        guard let stored = try storedRecording(id: id), let recording = stored.recording else { return nil }
        return (recording, stored.stamp.deleted)
    }

    /// Whether the recording `id` is here whole: its bytes stored and verified, or it deleted.
    /// False while only its metadata has arrived (the bytes follow by transfer).
    public func holdsRecording(id: String) throws -> Bool {
        try database.firstRow("""
            SELECT 1 FROM recordings r LEFT JOIN recording_files f ON f.id = r.id
            WHERE r.id = ? AND (r.deleted = 1 OR f.state = 'present')
            """, [.text(id)], { _ in true }) ?? false
    }

    /// Every recording this replica knows, oldest first, with what it holds of the bytes.
    package func recordingStatuses() throws -> [RecordingStatus] {
        let rows = try database.rows("""
            SELECT \(Replica.recordingColumns(prefix: "r.")), r.deleted, f.state, f.received, f.received_from, f.damage
            FROM recordings r LEFT JOIN recording_files f ON f.id = r.id ORDER BY r.created_at, r.id
            """) { row -> RecordingStatus in
            let recording = try Replica.recording(from: row)
            return RecordingStatus(recording: recording, deleted: row.int64(10) != 0,
                                   file: row.optionalString(11).flatMap(RecordingFileState.init(rawValue:)),
                                   received: try row.counter(12, upTo: .max, "received of \(recording.id)"), confirmedBy: [],
                                   receivedFrom: row.optionalString(13), damage: row.optionalString(14))
        }
        return try rows.map { status in
            var status = status
            status.confirmedBy = try confirmations(id: status.recording.id).map { ($0.nodeID, $0.role) }
            return status
        }
    }

    /// The stamp of the recording's metadata as this replica holds it.
    public func recordingStamp(id: String) throws -> VersionStamp? { try storedRecording(id: id)?.stamp }

    package func recordingFile(id: String) throws -> (state: RecordingFileState, sha256: SHA256.Digest, received: UInt64)? {
        try database.firstRow("SELECT state, sha256, received FROM recording_files WHERE id = ?", [.text(id)]) { row in
            (RecordingFileState(rawValue: row.string(0)) ?? .removed, try row.digest(1, "recording_files.sha256 of \(id)"), try row.counter(2, upTo: .max, "received of \(id)"))
        }
    }

    /// Records what this replica holds of a recording's bytes (not replicated); `receivedFrom`,
    /// the peer verified bytes came from, is kept until another is named. A new state clears
    /// any damage noted of the file before.
    package func setRecordingFile(id: String, state: RecordingFileState, sha256: SHA256.Digest, received: UInt64, receivedFrom: String? = nil,
                                 receivedFromIncarnation: String? = nil) throws {
        try database.run("""
            INSERT INTO recording_files(id, state, sha256, received, removed_at, updated_at, received_from, received_from_incarnation)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            ON CONFLICT(id) DO UPDATE SET state = ?2, sha256 = ?3, received = ?4, removed_at = coalesce(?5, removed_at), updated_at = ?6,
                received_from = coalesce(?7, received_from),
                received_from_incarnation = CASE WHEN ?7 IS NULL THEN received_from_incarnation ELSE ?8 END, damage = NULL
            """, [.text(id), .text(state.rawValue), .text(sha256.hex), .integer(Int64(received)),
                  state == .removed ? .text(now.iso8601) : .null, .text(now.iso8601), receivedFrom.map { .text($0) } ?? .null,
                  receivedFromIncarnation.map { .text($0) } ?? .null])
    }

    /// Notes how far an incoming recording has got (`received`, what `recordings` shows while
    /// it arrives). Committed without an fsync of its own (`synchronous = NORMAL`): the figure is
    /// a hint — a resume starts from the temporary file's own length — and with a busy disk a
    /// synced note held the receiving loop for about 25 ms each time (`strace -T` of a 1 GiB
    /// transfer: 64 notes, the disk writes idling behind them). A power cut can roll it back
    /// to an earlier figure; the next synced write makes it durable too.
    public func noteRecordingProgress(id: String, received: UInt64) throws {
        try database.withUnsyncedCommits {
            try database.run("UPDATE recording_files SET received = ?, updated_at = ? WHERE id = ? AND state = 'partial'",
                             [.integer(Int64(received)), .text(now.iso8601), .text(id)])
        }
    }

    /// Notes why this node's own copy cannot be sent (it no longer matches its SHA-256, or it is
    /// gone): `recordings` shows it, and it is not offered again until the file is repaired
    /// (`clearRecordingDamage`) or the user attaches it afresh.
    public func markRecordingDamaged(id: String, reason: String) throws {
        try database.run("UPDATE recording_files SET damage = ?, updated_at = ? WHERE id = ? AND state = 'present'",
                         [.text(String(reason.prefix(300))), .text(now.iso8601), .text(id)])
    }

    /// The recordings whose local copy was found damaged, with their metadata (to check again).
    package func damagedRecordings() throws -> [Recording] {
        try database.rows("""
            SELECT \(Replica.recordingColumns(prefix: "r.")) FROM recordings r JOIN recording_files f ON f.id = r.id
            WHERE f.damage IS NOT NULL AND f.state = 'present' AND r.deleted = 0 ORDER BY r.id
            """) { try Replica.recording(from: $0) }
    }

    /// Live recordings whose bytes this replica does not count as held (no file record, or a
    /// partial one), the first `limit` by ID: what a storage folder that outlived its replica
    /// may hold already, and what a receiver names in a WANT.
    public func recordingsWithoutBytes(limit: Int = .max) throws -> [String] {
        try database.rows("""
            SELECT r.id FROM recordings r LEFT JOIN recording_files f ON f.id = r.id
            WHERE r.deleted = 0 AND (f.id IS NULL OR f.state = 'partial') ORDER BY r.id LIMIT ?
            """, [.integer(Int64(clamping: limit))]) { $0.string(0) }
    }

    /// Those of `ids` this replica holds live, undamaged and in its storage, in the order given.
    package func presentRecordings(ids: [String]) throws -> [Recording] {
        try ids.compactMap { id in
            try database.firstRow("""
                SELECT \(Replica.recordingColumns(prefix: "r.")) FROM recordings r JOIN recording_files f ON f.id = r.id
                WHERE r.id = ? AND f.state = 'present' AND f.damage IS NULL AND r.deleted = 0
                """, [.text(id)]) { try Replica.recording(from: $0) }
        }
    }

    /// Live recordings this replica counts as held in its storage.
    package func presentRecordings() throws -> [Recording] {
        try database.rows("""
            SELECT \(Replica.recordingColumns(prefix: "r.")) FROM recordings r JOIN recording_files f ON f.id = r.id
            WHERE f.state = 'present' AND r.deleted = 0 ORDER BY r.id
            """) { try Replica.recording(from: $0) }
    }

    /// The local copy checks out again (the user restored it): it is offered again.
    public func clearRecordingDamage(id: String) throws {
        try database.run("UPDATE recording_files SET damage = NULL, updated_at = ? WHERE id = ?", [.text(now.iso8601), .text(id)])
    }

    /// Forgets what this replica held of a recording's bytes (after a failed download).
    public func clearRecordingFile(id: String) throws {
        try database.run("DELETE FROM recording_files WHERE id = ?", [.text(id)])
    }

    /// A peer proved, by checksum, that it holds the recording (under `incarnation`, its history
    /// then: a restored peer starts another, see `recordingsToOffer`).
    package func recordConfirmation(id: String, nodeID: String, role: Role, sha256: SHA256.Digest, incarnation: String? = nil) throws {
        try database.run("""
            INSERT INTO recording_confirmations(id, node_id, role, sha256, confirmed_at, incarnation) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(id, node_id) DO UPDATE SET sha256 = excluded.sha256, confirmed_at = excluded.confirmed_at, incarnation = excluded.incarnation
            """, [.text(id), .text(nodeID), .text(role.rawValue), .text(sha256.hex), .text(now.iso8601), incarnation.map { .text($0) } ?? .null])
    }

    package func confirmations(id: String) throws -> [(nodeID: String, role: Role, sha256: SHA256.Digest)] {
        try database.rows("SELECT node_id, role, sha256 FROM recording_confirmations WHERE id = ? ORDER BY node_id", [.text(id)]) {
            ($0.string(0), Role(rawValue: $0.string(1)) ?? .phone, try $0.digest(2, "recording_confirmations.sha256"))
        }
    }

    /// Recordings whose bytes this replica holds, undamaged, that `peer` has not confirmed and
    /// did not send us, in the order they were made. A confirmation made, or a copy sent to us,
    /// under another incarnation than `peerIncarnation` does not count: the peer's replica was put back from an
    /// older copy, or started afresh, since, and may have lost the file. The role policy (who
    /// sends to whom) is the caller's.
    package func recordingsToOffer(peerNodeID: String, peerIncarnation: String? = nil) throws -> [Recording] {
        try database.rows(Self.toOfferSQL, [.text(peerNodeID), peerIncarnation.map { .text($0) } ?? .null]) { try Replica.recording(from: $0) }
    }

    private static let toOfferSQL = """
        SELECT \(Replica.recordingColumns(prefix: "r."))
        FROM recordings r JOIN recording_files f ON f.id = r.id
        WHERE r.deleted = 0 AND f.state = 'present' AND f.damage IS NULL
          AND (f.received_from IS NOT ?1 OR (?2 IS NOT NULL AND f.received_from_incarnation IS NOT NULL AND f.received_from_incarnation <> ?2))
          AND NOT EXISTS (SELECT 1 FROM recording_confirmations c WHERE c.id = r.id AND c.node_id = ?1 AND c.sha256 = r.sha256
                          AND (c.incarnation IS NULL OR ?2 IS NULL OR c.incarnation = ?2))
        ORDER BY r.origin_seq, r.id
        """

    /// Live recordings made on this node whose bytes no peer has confirmed yet (a damaged copy
    /// waits for the user, not for a peer).
    public func unconfirmedRecordingCount() throws -> Int {
        Int(try database.firstRow("""
            SELECT count(*) FROM recordings r JOIN recording_files f ON f.id = r.id
            WHERE r.deleted = 0 AND f.state = 'present' AND f.damage IS NULL AND r.origin_node = ?
              AND NOT EXISTS (SELECT 1 FROM recording_confirmations c WHERE c.id = r.id)
            """, [.text(identity.nodeID)], { $0.int64(0) }) ?? 0)
    }

    // MARK: - Rows

    struct StoredRecording {
        var stamp: VersionStamp
        var recording: Recording?
    }

    func storedRecording(id: String) throws -> StoredRecording? {
        try database.firstRow("""
            SELECT \(Replica.recordingColumns), deleted, hlc, origin_no, origin_seq, vector
            FROM recordings WHERE id = ?
            """, [.text(id)]) { row in
            let deleted = row.int64(10) != 0
            return StoredRecording(stamp: try self.stamp(from: row, deleted: deleted, offset: 11), recording: try Replica.recording(from: row))
        }
    }

    /// The columns `recording(from:)` reads, in its order.
    static func recordingColumns(prefix: String = "") -> String {
        ["id", "file_name", "size", "sha256", "media_type", "entry_id", "origin_node", "created_at", "origin_key", "signature"]
            .map { prefix + $0 }.joined(separator: ", ")
    }
    static let recordingColumns = recordingColumns()

    static func recording(from row: Statement) throws -> Recording {
        do {
            return Recording(id: row.string(0), fileName: row.string(1), size: try row.counter(2, upTo: .max, "size"), sha256: try row.digest(3, "recordings.sha256"),
                             mediaType: row.string(4), entryID: row.optionalString(5), originNode: row.string(6),
                             createdAt: try Timestamp(iso8601: row.string(7)),
                             originKey: row.isNull(8) ? nil : row.blob(8), signature: row.isNull(9) ? nil : row.blob(9))
        } catch {
            throw ReplicaError.damaged("recording \(row.string(0)): \(error)")
        }
    }

    /// Writes a version of a recording's metadata; a delete keeps the metadata, marked deleted.
    func storeRecording(_ recording: Recording, id: String, stamp: VersionStamp) throws {
        try database.run("""
            INSERT INTO recordings(id, file_name, size, sha256, media_type, entry_id, origin_node, created_at, deleted, hlc, origin_no, origin_seq,
                                   vector, origin_key, signature)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
            ON CONFLICT(id) DO UPDATE SET file_name = ?2, size = ?3, sha256 = ?4, media_type = ?5, entry_id = ?6, origin_node = ?7,
                created_at = ?8, deleted = ?9, hlc = ?10, origin_no = ?11, origin_seq = ?12, vector = ?13, origin_key = ?14, signature = ?15
            """, [.text(id), .text(recording.fileName), .integer(Int64(recording.size)), .text(recording.sha256.hex), .text(recording.mediaType),
                  recording.entryID.map { .text($0) } ?? .null, .text(recording.originNode), .text(recording.createdAt.iso8601),
                  .integer(stamp.deleted ? 1 : 0), .integer(stamp.hlc.rawValue),
                  .integer(try database.originNumber(stamp.origin)), .counter(stamp.sequence),
                  .blob(try StoredVector.bytes(stamp.vector, own: stamp.own, in: database)),
                  recording.originKey.map { .blob($0) } ?? .null, recording.signature.map { .blob($0) } ?? .null])
    }

    /// Merges a remote version of a recording's metadata. Returns the file name to remove when a
    /// delete won over a live recording this replica holds bytes of.
    func mergeRecording(_ change: Change, into outcome: inout ApplyOutcome) throws {
        let local = try storedRecording(id: change.id)
        let decision = local.map { Merge.decide(local: $0.stamp, remote: change.stamp) } ?? .takeRemote(conflict: false)
        guard case .takeRemote = decision else { outcome.unchanged += 1; return }
        if let remote = change.recording { try checkOrigin(of: remote, holding: local?.recording) }
        // A delete carries no metadata: keep what we know, marked deleted (placeholders when the
        // delete arrives first; a deleted recording's metadata is not part of the replicated state).
        let recording = change.recording ?? local?.recording
            ?? Recording(id: change.id, fileName: change.id + ".bin", size: 0, sha256: SHA256.Digest(bytes: [UInt8](repeating: 0, count: 32)),
                         mediaType: "application/octet-stream", entryID: nil, originNode: "unknown", createdAt: Timestamp(millisecondsSince1970: 0))
        guard try storeUnlessClashing(change, outcome: &outcome, { try storeRecording(recording, id: change.id, stamp: change.stamp); return true }) != nil else { return }
        outcome.applied += 1
        if !change.stamp.deleted, try recordingFile(id: change.id) == nil { outcome.recordingsArrived.append(change.id) }
        if change.stamp.deleted, local?.recording == nil { outcome.unknownRecordingsDeleted.append(change.id) }
        if change.stamp.deleted, local?.stamp.deleted == false, let file = try recordingFile(id: change.id), file.state != .removed {
            try setRecordingFile(id: change.id, state: .removed, sha256: file.sha256, received: 0)
            outcome.recordingsToRemove.append((change.id, recording.storageName))
        }
    }
}
