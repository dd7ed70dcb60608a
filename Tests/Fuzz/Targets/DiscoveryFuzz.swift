// libFuzzer target `discovery`: one LAN discovery datagram (PROTOCOL.md §1.3).
//
// Input: the datagram's bytes, as the runtime hands them to `NodeCore.discovered`.
//
// Oracles (any of them traps):
//  - a datagram `Announcement(decoding:)` accepts does not encode back to the same bytes
//    (only the exact shape is accepted), or its encoding does not decode to the same value;
//  - a node that trusts one mac under one key is told to dial anything but that mac's
//    announcement with that key, or stores a discovered node for garbage.
//
// Compiled as one module with all of Sources/LifeSync (see Tests/Fuzz/run.sh); `FuzzMain.swift` calls `fuzzDiscovery`.

private let trustedID = "mac_7c9e6679-7425-40de-944b-e07fc1f90ae7"
private let trustedKey = SHA256.hash(Array("trusted mac".utf8))

private let node: (NodeCore, Replica) = {
    let replica = try! Replica.create(path: ":memory:", role: .phone, clock: ManualClock(milliseconds: 1_795_305_600_000), random: SeededRandom(seed: 1))
    try! replica.trust(TrustedPeer(nodeID: trustedID, role: .mac, fingerprint: trustedKey, trustedAt: replica.now))
    var configuration = NodeConfiguration()
    configuration.dialTrustedPeers = true
    configuration.discovery = true
    return (NodeCore(replica: replica, configuration: configuration, random: SeededRandom(seed: 2), now: 0), replica)
}()
nonisolated(unsafe) private var now: Int64 = 0

private func hex(_ bytes: [UInt8]) -> String { bytes.prefix(160).map { String($0, radix: 16) }.joined(separator: " ") }

func fuzzDiscovery(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let decoded = try? Announcement(decoding: bytes[...])
    if let decoded {
        guard decoded.encoded() == bytes else { fatalError("FUZZ: accepted a non-canonical datagram: \(hex(bytes))") }
        guard (try? Announcement(decoding: decoded.encoded()[...])) == decoded else { fatalError("FUZZ: the encoding does not decode back: \(hex(bytes))") }
    }
    let (core, replica) = node
    let before = (try? replica.discoveredPeers().count) ?? 0
    now += 100_000  // past every rate limit: each input is judged afresh
    for action in core.discovered(packet: bytes[...], from: "10.0.0.1", now: now) {
        if case .connect = action, !(decoded?.nodeID == trustedID && decoded?.fingerprint == trustedKey) {
            fatalError("FUZZ: told to dial for \(decoded.map { "\($0)" } ?? "garbage"): \(hex(bytes))")
        }
    }
    if decoded == nil, ((try? replica.discoveredPeers().count) ?? 0) != before {
        fatalError("FUZZ: garbage was stored as a discovered node: \(hex(bytes))")
    }
    return 0
}
