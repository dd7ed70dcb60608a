import Foundation
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// Two nodes in one process writing to one log: every line says which node it is from, by the
/// name the embedder gave or, without one, by role and the start of the node ID.
@Suite struct NodeLogNameTests {
    final class SharedLog: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
    }

    @Test func twoNodesInOneProcessNameThemselvesInEveryLine() throws {
        let directory = TemporaryDirectory("lifesync-names")
        let phonePath = directory.file("phone.sqlite"), watchPath = directory.file("watch.sqlite")
        let phone = try Replica.create(path: phonePath, role: .phone, clock: SystemClock(), random: SystemRandom())
        let watch = try Replica.create(path: watchPath, role: .watch, clock: SystemClock(), random: SystemRandom())
        try LocalPairing.pair([phone, watch])
        try phone.setOwnName("Hall phone")
        let note = try watch.add(json: try JSONValue.parse(#"{"category": "note", "data": {"text": "hi"}}"#))

        let log = SharedLog()
        var configuration = NodeConfiguration()
        configuration.reconnectBase = 100
        let phoneNode = try NodeThread(path: phonePath, configuration: configuration, listen: "127.0.0.1:0", name: "phone") { log.append($0) }
        configuration.peers = [phoneNode.listeningAddress!]
        let watchNode = try NodeThread(path: watchPath, configuration: configuration, listen: nil) { log.append($0) }
        #expect(waitUntil(timeout: 20) { (try? phone.versionStamp(id: note.id)) != nil })
        // Both sides say they are in sync, each under its own name.
        let watchName = NodeServer.defaultName(of: watch.identity.nodeID)
        // Each names the other as a person knows it: by its name and short ID, or without a
        // name by the short ID alone (the phone's name travels in its HELLO).
        #expect(waitUntil(timeout: 10) {
            log.all.contains { $0.hasPrefix("[phone] in sync with \(watchName) (") }
                && log.all.contains { $0.hasPrefix("[\(watchName)] in sync with Hall phone (\(NodeServer.defaultName(of: phone.identity.nodeID))) (") }
        }, "\(log.all)")
        #expect(!log.all.contains { $0.hasPrefix("[phone] ") ? $0.contains(watch.identity.nodeID) : $0.contains(phone.identity.nodeID) },
                "a peer named by its whole node ID: \(log.all)")
        watchNode.stop()
        phoneNode.stop()

        #expect(watchName == "watch_" + watch.identity.nodeID.dropFirst("watch_".count).prefix(8))
        let lines = log.all
        #expect(lines.contains { $0.hasPrefix("[phone] shutting down") } && lines.contains { $0.hasPrefix("[\(watchName)] shutting down") })
        for line in lines {
            #expect(line.hasPrefix("[phone] ") || line.hasPrefix("[\(watchName)] "), "a line without its node's name: \(line)")
        }
    }

    @Test func theDefaultNameIsTheRoleAndTheIDsFirstEightHexDigits() {
        #expect(NodeServer.defaultName(of: "mac_550e8400-e29b-41d4-a716-446655440000") == "mac_550e8400")
        #expect(NodeServer.defaultName(of: "odd") == "odd")
    }
}
