import Glibc
import LifeSync

/// One connection dialled outside a node's poll loop — `lifesync pair`, the handshake bench —
/// as a node dials: TCP, then TLS 1.3 with both certificates (`TLSContext`, the node's own
/// profile), then frames. Blocking, every wait bounded by one deadline, so a command always
/// ends even when the other side never answers.
///
/// ```swift
/// let dialer = try TLSDialer(to: SocketAddress(parsing: "192.168.1.20:7002"), context: tls, timeout: 10)
/// dialer.peerKey                         // the key the peer proved
/// try dialer.send(Message.hello(hello).encoded())
/// let answer = try dialer.nextMessage()  // nil: the peer closed
/// ```
package final class TLSDialer {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        package init(description: String) { self.description = description }
    }

    /// The fingerprint of the key the peer proved in the handshake.
    package let peerKey: SHA256.Digest
    let stream: TLSStream
    let deadline: Double
    let timeout: Double
    private var decoder = FrameDecoder()
    private var ready: [Message] = []
    private var buffer = [UInt8](repeating: 0, count: 16_384)

    package init(to address: SocketAddress, context: TLSContext, timeout: Double) throws {
        precondition(timeout > 0, "a dial has a deadline")
        self.timeout = timeout
        deadline = MonotonicClock.seconds() + timeout
        let fd: Int32
        do { fd = try Socket.startConnect(to: address) } catch { throw Failure(description: "connect to \(address): \(error)") }
        do {
            try Self.wait(fd, POLLOUT, until: deadline, timeout: timeout)
            if let failure = Socket.finishConnect(fd) { throw Failure(description: "connect to \(address): \(failure)") }
        } catch {
            Glibc.close(fd)
            throw error
        }
        stream = try context.stream(fd: fd, dialing: true)
        var proven: SHA256.Digest?
        do {
            while proven == nil {
                switch stream.handshake() {
                case .done(let key): proven = key
                case .established: preconditionFailure("a peer context asks for the peer's certificate")
                case .failed(let reason): throw Failure(description: "TLS handshake with \(address): \(reason)")
                case .inProgress: try Self.wait(stream.fd, stream.wantsWritable ? POLLOUT : POLLIN, until: deadline, timeout: timeout)
                }
            }
        } catch {
            stream.close()
            throw error
        }
        peerKey = proven!
    }

    deinit { stream.close() }

    package func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            switch bytes[sent...].withUnsafeBytes({ stream.write($0) }) {
            case .wrote(let n): sent += n
            case .wouldBlock: try Self.wait(stream.fd, stream.wantsWritable ? POLLOUT : POLLIN, until: deadline, timeout: timeout)
            case .failed: throw Failure(description: "the peer closed the connection")
            }
        }
    }

    /// The next message the peer sends; nil when it closed first. A malformed frame throws.
    package func nextMessage() throws -> Message? {
        while ready.isEmpty {
            switch buffer.withUnsafeMutableBytes({ stream.read(into: $0) }) {
            case .bytes(let count):
                for frame in try decoder.feed(buffer[0..<count]) {
                    ready.append(try Message.decode(type: frame.type, payload: frame.payload))
                }
            case .wouldBlock:
                if !stream.hasBufferedInput { try Self.wait(stream.fd, stream.wantsWritable ? POLLOUT : POLLIN, until: deadline, timeout: timeout) }
            case .ended:
                return nil
            }
        }
        return ready.removeFirst()
    }

    package func close() { stream.close() }

    /// A HELLO as `identity` that asks for nothing (no capabilities, clock 0, an empty vector): a
    /// node answers with its own HELLO and has nothing to send after it, and a node that does not
    /// trust us yet learns only who we say we are.
    package static func introduction(of identity: ReplicaIdentity) -> [UInt8] {
        Message.hello(Hello(nodeID: identity.nodeID, role: identity.role, incarnation: identity.incarnation,
                            capabilities: [.seals], clock: .zero, vector: VersionVector())).encoded()
    }

    private static func wait(_ fd: Int32, _ events: Int32, until deadline: Double, timeout: Double) throws {
        let left = Int32(max(0, (deadline - MonotonicClock.seconds()) * 1000))
        guard left > 0 else { throw Failure(description: "no answer within \(timeout) s") }
        var entry = pollfd(fd: fd, events: Int16(events), revents: 0)
        _ = poll(&entry, 1, min(left, 100))
    }
}
