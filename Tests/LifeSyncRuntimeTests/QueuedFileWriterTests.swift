import Dispatch
import Foundation
import Glibc
import LifeSync
@testable import LifeSyncRuntime
import Testing
import TestSupport

/// An incoming recording's chunks checked against their running digests on the temporary
/// file's queue (`QueuedFileWriter`), the node's loop woken for each verdict (`LoopWaker`), and
/// the digests `attach` keeps so a sender need not hash again.
@Suite struct QueuedFileWriterTests {
    static let chunk = 64 * 1024

    /// A file of `count` chunks and a tail, and each chunk's running digest.
    static func file(chunks count: Int, tail: Int) -> (bytes: [UInt8], pieces: [(offset: Int, bytes: [UInt8], digest: SHA256.Digest)]) {
        let bytes = TemporaryFileWriterTests.pattern(count * chunk + tail, seed: 9)
        let pieces = stride(from: 0, to: bytes.count, by: chunk).map { offset in
            let end = min(offset + chunk, bytes.count)
            return (offset, Array(bytes[offset..<end]), SHA256.hash(bytes[0..<end]))
        }
        return (bytes, pieces)
    }

    /// Counts the wakes a storage's writers send.
    final class Wakes: @unchecked Sendable {
        private let lock = Lock()
        private var count = 0
        func wake() { lock.withLock { count += 1 } }
        var total: Int { lock.withLock { count } }
    }

    static func read(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var info = stat()
        fstat(fd, &info)
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return Array(bytes.prefix(max(0, got)))
    }

    /// On the local disk and on tmpfs.
    @Test(arguments: [false, true])
    func aWholeFileIsVerifiedWrittenAndEachVerdictWakesTheLoop(onTmpfs: Bool) throws {
        let directory = onTmpfs ? TemporaryDirectory("lifesync-queued", in: "/dev/shm") : TemporaryDirectory("lifesync-queued")
        let storage = try FileRecordingStorage(replicaPath: directory.file("phone.sqlite"))
        let wakes = Wakes()
        storage.onVerdict = { wakes.wake() }
        let id = Identifier.make(role: .watch, random: SystemRandom())
        let (bytes, pieces) = Self.file(chunks: 7, tail: 1_000)
        let writer = storage.incomingWriter(for: id, hashedUpTo: 0, hasher: SHA256())
        for piece in pieces { piece.bytes.withUnsafeBytes { writer.submit($0, at: UInt64(piece.offset), expecting: piece.digest) } }
        let verdicts = writer.verdicts(waiting: true)
        #expect(verdicts == ChunkVerdicts(verified: UInt64(bytes.count)))
        #expect(writer.finalize() == SHA256.hash(bytes))
        #expect(wakes.total == pieces.count, "one wake per verdict")
        try storage.syncTemporary(id)
        #expect(Self.read(try storage.temporaryPath(id)) == bytes)
    }

    /// A chunk that does not match its digest: it and every chunk handed on after it are dropped
    /// unwritten, the file holds exactly the verified prefix, and a resumed transfer from there
    /// (a new writer, the prefix hashed) finishes the file.
    @Test func aCorruptChunkStopsTheFileAtTheVerifiedPrefixAndTheResumeFinishesIt() throws {
        let directory = TemporaryDirectory("lifesync-queued")
        let storage = try FileRecordingStorage(replicaPath: directory.file("phone.sqlite"))
        let id = Identifier.make(role: .watch, random: SystemRandom())
        let (bytes, pieces) = Self.file(chunks: 8, tail: 0)
        let writer = storage.incomingWriter(for: id, hashedUpTo: 0, hasher: SHA256())
        for (n, piece) in pieces.enumerated() {
            let digest = n == 3 ? SHA256.hash([1, 2, 3]) : piece.digest
            piece.bytes.withUnsafeBytes { writer.submit($0, at: UInt64(piece.offset), expecting: digest) }
        }
        let verdicts = writer.verdicts(waiting: true)
        let prefix = 3 * Self.chunk
        #expect(verdicts == ChunkVerdicts(verified: UInt64(prefix), failure: .corrupt(offset: UInt64(prefix))))
        #expect(storage.temporarySize(id) == UInt64(prefix), "chunks after the corrupt one were written")
        #expect(Self.read(try storage.temporaryPath(id)) == Array(bytes[0..<prefix]))

        let hasher = SHA256()
        hasher.update(try storage.readTemporary(id, offset: 0, count: prefix))
        let resumed = storage.incomingWriter(for: id, hashedUpTo: UInt64(prefix), hasher: hasher)
        for piece in pieces[3...] { piece.bytes.withUnsafeBytes { resumed.submit($0, at: UInt64(piece.offset), expecting: piece.digest) } }
        #expect(resumed.verdicts(waiting: true) == ChunkVerdicts(verified: UInt64(bytes.count)))
        #expect(resumed.finalize() == SHA256.hash(bytes))
        #expect(Self.read(try storage.temporaryPath(id)) == bytes)
    }

