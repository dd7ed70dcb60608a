import Foundation
import Glibc
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// A real `lifesync serve` process under a stream of mutated frames, before and after a
/// handshake, from many connections (issue: a core no peer can crash). Afterwards it must be
/// alive, its memory bounded, and a legitimate peer must still sync both ways with it.
///
/// `LIFESYNC_HOSTILE_SECONDS` sets how long the stream runs (default 6; a longer soak is the
/// same test with a larger number).
@Suite(.serialized) struct HostileServeTests {
    /// Whole frames to mutate: every vector of Protocol/vectors (valid and malformed).
    static func seedFrames() throws -> [[UInt8]] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Protocol/vectors")
        var frames: [[UInt8]] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() where file.hasSuffix(".json") {
            let document = try JSONValue.parse(try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8))
            guard case .array(let items)? = document["vectors"] else { continue }
            for item in items {
                if case .string(let hex)? = item["hex"], let bytes = Hex.decode(hex) { frames.append(bytes) }
            }
        }
        return frames
    }

    /// One to three mutations of a seed frame: bit flips, overwritten bytes, truncation,
    /// repetition, a rewritten length prefix or type byte, or two frames spliced.
    static func mutate(_ frames: [[UInt8]], _ random: SeededRandom) -> [UInt8] {
        func pick() -> [UInt8] { frames[Int(random.next(below: UInt64(frames.count)))] }
        var bytes = pick()
        for _ in 0...random.next(below: 3) where !bytes.isEmpty {
            let at = Int(random.next(below: UInt64(bytes.count)))
            switch random.next(below: 8) {
            case 0: bytes[at] ^= UInt8(1) << UInt8(random.next(below: 8))
            case 1: bytes[at] = UInt8(truncatingIfNeeded: random.nextUInt64())
            case 2: bytes = Array(bytes.prefix(at))
            case 3: bytes += bytes[at...]
            case 4 where bytes.count >= 4:
                let length = UInt32(truncatingIfNeeded: random.nextUInt64() >> UInt64(random.next(below: 40)))
                for i in 0..<4 { bytes[i] = UInt8(truncatingIfNeeded: length >> (24 - 8 * UInt32(i))) }
            case 5 where bytes.count >= 5: bytes[4] = UInt8(truncatingIfNeeded: random.next(below: 0x20))
            case 6: bytes += pick()
            default: bytes.insert(UInt8(truncatingIfNeeded: random.nextUInt64()), at: at)
            }
        }
        return bytes
    }

    @Test(.timeLimit(.minutes(5)))
    func aServeProcessSurvivesMutatedFramesAndStillSyncs() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["LIFESYNC_HOSTILE_SECONDS"] ?? "") ?? 6
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        try phone.start()
        let pid = try #require(phone.process?.pid)
        let random = SeededRandom(seed: 2026)
        let frames = try Self.seedFrames()
        try #require(frames.count > 50)

        // Eight identities the phone trusts (paired, but hostile or buggy), and strangers.
        let store = try Replica(path: phone.db, clock: SystemClock(), random: SystemRandom())
        let trusted: [(key: NodeKey, nodeID: String, role: Role)] = try (0..<8).map { n in
            let role: Role = [.watch, .phone, .mac][n % 3]
            let nodeID = Identifier.make(role: role, random: random)
            let key = try NodeKey.generate(nodeID: nodeID)
            try store.trust(TrustedPeer(nodeID: nodeID, role: role, fingerprint: key.fingerprint, trustedAt: store.now))
            return (key, nodeID, role)
        }
        var sent = 0, connections = 0
        let start = Date()
        while Date().timeIntervalSince(start) < seconds && connections < 20_000 {
            connections += 1
            // Half the connections first complete a handshake as a trusted node, so the session's
            // later states see the mutations too; the rest (strangers) mutate from the first byte.
            let identity = random.next(below: 2) == 0 ? trusted[Int(random.next(below: 8))] : nil
            guard let peer = try? RawPeer(port: phone.port, key: identity?.key) else { continue }
            if let identity {
                let hello = Hello(nodeID: identity.nodeID, role: identity.role, incarnation: Identifier.uuidV4(random: random),
                                  capabilities: Capabilities(rawValue: UInt32(random.next(below: 8))).union(.seals), clock: .zero, vector: VersionVector())
                peer.send(Message.hello(hello).encoded())
                sent += 1
            }
            for _ in 0..<(1 + random.next(below: 12)) {
                peer.send(Self.mutate(frames, random))
                sent += 1
            }
        }
        let elapsed = Date().timeIntervalSince(start)
        #expect(phone.isRunning, "the node died under the stream:\n\(phone.allOutput.suffix(3000))")
        let rss = ProcessMemory.resident(pid)
        print("hostile stream: \(sent) mutated frames on \(connections) connections in \(String(format: "%.1f", elapsed)) s "
              + "(\(Int(Double(sent) / elapsed)) frames/s); phone RSS afterwards \(String(format: "%.0f", rss)) MiB")
        #expect(rss > 0 && rss < 150, "phone RSS \(rss) MiB after the stream")

        // A legitimate peer still syncs both ways.
        let mac = try group.node("mac", role: "mac")
        try mac.start(peers: [phone.address])
        let fromPhone = try LifeSyncBinary.run(["add", "--db", phone.db, "--text", "written on the phone after the storm"])
        let fromMac = try LifeSyncBinary.run(["add", "--db", mac.db, "--text", "written on the mac after the storm"])
        #expect(fromPhone.status == 0 && fromMac.status == 0)
        let phoneID = fromPhone.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let macID = fromMac.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let synced = eventually(timeout: 20) {
            phone.scalar("SELECT count(*) FROM entries WHERE id = '\(macID)'") == 1
                && mac.scalar("SELECT count(*) FROM entries WHERE id = '\(phoneID)'") == 1
        }
        #expect(synced, "phone:\n\(phone.allOutput.suffix(2000))\nmac:\n\(mac.allOutput.suffix(2000))")
        #expect(phone.isRunning && mac.isRunning)
    }
}
