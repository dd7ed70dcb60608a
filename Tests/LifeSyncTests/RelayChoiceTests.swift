import LifeSync
import Testing

/// Which peer a node asks to relay it each origin (`RelayChoice`, PROTOCOL.md §7.4 "Relay
/// choice"): one per origin, sticking while it has more to give, moving only once it has none.
@Suite struct RelayChoiceTests {
    let me = "mac_00000000-0000-4000-8000-000000000000"
    let a = "mac_aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", b = "mac_bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
    let c = "mac_cccccccc-cccc-4ccc-8ccc-cccccccccccc"
    let x = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", y = "c56a4180-65aa-42ec-a945-5fd21dec0538"

    func peer(_ nodeID: String, _ held: [(String, UInt64)]) -> RelayChoice.Candidate {
        RelayChoice.Candidate(nodeID: nodeID, holds: VersionVector(held))
    }

    func asked(_ choice: RelayChoice, _ peers: [String]) -> [String: [String]] {
        Dictionary(uniqueKeysWithValues: peers.map { ($0, choice.origins(askedOf: $0)) })
    }

    @Test func eachOriginIsAskedOfOnePeerThatHoldsMoreThanUs() {
        var choice = RelayChoice()
        let mine = VersionVector([(x, 5)])
        let peers = [peer(a, [(x, 5), (y, 3)]), peer(b, [(x, 9), (y, 3)]), peer(c, [(x, 9)])]
        let changed = choice.update(holding: mine, candidates: peers, scanning: nil, me: me, now: 0, fromItsNode: { _ in false })
        let lists = asked(choice, [a, b, c])
        // x: b or c (a holds no more than we do); y: a or b.
        #expect(lists.values.flatMap { $0 }.sorted() == [x, y].sorted(), "\(lists)")
        #expect(!lists[a]!.contains(x) && !lists[c]!.contains(y))
        #expect(changed == Set(lists.filter { !$0.value.isEmpty }.keys))
        // The same inputs choose the same peers, in whatever order the peers come.
        var again = RelayChoice()
        _ = again.update(holding: mine, candidates: peers.reversed(), scanning: nil, me: me, now: 0, fromItsNode: { _ in false })
        #expect(asked(again, [a, b, c]) == lists)
    }

    @Test func aChoiceSticksWhileItsPeerHasMoreAndMovesOnlyOnceItHasNone() {
        var choice = RelayChoice()
        var mine = VersionVector([(x, 1)])
        _ = choice.update(holding: mine, candidates: [peer(a, [(x, 4)])], scanning: nil, me: me, now: 0, fromItsNode: { _ in false })
        #expect(choice.origins(askedOf: a) == [x])
        // b comes with more of x: a still has writes we lack, which may be on their way.
        var peers = [peer(a, [(x, 4)]), peer(b, [(x, 8)])]
        #expect(choice.update(holding: mine, candidates: peers, scanning: [b], me: me, now: 0, fromItsNode: { _ in false }).isEmpty)
        #expect(choice.origins(askedOf: a) == [x] && choice.origins(askedOf: b) == [])
        // We took all a had: nothing of it can be on its way past that; b is asked now.
        mine = VersionVector([(x, 4)])
        let changed = choice.update(holding: mine, candidates: peers, scanning: [], me: me, now: 0, fromItsNode: { _ in false })
        #expect(changed == [a, b])
        #expect(choice.origins(askedOf: a) == [] && choice.origins(askedOf: b) == [x])
        // We hold everything: the choice stays (the next writes of x come at once), nobody is told.
        mine = VersionVector([(x, 8)])
        peers = [peer(a, [(x, 8)]), peer(b, [(x, 8)])]
        #expect(choice.update(holding: mine, candidates: peers, scanning: nil, me: me, now: 0, fromItsNode: { _ in false }).isEmpty)
        #expect(choice.origins(askedOf: b) == [x])
    }

