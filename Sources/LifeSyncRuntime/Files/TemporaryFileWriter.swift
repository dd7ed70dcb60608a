import CLinux
import Dispatch
import Glibc
import LifeSync

/// The temporary file of one incoming recording, open for the whole transfer, whose chunks go to
/// disk on a queue of their own while the node goes on decrypting and hashing the next ones.
///
/// Why: on the receiving side a 1 MiB chunk written through the page cache cost about as much CPU
/// as hashing it (the copy into fresh cache pages, then writeback), and the durable copy a
/// receiver cannot skip waited for the disk only at the end. Where the file system takes
/// `O_DIRECT`, a whole chunk is copied once into an aligned buffer and written straight to the
/// device from the queue: the copy is the only CPU it costs, and the disk works all along. A
/// piece that is not block-aligned (a file's last chunk, a peer's odd chunk size), or a file
/// system without `O_DIRECT` (tmpfs), goes through the page cache: from the queue when it is
/// checked there (`write(at:_:check:landed:)`), else at once.
///
/// Bounded: at most `depth` chunks wait for the disk, in as many buffers of a chunk each (at most
/// 4 × 4 MiB, `Message.Limits.maximumChunkBytes`); a fifth write waits for the first. A
/// failed write is reported by the next call (`write`, `drain`, `sync`), so a transfer never
/// goes on over a hole; the core then refuses the chunk and drops the file.
///
///     let writer = try TemporaryFileWriter(path: incoming + "/" + id + ".part")
///     try writer.write(at: 0, bytes)   // returns once the chunk is queued
///     try writer.sync()                // every queued chunk written, then fsync
final class TemporaryFileWriter: @unchecked Sendable {
    /// Offsets, lengths and buffers of direct writes are multiples of this: the page size, which
    /// covers the 512- and 4096-byte logical blocks of the devices Linux runs on.
    static let alignment = 4096
    /// Chunks queued for the disk at most.
    static let depth = 4

    let path: String
    /// Written through the page cache; also truncates, syncs and backs a direct write that failed.
    private let fd: Int32
    /// The same file opened with `O_DIRECT`, or -1 where the file system has none.
    private let direct: Int32
    /// What the file holds once every queued write has landed.
    private var size: UInt64
    private let queue = DispatchQueue(label: "lifesync.recording-writer")
    /// Where checked writes are checked before they join `queue`.
    private let checks = DispatchQueue(label: "lifesync.recording-checks")
    private let slots = DispatchSemaphore(value: TemporaryFileWriter.depth)
    private let lock = Lock()
    /// The first write that failed on the queue; every later call reports it.
    private var failure: RecordingStorageError?
    /// A checked write was refused: the writes queued behind it are dropped (see `drain`).
    private var refused = false
    /// Buffers no queued write holds: reused chunk after chunk, so their pages stay warm.
    private var spare: [AlignedBuffer] = []

