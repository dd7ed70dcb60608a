import Glibc

/// Where `serve --log FILE` writes its lines: each line appended whole (O_APPEND), so a node started
/// in the background keeps its log out of the terminal and two runs' lines never interleave mid-line.
final class LogFile: @unchecked Sendable {
    private let descriptor: Int32

    init(path: String) throws(CLIError) {
        // 0600: the lines name peers, addresses and entry IDs.
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CLIError.refused("--log: cannot open \(path): \(String(cString: strerror(errno)))") }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Appends `line` and a newline; a full disk loses the line, never the node.
    func write(_ line: String) { Console.writeAll(descriptor, Array((line + "\n").utf8)) }
}
