import LifeSync
import LifeSyncSimulation
import Testing

/// Replicas copied aside and put back (`simulate --restores`): every seed the restore sweeps
/// once failed, and restores that really happen, both kinds.
@Suite struct RestoreScenarioTests {
    static func options() -> SimulationOptions {
        var options = SimulationOptions()
        options.restores = true
        return options
    }

    /// Entry losses and conflicts on one replica only (95, 100163, 100195); recording files a
    /// restored replica forgot, still awaited, or kept after their delete (the others); a watch
    /// restored whole whose writes since were called converged before it ever reconnected (4289);
    /// a mac restored whole that lost bytes the phone had its confirmation of (3483, WANT); a mac
    /// restored whole twice whose incarnation made between the two came back unlogged and read
    /// as a fork (3448); a mac put back to before its incarnation's first write that wrote its
    /// number #2 again, which the phone's vector already held (4579); a phone and a watch both
    /// restored whole, the mac left holding the watch's old writes and the phone its new ones
    /// under the same numbers, while the watch met only the phone (5663, §7.2.4); a phone
    /// restored that named a lost recording in its WANT, whose resend a duplicated chunk broke
    /// and which the mac, holding the old confirmation, never offered again (10976).
    /// A household of two phones, one of them restored twice (seeds 242 and 176 with two
    /// phones): its repair's moved writes reached the mac renumbered, relayed by the other phone,
    /// before the repair did. Renumbering the mac's own copies then met their twins under the new
    /// numbers, and every session with that phone ended in `storage_failure` (242: 25,216
    /// events, 1,310 sessions in 900 s); the twins now give way. And where the twins had met in
    /// a merge, one was listed as having lost to the other: renumbered, a write that lost to
    /// itself, listed on that replica only (four records on the mac in 242, one on a phone in
    /// 176); such a record now goes with the renumbering. And the checker's own bookkeeping
    /// (3037): a phone restored whole wrote its numbers #3-#12 again and lost them to a second
    /// restore, and the ledger forgot the old #3, which the other replicas held, with them.
    /// A mac restored whole twice (5663): one phone held its old #14-#19 and then got the forked
    /// #20 relayed by the other; taking the mac's repair, it went back to #13 and never sent the
    /// old writes, which no other replica held, again (its vector now stops below the first
    /// given-up write it took). A phone restored whole to a copy older than its incarnation
    /// (5576) learned of it as the other phone gave back #1-#7; #8-#10 came from the mac after,
    /// as its own writes (no seal kept), and the session with the other phone, begun before,
    /// read them as another node's with no seal and passed them over, `through` covering them:
    /// the other phone never got them (a session now reads our origins before each send).
    @Test(arguments: [UInt64(176), 242, 3037, 5576, 5663])
    func twoPhoneHouseholdSeedsThatOnceFailedKeepEveryInvariant(seed: UInt64) {
        var options = Self.options()
        options.roles = [.phone, .phone, .mac, .watch]
        let result = Simulator(seed: seed, options: options).run()
        #expect(result.events < 5_000, "\(result.events) events: sessions failing over and over")
        #expect(result.violations.isEmpty, "replay: lifesync simulate --seed \(seed) --nodes phone,phone,mac,watch --restores: \(result.violations.map { $0.prefix(300) })")
    }

    /// And the ledger (1399, once the relay hold's HOLDS moved the handshake later): a watch
    /// restored whole wrote #1 again before its first handshake ended, then edited and deleted
    /// that entry under the incarnation the handshake started; the next handshake found the
    /// fork, and the ledger moved the superseded #1 to the new incarnation though the delete
    /// that replaced it stayed where it was, naming it by its old number: an acknowledged write
    /// "lost" that the standing delete had seen.
    @Test(arguments: [UInt64(24), 47, 89, 95, 199, 540, 1078, 1201, 1399, 3448, 3483, 4289, 4579, 5663, 10976, 100163, 100195])
    func seedsThatOnceFailedKeepEveryInvariant(seed: UInt64) {
        let result = Simulator(seed: seed, options: Self.options()).run()
        #expect(result.violations.isEmpty, "replay: lifesync simulate --seed \(seed) --restores: \(result.violations.prefix(2))")
    }

    @Test func restoresReallyHappenBothWays() async {
        var kinds = Set<String>()
        for seed in UInt64(1)...30 { await Task.yield(); kinds.formUnion(Simulator(seed: seed, options: Self.options()).run().faults.keys) }
        for kind in ["backup", "copy_aside", "restore", "restore_whole"] { #expect(kinds.contains(kind), "no \(kind) in 30 seeds") }
    }
}
