import Glibc

/// Where a command writes. The binary uses the process's streams; tests capture the text.
package final class Console: @unchecked Sendable {
    private let writeOut: (String) -> Void
    private let writeErr: (String) -> Void
    /// Bytes for stdout as they are (an export's pieces), without a String's copy.
    private let writeOutBytes: ([UInt8]) -> Void
    /// Standard input, read whole, for `-` arguments.
    let readInput: () -> [UInt8]?

    package init(out: @escaping (String) -> Void, err: @escaping (String) -> Void, input: @escaping () -> [UInt8]?,
                 outBytes: (([UInt8]) -> Void)? = nil) {
        writeOut = out
        writeErr = err
        readInput = input
        writeOutBytes = outBytes ?? { out(String(decoding: $0, as: UTF8.self)) }
    }

    /// The process's own stdout, stderr and stdin.
    package static func standard() -> Console {
        Console(out: { writeAll(1, Array($0.utf8)) }, err: { writeAll(2, Array($0.utf8)) }, input: {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let got = read(0, &chunk, chunk.count)
                if got < 0 && errno == EINTR { continue }
                if got < 0 { return nil }
                if got == 0 { return bytes }
                bytes += chunk[0..<got]
            }
        }, outBytes: { writeAll(1, $0) })
    }

    /// Writes all of `bytes` to a descriptor; a closed pipe (or a full disk) ends the write quietly.
    /// Read in place: a mutable view of a piece its caller still holds would copy it first.
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }

    func print(_ line: String = "", newline: Bool = true) { writeOut(newline ? line + "\n" : line) }

    func error(_ line: String) { writeErr(line + "\n") }

    /// Writes `bytes` to stdout as they are: UTF-8 text made elsewhere (an export's pieces).
    func write(_ bytes: [UInt8]) { writeOutBytes(bytes) }
}
