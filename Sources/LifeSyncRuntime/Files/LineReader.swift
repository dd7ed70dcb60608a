import Glibc

/// A file a user named, read a line at a time through one buffer, so a journal of any length
/// is read in the memory of its longest line (`lifesync import`). Refusals say why in the
/// system's words, like `UserFile`.
package final class LineReader {
    private let fd: Int32
    private let path: String
    private var buffer: [UInt8]
    private var start = 0, end = 0
    private var atEnd = false

    package init(path: String, bufferBytes: Int = 1 << 20) throws(RuntimeError) {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RuntimeError("cannot read \(path): \(errnoText())") }
        self.path = path
        buffer = [UInt8](repeating: 0, count: max(bufferBytes, 16))
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            close(fd)
            throw RuntimeError("cannot read \(path): \(errnoText())")
        }
        if (status.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw RuntimeError("cannot read \(path): it is a directory")
        }
    }

    deinit { close(fd) }

    /// The next line, without its "\n"; nil after the last. A last line without "\n" is a line.
    package func nextLine() throws(RuntimeError) -> [UInt8]? {
        var searchFrom = start
        while true {
            if let newline = buffer[searchFrom..<end].firstIndex(of: 0x0A) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                return line
            }
            if atEnd {
                guard start < end else { return nil }
                let line = Array(buffer[start..<end])
                start = end
                return line
            }
            searchFrom = end - start
            try fill()
        }
    }

    /// Moves the unread bytes to the front, grows the buffer when one line fills it, and reads.
    private func fill() throws(RuntimeError) {
        if start > 0 {
            buffer.withUnsafeMutableBytes { _ = memmove($0.baseAddress!, $0.baseAddress! + start, end - start) }
            end -= start
            start = 0
        }
        if end == buffer.count {
            guard buffer.count < UserFile.maximumBytes else {
                throw RuntimeError("cannot read \(path): a line longer than \(UserFile.maximumBytes >> 20) MiB")
            }
            buffer += [UInt8](repeating: 0, count: buffer.count)
        }
        while true {
            let got = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + end, $0.count - end) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw RuntimeError("cannot read \(path): \(errnoText())") }
            if got == 0 { atEnd = true } else { end += got }
            return
        }
    }
}
