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
