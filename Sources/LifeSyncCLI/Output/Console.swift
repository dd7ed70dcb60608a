import Glibc

/// Where a command writes. The binary uses the process's streams; tests capture the text.
package final class Console: @unchecked Sendable {
    private let writeOut: (String) -> Void
    private let writeErr: (String) -> Void
    /// Standard input, read whole, for `-` arguments.
    let readInput: () -> [UInt8]?

    package init(out: @escaping (String) -> Void, err: @escaping (String) -> Void, input: @escaping () -> [UInt8]?) {
        writeOut = out
        writeErr = err
        readInput = input
    }

    /// The process's own stdout, stderr and stdin.
    package static func standard() -> Console {
        Console(out: { writeAll(1, $0) }, err: { writeAll(2, $0) }, input: {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let got = read(0, &chunk, chunk.count)
                if got < 0 && errno == EINTR { continue }
                if got < 0 { return nil }
                if got == 0 { return bytes }
                bytes += chunk[0..<got]
            }
        })
    }

    /// Writes all of `text` to a descriptor; a closed pipe (or a full disk) ends the write quietly.
    static func writeAll(_ descriptor: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }

    func print(_ line: String = "", newline: Bool = true) { writeOut(newline ? line + "\n" : line) }

    func error(_ line: String) { writeErr(line + "\n") }
}