    /// The file discarded while chunks wait for their check (the user deleted the recording on
    /// this node): what waited is dropped, nothing shares the running hash with it, and the
    /// transfer's next chunk fails on the fresh file instead of writing after a hole.
    @Test func aFileDiscardedUnderItsTransferFailsTheTransferWithoutAHole() throws {
        let directory = TemporaryDirectory("lifesync-queued")
        let storage = try FileRecordingStorage(replicaPath: directory.file("phone.sqlite"))
        let id = Identifier.make(role: .watch, random: SystemRandom())
        let (_, pieces) = Self.file(chunks: 8, tail: 0)
        let writer = storage.incomingWriter(for: id, hashedUpTo: 0, hasher: SHA256())
        for piece in pieces[..<4] { piece.bytes.withUnsafeBytes { writer.submit($0, at: UInt64(piece.offset), expecting: piece.digest) } }
        storage.discardTemporary(id)
        for piece in pieces[4...] { piece.bytes.withUnsafeBytes { writer.submit($0, at: UInt64(piece.offset), expecting: piece.digest) } }
        let verdicts = writer.verdicts(waiting: true)
        guard case .storage = verdicts.failure else { Issue.record("no storage verdict: \(verdicts)"); return }
        // The first four may all have been checked before the discard (it races their queue);
        // nothing submitted after it counts.
        #expect(verdicts.verified <= UInt64(pieces[4].offset))
        #expect(storage.temporarySize(id) == 0, "a hole of zeros was written")
    }

    /// A device that fails writes: the verdict names it, and nothing is called verified past it.
    @Test func aFailingDeviceIsAStorageVerdict() throws {
        let writer = try TemporaryFileWriter(path: "/dev/full")
        let (_, pieces) = Self.file(chunks: 2, tail: 0)
        let failures = Wakes()
        for piece in pieces {
            try? piece.bytes.withUnsafeBytes { bytes in
                try writer.write(at: UInt64(piece.offset), bytes, check: { _ in true }, landed: { landing in
                    if case .failed(let reason) = landing, reason.contains("No space left") { failures.wake() }
                })
            }
        }
        #expect(throws: RecordingStorageError.self) { try writer.drain() }
        #expect(failures.total >= 1, "the failed write was not reported with its reason")
    }

    /// A failure no write reported (a flush that failed) reaches the chunks still waiting for
    /// their check: each is told, none is written, so the transfer ends on a storage verdict
    /// at once rather than at the sender's stall timeout.
    @Test func aFailedFlushReachesTheChunksWaitingForTheirCheck() throws {
        let directory = TemporaryDirectory("lifesync-queued")
        let writer = try TemporaryFileWriter(path: directory.file("flush.part"))
        let (_, pieces) = Self.file(chunks: 3, tail: 0)
        let passed = Wakes(), told = Wakes()
        let allQueued = DispatchSemaphore(value: 0)  // else a later write would throw the failure itself
        for (n, piece) in pieces.enumerated() {
            try piece.bytes.withUnsafeBytes { bytes in
                try writer.write(at: UInt64(piece.offset), bytes, check: { _ in
                    // The first chunk's check runs before the others': the flush fails meanwhile.
                    if n == 0 {
                        allQueued.wait()
                        writer.noteFailure(RecordingStorageError("cannot sync flush.part: Input/output error"))
                    }
                    return true
                }, landed: { landing in
                    switch landing {
                    case .passed: passed.wake()
                    case .failed(let reason): if reason.contains("Input/output error") { told.wake() }
                    case .refused: break
                    }
                })
            }
        }
        allQueued.signal()
        let error = #expect(throws: RecordingStorageError.self) { try writer.drain() }
        #expect(error?.description.contains("Input/output error") == true)
        #expect(passed.total == 1, "only the chunk checked before the failure passed")
        #expect(told.total == pieces.count - 1, "the chunks behind the failure were not told of it")
        #expect(Self.read(directory.file("flush.part")).isEmpty, "a chunk was written after the failure")
    }

    /// A wake from another thread ends the loop's wait at once, not at its timeout.
    @Test func aWakeFromAnotherThreadEndsThePollWait() throws {
        let waker = try LoopWaker()
        let loop = PollLoop(participants: [waker])
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { waker.wake() }
        let start = MonotonicClock.milliseconds()
        loop.runOnce(maximumWait: 30_000)
        #expect(MonotonicClock.milliseconds() - start < 20_000, "the wake did not end the wait")
        // Drained: the next round waits again (until its short timeout).
        let again = MonotonicClock.milliseconds()
        loop.runOnce(maximumWait: 50)
        #expect(MonotonicClock.milliseconds() - again >= 40, "a wake was counted twice")
    }

    /// `attach` keeps the running digest at each default-size chunk's end; a torn cache, another
    /// chunk size or a removed file give none.
    @Test func attachKeepsTheRunningDigestsOfEachChunk() throws {
        let directory = TemporaryDirectory("lifesync-digests")
        let storage = try FileRecordingStorage(replicaPath: directory.file("watch.sqlite"))
        let chunkSize = TransferConfiguration().chunkSize
        let bytes = TemporaryFileWriterTests.pattern(2 * Int(chunkSize) + 4_321, seed: 3)
        let source = directory.file("voice.m4a")
        try Data(bytes).write(to: URL(fileURLWithPath: source))
        let id = Identifier.make(role: .watch, random: SystemRandom())
        let (size, sha) = try storage.importFile(from: source, as: id + ".m4a", id: id)
        #expect(size == UInt64(bytes.count) && sha == SHA256.hash(bytes))
        let expected = [Int(chunkSize), 2 * Int(chunkSize), bytes.count].map { SHA256.hash(bytes[0..<$0]) }
        #expect(storage.chunkDigests(id + ".m4a", chunkSize: chunkSize) == expected)
        #expect(storage.chunkDigests(id + ".m4a", chunkSize: chunkSize / 2) == nil)

        let path = try storage.digestsPath(id + ".m4a")
        #expect(truncate(path, 8 + 32 + 5) == 0)
        #expect(storage.chunkDigests(id + ".m4a", chunkSize: chunkSize) == nil, "a torn cache was used")
        try storage.remove(id + ".m4a")
        #expect(access(path, F_OK) != 0, "the digests outlived their file")
    }
}