    /// Opens (creating, mode 0600) the file at `path`, never through a symbolic link.
    init(path: String) throws {
        let fd = try FileRecordingStorage.openFile(path, O_WRONLY | O_CREAT, 0o600)
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let reason = errnoText()
            close(fd)
            throw RecordingStorageError("cannot stat \(path): \(reason)")
        }
        self.path = path
        self.fd = fd
        self.size = UInt64(info.st_size)
        // EINVAL here means the file system takes no O_DIRECT: every write goes through the cache.
        self.direct = open(path, O_WRONLY | LIFESYNC_O_DIRECT | O_NOFOLLOW | O_CLOEXEC)
    }

    // A queued write holds the writer, so this runs once none is left (perhaps on the queue).
    deinit {
        for buffer in spare { buffer.release() }
        if direct >= 0 { close(direct) }
        close(fd)
    }

    /// Whether whole chunks bypass the page cache on this file.
    var writesDirectly: Bool { direct >= 0 }

    /// Writes `bytes` at `offset`, first dropping whatever the file holds beyond `offset`.
    /// Returns once the bytes are queued (an aligned piece) or written (any other).
    func write(at offset: UInt64, _ bytes: UnsafeRawBufferPointer) throws {
        try prepare(at: offset)
        guard !bytes.isEmpty else { return }
        let alignment = UInt64(Self.alignment)
        if direct >= 0 && offset % alignment == 0 && UInt64(bytes.count) % alignment == 0 {
            try enqueue(at: offset, bytes, directly: true, check: nil, landed: nil)
        } else {
            try drain()
            if let error = Self.writeFully(fd, bytes.baseAddress!, bytes.count, at: offset) {
                throw RecordingStorageError("cannot write \(path): \(error)")
            }
            // Start writing these pages to disk now (Linux begins writeback of dirty pages on
            // DONTNEED), so the fsync before the rename finds little left to do.
            _ = posix_fadvise(fd, off_t(offset), off_t(bytes.count), POSIX_FADV_DONTNEED)
        }
        size = offset + UInt64(bytes.count)
        precondition(size >= offset, "the size covers what was just written")
    }

    /// What became of a checked write (`write(at:_:check:landed:)`).
    enum Landing {
        /// `check` said yes: the bytes are queued for the disk (a write that fails there says
        /// `failed` later, and every later call reports it).
        case passed
        /// `check` said no: neither it nor anything queued after it is written.
        case refused
        case failed(String)
    }

    /// Queues `bytes` (at least one) for `offset`, whatever their alignment: `check` sees them
    /// first, on a queue of its own, in the order they were queued, and only if it says yes are
    /// they queued for the disk; `landed` says what became of them. After a refusal the writes
    /// queued behind it are dropped without a word, until `drain`.
    func write(at offset: UInt64, _ bytes: UnsafeRawBufferPointer, check: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool,
               landed: @escaping @Sendable (Landing) -> Void) throws {
        precondition(!bytes.isEmpty, "a checked write holds something")
        // Behind a refusal: dropped, as the queue drops those it holds (its verdict is on the
        // way). Only a new transfer's `drain` (through the storage) goes on from there.
        if lock.withLock({ refused }) { return }
        try prepare(at: offset)
        let alignment = UInt64(Self.alignment)
        let directly = direct >= 0 && offset % alignment == 0 && UInt64(bytes.count) % alignment == 0
        try enqueue(at: offset, bytes, directly: directly, check: check, landed: landed)
        size = offset + UInt64(bytes.count)
    }

    /// Waits until every queued write has landed, and lets their buffers go (a writer left
    /// idle holds none); throws the first write that failed. After a refusal, the size is the
    /// file's again (the writes dropped behind it never landed).
    func drain() throws {
        checks.sync {}
        queue.sync {}
        let wasRefused = lock.withLock {
            for buffer in spare { buffer.release() }
            spare.removeAll()
            defer { refused = false }
            return refused
        }
        if wasRefused {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw RecordingStorageError("cannot stat \(path): \(errnoText())") }
            size = UInt64(info.st_size)
        }
        try reportFailure()
    }

    /// Every write landed, then the file flushed to stable storage.
    func sync() throws {
        try drain()
        guard fsync(fd) == 0 else { throw RecordingStorageError("cannot sync \(path): \(errnoText())") }
    }

    /// Reports a failed write, then drops what the file holds beyond `offset` if it is not its
    /// end. Never grows the file: a write past its end would leave a hole of zeros.
    private func prepare(at offset: UInt64) throws {
        try reportFailure()
        if offset != size || lock.withLock({ refused }) {
            try drain()
            guard offset <= size else { throw RecordingStorageError("cannot write \(path) at \(offset): it holds \(size) bytes") }
            guard ftruncate(fd, off_t(offset)) == 0 else { throw RecordingStorageError("cannot truncate \(path): \(errnoText())") }
            size = offset
        }
    }

    /// The file is being discarded: whatever is still queued is dropped, and once this returns
    /// no check or write of this writer runs any more.
    func abandon() {
        lock.withLock { failure = failure ?? RecordingStorageError("\(path) was discarded") }
        checks.sync {}
        queue.sync {}
    }

    private func enqueue(at offset: UInt64, _ bytes: UnsafeRawBufferPointer, directly: Bool,
                         check: (@Sendable (UnsafeRawBufferPointer) -> Bool)?, landed: (@Sendable (Landing) -> Void)?) throws {
        slots.wait()
        // A free buffer is there: `depth` of them at most, each back in the pool before its slot.
        var buffer = lock.withLock { spare.popLast() } ?? AlignedBuffer()
        do {
            try buffer.reserve(bytes.count)
        } catch {
            lock.withLock { spare.append(buffer) }
            slots.signal()
            throw RecordingStorageError("cannot allocate \(bytes.count) bytes to write \(path): \(error)")
        }
        buffer.start.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        let held = buffer, count = bytes.count
        let write: @Sendable () -> Void = { [self] in
            defer { recycle(held) }
            guard lock.withLock({ failure == nil }) else { return }  // the transfer is over
            let error = directly ? writeDirectly(held.start, count, at: offset) : writeThroughCache(held.start, count, at: offset)
            if let error {
                let failed = RecordingStorageError("cannot write \(path): \(error)")
                lock.withLock { failure = failure ?? failed }
                landed?(.failed(failed.description))
            }
        }
        guard let check else { return queue.async(execute: write) }
        // Checked on a queue of its own, so the hash of one chunk overlaps the disk write of the
        // one before (one after the other on one queue, they took as long as both together).
        checks.async { [self] in
            guard lock.withLock({ failure == nil && !refused }) else { return recycle(held) }  // dropped
            guard check(UnsafeRawBufferPointer(start: held.start, count: count)) else {
                lock.withLock { refused = true }
                recycle(held)
                landed?(.refused)
                return
            }
            landed?(.passed)
            queue.async(execute: write)
        }
    }

    /// A buffer whose write is done (or dropped) goes back to the pool, and frees its slot.
    private func recycle(_ buffer: AlignedBuffer) {
        lock.withLock { spare.append(buffer) }
        slots.signal()
    }

    private func reportFailure() throws {
        if let failure = lock.withLock({ failure }) { throw failure }
    }

    /// One direct write of an aligned chunk. A device whose blocks are larger than our alignment
    /// refuses it (EINVAL), and a short write leaves an unaligned rest: the cache takes those.
    private func writeDirectly(_ buffer: UnsafeRawPointer, _ count: Int, at offset: UInt64) -> String? {
        var n: Int
        repeat { n = pwrite(direct, buffer, count, off_t(offset)) } while n < 0 && errno == EINTR
        if n == count { return nil }
        if n < 0 && errno != EINVAL { return errnoText() }
        let done = max(n, 0)
        return Self.writeFully(fd, buffer + done, count - done, at: offset + UInt64(done))
    }

    /// A piece that cannot go direct, from the queue: through the cache, its writeback started.
    private func writeThroughCache(_ buffer: UnsafeRawPointer, _ count: Int, at offset: UInt64) -> String? {
        if let error = Self.writeFully(fd, buffer, count, at: offset) { return error }
        _ = posix_fadvise(fd, off_t(offset), off_t(count), POSIX_FADV_DONTNEED)
        return nil
    }

    /// Writes all `count` bytes at `offset`; the system's reason when it cannot.
    private static func writeFully(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, at offset: UInt64) -> String? {
        var written = 0
        while written < count {
            let n = pwrite(fd, buffer + written, count - written, off_t(offset) + off_t(written))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return n == 0 ? "no progress" : errnoText() }
            written += n
        }
        return nil
    }
}

/// Page-aligned memory of its own mapping (so `O_DIRECT` takes it, and it never fragments the
/// heap), grown when a larger chunk comes and unmapped by `release`.
private struct AlignedBuffer: @unchecked Sendable {
    private(set) var start = UnsafeMutableRawPointer(bitPattern: TemporaryFileWriter.alignment)!
    private(set) var capacity = 0

    mutating func reserve(_ count: Int) throws {
        guard count > capacity else { return }
        let length = (count + TemporaryFileWriter.alignment - 1) / TemporaryFileWriter.alignment * TemporaryFileWriter.alignment
        let mapped = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let mapped, mapped != MAP_FAILED else { throw RecordingStorageError(errnoText()) }
        release()
        start = mapped
        capacity = length
        precondition(capacity >= count && Int(bitPattern: start) % TemporaryFileWriter.alignment == 0, "an aligned buffer that holds the chunk")
    }

    func release() {
        if capacity > 0 { munmap(start, capacity) }
    }
}
