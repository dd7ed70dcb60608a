import LifeSync

/// What the network itself saw of chosen hosts (the strangers): every frame sent to or by them,
/// cut from the bytes as they were handed to the network (before any wire fault), and squatted
/// addresses. The checker judges what a stranger read and wrote from this record, not from the
/// stranger's own word, so a stranger that misparses what it gets cannot hide a leak.
extension VirtualNetwork {
    /// One frame on a connection with a watched host.
    package struct WatchedFrame: Sendable {
        package let time: Int64
        package let from: String
        package let to: String
        /// The frame's type byte; `undecodable` when the bytes did not frame.
        package let type: UInt8
        /// The payload's first bytes (enough for an ERROR's code).
        package let payloadPrefix: [UInt8]

        package static let undecodable: UInt8 = 0xFF

        /// The code of an ERROR frame, if this is one.
        package var errorCode: UInt16? {
            guard type == MessageType.error.rawValue, payloadPrefix.count >= 2 else { return nil }
            return UInt16(payloadPrefix[0]) << 8 | UInt16(payloadPrefix[1])
        }
    }

    /// Records every frame sent to or by `name` from now on.
    package func watch(_ name: String) { watched.insert(name) }

    /// Dials to `address` reach the raw endpoint `endpoint` instead of the host there (a stranger
    /// on the address a node dials: a taken-over IP, a spoofed name), until `unsquat`.
    package func squat(_ address: String, by endpoint: String) {
        precondition(hosts[endpoint]?.endpoint != nil, "\(endpoint) is not a raw endpoint")
        squatters[address] = endpoint
        note("squat \(address) by \(endpoint)")
    }

    package func unsquat(_ address: String) {
        guard squatters.removeValue(forKey: address) != nil else { return }
        note("unsquat \(address)")
    }

    /// Cuts the frames of `bytes`, sent from `end`, with that end's decoder.
    func record(_ bytes: [UInt8], from end: Int, _ connection: Connection) {
        let (from, to) = (connection.name(of: end), connection.name(of: end ^ 1))
        guard !watchBroken.contains(end) else {
            watchedFrames.append(WatchedFrame(time: now, from: from, to: to, type: WatchedFrame.undecodable, payloadPrefix: []))
            return
        }
        var decoder = watchDecoders[end] ?? FrameDecoder()
        do {
            for frame in try decoder.feed(bytes[...]) {
                watchedFrames.append(WatchedFrame(time: now, from: from, to: to, type: frame.type, payloadPrefix: Array(frame.payload.prefix(8))))
            }
            watchDecoders[end] = decoder
        } catch {
            // Nothing after a framing error can be cut reliably: every later send is undecodable.
            watchedFrames.append(WatchedFrame(time: now, from: from, to: to, type: WatchedFrame.undecodable, payloadPrefix: []))
            watchDecoders[end] = nil
            watchBroken.insert(end)
        }
    }
}
