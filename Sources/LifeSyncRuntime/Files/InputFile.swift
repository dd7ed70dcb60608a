import Glibc

/// A file a user named as input, read whole. A refusal says why, in the system's words
/// ("cannot read notes.json: No such file or directory"), not just that it failed.
public enum InputFile {
    /// The inputs a command reads whole are journals, not recordings: a bound keeps a wrong
    /// path (a disk image, /dev/zero) from exhausting memory.
    public static let maximumBytes = 1 << 30

    public static func read(_ path: String) throws(RuntimeError) -> [UInt8] {
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
}
