import FoundationEssentials
import Glibc
import LifeSync

/// Recording bytes in a folder beside the replica (`phone.sqlite.recordings/`): permanent files
/// named `{id}.{ext}`, incoming ones in `.incoming/{id}.part` until verified and renamed into
/// place. Every name is checked before it becomes a path, so nothing a peer sends can point
/// outside the folder, and every file is opened with O_NOFOLLOW, so a symbolic link planted in
/// the folder is refused rather than followed out of it.
package final class FileRecordingStorage: RecordingStorage, @unchecked Sendable {
    package let folder: String
    let incoming: String
    /// The temporary files being written, by recording ID, oldest use first. An incoming
    /// transfer keeps its file open from chunk to chunk; a session that ends mid-transfer
    /// leaves its writer here until the next call about that ID, or until more than
    /// `maximumWriters` are open and the oldest is closed (its writes land first). A node
    /// receives one recording per session at a time, so 8 cover a busy mesh; beyond, writers
    /// are closed and reopened, slower but never wrong.
    private var writers: [(id: String, writer: TemporaryFileWriter)] = []
    static let maximumWriters = 8
    private let writersLock = Lock()
    /// Called on a writer's queue once an incoming chunk was checked (and written, or refused):
    /// the node's loop wakes to acknowledge it. Set before the node serves.
    package var onVerdict: (@Sendable () -> Void)?

    /// The folder for the replica at `replicaPath`, created if needed.
    package init(replicaPath: String) throws {
        folder = replicaPath + ".recordings"
        incoming = folder + "/.incoming"
        for path in [folder, incoming] where mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw RuntimeError("cannot create \(path): \(errnoText())")
        }
    }

    package func path(of fileName: String) throws -> String {
        guard FileRecordingStorage.isPlainName(fileName) else { throw RecordingStorageError("refusing the file name \"\(fileName.prefix(80))\"") }
        return folder + "/" + fileName
    }

    func temporaryPath(_ id: String) throws -> String {
        guard Identifier.isValid(id) else { throw RecordingStorageError("refusing the recording ID \"\(id.prefix(80))\"") }
        return incoming + "/" + id + ".part"
    }

    /// One path component, no dot files, no separators.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128 && !name.hasPrefix(".") && !name.contains("/") && !name.contains("\0")
    }

    /// Whether a regular file of that name is there (a symbolic link does not count).
    package func exists(_ fileName: String) -> Bool {
        guard let path = try? path(of: fileName) else { return false }
        return Self.isRegularFile(path)
    }

    package func storedFileName(forRecordingID id: String) -> String? {
        guard Identifier.role(of: id) != nil, let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        return names.sorted().first { $0.hasPrefix(id + ".") && exists($0) }
    }

    /// lstat: a regular file itself, not a link to one.
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Opens `path` without following a symbolic link in its last component; the error says so.
    static func openFile(_ path: String, _ flags: Int32, _ mode: mode_t = 0) throws -> Int32 {
        let fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else {
            let code = errno
            throw RecordingStorageError(code == ELOOP ? "refusing \(path): it is a symbolic link" : "cannot open \(path): \(errnoText(code))")
        }
        return fd
    }

    package func read(_ fileName: String, offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try readFile(try path(of: fileName), offset: offset, into: buffer)
    }

    package func remove(_ fileName: String) throws {
        let path = try path(of: fileName)
        guard unlink(path) == 0 || errno == ENOENT else { throw RecordingStorageError("cannot remove \(path): \(errnoText())") }
        forgetChunkDigests(fileName)
    }

    package func temporarySize(_ id: String) -> UInt64 {
        guard let path = try? temporaryPath(id) else { return 0 }
        try? openWriter(id)?.drain()
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? UInt64(info.st_size) : 0
    }

    package func readTemporary(_ id: String, offset: UInt64, count: Int) throws -> [UInt8] {
        let path = try temporaryPath(id)
        try openWriter(id)?.drain()
        return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = try readFile(path, offset: offset, into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    package func writeTemporary(_ id: String, offset: UInt64, bytes: UnsafeRawBufferPointer) throws {
        try writer(for: id).write(at: offset, bytes)
    }

    /// Chunks are checked and written on the temporary file's queue (`QueuedFileWriter`);
    /// `onVerdict` is called there after each.
    package func incomingWriter(for id: String, hashedUpTo offset: UInt64, hasher: SHA256) -> IncomingFileWriter {
        let wake = onVerdict
        return QueuedFileWriter(hasher: hasher, verified: offset, writer: { [self] in try writer(for: id) }, wake: { wake?() })
    }

    /// The open writer of `id`'s temporary file, or a new one.
    private func writer(for id: String) throws -> TemporaryFileWriter {
        let path = try temporaryPath(id)
        if let writer = openWriter(id) { return writer }
        let writer = try TemporaryFileWriter(path: path)
        adopt(writer, for: id)
        return writer
    }

    package func syncTemporary(_ id: String) throws {
        let path = try temporaryPath(id)
        if let writer = openWriter(id) { return try writer.sync() }
        let fd = try Self.openFile(path, O_RDONLY)
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw RecordingStorageError("cannot sync \(path): \(errnoText())") }
    }

    package func promoteTemporary(_ id: String, to fileName: String) throws {
        let from = try temporaryPath(id), to = try path(of: fileName)
        if let writer = closeWriter(id) { try writer.drain() }
        guard rename(from, to) == 0 else { throw RecordingStorageError("cannot move \(from) to \(to): \(errnoText())") }
        syncFolder()
    }

    /// The writer is abandoned first: what it still had queued is dropped, and a transfer that
    /// goes on handing it chunks meets a fresh file it cannot write into (the two never share
    /// a running hash).
    package func discardTemporary(_ id: String) {
        closeWriter(id)?.abandon()
        if let path = try? temporaryPath(id) { unlink(path) }
    }

    /// The writer of `id`'s temporary file, if one is open (it becomes the most recently used).
    private func openWriter(_ id: String) -> TemporaryFileWriter? {
        writersLock.withLock {
            guard let index = writers.firstIndex(where: { $0.id == id }) else { return nil }
            let entry = writers.remove(at: index)
            writers.append(entry)
            return entry.writer
        }
    }

    /// Keeps `writer` open for `id`; beyond `maximumWriters`, the least recently used goes (its
    /// queued writes land as it is released).
    private func adopt(_ writer: TemporaryFileWriter, for id: String) {
        let evicted: TemporaryFileWriter? = writersLock.withLock {
            writers.append((id, writer))
            defer { precondition(writers.count <= Self.maximumWriters, "writers bounded") }
            return writers.count > Self.maximumWriters ? writers.removeFirst().writer : nil
        }
        // Its writes land before a writer opened afresh for the same file could truncate it. A
        // write or flush that failed is known to this writer alone, and a flush's error is
        // reported once: the next writer's fsync would succeed over pages that never reached
        // the disk. So the file goes, and its transfer starts over from nothing.
        guard let evicted else { return }
        do { try evicted.drain() } catch { unlink(evicted.path) }
    }

    /// Forgets `id`'s writer and returns it (its file closes once the caller lets it go).
    private func closeWriter(_ id: String) -> TemporaryFileWriter? {
        writersLock.withLock {
            guard let index = writers.firstIndex(where: { $0.id == id }) else { return nil }
            return writers.remove(at: index).writer
        }
    }

    /// Copies a user's file into storage as `fileName`, hashing as it copies, synced and renamed
    /// into place: the node never depends on the original afterwards. Returns size and SHA-256.
    package func importFile(from source: String, as fileName: String, id: String) throws -> (size: UInt64, sha256: SHA256.Digest) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw RecordingStorageError("cannot read \(source): \(errnoText())") }
        defer { close(input) }
        let temporary = try temporaryPath(id)
        let output = try openLockedTemporary(temporary)
        var closed = false
        defer { if !closed { close(output) } }
        let hasher = SHA256()
        let chunkSize = TransferConfiguration().chunkSize
        var digests = ChunkDigestCollector(chunkSize: chunkSize, maximum: Self.maximumKeptDigests)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var size: UInt64 = 0
        do {
            while true {
                let got = Glibc.read(input, &buffer, buffer.count)
                if got < 0 && errno == EINTR { continue }
                guard got >= 0 else { throw RecordingStorageError("cannot read \(source): \(errnoText())") }
                if got == 0 { break }
                var written = 0
                while written < got {
                    let n = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, got - written) }
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { throw RecordingStorageError("cannot write \(temporary): \(errnoText())") }
                    written += n
                }
                buffer.withUnsafeBytes { digests.update(hasher, with: UnsafeRawBufferPointer(rebasing: $0[0..<got])) }
                size += UInt64(got)
            }
            guard fsync(output) == 0 else { throw RecordingStorageError("cannot sync \(temporary): \(errnoText())") }
            // Renamed while still open, so the lock covers the file until it is in place.
            try promoteTemporary(id, to: fileName)
            close(output)
            closed = true
        } catch {
            unlink(temporary)
            throw error
        }
        let sha256 = hasher.finalize()
        // Kept for the default chunk size, the one a sender offers unless configured otherwise.
        if let kept = digests.finished(with: sha256) { keepChunkDigests(kept, chunkSize: chunkSize, for: fileName) }
        return (size, sha256)
    }

    /// Creates (truncating) the temporary file of an import and holds an exclusive lock on it
    /// while the copy runs, so a node starting meanwhile does not take it for an orphan (see
    /// `removeOrphanedTemporaries`). If such a node unlinked it between our open and our lock,
    /// we open it afresh.
    private func openLockedTemporary(_ temporary: String) throws -> Int32 {
        for _ in 0..<3 {
            let fd = try Self.openFile(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            var locked: Int32
            repeat { locked = flock(fd, LOCK_EX) } while locked != 0 && errno == EINTR
            var info = stat()
            if fstat(fd, &info) == 0 && info.st_nlink > 0 { return fd }
            close(fd)
        }
        throw RecordingStorageError("cannot create \(temporary): it keeps being removed")
    }

    /// Removes the temporary files of downloads that can no longer resume: any `.part` in
    /// `.incoming` whose name is not `{valid recording ID}.part`, and any for which
    /// `isPending(id)` is false (its recording is not partially received). A `.part` an import
    /// (`lifesync attach`) is still writing is kept: the import holds a lock on it. A symbolic
    /// link planted there goes too (unlink never follows one); a folder is left alone. Returns
    /// the names removed.
    /// Call it before any transfer starts, as the node server does at start.
    @discardableResult
    package func removeOrphanedTemporaries(isPending: (String) -> Bool) -> [String] {
        guard let folder = opendir(incoming) else { return [] }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(folder)
        var removed: [String] = []
        for name in names.sorted() where name.hasSuffix(".part") {
            let path = incoming + "/" + name
            let id = String(name.dropLast(5))
            if Identifier.isValid(id) && isPending(id) { continue }
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            if (info.st_mode & S_IFMT) == S_IFDIR {
                continue  // not ours to empty; a folder holds no download
            }
            if (info.st_mode & S_IFMT) == S_IFREG {
                // An import in progress holds the lock: leave its file alone.
                let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                guard fd >= 0 else { continue }
                defer { close(fd) }
                guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
                if unlink(path) == 0 { removed.append(name) }
            } else if unlink(path) == 0 {
                removed.append(name)
            }
        }
        return removed
    }

    /// Fills `buffer` from `offset`, short only at the end of the file.
    private func readFile(_ path: String, offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let fd = try Self.openFile(path, O_RDONLY)
        defer { close(fd) }
        var got = 0
        while got < buffer.count {
            let n = pread(fd, buffer.baseAddress! + got, buffer.count - got, off_t(offset) + off_t(got))
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw RecordingStorageError("cannot read \(path): \(errnoText())") }
            if n == 0 { break }
            got += n
        }
        return got
    }

    /// Makes the rename durable.
    private func syncFolder() {
        let fd = open(folder, O_RDONLY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
    }
}
