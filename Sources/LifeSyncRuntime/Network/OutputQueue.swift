/// The output queued for one connection, oldest first, for both servers: the node's peer
/// connections (`PeerConnection`) and the HTTP clients (`HTTPClient`). Large pieces stay
/// separate arrays, so a 1 MiB chunk is never copied into a growing buffer; small ones are
/// packed together (up to 64 KiB), so a burst of frames leaves in one write. Each server bounds
/// what it lets queue.
struct OutputQueue {
    private var pending: [[UInt8]] = []
    /// Bytes of the first piece already written.
    private var headSent = 0
    /// Bytes not yet written.
    private(set) var count = 0

    var isEmpty: Bool { pending.isEmpty }

    mutating func enqueue(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }  // nothing to write: never a zero-length write
        count += bytes.count
        if let last = pending.indices.last, pending[last].count + bytes.count <= 64 * 1024 {
            pending[last] += bytes
        } else {
            pending.append(bytes)
        }
    }

    enum Flush { case drained, blocked, failed }

    /// Writes what is queued until it is all gone or `stream` would block; `wrote`: whether any
    /// byte left (a stalled reader is told apart from a slow one by it).
    mutating func flush(to stream: any ByteStream) -> (outcome: Flush, wrote: Bool) {
        var wrote = false
        while let head = pending.first {
            let offset = headSent
            switch head.withUnsafeBytes({ stream.write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }) {
            case .wrote(let written):
                wrote = true
                headSent += written
                count -= written
                if headSent == head.count {
                    pending.removeFirst()
                    headSent = 0
                }
            case .wouldBlock:
                return (.blocked, wrote)
            case .failed:
                return (.failed, wrote)
            }
        }
        precondition(count == 0 && headSent == 0, "drained means nothing queued")
        return (.drained, wrote)
    }
}
