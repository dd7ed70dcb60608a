import LifeSync

/// Recording storage in memory, for the simulator and tests: the same contract as the folder on
/// disk, plus the faults a disk can have (a quota that runs out) and a log of every removal, so
/// the checker can prove nothing removed a recording it should not have.
package final class MemoryRecordingStorage: RecordingStorage {
    package private(set) var files: [String: [UInt8]] = [:]
    package private(set) var temporary: [String: [UInt8]] = [:]
    /// Every `remove` call, in order.
    package private(set) var removals: [String] = []
    /// Bytes the storage may hold in all; a write beyond fails like a full disk.
    package var quota: Int = .max
    /// Called before each removal, with the file name: the simulator's check that only allowed
    /// removals happen.
    package var onRemove: ((String) -> Void)?
    /// Incoming chunks wait unchecked until `judgePendingChunks` (or until a session waits for
    /// them), as on a node whose storage checks them on a thread of its own (`IncomingFileWriter`).
    package var defersChecks = false
    /// Called when a chunk starts waiting for its check (the simulator schedules the check).
    package var onDeferredCheck: (() -> Void)?
    /// The writers of transfers under way, held weakly: a transfer may hand on more chunks
    /// after all it had were checked, and its writer goes when the transfer does.
    private var deferredWriters: [Weak] = []
    private struct Weak { weak var writer: DeferredFileWriter? }
    private var liveWriters: [DeferredFileWriter] {
        deferredWriters.removeAll { $0.writer == nil }
        return deferredWriters.compactMap(\.writer)
    }
    /// Running digests kept per file (`keepChunkDigests`), as `attach` keeps them on disk.
    package private(set) var keptDigests: [String: (chunkSize: UInt32, digests: [SHA256.Digest])] = [:]

    package init() {}

    package var used: Int { files.values.reduce(0) { $0 + $1.count } + temporary.values.reduce(0) { $0 + $1.count } }

    package func exists(_ fileName: String) -> Bool { files[fileName] != nil }

    /// The device was put back from its backup: its files are those of the backup, and nothing
    /// half-received survives.
    func putBack(files old: [String: [UInt8]]) {
        files = old
        temporary = [:]
        keptDigests = [:]
    }
    package func storedFileName(forRecordingID id: String) -> String? { files.keys.sorted().first { $0.hasPrefix(id + ".") } }

    package func read(_ fileName: String, offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let file = files[fileName] else { throw RecordingStorageError("no file \(fileName)") }
        let start = min(Int(offset), file.count)
        let piece = file[start..<min(start + buffer.count, file.count)]
        piece.withUnsafeBytes { buffer.copyMemory(from: $0) }
        return piece.count
    }

    package func remove(_ fileName: String) throws {
        onRemove?(fileName)
        removals.append(fileName)
        files[fileName] = nil
        keptDigests[fileName] = nil
    }

    /// Keeps `digests` (by default the true ones of the stored file) for `fileName`.
    package func keepChunkDigests(_ fileName: String, chunkSize: UInt32, digests: [SHA256.Digest]? = nil) {
        let hasher = SHA256()
        var collector = ChunkDigestCollector(chunkSize: chunkSize)
        (files[fileName] ?? []).withUnsafeBytes { collector.update(hasher, with: $0) }
        keptDigests[fileName] = (chunkSize, digests ?? collector.finished(with: hasher.finalize()) ?? [])
    }

    package func chunkDigests(_ fileName: String, chunkSize: UInt32) -> [SHA256.Digest]? {
        keptDigests[fileName].flatMap { $0.chunkSize == chunkSize ? $0.digests : nil }
    }

    package func forgetChunkDigests(_ fileName: String) { keptDigests[fileName] = nil }

    /// As on disk, where the file's queue is drained first: chunks waiting for `id` are checked.
    package func temporarySize(_ id: String) -> UInt64 {
        judgePendingChunks(of: id)
        return UInt64(temporary[id]?.count ?? 0)
    }

    package func readTemporary(_ id: String, offset: UInt64, count: Int) throws -> [UInt8] {
        judgePendingChunks(of: id)
        let file = temporary[id] ?? []
        let start = min(Int(offset), file.count)
        return Array(file[start..<min(start + count, file.count)])
    }

    package func writeTemporary(_ id: String, offset: UInt64, bytes: UnsafeRawBufferPointer) throws {
        // Taken out while it changes, so appending does not copy the whole file each time.
        var file = temporary.removeValue(forKey: id) ?? []
        guard used + Int(offset) + bytes.count <= quota else {
            temporary[id] = file
            throw RecordingStorageError("no space left on the device")
        }
        if file.count > Int(offset) { file.removeSubrange(Int(offset)...) }
        if file.count < Int(offset) { file += [UInt8](repeating: 0, count: Int(offset) - file.count) }
        file += bytes
        temporary[id] = file
    }

    package func syncTemporary(_ id: String) throws {}

    package func promoteTemporary(_ id: String, to fileName: String) throws {
        guard let file = temporary.removeValue(forKey: id) else { throw RecordingStorageError("no temporary file for \(id)") }
        files[fileName] = file
    }

    package func discardTemporary(_ id: String) {
        // What waited for it lands nowhere, and a transfer still going fails (as on disk).
        for writer in liveWriters where writer.id == id { writer.abandon() }
        deferredWriters.removeAll { $0.writer?.id == id }
        temporary[id] = nil
    }

    package func incomingWriter(for id: String, hashedUpTo offset: UInt64, hasher: SHA256) -> IncomingFileWriter {
        let immediate = ImmediateFileWriter(storage: self, id: id, hasher: hasher, verified: offset)
        guard defersChecks else { return immediate }
        let writer = DeferredFileWriter(immediate, id: id) { [weak self] in self?.onDeferredCheck?() }
        deferredWriters.append(Weak(writer: writer))
        return writer
    }

    /// Chunks handed on and not yet checked, in all.
    package var pendingChecks: Int { liveWriters.reduce(0) { $0 + $1.pending.count } }

    /// Checks (and writes, if they match) up to `count` waiting chunks, oldest first.
    package func judgePendingChunks(_ count: Int = .max) {
        var left = count
        for writer in liveWriters where left > 0 { left -= writer.judge(left) }
    }

    private func judgePendingChunks(of id: String) {
        for writer in liveWriters where writer.id == id { _ = writer.judge(.max) }
    }

    /// The process died: chunks that waited for their check are lost with it.
    package func dropPendingChecks() { deferredWriters.removeAll() }

    /// Stores a file directly (what `attach` does on disk).
    package func put(_ fileName: String, _ bytes: [UInt8]) { files[fileName] = bytes }
}

