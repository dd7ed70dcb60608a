import Foundation
import Glibc
import LifeSync
import LifeSyncRuntime

/// What a paired but buggy peer does to a node's resources, for the in-process and the real
/// `serve` tests alike: past its HELLO it floods PINGs without reading, or parks most of a large
/// frame. Every loop bounded in count and time.
extension RawPeer {
    /// A valid HELLO from a fresh mac identity.
    package static func macHello() -> Hello {
        let random = SystemRandom()
        return Hello(nodeID: Identifier.make(role: .mac, random: random), role: .mac, incarnation: Identifier.uuidV4(random: random),
                     capabilities: [.seals, .receivesEntries], clock: HLCTimestamp(milliseconds: 1_795_305_600_000, counter: 0), vector: VersionVector())
    }

    /// A raw peer that `replica` (the node's) trusts, past its HELLO (a fresh mac's).
    package static func helloed(trustedBy replica: Replica, port: UInt16, from source: String? = nil) throws -> RawPeer {
        let hello = macHello()
        let peer = try RawPeer.trusted(as: hello.nodeID, by: replica, port: port, from: source)
        peer.send(Message.hello(hello).encoded())
        return peer
    }

    /// The header of a frame of `length` bytes (type byte included) of type `type`, with no payload.
    package static func frameHeader(length: Int, type: MessageType) -> [UInt8] {
        [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF), type.rawValue]
    }

    /// Each of `flooders` sends PINGs, never reading a PONG, until `bytesEach` went, its
    /// connection failed, or the node took nothing from any of them for a second (it stopped
    /// reading); `seconds` at most. The kernel's socket buffers take a few MiB of PINGs and
    /// PONGs: only beyond those does the node have to queue. Returns the bytes each sent.
    package static func floodPings(_ flooders: [RawPeer], bytesEach: Int, seconds: Double = 30) -> [Int] {
        let burst = Array([[UInt8]](repeating: Message.ping(nonce: 7).encoded(), count: 4096).joined())
        return sendUntilStalled(flooders, bytesEach: bytesEach, seconds: seconds) { sent in burst[(sent % burst.count)...] }
    }

    /// Each of `peers` announces a BATCH of `frameLength` bytes and sends all of it but the last
    /// `withheld` bytes, or until the node took nothing from any of them for a second; 30 s at
    /// most. Returns the bytes each sent (the header included).
    package static func parkFrames(_ peers: [RawPeer], frameLength: Int, withheld: Int) -> [Int] {
        let header = frameHeader(length: frameLength, type: .batch)
        let filler = [UInt8](repeating: 0, count: 256 << 10)
        return sendUntilStalled(peers, bytesEach: Framing.headerSize + frameLength - withheld, seconds: 30) { sent in
            sent < header.count ? header[sent...] : filler[...]
        }
    }

    /// Sends to all of `peers` round-robin, without blocking, what `next` gives for the bytes
    /// sent so far, until `bytesEach` went to each or its connection failed, or none took anything
    /// for a second; `seconds` at most.
    static func sendUntilStalled(_ peers: [RawPeer], bytesEach: Int, seconds: Double, next: (Int) -> ArraySlice<UInt8>) -> [Int] {
        let deadline = Date().addingTimeInterval(seconds)
        var sent = [Int](repeating: 0, count: peers.count), failed = Set<Int>(), stalledSince: Date?
        for _ in 0..<1_000_000 where Date() < deadline {
            let sending = peers.indices.filter { sent[$0] < bytesEach && !failed.contains($0) }
            if sending.isEmpty { break }
            var moved = false
            for i in sending {
                guard let n = peers[i].trySend(next(sent[i]).prefix(bytesEach - sent[i])) else { failed.insert(i); continue }
                if n > 0 { sent[i] += n; moved = true }
            }
            if moved { stalledSince = nil; continue }
            if let since = stalledSince, Date().timeIntervalSince(since) > 1 { break }
            if stalledSince == nil { stalledSince = Date() }
            usleep(2_000)
        }
        return sent
    }
}
