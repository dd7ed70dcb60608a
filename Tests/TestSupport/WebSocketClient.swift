import Foundation
import Glibc

/// A minimal WebSocket client (RFC 6455) over a blocking loopback socket: the opening handshake,
/// masked text frames out, text frames in (fragments joined; pings answered; close ends it).
/// Enough to drive a browser's DevTools protocol in tests; every read is bounded by a timeout.
package final class WebSocketClient {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        init(_ text: String) { description = text }
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    /// The most one message may be (a screenshot is a few MB of base64).
    static let maximumMessage = 64 << 20

    /// Connects to `ws://127.0.0.1:port/path`.
    package init(port: UInt16, path: String, timeout: Double = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); throw Failure("connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
        setTimeout(timeout)
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        try sendAll(Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          .utf8) + Array("Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8))
        var head: [UInt8] = []
        while !head.ends(with: [13, 10, 13, 10]) {
            guard head.count < 16 * 1024 else { throw Failure("the handshake answer is too long") }
            head.append(try readByte())
        }
        let text = String(decoding: head, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 101") else { throw Failure("no upgrade: \(text.prefix(200))") }
    }

    deinit { close(fd) }

    /// How long one read may wait.
    package func setTimeout(_ seconds: Double) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    package func send(text: String) throws {
        try sendFrame(opcode: 1, payload: Array(text.utf8))
    }

    /// The next text message.
    package func receive() throws -> String {
        var message: [UInt8] = []
        while true {
            let first = try readByte(), second = try readByte()
            let opcode = first & 0x0F, final = first & 0x80 != 0
            var length = UInt64(second & 0x7F)
            if length == 126 { length = UInt64(try readByte()) << 8 | UInt64(try readByte()) }
            else if length == 127 { length = try (0..<8).reduce(UInt64(0)) { value, _ in (value << 8) | UInt64(try readByte()) } }
            guard length <= UInt64(Self.maximumMessage - message.count) else { throw Failure("a message over \(Self.maximumMessage) bytes") }
            let mask: [UInt8]? = second & 0x80 != 0 ? try (0..<4).map { _ in try readByte() } : nil
            var payload = try read(Int(length))
            if let mask { for i in payload.indices { payload[i] ^= mask[i % 4] } }
            switch opcode {
            case 0, 1, 2:
                message += payload
                if final { return String(decoding: message, as: UTF8.self) }
            case 8: throw Failure("the browser closed the connection")
            case 9: try sendFrame(opcode: 10, payload: payload)
            default: break
            }
        }
    }

    private func sendFrame(opcode: UInt8, payload: [UInt8]) throws {
        var frame: [UInt8] = [0x80 | opcode]
        if payload.count < 126 { frame.append(0x80 | UInt8(payload.count)) }
        else if payload.count <= 0xFFFF { frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] }
        else { frame.append(0x80 | 127); frame += (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(payload.count) >> (8 * UInt64($0))) } }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try sendAll(frame)
    }

    private func sendAll(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Failure("send: \(String(cString: strerror(errno)))") }
            sent += n
        }
    }

    private func fillBuffer() throws {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { throw Failure("timed out waiting for the browser") }
            guard n > 0 else { throw Failure("the connection ended") }
            buffer += chunk[0..<n]
            return
        }
    }

    private func readByte() throws -> UInt8 { try read(1)[0] }

    private func read(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { try fillBuffer() }
        let bytes = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return bytes
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