/// Holds chunks until judged, then hands them to the immediate writer in order.
private final class DeferredFileWriter: IncomingFileWriter {
    let id: String
    private let inner: ImmediateFileWriter
    private let submitted: () -> Void
    private(set) var pending: [(bytes: [UInt8], offset: UInt64, digest: SHA256.Digest)] = []

    init(_ inner: ImmediateFileWriter, id: String, submitted: @escaping () -> Void) {
        self.inner = inner
        self.id = id
        self.submitted = submitted
    }

    private var abandoned = false

    func submit(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, expecting digest: SHA256.Digest) {
        guard !abandoned else { return }
        pending.append((Array(bytes), offset, digest))
        submitted()
    }

    /// Its file was discarded: nothing waiting is checked, and the transfer's verdict fails.
    func abandon() {
        abandoned = true
        pending.removeAll()
    }

    /// Judges up to `count` chunks; returns how many.
    func judge(_ count: Int) -> Int {
        let taken = min(count, pending.count)
        for chunk in pending.prefix(taken) {
            chunk.bytes.withUnsafeBytes { inner.submit($0, at: chunk.offset, expecting: chunk.digest) }
        }
        pending.removeFirst(taken)
        return taken
    }

    func verdicts(waiting: Bool) -> ChunkVerdicts {
        if waiting { _ = judge(.max) }
        var verdicts = inner.verdicts(waiting: false)
        if abandoned { verdicts.failure = verdicts.failure ?? .storage("the temporary file was discarded while its chunks were checked") }
        return verdicts
    }

    func finalize() -> SHA256.Digest { inner.finalize() }
}
