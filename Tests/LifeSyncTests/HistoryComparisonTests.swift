import Testing
@testable import LifeSync

/// The rule that tells where a replica's history of one of its origins forked from a peer's
/// (PROTOCOL.md §7.2.3), and the HISTORY message's wire form (§5.10).
@Suite struct HistoryComparisonTests {
    typealias Verdict = HistoryComparison.Verdict

    static func compare(count: UInt64, top: UInt64, logStart: UInt64 = 1, _ probes: [(UInt64, Verdict)], held: [UInt64] = []) -> UInt64? {
        HistoryComparison(count: count, top: top, logStart: logStart, probes: probes.map { (sequence: $0.0, verdict: $0.1) })
            .forkPoint { floor in held.sorted().first { $0 > floor } }
    }

    @Test func historiesThatAgreeDoNotFork() {
        #expect(Self.compare(count: 10, top: 10, [(8, .match), (9, .match), (10, .match)], held: [3, 10]) == nil)
        // The peer holds more: our writes are a prefix of its history (restored, nothing written since).
        #expect(Self.compare(count: 6, top: 15, [(4, .match), (5, .match), (6, .match)], held: [6]) == nil)
        // We hold more: the peer's history is a prefix of ours.
        #expect(Self.compare(count: 15, top: 6, [(5, .match), (6, .match)], held: [6, 12, 15]) == nil)
    }

    @Test func aMismatchForksBelowIt() {
        #expect(Self.compare(count: 8, top: 9, [(5, .match), (6, .match), (7, .mismatch), (8, .mismatch)]) == 6)
        // Agreement above the first difference proves nothing: the fork is below it.
        #expect(Self.compare(count: 9, top: 9, [(3, .match), (5, .mismatch), (7, .match)]) == 3)
        #expect(Self.compare(count: 4, top: 9, [(2, .mismatch), (4, .mismatch)]) == 0)
    }

    /// A write the peer knows at a number our log would know, and we never made nor took in:
    /// ours there is another (made and replaced before it left, since the restore).
    @Test func anUnknownWriteForksOnlyWhereOurLogWouldKnowIt() {
        #expect(Self.compare(count: 9, top: 9, logStart: 1, [(6, .match), (7, .unknown)]) == 6)
        #expect(Self.compare(count: 9, top: 9, logStart: 8, [(6, .match), (7, .unknown)]) == nil)
    }

    /// Probes above our own count say nothing of our history.
    @Test func probesAboveOurCountAreNotEvidence() {
        #expect(Self.compare(count: 5, top: 9, [(4, .match), (5, .match), (7, .mismatch), (9, .unknown)], held: [5]) == nil)
    }

    /// A write we hold that the peer's vector covers and it has no digest of: it will never ask
    /// for it. (Its old twin was replaced before it left, so the peer never saw it.)
    @Test func aHeldWriteThePeerNeverSawForks() {
        #expect(Self.compare(count: 7, top: 9, [(5, .match), (6, .match)], held: [2, 7]) == 6)
        // Above the peer's top it is simply sent.
        #expect(Self.compare(count: 12, top: 6, [(5, .match), (6, .match)], held: [12]) == nil)
        // Below our log's start it may be a write sent before the log existed.
        #expect(Self.compare(count: 7, top: 9, logStart: 8, [(5, .match), (6, .match)], held: [7]) == nil)
    }

    /// How far a replica's vector still covers an origin after its owner's repair (§7.2.3 step
    /// 1): below the first number where it took the given-up history, down to the last where it
    /// took the other one. A relay that held the old #14-#19 and then the forked #20 keeps
    /// covering #19, for it may be the only replica left with them (restore seed 5663, two phones).
    @Test func aRepairTakesAReplicaBackOnlyBelowTheGivenUpWritesItTook() {
        let old = false, givenUp = true
        #expect(Replica.coveredAfterRepair(fork: 13, took: [14: old, 15: old, 16: old, 17: old, 18: old, 19: old, 20: givenUp]) == 19)
        // Took the forked history from the start: back to the fork, as before.
        #expect(Replica.coveredAfterRepair(fork: 13, took: [14: givenUp, 15: givenUp, 16: old]) == 13)
        // None of the given-up writes taken: the vector stays.
        #expect(Replica.coveredAfterRepair(fork: 13, took: [14: old, 15: old]) == nil)
        #expect(Replica.coveredAfterRepair(fork: 13, took: [:]) == nil)
        // A number nothing tells of (a write superseded before it arrived) goes with the history
        // around it: between two old ones it was taken with them; after the last, not.
        #expect(Replica.coveredAfterRepair(fork: 13, took: [14: old, 16: old, 18: givenUp]) == 16)
        #expect(Replica.coveredAfterRepair(fork: 13, took: [14: old, 17: givenUp]) == 14)
    }

