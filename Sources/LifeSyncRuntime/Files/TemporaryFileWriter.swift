import Dispatch
import Glibc
import LifeSync

/// The temporary file of one incoming recording, open for the whole transfer, whose chunks go to
/// disk on a queue of their own while the node goes on decrypting the next ones, and are flushed
/// to stable storage as they go rather than all at the end.
///
/// Why: a receiver cannot skip one durable copy of the file, and what costs is its flush, not
/// its writes. On this project's machines (a VM's virtio disk) the device takes writes into its
/// cache at over 1 GB/s, and flushing 1 GiB of them took 1.3 s; `bench transfer` left all of it
/// to the fsync before the rename, with the node's loop waiting. Writes into the page cache
/// with an `fdatasync` every `flushEvery` bytes on a queue of its own let the device flush
/// while the node decrypts: the last fsync finds one stretch left.
/// `O_DIRECT` writes, used before, got no further: a direct write cannot go on while the device
/// flushes, so periodic flushes stalled them, and without them the final fsync held the whole
/// file (1 GiB in 3.7–4.1 s against 2.7–3.0 s this way, alternating; note of session 13).
///
/// Bounded: at most `depth` chunks wait for the disk, in as many buffers of a chunk each (at most
/// 4 × 4 MiB, `Message.Limits.maximumChunkBytes`); a fifth write waits for the first. A
/// failed write or flush is reported by the next call (`write`, `drain`, `sync`), so a transfer
/// never goes on over a hole; the core then refuses the chunk and drops the file.
///
///     let writer = try TemporaryFileWriter(path: incoming + "/" + id + ".part")
///     try writer.write(at: 0, bytes)   // returns once the chunk is queued
///     try writer.sync()                // every queued chunk written, then fsync
final class TemporaryFileWriter: @unchecked Sendable {
    /// Buffers are mapped in multiples of this: the page size.
    static let alignment = 4096
    /// Chunks queued for the disk at most.
    static let depth = 4
    /// Bytes written between two flushes: each flush finds at most this much (plus what the
    /// queue wrote meanwhile). 32 MiB and 128 MiB measured the same as 64.
    static let defaultFlushEvery: UInt64 = 64 << 20

    let path: String
    private let fd: Int32
    private let flushEvery: UInt64
    /// What the file holds once every queued write has landed.
    private var size: UInt64
    private let queue = DispatchQueue(label: "lifesync.recording-writer")
    /// Where checked writes are checked before they join `queue`.
    private let checks = DispatchQueue(label: "lifesync.recording-checks")
    /// Where the flushes of bytes already written run, beside the writes that follow them.
    private let flushes = DispatchQueue(label: "lifesync.recording-flush")
    private let slots = DispatchSemaphore(value: TemporaryFileWriter.depth)
    private let lock = Lock()
    /// The first write or flush that failed on the queues; every later call reports it.
    private var failure: RecordingStorageError?
    /// A checked write was refused: the writes queued behind it are dropped (see `drain`).
    private var refused = false
    /// Buffers no queued write holds: reused chunk after chunk, so their pages stay warm.
    private var spare: [AlignedBuffer] = []
    /// Bytes written since the last flush was started (touched only on `queue`).
    private var unflushed: UInt64 = 0
    /// A flush is running or waiting on `flushes`: the next one waits for more bytes.
    private var flushing = false
    /// The file's bytes below this are on stable storage (as far as a flush can tell); under `lock`.
    private var flushed: UInt64 = 0

