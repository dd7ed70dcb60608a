/// A recording arriving: the offer, how much of it was handed on, how much is verified, and the
/// writer that checks each chunk against the running digest (`IncomingFileWriter`) — the
/// whole-file SHA-256 falls out of the same pass, so every byte is hashed once and the file never
/// read twice (only a resumed transfer re-reads the prefix it already holds, once).
struct IncomingTransfer {
    let offer: Offer
    /// Bytes handed to the writer: the next chunk starts here.
    var received: UInt64
    /// Bytes checked and written (or queued for the disk): what ACCEPT acknowledges. Behind
    /// `received` while the writer checks on a thread of its own.
    var verified: UInt64
    /// Where this session started: bytes kept from an earlier attempt, not yet proven by a chunk.
    let resumedFrom: UInt64
    let writer: IncomingFileWriter
    /// Where progress was last noted in the replica.
    var checkpointed: UInt64

    var id: String { offer.recordingID }
    /// Every byte is there and verified.
    var isComplete: Bool { verified == offer.size }

    /// Whether `chunk` starts where the bytes handed on end, holds something, and stays within
    /// the offered size (checked without overflow: `received` ≤ size ≤ 4 GiB by the offer rules).
    func continues(with chunk: Chunk) -> Bool {
        precondition(received <= offer.size, "received ≤ size")
        return chunk.offset == received && !chunk.data.isEmpty && UInt64(chunk.data.count) <= offer.size - received
    }

    /// A transfer of `offer` into `storage`'s temporary file, going on from `resume` (the end of
    /// the last whole chunk an earlier attempt kept, 0 for none): that prefix is hashed once, so
    /// the running hash covers it; with none, any old temporary file goes.
    static func start(_ offer: Offer, resumingAt resume: UInt64, in storage: RecordingStorage) throws -> IncomingTransfer {
        precondition(resume <= offer.size && (resume == 0 || resume % UInt64(offer.chunkSize) == 0), "a resume point is a whole chunk within the file")
        let hasher = SHA256()
        var offset: UInt64 = 0
        while offset < resume {
            let piece = try storage.readTemporary(offer.recordingID, offset: offset, count: Int(min(UInt64(offer.chunkSize), resume - offset)))
            guard !piece.isEmpty else { throw RecordingStorageError("temporary file shorter than expected") }
            hasher.update(piece)
            offset += UInt64(piece.count)
        }
        if resume == 0 {
            storage.discardTemporary(offer.recordingID)
            // An empty recording still needs its (empty) temporary file to move into place.
            if offer.size == 0 { try storage.writeTemporary(offer.recordingID, offset: 0, bytes: []) }
        }
        let writer = storage.incomingWriter(for: offer.recordingID, hashedUpTo: resume, hasher: hasher)
        return IncomingTransfer(offer: offer, received: resume, verified: resume, resumedFrom: resume, writer: writer, checkpointed: resume)
    }

    /// What a chunk, or the verdicts on earlier ones, did.
    enum ChunkOutcome: Equatable {
        /// Going on; `verified`: the bytes verified now reach here (nil: no further than before)
        /// — acknowledge them; `checkpoint`: time to note the progress in the replica.
        case taken(verified: UInt64?, checkpoint: Bool)
        /// Refused with this FAILURE; `dropPrefix`: the bytes kept on disk are suspect too.
        case refused(TransferFailure, String, dropPrefix: Bool)
    }

    /// Checks that `chunk` continues the file and hands it to the writer, then looks at the
    /// verdicts; on the last chunk, waits for all of them.
    mutating func take(_ chunk: Chunk) -> ChunkOutcome {
        guard continues(with: chunk) else {
            return .refused(.outOfOrder, "chunk at \(chunk.offset) (\(chunk.data.count) bytes), expected \(received)", dropPrefix: false)
        }
        chunk.data.withUnsafeBytes { writer.submit($0, at: chunk.offset, expecting: chunk.sha256) }
        received += UInt64(chunk.data.count)
        precondition(received <= offer.size, "received ≤ size")
        return settle(waiting: received == offer.size)
    }

    /// What the writer judged since the last look.
    ///
    /// Once a chunk of this session has matched, the prefix is proven, so a mismatch is that
    /// chunk's: the verified prefix stays on disk for the retry. On the first chunk after a
    /// resume, the prefix kept from before may be the damaged part: it goes too.
    mutating func settle(waiting: Bool) -> ChunkOutcome {
        let verdicts = writer.verdicts(waiting: waiting)
        precondition(verdicts.verified >= verified && verdicts.verified <= received, "verdicts only move forward, over bytes handed on")
        switch verdicts.failure {
        case .corrupt(let offset)?:
            let prefixUnproven = offset == resumedFrom && resumedFrom > 0
            return .refused(.corruptChunk, "chunk at \(offset) does not match its checksum"
                            + (prefixUnproven ? " (the \(resumedFrom) bytes kept from before are dropped too)" : ""), dropPrefix: prefixUnproven)
        case .storage(let reason)?:
            return .refused(.storageFailure, "cannot write: \(reason)", dropPrefix: true)
        case nil:
            break
        }
        guard verdicts.verified > verified else { return .taken(verified: nil, checkpoint: false) }
        verified = verdicts.verified
        // Every 16 chunks' worth, the replica notes how far it got, for `recordings` to show (a
        // resume goes by the temporary file's length, not by this note).
        let checkpoint = verified - checkpointed >= 16 * UInt64(offer.chunkSize)
        if checkpoint { checkpointed = verified }
        precondition(!waiting || verified == received, "after waiting, every chunk handed on is judged")
        return .taken(verified: verified, checkpoint: checkpoint)
    }

    /// What finishing the file did.
    enum Finish: Equatable {
        /// Synced and moved into place under the offer's file name.
        case stored(SHA256.Digest)
        /// The whole file does not hash to the offer's SHA-256: the temporary file is gone.
        case mismatch(computed: SHA256.Digest)
        /// Storage failed; the temporary file is gone.
        case failed(String)
    }

    /// Compares the whole-file hash, syncs the temporary file and moves it into place.
    func finish(in storage: RecordingStorage) -> Finish {
        precondition(isComplete && received == verified, "a transfer finishes once every byte arrived and was verified")
        let computed = writer.finalize()
        guard computed == offer.sha256 else {
            storage.discardTemporary(id)
            return .mismatch(computed: computed)
        }
        do {
            try storage.syncTemporary(id)
            try storage.promoteTemporary(id, to: Recording.storageName(id: id, fileName: offer.fileName))
        } catch {
            storage.discardTemporary(id)
            return .failed("\(error)")
        }
        return .stored(computed)
    }
}

/// The recordings a node is receiving right now, shared by its sessions: two peers offering the
/// same recording at once must not write the same temporary file (one would truncate under the
/// other, and the other's running hash would still match the chunks it saw).
package final class IncomingTransfers {
    private(set) var active = Set<String>()

    package init() {}

    /// Claims `id` for one session; false when another session is receiving it.
    func claim(_ id: String) -> Bool { active.insert(id).inserted }

    func release(_ id: String) { active.remove(id) }
}
