/// A recording being sent: what the receiver acknowledged, what has been sent, and the running
/// hash of the bytes read so far (chunks carry the digest of the file up to their end).
struct OutgoingTransfer {
    let recording: Recording
    var accepted = false
    /// Where the receiver's first ACCEPT started us (the end of what it held from before).
    var startedAt: UInt64 = 0
    var acknowledged: UInt64 = 0
    var sent: UInt64 = 0
    let hasher = SHA256()
    /// Bytes fed to `hasher` (or covered by `digests`): behind `sent` only right after a resume,
    /// until the prefix is hashed.
    var hashed: UInt64 = 0
    /// When the receiver last moved the transfer on (the offer, then every ACCEPT): a transfer
    /// that stalls longer than `TransferConfiguration.stallTimeout` is given up and retried.
    var lastProgress: Int64

    /// The running digest at the end of each chunk, kept by storage when the file came in
    /// (`RecordingStorage.chunkDigests`): with them nothing is hashed on the way out. Taken only
    /// when there is one per chunk and the last is the recording's SHA-256. A copy damaged since
    /// then is caught by the receiver (`corrupt_chunk`), after which the sender drops them and
    /// hashes its copy again on the next attempt (`SyncSession.receiveFailure`).
    let digests: [SHA256.Digest]?

    init(recording: Recording, now: Int64, digests: [SHA256.Digest]? = nil, chunkSize: UInt32 = TransferConfiguration().chunkSize) {
        self.recording = recording
        lastProgress = now
        let chunks = (recording.size + UInt64(chunkSize) - 1) / UInt64(chunkSize)
        self.digests = digests.flatMap { digests in
            digests.count == chunks && digests.last == recording.sha256 && recording.size > 0 ? digests : nil
        }
    }

    var id: String { recording.id }

    /// Whether this session sent bytes up to the end and the receiver acknowledged them all: the
    /// only proof a CONFIRM can carry (an empty recording needs none).
    var deliveredWhole: Bool {
        recording.size == 0 || (accepted && startedAt < recording.size && acknowledged == recording.size)
    }

    /// An ACCEPT (PROTOCOL.md §5.9): the first one says where to start (0, the size, or a chunk
    /// boundary below it), each later one acknowledges progress — never behind what was
    /// acknowledged, never beyond what was sent (an offset past it made the sender's window
    /// arithmetic trap).
    mutating func accept(offset: UInt64, chunkSize: UInt32, now: Int64) throws(WireError) {
        let size = recording.size
        if !accepted {
            guard offset <= size, offset % UInt64(chunkSize) == 0 || offset == size else {
                throw WireError(.malformed, "ACCEPT offset \(offset) of \(id) is not a chunk boundary within \(size) bytes")
            }
            accepted = true
            startedAt = offset
            sent = offset
            acknowledged = offset
        } else {
            guard offset >= acknowledged, offset <= sent else {
                throw WireError(.malformed, "ACCEPT offset \(offset) of \(id) outside \(acknowledged)…\(sent), what was acknowledged and sent")
            }
            acknowledged = offset
        }
        lastProgress = max(lastProgress, now)
        precondition(acknowledged <= sent && sent <= size, "acknowledged ≤ sent ≤ size")
        precondition(startedAt <= acknowledged, "acknowledged from where the receiver started")
    }

    /// Bytes that may be sent now: up to `window` chunks beyond what was acknowledged.
    func room(chunkSize: UInt32, window: Int) -> UInt64 {
        precondition(hashed <= sent, "hashed ≤ sent")
        let limit = acknowledged + UInt64(chunkSize) * UInt64(window)
        return min(recording.size, limit) - min(sent, min(recording.size, limit))
    }

    /// The CHUNK frames that fit the window now, read from `storage`, each with the running
    /// digest of the file up to its end (one hash pass over the file; after a resume the prefix
    /// the receiver already holds is hashed first). Throws when our own copy cannot be read or no
    /// longer matches its SHA-256: the caller gives the transfer up.
    mutating func fill(chunkSize: UInt32, window: Int, from storage: RecordingStorage) throws -> [[UInt8]] {
        guard accepted else { return [] }
        let chunk = UInt64(chunkSize), size = recording.size
        var frames: [[UInt8]] = []
        if let digests {
            precondition(digests.count == Int((size + chunk - 1) / chunk), "a kept digest per chunk")
            hashed = sent  // a resumed prefix needs no hashing either
            while room(chunkSize: chunkSize, window: window) > 0 {
                let count = Int(min(chunk, size - sent))
                // `sent` is a chunk boundary: the start, a resume point, or the end of the last.
                let index = Int(sent / chunk)
                frames.append(try Chunk.frame(recordingID: id, offset: sent, count: count) { data in
                    try readWhole(into: data, from: storage)
                    return digests[index].bytes
                })
                sent += UInt64(count)
                hashed = sent
            }
            return frames
        }
        if hashed < sent {
            var scratch = [UInt8](repeating: 0, count: Int(chunk))
            while hashed < sent {
                let count = Int(min(chunk, sent - hashed))
                try scratch.withUnsafeMutableBytes { try readAndHash(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<count]), from: storage) }
            }
        }
        while room(chunkSize: chunkSize, window: window) > 0 {
            let count = Int(min(chunk, size - sent))
            frames.append(try Chunk.frame(recordingID: id, offset: sent, count: count) { data in
                try readAndHash(into: data, from: storage)
                let digest = hasher.digestSoFar()
                if hashed == size && digest != recording.sha256 {
                    throw LocalCopyDamaged(reason: "local copy does not match its checksum (it reads as \(digest.hex.prefix(16))…)")
                }
                return digest.bytes
            })
            sent += UInt64(count)
        }
        precondition(hashed == sent && sent <= size, "every byte sent was hashed, none beyond the size")
        return frames
    }

    /// Fills `buffer` with the bytes after what the hash covers and feeds them to it.
    private mutating func readAndHash(into buffer: UnsafeMutableRawBufferPointer, from storage: RecordingStorage) throws {
        try readWhole(into: buffer, from: storage)
        hasher.update(UnsafeRawBufferPointer(buffer))
        hashed += UInt64(buffer.count)
    }

    /// Fills `buffer` with the bytes at `hashed`; a copy shorter than that is damaged.
    private func readWhole(into buffer: UnsafeMutableRawBufferPointer, from storage: RecordingStorage) throws {
        let got = try storage.read(recording.storageName, offset: hashed, into: buffer)
        guard got == buffer.count else { throw LocalCopyDamaged(reason: "local copy is shorter than its metadata says (\(hashed + UInt64(got)) of \(recording.size) bytes)") }
    }

    /// What a CONFIRM carrying `digest` proves.
    enum Confirmation: Equatable {
        /// Not this recording's hash: nothing; it stays pending.
        case mismatch
        /// The right hash, but not every byte went in this session and was acknowledged: the
        /// receiver's word that it holds the file (anyone can echo an OFFER's hash).
        case claim
        /// The right hash over bytes this session delivered: the receiver holds them.
        case proof
    }

    func confirmation(of digest: SHA256.Digest) -> Confirmation {
        guard digest == recording.sha256 else { return .mismatch }
        return deliveredWhole ? .proof : .claim
    }

    /// Whether the receiver has not moved the transfer on for longer than `timeout` ms.
    func isStalled(now: Int64, timeout: Int64) -> Bool { now - lastProgress > timeout }
}

/// This node's own copy of a recording is not the one it attached: sending it could only fail,
/// so it is marked damaged (`Replica.markRecordingDamaged`) rather than offered again and again.
struct LocalCopyDamaged: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
