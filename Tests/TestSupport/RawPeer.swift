import Foundation
import Glibc
import LifeSync
import LifeSyncRuntime

/// A hand-driven peer for protocol tests: connects to a node over loopback, completes the TLS
/// handshake with a key of its own, and sends whatever bytes a test wants, well-formed or not.
/// With `tls: false` it speaks plain TCP (to check that a node refuses it). Every wait is bounded.
package final class RawPeer {
    package let fd: Int32
    private let stream: TLSStream?
    /// This peer's key (one per test process unless given).
    package let key: NodeKey
    private var closedBySend = false

    package static let sharedKey = Result { try NodeKey.generate(nodeID: "mac_7c9e6679-7425-40de-944b-e07fc1f90ae7") }

    /// Connects to `127.0.0.1:port` (from the loopback address `source`, if given: a node caps
    /// connections per address) and, with `tls`, completes the handshake (5 s at most).
    package init(port: UInt16, tls: Bool = true, key: NodeKey? = nil, from source: String? = nil) throws {
        self.key = try key ?? Self.sharedKey.get()
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { close(fd); throw RawPeerError("bind \(source) failed: \(String(cString: strerror(errno)))") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { close(fd); throw RawPeerError("connect failed: \(String(cString: strerror(errno)))") }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        guard tls else {
            stream = nil
            return
        }
        let stream = try TLSContext(key: self.key).stream(fd: fd, dialing: true)
        self.stream = stream
        let deadline = MonotonicClock.seconds() + 5
        while true {
            switch stream.handshake() {
            case .done, .established: return
            case .failed(let reason): throw RawPeerError("TLS handshake failed: \(reason)")
            case .inProgress:
                guard MonotonicClock.seconds() < deadline else { throw RawPeerError("TLS handshake timed out") }
                wait(for: stream.wantsWritable ? Int16(POLLOUT) : Int16(POLLIN), milliseconds: 50)
            }
        }
    }

    deinit {
        if let stream { stream.close() } else { close(fd) }
    }

    /// A peer with a fresh key that `replica` (the node's, on disk) trusts as `nodeID`: what a
    /// paired but buggy or hostile implementation looks like to the node.
    package static func trusted(as nodeID: String, by replica: Replica, port: UInt16, from source: String? = nil) throws -> RawPeer {
        let key = try NodeKey.generate(nodeID: nodeID)
        try replica.trust(TrustedPeer(nodeID: nodeID, role: Identifier.role(of: nodeID)!, fingerprint: key.fingerprint, trustedAt: replica.now))
        return try RawPeer(port: port, key: key, from: source)
    }

    /// The fingerprint of the key the node proved it holds (nil without TLS).
    package var nodeFingerprint: SHA256.Digest? { stream?.peerFingerprint }

    private func wait(for events: Int16, milliseconds: Int32) {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        _ = poll(&entry, 1, milliseconds)
    }

    /// Sends all of `bytes` (5 s at most; a peer that closed ends it early).
    package func send(_ bytes: [UInt8]) {
        var sent = 0
        let deadline = MonotonicClock.seconds() + 5
        while sent < bytes.count && !closedBySend && MonotonicClock.seconds() < deadline {
            switch trySend(bytes[sent...]) {
            case .some(0): wait(for: Int16(POLLOUT), milliseconds: 50)
            case .some(let n): sent += n
            case nil: closedBySend = true
            }
        }
    }

    /// One non-blocking write of what `bytes` the connection takes now: the count (0 when it
    /// takes nothing now), or nil once it failed.
    package func trySend(_ bytes: ArraySlice<UInt8>) -> Int? {
        let outcome: StreamWrite = bytes.withUnsafeBytes { rest in
            if let stream { return stream.write(rest) }
            let n = Glibc.send(fd, rest.baseAddress, rest.count, Int32(MSG_NOSIGNAL))
            return n > 0 ? .wrote(n) : (n < 0 && (errno == EAGAIN || errno == EINTR) ? .wouldBlock : .failed)
        }
        switch outcome {
        case .wrote(let n): return n
        case .wouldBlock: return 0
        case .failed: return nil
        }
    }

    /// Reads frames until the peer closes or `seconds` pass. Returns the decoded messages and
    /// whether the connection was closed by the node.
    package func readUntilClosed(seconds: Double = 5) -> (messages: [Message], closed: Bool) {
        let (bytes, closed) = readBytes(seconds: seconds)
        var decoder = FrameDecoder()
        var messages: [Message] = []
        if let frames = try? decoder.feed(bytes[...]) {
            for frame in frames { if let m = try? Message.decode(type: frame.type, payload: frame.payload) { messages.append(m) } }
        }
        return (messages, closed)
    }

    /// Reads bytes until the peer closes, `enough` says so, or `seconds` pass; and whether it closed.
    package func readBytes(seconds: Double, until enough: ([UInt8]) -> Bool = { _ in false }) -> (bytes: [UInt8], closed: Bool) {
        var received: [UInt8] = []
        let deadline = MonotonicClock.seconds() + seconds
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while MonotonicClock.seconds() < deadline && !enough(received) {
            let outcome: StreamRead = buffer.withUnsafeMutableBytes { space in
                if let stream { return stream.read(into: space) }
                let n = recv(fd, space.baseAddress, space.count, 0)
                return n > 0 ? .bytes(n) : (n < 0 && (errno == EAGAIN || errno == EINTR) ? .wouldBlock : .ended)
            }
            switch outcome {
            case .bytes(let got): received += buffer[0..<got]
            case .wouldBlock: wait(for: Int16(POLLIN), milliseconds: 20)
            case .ended: return (received, true)
            }
        }
        return (received, false)
    }

    /// Reads for `seconds` and returns what arrived, without waiting for a close.
    package func read(seconds: Double) -> [Message] { readUntilClosed(seconds: seconds).messages }
}

package struct RawPeerError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
