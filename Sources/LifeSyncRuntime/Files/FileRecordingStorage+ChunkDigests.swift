import Glibc
import LifeSync

/// The running digests of an attached file at each chunk boundary, kept beside it in
/// `.digests/{file name}` when `attach` hashes it, so sending it costs no second hash pass
/// (`RecordingStorage.chunkDigests`). A cache: missing, torn or for another chunk size, it is
/// not used, and the sender hashes as it reads.
///
/// Layout: "LSD1", the chunk size (u32, big-endian), then one 32-byte digest per chunk.
extension FileRecordingStorage {
    /// Files of more chunks than this keep no digests (64 GiB at the default 1 MiB; 2 MiB of
    /// digests), so neither attach nor a send holds more than that for them.
    static let maximumKeptDigests = 65_536
    private static let digestsMagic: [UInt8] = Array("LSD1".utf8)

    var digestsFolder: String { folder + "/.digests" }

    func digestsPath(_ fileName: String) throws -> String {
        _ = try path(of: fileName)  // the same name rules
        return digestsFolder + "/" + fileName
    }

    package func chunkDigests(_ fileName: String, chunkSize: UInt32) -> [SHA256.Digest]? {
        guard let path = try? digestsPath(fileName), let fd = try? Self.openFile(path, O_RDONLY) else { return nil }
        defer { close(fd) }
        let limit = 8 + 32 * Self.maximumKeptDigests
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size >= 8, info.st_size <= limit else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var got = 0
        while got < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, $0.count - got, off_t(got)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            got += n
        }
        guard got >= 8, got <= limit, (got - 8) % 32 == 0, Array(bytes[0..<4]) == Self.digestsMagic else { return nil }
        let kept = UInt32(bytes[4]) << 24 | UInt32(bytes[5]) << 16 | UInt32(bytes[6]) << 8 | UInt32(bytes[7])
        guard kept == chunkSize else { return nil }
        return stride(from: 8, to: got, by: 32).map { SHA256.Digest(bytes: Array(bytes[$0..<($0 + 32)])) }
    }

    package func forgetChunkDigests(_ fileName: String) {
        if let path = try? digestsPath(fileName) { unlink(path) }
    }

    /// Keeps `digests` for `fileName` (best effort: a cache that is not there costs a hash pass).
    func keepChunkDigests(_ digests: [SHA256.Digest], chunkSize: UInt32, for fileName: String) {
        guard !digests.isEmpty, digests.count <= Self.maximumKeptDigests, let path = try? digestsPath(fileName) else { return }
        if mkdir(digestsFolder, 0o700) != 0 && errno != EEXIST { return }
        var bytes = Self.digestsMagic + [UInt8(chunkSize >> 24), UInt8(truncatingIfNeeded: chunkSize >> 16),
                                         UInt8(truncatingIfNeeded: chunkSize >> 8), UInt8(truncatingIfNeeded: chunkSize)]
        for digest in digests { bytes += digest.bytes }
        let temporary = path + ".tmp"
        guard let fd = try? Self.openFile(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600) else { return }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            written += n
        }
        close(fd)
        if written == bytes.count { rename(temporary, path) } else { unlink(temporary) }
    }
}
