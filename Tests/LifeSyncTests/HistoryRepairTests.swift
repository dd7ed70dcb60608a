import Foundation
import Testing
@testable import LifeSync
import LifeSyncRuntime
import TestSupport

/// Issue 25 §1 with the write mark restored too (PROTOCOL.md §7.2.3): a device put back whole from
/// its backup writes again at numbers its old history spent. Compared at the handshake, its
/// writes since the restore move to a new incarnation and the old ones come back; every write,
/// before and after the restore, ends up on every replica.
@Suite struct HistoryRepairTests {
    final class Marks: WriteMarkStore {
        var marks: [String: WriteMark] = [:]
        func mark(nodeID: String) -> WriteMark? { marks[nodeID] }
        func record(_ mark: WriteMark, nodeID: String) { marks[nodeID] = mark }
    }

    /// A device whose replica lives in a file, with its write marks beside it, that can be copied
    /// aside and put back whole (replica and marks together).
    final class Device {
        let path: String
        let clock = ManualClock(milliseconds: ReplicaFixtures.epoch)
        let marks = Marks()
        var replica: Replica
        private var backup: (database: Database, marks: [String: WriteMark])?
        private let directory: TemporaryDirectory

        init(_ role: Role, seed: UInt64, in directory: TemporaryDirectory) throws {
            self.directory = directory
            path = directory.path + "/\(role.rawValue)-\(seed).sqlite"
            replica = try ReplicaFixtures.replica(role: role, seed: seed, clock: clock, path: path)
            replica.writeMarks = marks
        }

        func add(_ text: String) throws -> String {
            clock.advance(by: 1_000)
            return try replica.add(json: ReplicaFixtures.entryJSON(text: text)).id
        }

        func takeBackup() throws {
            let copy = try Database(path: path + ".backup")
            try replica.database.copy(into: copy)
            backup = (copy, marks.marks)
        }

        /// Puts the replica and its marks back as the backup had them (the clock goes on).
        func restoreWhole() throws {
            guard let backup else { return }
            try backup.database.copy(into: replica.database)
            marks.marks = backup.marks
            replica = try Replica(path: path, clock: clock, random: SeededRandom(seed: 99))
            TestKeys.adopt(replica)
            replica.writeMarks = marks
        }

        func texts() throws -> Set<String> { Set(try replica.entries(matching: EntryQuery()).compactMap { $0.data.text }) }
    }

    /// Syncs two replicas through a session pair until quiet; returns its events.
    @discardableResult
    static func sync(_ a: Replica, _ b: Replica) -> [SessionPair.Side: [SessionEvent]] {
        let pair = SessionPair(a, b)
        pair.start()
        #expect(pair.run())
        #expect(pair.closed.isEmpty, "closed: \(pair.closed)")
        return [.a: pair.events.filter { $0.side == .a }.map(\.event), .b: pair.events.filter { $0.side == .b }.map(\.event)]
    }

    static func repairs(_ events: [SessionEvent]?) -> [HistoryRepair] {
        (events ?? []).compactMap { if case .historyRepaired(let repair) = $0 { return repair }; return nil }
    }

