import LifeSync
import Testing
import TestSupport

/// Rows damaged on disk or by hand (issue: local damage). One broken row used to stop all
/// replication to a peer and make `list` fail; a damaged vector row crashed `serve` and `status`.
@Suite struct DamagedRowTests {
    static func phoneWith(_ count: Int, seed: UInt64) throws -> (Replica, [LogEntry]) {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: seed)
        var entries: [LogEntry] = []
        for i in 0..<count { entries.append(try phone.add(json: ReplicaFixtures.entryJSON(text: "entry \(i)"))) }
        return (phone, entries)
    }

    /// The IDs the first side reported as damaged rows passed over.
    static func skipped(_ link: SessionPair) -> [String] {
        link.events.flatMap { item -> [String] in
            if item.side == .a, case .damagedRowsSkipped(let ids) = item.event { return ids }
            return []
        }
    }

    @Test func aDamagedRowIsPassedOverAndTheRestFlows() throws {
        let (phone, entries) = try Self.phoneWith(300, seed: 71)
        let brokenJSON = entries[10].id, negativeClock = entries[200].id
        try phone.database.run("UPDATE entries SET data = '{\"text\": ' WHERE id = ?", [.text(brokenJSON)])
        try phone.database.run("UPDATE entries SET hlc = -5 WHERE id = ?", [.text(negativeClock)])
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 72)
        var configuration = SessionConfiguration()
        configuration.batchMaximumChanges = 50
        let link = SessionPair(phone, mac, configuration: configuration)
        link.start()
        #expect(link.run())
        #expect(link.closed.isEmpty, "\(link.closed)")
        #expect(try mac.liveEntryCount() == 298)
        let reported = Self.skipped(link)
        #expect(Set(reported) == [brokenJSON, negativeClock])

        var damaged: [String] = []
        let listed = try phone.entries(matching: EntryQuery(limit: 1_000), damaged: &damaged)
        #expect(listed.count == 299)
        #expect(damaged == [brokenJSON])
    }

    /// A row's vector cut short, written as text or naming an origin number the replica does
    /// not have, and a row naming such an origin: each reads back damaged, never a trap.
    @Test func aDamagedOriginNumberOrVectorIsPassedOver() throws {
        let (phone, entries) = try Self.phoneWith(100, seed: 76)
        let cutShort = entries[5].id, text = entries[50].id, unknown = entries[70].id, unknownOrigin = entries[90].id
        try phone.database.run("UPDATE entries SET vector = x'0181' WHERE id = ?", [.text(cutShort)])
        try phone.database.run("UPDATE entries SET vector = 'o=1' WHERE id = ?", [.text(text)])
        try phone.database.run("UPDATE entries SET vector = x'7f05' WHERE id = ?", [.text(unknown)])
        try phone.database.run("UPDATE entries SET origin_no = 999 WHERE id = ?", [.text(unknownOrigin)])
        for id in [cutShort, text, unknown, unknownOrigin] {
            #expect(throws: ReplicaError.self) { _ = try phone.storedVersion(id: id) }
        }
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 77)
        let link = SessionPair(phone, mac, configuration: SessionConfiguration())
        link.start()
        #expect(link.run())
        #expect(link.closed.isEmpty, "\(link.closed)")
        // The row of an unknown origin is in no origin's log: it is not sent, nor reported.
        #expect(try mac.liveEntryCount() == 96)
        let reported = Self.skipped(link)
        #expect(Set(reported) == [cutShort, text, unknown])
    }

    @Test func aDamagedVectorRowIsAClearErrorNotATrap() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 73)
        try phone.add(json: ReplicaFixtures.entryJSON(text: "x"))
        try phone.database.run("UPDATE replica_vector SET seq = -1 WHERE origin = ?", [.text(phone.identity.incarnation)])
        #expect(throws: ReplicaError.self) { _ = try phone.replicaVector() }
        do { _ = try phone.replicaVector() } catch { #expect("\(error)".hasPrefix("replica damaged:"), "\(error)") }
        let session = SyncSession(replica: phone, configuration: .init(), now: 0)
        _ = session.start(now: 0)  // no trap
    }

    @Test func aDamagedChecksumColumnIsAClearErrorNotATrap() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 74)
        let id = Identifier.make(role: .phone, random: SeededRandom(seed: 75))
        try phone.addRecording(Recording(id: id, fileName: id + ".m4a", size: 10, sha256: SHA256.hash([UInt8](repeating: 7, count: 10)),
                                         mediaType: "audio/mp4", entryID: nil, originNode: phone.identity.nodeID, createdAt: phone.now), signedBy: TestKeys.key(for: phone.identity.nodeID))
        #expect(try phone.recording(id: id) != nil)
        try phone.database.run("UPDATE recordings SET sha256 = 'not a checksum' WHERE id = ?", [.text(id)])
        do {
            _ = try phone.recording(id: id)
            Issue.record("a damaged checksum read back")
        } catch {
            #expect("\(error)".hasPrefix("replica damaged:") && "\(error)".contains("sha256"), "\(error)")
        }
    }
}