    /// Opens (creating, mode 0600) the file at `path`, never through a symbolic link.
    init(path: String, flushEvery: UInt64 = TemporaryFileWriter.defaultFlushEvery) throws {
        precondition(flushEvery > 0, "flushes come after some bytes")
        let fd = try FileRecordingStorage.openFile(path, O_WRONLY | O_CREAT, 0o600)
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let reason = errnoText()
            close(fd)
            throw RecordingStorageError("cannot stat \(path): \(reason)")
        }
        self.path = path
        self.fd = fd
        self.flushEvery = flushEvery
        self.size = UInt64(info.st_size)
    }

    // A queued write holds the writer, so this runs once none is left (perhaps on the queue).
    deinit {
        for buffer in spare { buffer.release() }
        close(fd)
    }

    /// The file's bytes below this are on stable storage, as far as the flushes so far can tell.
    var flushedThrough: UInt64 { lock.withLock { flushed } }

    /// Queues `bytes` for `offset`, first dropping whatever the file holds beyond `offset`.
    /// Returns once the bytes are queued.
    func write(at offset: UInt64, _ bytes: UnsafeRawBufferPointer) throws {
        try prepare(at: offset)
        guard !bytes.isEmpty else { return }
        try enqueue(at: offset, bytes, check: nil, landed: nil)
        size = offset + UInt64(bytes.count)
        precondition(size > offset, "the size covers what was just queued")
    }

    /// What became of a checked write (`write(at:_:check:landed:)`).
    enum Landing {
        /// `check` said yes: the bytes are queued for the disk. A write that fails there says
        /// `failed` later; after a failed flush they are dropped unwritten. Either way every later
        /// call (`write`, `drain`, `sync`) throws, so no CONFIRM can cover them.
        case passed
        /// `check` said no: neither it nor anything queued after it is written.
        case refused
        case failed(String)
    }

    /// Queues `bytes` (at least one) for `offset`: `check` sees them first, on a queue of its
    /// own, in the order they were queued, and only if it says yes are they queued for the
    /// disk; `landed` says what became of them. After a refusal the writes queued behind it are
    /// dropped without a word, until `drain`.
    func write(at offset: UInt64, _ bytes: UnsafeRawBufferPointer, check: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool,
               landed: @escaping @Sendable (Landing) -> Void) throws {
        precondition(!bytes.isEmpty, "a checked write holds something")
        // Behind a refusal: dropped, as the queue drops those it holds (its verdict is on the
        // way). Only a new transfer's `drain` (through the storage) goes on from there.
        if lock.withLock({ refused }) { return }
        try prepare(at: offset)
        try enqueue(at: offset, bytes, check: check, landed: landed)
        size = offset + UInt64(bytes.count)
    }

    /// Waits until every queued write has landed, and lets their buffers go (a writer left
    /// idle holds none); throws the first write that failed. After a refusal, the size is the
    /// file's again (the writes dropped behind it never landed).
    func drain() throws {
        checks.sync {}
        queue.sync {}
        flushes.sync {}
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
        lock.withLock { flushed = size }
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
            lock.withLock { flushed = min(flushed, offset) }
        }
    }

    /// The file is being discarded: whatever is still queued is dropped, and once this returns
    /// no check or write of this writer runs any more.
    func abandon() {
        lock.withLock { failure = failure ?? RecordingStorageError("\(path) was discarded") }
        checks.sync {}
        queue.sync {}
        flushes.sync {}
    }

    private func enqueue(at offset: UInt64, _ bytes: UnsafeRawBufferPointer,
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
            // Into the page cache only: the flushes write it back. (Starting writeback here, chunk
            // by chunk, made this queue wait for the device while a flush ran: 5 % slower.)
            if let error = Self.writeFully(fd, held.start, count, at: offset) {
                let failed = RecordingStorageError("cannot write \(path): \(error)")
                lock.withLock { failure = failure ?? failed }
                landed?(.failed(failed.description))
                return
            }
            unflushed += UInt64(count)
            if unflushed >= flushEvery { startFlush(through: offset + UInt64(count)) }
        }
        guard let check else { return queue.async(execute: write) }
        // Checked on a queue of its own, so the hash of one chunk overlaps the disk write of the
        // one before (one after the other on one queue, they took as long as both together).
        checks.async { [self] in
            let (failed, behindRefusal) = lock.withLock { (failure, refused) }
            guard failed == nil && !behindRefusal else {
                recycle(held)
                // Dropped. Behind a refusal, its verdict is on the way; behind a failure that no
                // write reported (a flush, a discard), it is said here, or a transfer whose
                // chunks all waited here would hear of it only at its sender's stall timeout.
                if let failed, !behindRefusal { landed?(.failed(failed.description)) }
                return
            }
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

    /// Flushes the bytes written so far (`through`) to stable storage, beside the writes that
    /// follow; skipped while one is still under way (the next write past the mark starts it).
    private func startFlush(through end: UInt64) {
        guard lock.withLock({ () -> Bool in
            guard !flushing && failure == nil else { return false }
            flushing = true
            return true
        }) else { return }
        unflushed = 0
        flushes.async { [self] in
            let failed = fdatasync(fd) == 0 ? nil : RecordingStorageError("cannot sync \(path): \(errnoText())")
            if let failed { noteFailure(failed) }
            // Flushed pages are clean: the cache lets them go rather than keep a copy of the
            // whole file (no one reads it before the rename, and then once, to hash it anew).
            let from = lock.withLock { flushed }
            if failed == nil && end > from { _ = posix_fadvise(fd, off_t(from), off_t(end - from), POSIX_FADV_DONTNEED) }
            lock.withLock {
                flushing = false
                if failed == nil { flushed = max(flushed, end) }
            }
        }
    }

    /// A failure no write reports (a flush): every later call throws it, and the chunks still
    /// waiting for their check are told of it (`Landing.failed`) instead of being written.
    func noteFailure(_ failed: RecordingStorageError) {
        lock.withLock { failure = failure ?? failed }
    }

    /// A buffer whose write is done (or dropped) goes back to the pool, and frees its slot.
    private func recycle(_ buffer: AlignedBuffer) {
        lock.withLock { spare.append(buffer) }
        slots.signal()
    }

    private func reportFailure() throws {
        if let failure = lock.withLock({ failure }) { throw failure }
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

/// Page-aligned memory of its own mapping (so it never fragments the heap), grown when a larger
/// chunk comes and unmapped by `release`.
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
