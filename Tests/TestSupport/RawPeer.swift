import Foundation
import Glibc
import LifeSync

/// A hand-driven TCP peer for protocol tests: connects to a node over loopback and sends
/// whatever bytes a test wants, well-formed or not. Blocking, with receive timeouts.
public final class RawPeer {
    public let fd: Int32

    /// Connects to `127.0.0.1:port`.
    public init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { close(fd); throw RawPeerError("connect failed: \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    public func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads frames until the peer closes or `seconds` pass. Returns the decoded messages (or the
    /// decoding errors) and whether the connection was closed by the node.
    public func readUntilClosed(seconds: Double = 5) -> (messages: [Message], closed: Bool) {
        var decoder = FrameDecoder()
        var messages: [Message] = []
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while Date() < deadline {
            let got = recv(fd, &buffer, buffer.count, 0)
            if got == 0 { return (messages, true) }
            if got < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                return (messages, true)
            }
            if let frames = try? decoder.feed(buffer[0..<got]) {
                for frame in frames { if let m = try? Message.decode(type: frame.type, payload: frame.payload) { messages.append(m) } }
            }
        }
        return (messages, false)
    }

    /// Reads for `seconds` and returns what arrived, without waiting for a close.
    public func read(seconds: Double) -> [Message] { readUntilClosed(seconds: seconds).messages }
}

public struct RawPeerError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