    static let digest = SHA256.Digest(bytes: Array(repeating: 0xAB, count: 32))
    static let origin = "151fe51c-0000-4033-9465-82e19c59ba3c"
    static let movedTo = "151fe51c-0000-4444-a465-82e19c59ba3c"
    static let node = "phone_6f1c2a3b-4d5e-4f60-8a71-92b3c4d5e6f7"
    static let key = [UInt8](repeating: 0x04, count: 91), signature = [UInt8](repeating: 0x05, count: 64)

    static func history(probes: [UInt64] = [3, 7], top: UInt64 = 7, repairs: [History.Repair] = [], forks: [History.Fork] = []) -> History {
        History(vector: VersionVector([(origin, 7)]), incarnation: movedTo,
                origins: [History.Origin(origin: origin, top: top, probes: probes.map { Seal.Member(sequence: $0, digest: digest) })],
                repairs: repairs, forks: forks)
    }

    static let other = SHA256.Digest(bytes: Array(repeating: 0x3C, count: 32))
    static func fork(_ origin: String = origin, agreed: UInt64 = 5, at sequence: UInt64 = 6, _ a: SHA256.Digest = digest, _ b: SHA256.Digest = other) -> History.Fork {
        History.Fork(origin: origin, agreed: agreed, sequence: sequence, digests: (a, b))
    }

    @Test func historyRoundTrips() throws {
        let repair = History.Repair(nodeID: Self.node, origin: Self.origin, fork: 2, movedTo: Self.movedTo, base: 0,
                                    members: [Seal.Member(sequence: 3, digest: Self.digest)], publicKey: Self.key, signature: Self.signature)
        for history in [Self.history(), Self.history(repairs: [repair]), History(vector: VersionVector(), incarnation: Self.movedTo),
                        Self.history(forks: [Self.fork(), Self.fork(Self.movedTo, agreed: 0, at: 1)])] {
            let frame = Message.history(history).encoded()
            #expect(frame[4] == 0x0A)
            #expect(try Message.decode(type: frame[4], payload: frame[5...]) == .history(history))
        }
    }

    @Test func malformedHistoriesAreRefused() {
        func refused(_ history: History) -> Bool {
            let frame = Message.history(history).encoded()
            do { _ = try Message.decode(type: frame[4], payload: frame[5...]); return false } catch { return error.code == .malformed }
        }
        #expect(refused(Self.history(probes: [7, 3])), "probes not ascending")
        #expect(refused(Self.history(probes: [3, 8])), "a probe above the top")
        #expect(refused(Self.history(probes: [])), "an origin without probes")
        #expect(refused(Self.history(probes: Array(1...257), top: 300)), "more than 256 probes")
        let backwards = History.Repair(nodeID: Self.node, origin: Self.origin, fork: 5, movedTo: Self.movedTo, base: 0, members: [Seal.Member(sequence: 5, digest: Self.digest)], publicKey: Self.key, signature: Self.signature)
        #expect(refused(Self.history(repairs: [backwards])), "a member at the fork")
        let inPlace = History.Repair(nodeID: Self.node, origin: Self.origin, fork: 2, movedTo: Self.origin, base: 0, members: [Seal.Member(sequence: 3, digest: Self.digest)], publicKey: Self.key, signature: Self.signature)
        #expect(refused(Self.history(repairs: [inPlace])), "moved to itself")
        #expect(refused(Self.history(forks: [Self.fork(agreed: 6, at: 6)])), "a fork agreed at its own number")
        #expect(refused(Self.history(forks: [Self.fork(Self.origin, agreed: 5, at: 6, Self.other, Self.other)])), "a fork of one write")
        #expect(refused(Self.history(forks: [Self.fork(Self.movedTo), Self.fork()])), "forks not ascending")
        #expect(refused(Self.history(forks: [Self.fork(at: 0)])), "a fork at number 0")
    }

    /// What only raw bytes can say: an empty fork list written out, digests out of byte order.
    @Test func forkListsAreRefusedUnlessWellFormed() {
        func refused(_ bytes: [UInt8]) -> Bool {
            do { _ = try Message.decode(type: 0x0A, payload: bytes[...]); return false } catch { return error.code == .malformed }
        }
        let plain = Array(Message.history(Self.history()).encoded().dropFirst(5))
        #expect(!refused(plain))
        #expect(refused(plain + [0, 0]), "a fork count of 0")
        let withFork = Array(Message.history(Self.history(forks: [Self.fork()])).encoded().dropFirst(5))
        #expect(!refused(withFork))
        let swapped = Array(withFork.dropLast(64)) + Array(withFork.suffix(32)) + Array(withFork.suffix(64).prefix(32))
        #expect(refused(swapped), "digests out of byte order")
        #expect(refused(Array(withFork.dropLast(1))), "a fork cut short")
    }
}