    /// Every device holds `texts`, lists no conflict, and all hold the same state.
    static func expectConverged(_ devices: [Device], on texts: Set<String>) throws {
        for device in devices {
            #expect(try device.texts() == texts, "on \(device.replica.identity.nodeID)")
            #expect(try device.replica.conflicts().isEmpty, "on \(device.replica.identity.nodeID)")
        }
        let first = try devices[0].replica.canonicalHash()
        for device in devices.dropFirst() { #expect(try device.replica.canonicalHash() == first, "on \(device.replica.identity.nodeID)") }
    }

    /// The issue's reproduction, mark included: "one" synced; a backup; "two" synced; the whole
    /// device put back; "three" written. The phone gets "three", the mac gets "two" back, and
    /// both hold the same state.
    @Test func aDeviceRestoredWholeSendsItsNewWritesAndGetsItsLostOnesBack() throws {
        let directory = TemporaryDirectory()
        let mac = try Device(.mac, seed: 1, in: directory)
        let phone = try Device(.phone, seed: 2, in: directory)
        _ = try mac.add("one")
        Self.sync(mac.replica, phone.replica)
        try mac.takeBackup()
        _ = try mac.add("two")
        Self.sync(mac.replica, phone.replica)
        let forked = mac.replica.identity.incarnation
        try mac.restoreWhole()
        #expect(try mac.replica.restoreEvidence() == nil, "nothing local tells the device was restored")
        _ = try mac.add("three")
        #expect(mac.replica.identity.incarnation == forked, "the write reused a number the phone holds")

        let events = Self.sync(mac.replica, phone.replica)
        let repairs = Self.repairs(events[.a])
        #expect(repairs.count == 1 && repairs.first?.origin == forked && repairs.first?.fork == 1 && repairs.first?.reissued.count == 1)
        #expect(mac.replica.identity.incarnation != forked)
        #expect(try phone.texts() == ["one", "two", "three"])
        #expect(try mac.texts() == ["one", "two", "three"])
        #expect(try mac.replica.canonicalHash() == phone.replica.canonicalHash())
        #expect(try mac.replica.conflicts().isEmpty && phone.replica.conflicts().isEmpty)

        // Once repaired, later sessions find nothing to repair, and writes flow as usual.
        _ = try mac.add("four")
        let again = Self.sync(mac.replica, phone.replica)
        #expect(Self.repairs(again[.a]).isEmpty && Self.repairs(again[.b]).isEmpty)
        #expect(try phone.texts() == ["one", "two", "three", "four"])
    }

    /// A re-issued write keeps its HLC: an edit another device made after it still wins.
    @Test func aReissuedWriteKeepsItsPlaceInTime() throws {
        let directory = TemporaryDirectory()
        let mac = try Device(.mac, seed: 3, in: directory)
        let phone = try Device(.phone, seed: 4, in: directory)
        let id = try mac.add("draft")
        Self.sync(mac.replica, phone.replica)
        try mac.takeBackup()
        _ = try mac.add("lost with the restore")
        Self.sync(mac.replica, phone.replica)
        try mac.restoreWhole()
        mac.clock.advance(by: 1_000)
        try mac.replica.update(id: id, patch: .object([("data", .object([("text", .string("edited on the restored mac"))]))]))
        // The phone, offline meanwhile, edits the same text later.
        phone.clock.advance(by: 60_000)
        try phone.replica.update(id: id, patch: .object([("data", .object([("text", .string("edited on the phone, later"))]))]))
        Self.sync(mac.replica, phone.replica)
        for device in [mac, phone] {
            #expect(try device.replica.entry(id: id).data.text == "edited on the phone, later")
            #expect(try device.replica.conflicts().map { $0.loserEntry?.data.text } == ["edited on the restored mac"])
        }
        #expect(try mac.replica.canonicalHash() == phone.replica.canonicalHash())
    }

    /// `device` writes "one" (both others get it), is backed up, writes "two" (only `old` gets
    /// it), is restored whole, and writes "three" under the number "two" took (only `other` gets it).
    static func fork(_ device: Device, old: Device, other: Device) throws {
        _ = try device.add("one")
        sync(device.replica, old.replica)
        sync(device.replica, other.replica)
        try device.takeBackup()
        _ = try device.add("two")
        sync(device.replica, old.replica)
        try device.restoreWhole()
        _ = try device.add("three")
        sync(device.replica, other.replica)
    }

    /// Three devices, each a role and a seed, forked as `fork` leaves them.
    static func forked(_ device: (Role, UInt64), old: (Role, UInt64), other: (Role, UInt64)) throws -> (device: Device, old: Device, other: Device) {
        let directory = TemporaryDirectory()
        let made = (try Device(device.0, seed: device.1, in: directory), try Device(old.0, seed: old.1, in: directory),
                    try Device(other.0, seed: other.1, in: directory))
        try fork(made.0, old: made.1, other: made.2)
        return made
    }

    /// The relay case: the restored device's forked write reaches a replica that lacked the old
    /// history before the device meets one that holds it. The repair it then makes travels with
    /// its next HISTORY: the other replica moves the forked write where the device moved it and
    /// takes the old history back. All three converge; nothing is lost.
    @Test func aForkedWriteThatReachedAnotherReplicaFollowsTheRepair() throws {
        let (hub, old, other) = try Self.forked((.phone, 5), old: (.mac, 6), other: (.mac, 7))
        #expect(try other.texts() == ["one", "three"])
        let repaired = Self.sync(hub.replica, old.replica)
        #expect(Self.repairs(repaired[.a]).count == 1)
        Self.sync(hub.replica, other.replica)
        try Self.expectConverged([hub, old, other], on: ["one", "two", "three"])
    }

    /// The repair is signed by the restored device and relayed: a replica that got the forked
    /// write from one peer and the old one from another (a clash, kept) follows the repair it
    /// hears of from a third, without meeting the device again.
    @Test func aSignedRepairIsRelayedToReplicasThatNeverMeetTheDeviceAgain() throws {
        let (device, far, near) = try Self.forked((.mac, 10), old: (.mac, 12), other: (.phone, 11))
        Self.sync(near.replica, far.replica)
        #expect(try near.texts() == ["one", "three"] && far.texts() == ["one", "two"], "each kept its own and listed the other as a clash")
        let repaired = Self.sync(device.replica, far.replica)
        #expect(Self.repairs(repaired[.a]).count == 1)
        // Only the device's word counts: a repair whose signature does not verify is ignored.
        var forged = try #require(try far.replica.repairs(for: near.replica.replicaVector()).first)
        forged.signature[10] ^= 1
        let ignored = try near.replica.takeHistory(History(vector: VersionVector(), incarnation: far.replica.identity.incarnation, repairs: [forged]),
                                                   sendsRecordings: true)
        #expect(ignored.learned.isEmpty && ignored.movedForPeer == 0)
        Self.sync(far.replica, near.replica)
        try Self.expectConverged([near, far, device], on: ["one", "two", "three"])
    }

    /// Two relays that each hold one of the histories find the fork between them, though neither
    /// is the device's: the one that holds the device's new writes carries the fork to it, the
    /// device repairs, and everything converges without the device ever meeting the relay that
    /// holds its old writes (restore seed 5663, PROTOCOL.md §7.2.4).
    @Test func aForkTwoRelaysFindReachesTheDeviceThroughTheOneThatAgreesWithIt() throws {
        let (device, far, near) = try Self.forked((.phone, 13), old: (.mac, 15), other: (.mac, 14))
        let plain = Self.sync(device.replica, near.replica)
        #expect(Self.repairs(plain[.a]).isEmpty, "the device and the relay that agrees with it see no fork by themselves")
        Self.sync(near.replica, far.replica)
        let origin = try #require(try near.replica.knownForks(for: device.replica.replicaVector()).first)
        #expect(try far.replica.knownForks(for: device.replica.replicaVector()).first == origin, "both relays keep the fork")
        let told = Self.sync(device.replica, near.replica)
        #expect(Self.repairs(told[.a]).count == 1 && Self.repairs(told[.a]).first?.fork == origin.agreed)
        #expect(try near.replica.knownForks(for: device.replica.replicaVector()).isEmpty, "the repair settles the fork")
        Self.sync(near.replica, far.replica)
        Self.sync(device.replica, near.replica)
        try Self.expectConverged([near, far, device], on: ["one", "two", "three"])
        #expect(try far.replica.knownForks(for: device.replica.replicaVector()).isEmpty)
    }

    /// A relay that holds the device's old history, then a forked write relayed past its end,
    /// keeps the old writes covered when it takes the repair: it is the only replica left with
    /// them, and going back to the fork it would never send them (restore seed 5663 with two
    /// phones, PROTOCOL.md §7.2.3 step 1).
    @Test func aRelayKeepsCoveringTheOldHistoryItAloneHolds() throws {
        let (device, far, near) = try Self.forked((.mac, 17), old: (.phone, 19), other: (.phone, 18))
        _ = try device.add("four")
        Self.sync(device.replica, near.replica)
        Self.sync(near.replica, far.replica)
        #expect(try far.texts() == ["one", "two", "four"], "the old #2, then the forked #3")
        let told = Self.sync(device.replica, near.replica)
        #expect(Self.repairs(told[.a]).first?.reissued.count == 2)
        Self.sync(near.replica, far.replica)
        Self.sync(device.replica, near.replica)
        try Self.expectConverged([near, far, device], on: ["one", "two", "three", "four"])
    }

    /// A device restored whole to a copy older than one of its incarnations learns of it as a
    /// peer gives back its first write, in a session that stays open; the next write, given back
    /// by another peer, is its own (no seal kept), and the open session relays it sealed as its
    /// own (restore seed 5576 with two phones: read as another node's write with no seal, it was
    /// passed over, `through` covering it, and the first peer never got it).
    @Test func writesOfAForgottenIncarnationGivenBackAreRelayedInSessionsAlreadyOpen() throws {
        let directory = TemporaryDirectory()
        let device = try Device(.phone, seed: 20, in: directory)
        let mac = try Device(.mac, seed: 21, in: directory)
        let other = try Device(.phone, seed: 22, in: directory)
        _ = try device.add("one")
        Self.sync(device.replica, mac.replica)
        try device.takeBackup()
        try device.replica.rotateIncarnation()  // as a restore the replica could tell does (§7.2.2)
        _ = try device.add("two")
        Self.sync(device.replica, other.replica)
        Self.sync(device.replica, mac.replica)
        _ = try device.add("three")
        Self.sync(device.replica, mac.replica)
        try device.restoreWhole()
        let open = SessionPair(device.replica, other.replica)
        open.start()
        #expect(open.run() && open.closed.isEmpty)
        #expect(try device.texts() == ["one", "two"], "the other phone gave back the forgotten incarnation's first write")
        Self.sync(device.replica, mac.replica)
        #expect(open.replicaChanged() && open.closed.isEmpty)
        for replica in [device, mac, other] { #expect(try replica.texts() == ["one", "two", "three"], "on \(replica.replica.identity.nodeID)") }
        #expect(try other.replica.canonicalHash() == mac.replica.canonicalHash())
    }

    /// A device restored whole takes back writes of its own history past what it held, from a
    /// peer: it says so (`repairsLearned`, above the number it held), and its node ends its other
    /// sessions whose peer holds that origin further, so that their next handshake compares the
    /// longer history. (Two-phone restore seed 242, with relay turns that opened a session to the
    /// other phone before the mac gave the device its writes back: the other phone held other
    /// writes under those numbers, both vectors covered both, and nothing compared them again.)
    @Test func writesOfOurOwnHistoryTakenBackEndSessionsThatComparedLess() throws {
        let directory = TemporaryDirectory()
        let device = try Device(.phone, seed: 30, in: directory)
        let mac = try Device(.mac, seed: 31, in: directory)
        _ = try device.add("one")
        try device.takeBackup()
        _ = try device.add("two")
        _ = try device.add("three")
        Self.sync(device.replica, mac.replica)
        let origin = device.replica.identity.incarnation
        try device.restoreWhole()
        let events = Self.sync(device.replica, mac.replica)
        #expect(try device.texts() == ["one", "two", "three"])
        let announced = (events[.a] ?? []).flatMap { event -> [HistoryFork] in if case .repairsLearned(let forks) = event { return forks }; return [] }
        #expect(announced.contains(HistoryFork(origin: origin, fork: 1)), "announced: \(announced)")
    }

    /// A fork list moves an owner only when one of the two digests is its own write: made-up
    /// digests (a buggy peer) repair nothing; its real digest beside another repairs from the
    /// agreed point (PROTOCOL.md §7.2.4 step 4).
    @Test func aForkNamingNoneOfOurWritesMovesNothing() throws {
        let directory = TemporaryDirectory()
        let device = try Device(.phone, seed: 16, in: directory)
        for text in ["one", "two", "three"] { _ = try device.add(text) }
        let origin = device.replica.identity.incarnation
        guard case .digest(let second)? = try device.replica.ownDigest(origin, 2) else { Issue.record("no digest of #2"); return }
        func told(_ digests: (SHA256.Digest, SHA256.Digest)) throws -> HistoryOutcome {
            try device.replica.takeHistory(History(vector: try device.replica.replicaVector(), incarnation: device.replica.identity.incarnation,
                                                   forks: [History.Fork(origin: origin, agreed: 1, sequence: 2, digests: digests)]),
                                           sendsRecordings: true)
        }
        let madeUp = (SHA256.hash(Array("not a write".utf8)), SHA256.hash(Array("nor this".utf8)))
        #expect(try told(madeUp).repairs.isEmpty)
        #expect(device.replica.identity.incarnation == origin)
        let repaired = try told((second, madeUp.0))
        #expect(repaired.repairs.map(\.fork) == [1] && repaired.repairs.first?.reissued.count == 2)
        #expect(try device.texts() == ["one", "two", "three"])
    }

    /// Ordinary sessions between replicas that never forked repair nothing: the written log
    /// matches every probe.
    @Test func replicasThatNeverForkedRepairNothing() throws {
        let directory = TemporaryDirectory()
        let mac = try Device(.mac, seed: 8, in: directory)
        let phone = try Device(.phone, seed: 9, in: directory)
        for round in 0..<5 {
            let id = try mac.add("mac \(round)")
            _ = try phone.add("phone \(round)")
            try mac.replica.update(id: id, patch: .object([("data", .object([("text", .string("mac \(round), edited"))]))]))
            let events = Self.sync(mac.replica, phone.replica)
            #expect(Self.repairs(events[.a]).isEmpty && Self.repairs(events[.b]).isEmpty)
        }
        #expect(try mac.replica.canonicalHash() == phone.replica.canonicalHash())
    }
}
