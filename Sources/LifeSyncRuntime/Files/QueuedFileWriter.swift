import LifeSync

/// An incoming recording's chunks checked and written on its temporary file's queue
/// (`TemporaryFileWriter`), so the node's thread only decrypts and copies: each chunk is hashed
/// there, compared with its running digest, and written only if it matches.
///
/// Why: hashing was 44% of a receiving node's thread in `bench transfer`, the thread that also
/// decrypts every byte. On the queue it overlaps with the decryption of the next chunks. The
/// session learns the verdicts from `verdicts`, and the node's loop is woken (`wake`) when one
/// comes in, so an acknowledgement never waits for the next chunk to arrive.
///
/// The running hash is touched only on the queue while chunks are pending, and by `finalize`
/// after `verdicts(waiting: true)`, when none is. A file discarded under a transfer
/// (`FileRecordingStorage.discardTemporary`) has its writer abandoned, drained first, so the
/// hash never has two queues; the transfer then fails on the fresh file.
///
/// `verified` counts a chunk once it is checked and queued for the disk: a write that fails
/// after that is a verdict of its own (`.storage`), before the file can finish (`finalize`
/// follows a drain of every write).
final class QueuedFileWriter: IncomingFileWriter, @unchecked Sendable {
    private let hasher: SHA256
    /// The temporary file's writer now: asked for on each chunk, as the storage may have closed
    /// one that stayed idle (it drained it first, so the order of the hash holds).
    private let writer: () throws -> TemporaryFileWriter
    private let wake: @Sendable () -> Void
    private let lock = Lock()
    private var state: ChunkVerdicts
    /// Where the next chunk must start: what was handed to the queue.
    private var submitted: UInt64

    init(hasher: SHA256, verified: UInt64, writer: @escaping () throws -> TemporaryFileWriter, wake: @escaping @Sendable () -> Void) {
        self.hasher = hasher
        self.writer = writer
        self.wake = wake
        state = ChunkVerdicts(verified: verified)
        submitted = verified
    }

    func submit(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, expecting digest: SHA256.Digest) {
        precondition(offset == submitted && !bytes.isEmpty, "chunks are submitted in order, each where the last ended")
        submitted = offset + UInt64(bytes.count)
        let end = submitted
        guard lock.withLock({ state.failure == nil }) else { return }  // judged already: not written
        do {
            try writer().write(at: offset, bytes, check: { [self] piece in
                hasher.update(piece)
                return hasher.digestSoFar() == digest
            }, landed: { [self] landing in
                lock.withLock {
                    switch landing {
                    case .passed:
                        precondition(state.failure != nil || state.verified <= offset, "chunks land in order")
                        if state.failure == nil { state.verified = end }
                    case .refused:
                        state.failure = state.failure ?? .corrupt(offset: offset)
                    case .failed(let reason):
                        state.failure = state.failure ?? .storage(reason)
                    }
                }
                wake()
            })
        } catch {
            lock.withLock { state.failure = state.failure ?? .storage("\(error)") }
        }
    }

    func verdicts(waiting: Bool) -> ChunkVerdicts {
        if waiting {
            // The writes' own failures arrive through `landed`; one found only now (its writer
            // failed earlier for another reason) counts too.
            do { try writer().drain() } catch { lock.withLock { state.failure = state.failure ?? .storage("\(error)") } }
            lock.withLock {
                // Chunks its writer dropped unjudged: the file was discarded under the transfer.
                if state.failure == nil && state.verified != submitted {
                    state.failure = .storage("the temporary file was discarded while its chunks were checked")
                }
            }
        }
        return lock.withLock { state }
    }

    func finalize() -> SHA256.Digest {
        precondition(lock.withLock { state.failure == nil && state.verified == submitted }, "a digest only of a whole, verified file")
        return hasher.finalize()
    }
}
