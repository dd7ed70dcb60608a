import Foundation
import LifeSync
import LifeSyncRuntime

/// The dialling side of one connection as a node makes it, cut down to what the handshake bench
/// times: TCP connect to 127.0.0.1, the TLS 1.3 handshake with both certificates (`TLSContext`,
/// the node's own profile), our HELLO out, the node's HELLO in, close. Blocking, with every wait
/// bounded: a bench must end even when the node under test does not answer.
struct HandshakeClient {
    let tls: TLSContext
    let hello: [UInt8]
    let port: UInt16

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A client proving `key` and saying it is `identity` (which the node must trust). The HELLO
    /// asks for nothing (no capabilities, an empty vector), so the node answers with its HELLO
    /// and has nothing to send after it: the cycle times the handshake alone.
    init(key: NodeKey, identity: ReplicaIdentity, port: UInt16) throws {
        tls = try TLSContext(key: key)
        hello = Message.hello(Hello(nodeID: identity.nodeID, role: identity.role, incarnation: identity.incarnation,
                                    capabilities: [], clock: .zero, vector: VersionVector())).encoded()
        self.port = port
    }

    /// One cycle; returns the node's HELLO. Throws if any step fails or takes over `timeout` s.
    func cycle(timeout: Double = 5) throws -> Hello {
        let deadline = MonotonicClock.seconds() + timeout
        let stream = try tls.stream(fd: try connect(), dialing: true)
        defer { stream.close() }
        func wait(_ events: Int32) throws {
            let left = Int32(max(0, (deadline - MonotonicClock.seconds()) * 1000))
            guard left > 0 else { throw Failure(description: "timed out after \(timeout) s") }
            var entry = pollfd(fd: stream.fd, events: Int16(events), revents: 0)
            _ = poll(&entry, 1, min(left, 100))
        }
        handshake: while true {
            switch stream.handshake() {
            case .done: break handshake
            case .failed(let reason): throw Failure(description: reason)
            case .inProgress: try wait(stream.wantsWritable ? POLLOUT : POLLIN)
            }
        }
        var sent = 0
        while sent < hello.count {
            switch hello[sent...].withUnsafeBytes({ stream.write($0) }) {
            case .wrote(let n): sent += n
            case .wouldBlock: try wait(stream.wantsWritable ? POLLOUT : POLLIN)
            case .failed: throw Failure(description: "the node closed before our HELLO was sent")
            }
        }
        var decoder = FrameDecoder()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            switch buffer.withUnsafeMutableBytes({ stream.read(into: $0) }) {
            case .bytes(let got):
                for frame in try decoder.feed(buffer[0..<got]) {
                    let message = try Message.decode(type: frame.type, payload: frame.payload)
                    if case .hello(let hello) = message { return hello }
                    throw Failure(description: "the node answered \(message) instead of its HELLO")
                }
            case .wouldBlock: if !stream.hasBufferedInput { try wait(stream.wantsWritable ? POLLOUT : POLLIN) }
            case .ended: throw Failure(description: "the node closed before its HELLO")
            }
        }
    }

    /// A connected, non-blocking TCP socket to 127.0.0.1:`port` with TCP_NODELAY, as a node's.
    private func connect() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "connect to 127.0.0.1:\(port): \(reason)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }
}
