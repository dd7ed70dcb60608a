/// Checks the chunks of one incoming recording against their running digests (PROTOCOL.md
/// §5.9.3) and writes those that match to its temporary file, in order: at once, or on a thread
/// of its own. Either way the session learns the outcome from `verdicts`, and acknowledges only
/// bytes that were checked and written, or queued for the disk: a write that fails later is a
/// verdict too, and every write lands before the file can finish.
///
/// Why a seam here: hashing every byte is nearly half of what a receiving node's one thread does
/// (the rest is decrypting and copying). A storage that checks on another thread lets that
/// thread decrypt the next chunk meanwhile; the session then acknowledges a chunk a little later
/// (PROTOCOL.md §5.9, step 4). The simulator's storage checks at once.
///
///     let writer = storage.incomingWriter(for: id, hashedUpTo: 0, hasher: SHA256())
///     writer.submit(bytes, at: 0, expecting: digest)
///     writer.verdicts(waiting: true)   // ChunkVerdicts(verified: 1024, failure: nil)
public protocol IncomingFileWriter: AnyObject {
    /// Hands over `bytes`, which continue the file at `offset` (where the previous chunk ended),
    /// to be hashed after everything before them, compared with `digest`, and written if they
    /// match. May return before any of that happened. After a failure nothing more is written.
    func submit(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, expecting digest: SHA256.Digest)
    /// What is known so far; `waiting`: once every chunk submitted has been judged.
    func verdicts(waiting: Bool) -> ChunkVerdicts
    /// The digest of the whole file: only once every chunk was judged and none failed.
    func finalize() -> SHA256.Digest
}

/// What an `IncomingFileWriter` knows of the chunks it was given.
public struct ChunkVerdicts: Equatable, Sendable {
    /// Every byte from 0 to here matched its chunk's running digest and was written or queued
    /// for the disk (a resumed prefix counts: it was hashed from the file before the first new
    /// chunk).
    public var verified: UInt64
    /// The first thing that went wrong; nothing handed on after it is written.
    package var failure: ChunkFailure?

    package init(verified: UInt64, failure: ChunkFailure? = nil) {
        self.verified = verified
        self.failure = failure
    }
}

package enum ChunkFailure: Equatable, Sendable {
    /// The chunk at `offset` does not match its running digest.
    case corrupt(offset: UInt64)
    /// The storage could not take a chunk; its reason.
    case storage(String)
}

extension RecordingStorage {
    /// The writer every storage has unless it brings its own: checks and writes within `submit`.
    package func incomingWriter(for id: String, hashedUpTo offset: UInt64, hasher: SHA256) -> IncomingFileWriter {
        ImmediateFileWriter(storage: self, id: id, hasher: hasher, verified: offset)
    }
}

/// Checks and writes each chunk before `submit` returns: the simulator's storage, tests, and
/// any storage whose writes are cheap.
package final class ImmediateFileWriter: IncomingFileWriter {
    private let storage: RecordingStorage
    private let id: String
    private let hasher: SHA256
    private var state: ChunkVerdicts

    package init(storage: RecordingStorage, id: String, hasher: SHA256, verified: UInt64) {
        self.storage = storage
        self.id = id
        self.hasher = hasher
        state = ChunkVerdicts(verified: verified)
    }

    package func submit(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, expecting digest: SHA256.Digest) {
        guard state.failure == nil else { return }
        precondition(offset == state.verified, "chunks are submitted in order, each where the last ended")
        hasher.update(bytes)
        guard hasher.digestSoFar() == digest else {
            state.failure = .corrupt(offset: offset)
            return
        }
        do {
            try storage.writeTemporary(id, offset: offset, bytes: bytes)
        } catch {
            state.failure = .storage("\(error)")
            return
        }
        state.verified = offset + UInt64(bytes.count)
        precondition(state.verified >= offset, "verified covers the chunk just written")
    }

    package func verdicts(waiting: Bool) -> ChunkVerdicts { state }

    package func finalize() -> SHA256.Digest {
        precondition(state.failure == nil, "a failed file has no digest")
        return hasher.finalize()
    }
}
