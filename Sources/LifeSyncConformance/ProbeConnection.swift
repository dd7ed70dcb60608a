import Glibc
import LifeSync
import LifeSyncRuntime

/// One connection of the conformance runner to the node under test: TCP, TLS 1.3 with the
/// runner's key (`TLSContext`, the node profile), then whatever bytes a case wants to send,
/// well-formed or not. Unlike `TLSDialer` every wait has its own deadline (`--timeout` per step),
/// frames that do not decode are kept as raw bytes rather than thrown away, and everything sent
/// and received is kept in a bounded transcript, which a failing case shows in hex.
package final class ProbeConnection {
    /// One frame of the transcript.
    package struct Record {
        package var sent: Bool
        /// The frame's first bytes (what a failure shows).
        package var bytes: [UInt8]
        package var length: Int
    }

    /// What `next` found.
    package enum Arrival {
        case message(Message)
        /// A whole frame that does not decode: the target broke the wire format.
        case undecodable(WireError, [UInt8])
        /// The target closed the connection.
        case closed
        /// Nothing within the step's timeout.
        case silent
    }

    package let peerKey: SHA256.Digest
    package let timeout: Double
    private let stream: TLSStream
    private var decoder = FrameDecoder()
    private var ready: [Arrival] = []
    private var ended = false
    private var buffer = [UInt8](repeating: 0, count: 65_536)
    /// The last frames, oldest first; bounded so a long pull cannot grow it.
    package private(set) var transcript: [Record] = []
    static let transcriptLimit = 12

    /// Connects and completes the TLS handshake, within `timeout` seconds.
    package init(to address: SocketAddress, context: TLSContext, timeout: Double) throws {
        precondition(timeout > 0, "every wait of the runner is bounded")
        self.timeout = timeout
        let deadline = MonotonicClock.seconds() + timeout
        let fd: Int32
        do { fd = try Socket.startConnect(to: address) } catch { throw TLSDialer.Failure(description: "connect to \(address): \(error)") }
        do {
            try Self.wait(fd, POLLOUT, until: deadline, timeout: timeout)
            if let failure = Socket.finishConnect(fd) { throw TLSDialer.Failure(description: "connect to \(address): \(failure)") }
        } catch {
            Glibc.close(fd)
            throw error
        }
        stream = try context.stream(fd: fd, dialing: true)
        peerKey = try Self.handshake(stream, until: deadline, timeout: timeout, what: "\(address)")
    }

    /// The accepting side: `fd` is a connection a listener took (`--listen`).
    package init(accepted fd: Int32, context: TLSContext, timeout: Double) throws {
        precondition(timeout > 0, "every wait of the runner is bounded")
        self.timeout = timeout
        stream = try context.stream(fd: fd, dialing: false)
        peerKey = try Self.handshake(stream, until: MonotonicClock.seconds() + timeout, timeout: timeout, what: "the dialler")
    }

    deinit { stream.close() }

    private static func handshake(_ stream: TLSStream, until deadline: Double, timeout: Double, what: String) throws -> SHA256.Digest {
        do {
            while true {
                switch stream.handshake() {
                case .done(let key): return key
                case .established: preconditionFailure("a peer context asks for the peer's certificate")
                case .failed(let reason): throw TLSDialer.Failure(description: "TLS handshake with \(what): \(reason)")
                case .inProgress: try wait(stream.fd, stream.wantsWritable ? POLLOUT : POLLIN, until: deadline, timeout: timeout)
                }
            }
        } catch {
            stream.close()
            throw error
        }
    }

    /// Sends `bytes` whole (a frame, several, or part of one). False when the target closed.
    @discardableResult
    package func send(_ bytes: [UInt8]) -> Bool {
        remember(sent: true, bytes)
        let deadline = MonotonicClock.seconds() + timeout
        var sent = 0
        while sent < bytes.count {
            switch bytes[sent...].withUnsafeBytes({ stream.write($0) }) {
            case .wrote(let n): sent += n
            case .failed: return false
            case .wouldBlock:
                guard (try? Self.wait(stream.fd, stream.wantsWritable ? POLLOUT : POLLIN, until: deadline, timeout: timeout)) != nil else { return false }
            }
        }
        return true
    }

    package func send(_ message: Message) -> Bool { send(message.encoded()) }

    /// The next thing the target does, waiting at most `timeout` seconds (the step's default).
    package func next(within seconds: Double? = nil) -> Arrival {
        let deadline = MonotonicClock.seconds() + (seconds ?? timeout)
        while ready.isEmpty {
            if ended { return .closed }
            switch buffer.withUnsafeMutableBytes({ stream.read(into: $0) }) {
            case .bytes(let count): cut(buffer[0..<count])
            case .ended: ended = true
            case .wouldBlock:
                if stream.hasBufferedInput { continue }
                guard (try? Self.wait(stream.fd, stream.wantsWritable ? POLLOUT : POLLIN, until: deadline, timeout: timeout)) != nil else { return .silent }
            }
        }
        return ready.removeFirst()
    }

    /// Frames out of what arrived; after a frame that does not decode nothing more is read.
    private func cut(_ bytes: ArraySlice<UInt8>) {
        do {
            for frame in try decoder.feed(bytes) {
                let length = UInt32(frame.payload.count + 1)
                // Only the transcript's first bytes are ever shown: no copy of a 2 MiB batch.
                let raw = (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * UInt32($0))) } + [frame.type]
                    + frame.payload.prefix(ProbeTranscript.bytesShown)
                remember(sent: false, raw, length: Int(length) + 4)
                do {
                    ready.append(.message(try Message.decode(type: frame.type, payload: frame.payload)))
                } catch {
                    ready.append(.undecodable(error, raw))
                    ended = true
                    return
                }
            }
        } catch {
            remember(sent: false, Array(bytes.prefix(16)))
            ready.append(.undecodable(error, Array(bytes.prefix(16))))
            ended = true
        }
    }

    private func remember(sent: Bool, _ bytes: [UInt8], length: Int? = nil) {
        transcript.append(Record(sent: sent, bytes: Array(bytes.prefix(ProbeTranscript.bytesShown + 1)), length: length ?? bytes.count))
        if transcript.count > Self.transcriptLimit { transcript.removeFirst(transcript.count - Self.transcriptLimit) }
    }

    /// A TCP close without TLS close_notify: the connection cut, as a crash or a lost network would.
    package func cut() {
        shutdown(stream.fd, Int32(SHUT_RDWR))
        stream.close()
        ended = true
    }

    package func close() {
        stream.close()
        ended = true
    }

    private static func wait(_ fd: Int32, _ events: Int32, until deadline: Double, timeout: Double) throws {
        let left = Int32(max(0, (deadline - MonotonicClock.seconds()) * 1000))
        guard left > 0 else { throw TLSDialer.Failure(description: "no answer within \(timeout) s") }
        var entry = pollfd(fd: fd, events: Int16(events), revents: 0)
        _ = poll(&entry, 1, min(left, 100))
    }
}

/// How a transcript is shown in a failure: the last frames, each as hex, bounded.
package enum ProbeTranscript {
    static let bytesShown = 48

    package static func render(_ records: [ProbeConnection.Record]) -> String {
        records.map { record in
            let shown = record.bytes.prefix(bytesShown)
            return (record.sent ? "  > " : "  < ") + Hex.encode(shown) + (record.length > bytesShown ? "… (\(record.length) bytes)" : "")
        }.joined(separator: "\n")
    }
}