    @Test func aPeerThatLeavesOrAnOriginWhoseNodeJoinsIsAskedNoMore() {
        var choice = RelayChoice()
        let mine = VersionVector()
        _ = choice.update(holding: mine, candidates: [peer(a, [(x, 2), (y, 2)])], scanning: nil, me: me, now: 0, fromItsNode: { _ in false })
        #expect(choice.origins(askedOf: a) == [x, y].sorted())
        // a's session closed, b holds x: b is asked for x, and a, gone, is not told.
        let changed = choice.update(holding: mine, candidates: [peer(b, [(x, 2)])], scanning: nil, me: me, now: 0, fromItsNode: { _ in false })
        #expect(changed == [b])
        #expect(choice.origins(askedOf: b) == [x] && choice.origins(askedOf: a) == [])
        // We connected to x's node: its writes come from it; nobody is asked for them.
        #expect(choice.update(holding: mine, candidates: [peer(b, [(x, 2)])], scanning: nil, me: me, now: 0, fromItsNode: { $0 == x }) == [b])
        #expect(choice.origins(askedOf: b) == [])
    }

    @Test func aBatchWeTookLooksOnlyAtOriginsWhoseChosenPeerRanDry() {
        var choice = RelayChoice()
        // Scanning no peer finds no new origin: only a peer's word (HOLDS) or a change of peers does.
        #expect(choice.update(holding: VersionVector(), candidates: [peer(a, [(x, 2)])], scanning: [], me: me, now: 0, fromItsNode: { _ in false }).isEmpty)
        #expect(choice.update(holding: VersionVector(), candidates: [peer(a, [(x, 2)])], scanning: [a], me: me, now: 0, fromItsNode: { _ in false }) == [a])
    }

    @Test func aChosenPeerThatOwesWritesAndSendsNoneIsPassedOver() {
        var choice = RelayChoice(stall: 5_000)
        let mine = VersionVector([(x, 1)])
        let peers = [peer(a, [(x, 9)]), peer(b, [(x, 9)])]
        _ = choice.update(holding: mine, candidates: peers, scanning: nil, me: me, now: 0, fromItsNode: { _ in false })
        let first = choice.origins(askedOf: a).isEmpty ? b : a, second = first == a ? b : a
        #expect(choice.origins(askedOf: first) == [x])
        #expect(choice.nextStall == 5_000, "a peer that owes writes is looked at again after the stall")
        // Writes taken meanwhile are progress: the stall counts from them.
        let more = VersionVector([(x, 3)])
        #expect(choice.update(holding: more, candidates: peers, scanning: [], me: me, now: 4_000, fromItsNode: { _ in false }).isEmpty)
        #expect(choice.nextStall == 9_000)
        #expect(choice.update(holding: more, candidates: peers, scanning: [], me: me, now: 8_999, fromItsNode: { _ in false }).isEmpty)
        // Nothing for 5 s: the other peer is asked, and the first is not asked again for x.
        #expect(choice.update(holding: more, candidates: peers, scanning: [], me: me, now: 9_000, fromItsNode: { _ in false }) == [a, b])
        #expect(choice.origins(askedOf: second) == [x] && choice.origins(askedOf: first) == [])
        // The second stalls too: nobody else is left, so it stays asked, looked at a stall later.
        #expect(choice.update(holding: more, candidates: peers, scanning: [], me: me, now: 14_000, fromItsNode: { _ in false }).isEmpty)
        #expect(choice.origins(askedOf: second) == [x])
        #expect(choice.nextStall == 19_000)
        // The first's session closed and it came back: it may be asked again.
        _ = choice.update(holding: more, candidates: [peer(second, [(x, 9)])], scanning: nil, me: me, now: 15_000, fromItsNode: { _ in false })
        _ = choice.update(holding: more, candidates: [peer(second, [(x, 3)]), peer(first, [(x, 9)])], scanning: nil, me: me, now: 16_000, fromItsNode: { _ in false })
        #expect(choice.origins(askedOf: first) == [x])
    }
}
