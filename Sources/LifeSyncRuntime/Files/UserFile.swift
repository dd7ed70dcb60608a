import Glibc

/// A file a user named on the command line, read or written whole. A refusal says why, in the
/// system's words ("cannot read notes.json: No such file or directory"), not just that it failed.
package enum UserFile {
    /// The inputs a command reads whole are journals, not recordings: a bound keeps a wrong
    /// path (a disk image, /dev/zero) from exhausting memory.
    package static let maximumBytes = 1 << 30

    /// Where temporary folders go: `$TMPDIR`, else /tmp, with a slash at the end.
    package static var temporaryDirectory: String {
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return base.hasSuffix("/") ? base : base + "/"
    }

    package static func read(_ path: String) throws(RuntimeError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RuntimeError("cannot read \(path): \(errnoText())") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw RuntimeError("cannot read \(path): \(errnoText())") }
        if (status.st_mode & S_IFMT) == S_IFDIR { throw RuntimeError("cannot read \(path): it is a directory") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw RuntimeError("cannot read \(path): \(errnoText())") }
            if got == 0 { return bytes }
            guard bytes.count + got <= maximumBytes else {
                throw RuntimeError("cannot read \(path): larger than \(maximumBytes >> 20) MiB")
            }
            bytes += chunk[0..<got]
        }
    }

    /// Replaces `path` with `bytes`: written beside it, synced and renamed over it, so a failed
    /// write never leaves half a file where the old one or nothing was.
    package static func replace(_ path: String, with bytes: [UInt8]) throws(RuntimeError) {
        do { try replace(path) { write in try write(bytes) } } catch let error as RuntimeError { throw error } catch { throw RuntimeError("\(error)") }
    }

    /// Replaces `path` with what `produce` hands its writer, piece by piece (an export of any
    /// size in bounded memory), as `replace(_:with:)` does: beside it, synced, renamed over it;
    /// nothing is left behind when writing or `produce` fails.
    /// - Throws: `RuntimeError` naming the path and the system's reason, or what `produce` threw.
    package static func replace(_ path: String, producing produce: (_ write: ([UInt8]) throws(RuntimeError) -> Void) throws -> Void) throws {
        let temporary = path + ".partial"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw RuntimeError("cannot write \(path): \(errnoText())") }
        func write(_ bytes: [UInt8]) throws(RuntimeError) {
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw RuntimeError("cannot write \(path): \(errnoText())") }
                written += n
            }
        }
        var failure: (any Error)?
        do {
            try produce(write)
            if fsync(fd) != 0 { throw RuntimeError("cannot write \(path): \(errnoText())") }
        } catch {
            failure = error
        }
        close(fd)
        if failure == nil && rename(temporary, path) != 0 { failure = RuntimeError("cannot write \(path): \(errnoText())") }
        if let failure {
            unlink(temporary)
            throw failure
        }
    }
}
