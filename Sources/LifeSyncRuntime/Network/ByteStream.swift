import Glibc

/// One connection's bytes, whatever carries them. The node server moves frames through this
/// seam and never reads or writes a socket itself: TLS (`TLSStream`), with the readiness semantics
/// of a non-blocking socket; the core never sees it.
package protocol ByteStream: AnyObject {
    /// The descriptor to poll.
    var fd: Int32 { get }
    /// Reads what is available into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamRead
    /// Writes a prefix of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) -> StreamWrite
    /// No more input wanted (a close whose output is still leaving).
    func shutdownReading()
    func close()
    /// Input read from the descriptor and waiting inside the stream (TLS records already
    /// decrypted): poll will not announce it, so the reader must come back for it.
    var hasBufferedInput: Bool { get }
}

extension ByteStream {
    package var hasBufferedInput: Bool { false }

    /// Reads until the stream would block, ends, or `buffer` is full: how many bytes came, and
    /// whether the stream ended.
    func readAvailable(into buffer: inout [UInt8]) -> (filled: Int, ended: Bool) {
        var filled = 0
        while filled < buffer.count {
            let outcome = buffer.withUnsafeMutableBytes { read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
            switch outcome {
            case .bytes(let count): filled += count
            case .wouldBlock: return (filled, false)
            case .ended: return (filled, true)
            }
        }
        return (filled, false)
    }
}

package enum StreamRead: Equatable {
    case bytes(Int)
    case wouldBlock
    /// The peer closed, or the connection failed.
    case ended
}

package enum StreamWrite: Equatable {
    case wrote(Int)
    case wouldBlock
    case failed
}
