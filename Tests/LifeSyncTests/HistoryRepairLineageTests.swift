import Foundation
import Testing
@testable import LifeSync
import TestSupport

/// A device restored whole can start another incarnation before it meets a peer that holds its
/// old history (a rollback a peer's HELLO told of, PROTOCOL.md §7.2.2). Its writes there saw its
/// forked ones; when the repair moves the forked writes, those writes follow them.
extension HistoryRepairTests {
    static func text(_ value: String) -> JSONValue { .object([("data", .object([("text", .string(value))]))]) }

    /// The mac's old history edits the entry at #2 ("two", on the phone only); restored whole, it
    /// edits it again at #2 ("three"), starts another incarnation, and edits it once more
    /// ("four", having seen "three" and never "two"). Kept as it was, "four" named #2 of the
    /// forked origin, which after the repair is the phone's "two": "two" read as seen and was
    /// superseded without a trace on every replica (restore seed 179 with hostile peers, where
    /// the moved writes read as lost instead). Moved with the forked writes, "four" names their
    /// new numbers, and "two" stays as the conflict it is.
    @Test func writesOfALaterIncarnationFollowTheForkedWritesTheySaw() throws {
        let directory = TemporaryDirectory()
        let mac = try Device(.mac, seed: 23, in: directory)
        let phone = try Device(.phone, seed: 24, in: directory)
        let id = try mac.add("one")
        Self.sync(mac.replica, phone.replica)
        try mac.takeBackup()
        mac.clock.advance(by: 1_000)
        try mac.replica.update(id: id, patch: Self.text("two"))
        Self.sync(mac.replica, phone.replica)
        try mac.restoreWhole()
        let forked = mac.replica.identity.incarnation
        mac.clock.advance(by: 1_000)
        try mac.replica.update(id: id, patch: Self.text("three"))
        let later = try mac.replica.rotateIncarnation()
        mac.clock.advance(by: 1_000)
        try mac.replica.update(id: id, patch: Self.text("four"))

        let events = Self.sync(mac.replica, phone.replica)
        let repair = try #require(Self.repairs(events[.a]).first)
        #expect(repair.origin == forked && repair.fork == 1)
        #expect(repair.reissued.map(\.old.origin) == [later], "the later incarnation's write moved; the forked one it superseded is held nowhere")
        for device in [mac, phone] {
            #expect(try device.replica.entry(id: id).data.text == "four", "on \(device.replica.identity.nodeID)")
            #expect(try device.replica.conflicts().map { $0.loserEntry?.data.text } == ["two"], "on \(device.replica.identity.nodeID)")
        }
        #expect(try mac.replica.canonicalHash() == phone.replica.canonicalHash())
        let again = Self.sync(mac.replica, phone.replica)
        #expect(Self.repairs(again[.a]).isEmpty && Self.repairs(again[.b]).isEmpty, "nothing left to repair")
    }
}

extension HistoryRepairTests {
    /// A replica from before the lineage was kept (schema 28) takes its own incarnations in the
    /// order it started them, read from the HLC of the first write it holds of each (their IDs
    /// are random, so their text order says nothing), with the current one last.
    @Test func aReplicaFromBeforeTakesItsIncarnationsInTheOrderItStartedThem() throws {
        let directory = TemporaryDirectory()
        let device = try Device(.mac, seed: 25, in: directory)
        var started = [device.replica.identity.incarnation]
        for round in 0..<5 {
            _ = try device.add("under incarnation \(round)")
            if round < 4 { started.append(try device.replica.rotateIncarnation()) }
        }
        #expect(try Self.lineage(device.replica) == started)
        try device.replica.database.execute("DROP TABLE own_incarnations; PRAGMA user_version = 28")
        let reopened = try Replica(path: device.path, clock: device.clock, random: SeededRandom(seed: 26))
        #expect(try reopened.database.userVersion == Schema.currentVersion)
        #expect(try Self.lineage(reopened) == started, "text order would be \(started.dropLast().sorted() + [started.last!])")
    }

    static func lineage(_ replica: Replica) throws -> [String] {
        try replica.database.rows("SELECT origin FROM own_incarnations ORDER BY started") { $0.string(0) }
    }
}
