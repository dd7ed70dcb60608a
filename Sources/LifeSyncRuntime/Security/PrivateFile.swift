import Glibc

/// A small file only its owner may read, holding a private key: written whole with mode 0600
/// (a temporary file, fsync, rename, so a crash leaves the old file or the new one, never half),
/// and refused on reading when others may read it, as ssh refuses such a key. The node key
/// (`NodeKey`) and the HTTPS authority and certificate (`HTTPSAuthority`, `HTTPSCertificate`)
/// live in such files.
enum PrivateFile {
    /// Reads the file at `path` whole: a regular file (not followed through a symbolic link) of
    /// mode 0600 or stricter, of 1 to `maximumBytes` bytes.
    static func read(_ path: String, maximumBytes: Int = 16_384) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw KeyFileError(path: path, problem: "cannot be opened (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw KeyFileError(path: path, problem: "is not a regular file") }
        guard info.st_mode & 0o077 == 0 else {
            throw KeyFileError(path: path, problem: "is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))); it holds a private key of this node: chmod 600 it")
        }
        guard info.st_size > 0, info.st_size <= maximumBytes else { throw KeyFileError(path: path, problem: "has \(info.st_size) bytes, not a key file") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw KeyFileError(path: path, problem: "could not be read") }
            filled += got
        }
        return bytes
    }

    /// Replaces the file at `path` with `bytes`, mode 0600, atomically: `path + ".tmp"` is
    /// written, flushed to disk and renamed over it.
    static func write(_ bytes: [UInt8], to path: String) throws {
        _ = try write(bytes, to: path, replacing: true)
    }

    /// Writes the file at `path` as `write` does, unless there is one: then leaves it and
    /// returns false (another process made it first; the temporary is linked, not renamed, so
    /// of two makers one wins and the other learns it).
    static func create(_ bytes: [UInt8], at path: String) throws -> Bool {
        try write(bytes, to: path, replacing: false)
    }

    private static func write(_ bytes: [UInt8], to path: String, replacing: Bool) throws -> Bool {
        let temporary = path + ".tmp.\(getpid())"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw KeyFileError(path: temporary, problem: "cannot be created (\(String(cString: strerror(errno))))") }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                close(fd)
                unlink(temporary)
                throw KeyFileError(path: temporary, problem: "could not be written (\(String(cString: strerror(errno))))")
            }
            written += n
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced else {
            unlink(temporary)
            throw KeyFileError(path: path, problem: "could not be saved (\(String(cString: strerror(errno))))")
        }
        if replacing {
            guard rename(temporary, path) == 0 else {
                unlink(temporary)
                throw KeyFileError(path: path, problem: "could not be saved (\(String(cString: strerror(errno))))")
            }
            return true
        }
        let linked = link(temporary, path) == 0
        let failure = errno
        unlink(temporary)
        guard linked || failure == EEXIST else {
            throw KeyFileError(path: path, problem: "could not be saved (\(String(cString: strerror(failure))))")
        }
        return linked
    }

    /// Whether nothing is at `path` yet (a file to make rather than read).
    static func isAbsent(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) != 0 && errno == ENOENT
    }
}

/// A key file that cannot be used, and why.
public struct KeyFileError: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let problem: String
    public var description: String { "key file \(path) \(problem)" }
}
