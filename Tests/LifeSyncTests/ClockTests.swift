import LifeSync
import Testing

private let t0: Int64 = 1_795_305_600_000  // 2026-11-22T00:00:00Z

private func hlc(_ ms: Int64, _ counter: Int) -> HLCTimestamp { HLCTimestamp(milliseconds: ms, counter: counter) }

@Suite struct HLCTimestampTests {
    @Test func packsMillisecondsHighAndCounterLow() {
        let stamp = hlc(t0, 3)
        #expect(stamp.rawValue == (t0 << 16) | 3)
        #expect(stamp.milliseconds == t0)
        #expect(stamp.counter == 3)
        let maxCounter = hlc(t0, 0xFFFF)
        #expect(maxCounter.counter == 0xFFFF)
        #expect(maxCounter.milliseconds == t0)
        #expect(HLCTimestamp(rawValue: stamp.rawValue) == stamp)
    }

    @Test func anOversizedCounterNeverLeaksIntoTheMilliseconds() {
        #expect(hlc(5, 0x1_0001).milliseconds == 5)
    }

    @Test func orderIsMillisecondsThenCounter() {
        #expect(hlc(t0, 0) < hlc(t0, 1))
        #expect(hlc(t0, 0xFFFF) < hlc(t0 + 1, 0))
        #expect(HLCTimestamp.zero < hlc(0, 1))
        let random = SeededRandom(seed: 11)
        for _ in 0..<1_000 {
            let a = hlc(Int64(random.next(below: 1_000)), Int(random.next(below: 0x10000)))
            let b = hlc(Int64(random.next(below: 1_000)), Int(random.next(below: 0x10000)))
            let lexicographic = (a.milliseconds, a.counter) < (b.milliseconds, b.counter)
            #expect((a < b) == lexicographic)
        }
    }

    @Test func successorCarriesAFullCounterIntoTheMilliseconds() {
        #expect(hlc(t0, 4).successor == hlc(t0, 5))
        #expect(hlc(t0, 0xFFFF).successor == hlc(t0 + 1, 0))
        #expect(HLCTimestamp.zero.successor == hlc(0, 1))
    }

    @Test func descriptionShowsUTCTimeAndCounter() {
        #expect(hlc(t0, 3).description == "2026-11-22T00:00:00.000Z#3")
        #expect(hlc(t0 + 1_234, 0).description == "2026-11-22T00:00:01.234Z#0")
        #expect(HLCTimestamp.zero.description == "1970-01-01T00:00:00.000Z#0")
    }
}

@Suite struct HybridLogicalClockTests {
    @Test func tickFollowsTheWallClockWhenItMovesForward() {
        var clock = HybridLogicalClock()
        #expect(clock.tick(now: t0) == hlc(t0, 0))
        #expect(clock.tick(now: t0 + 10) == hlc(t0 + 10, 0))
        #expect(clock.last == hlc(t0 + 10, 0))
    }

    @Test func counterIncrementsWithinTheSameMillisecond() {
        var clock = HybridLogicalClock()
        #expect(clock.tick(now: t0) == hlc(t0, 0))
        #expect(clock.tick(now: t0) == hlc(t0, 1))
        #expect(clock.tick(now: t0) == hlc(t0, 2))
        #expect(clock.tick(now: t0 + 1) == hlc(t0 + 1, 0))
    }

    @Test func staysMonotonicWhenTheWallClockStepsBackwards() {
        var clock = HybridLogicalClock()
        let first = clock.tick(now: t0 + 5_000)
        let second = clock.tick(now: t0)             // NTP stepped the clock back 5 s
        let third = clock.tick(now: t0 - 86_400_000)  // and then a whole day
        #expect(first == hlc(t0 + 5_000, 0))
        #expect(second == hlc(t0 + 5_000, 1))
        #expect(third == hlc(t0 + 5_000, 2))
        // Once the wall clock catches up, physical time takes over again.
        #expect(clock.tick(now: t0 + 5_001) == hlc(t0 + 5_001, 0))
    }

    @Test func aFullCounterCarriesIntoTheNextMillisecond() {
        var clock = HybridLogicalClock(last: hlc(t0, 0xFFFE))
        #expect(clock.tick(now: t0) == hlc(t0, 0xFFFF))
        #expect(clock.tick(now: t0) == hlc(t0 + 1, 0))
        #expect(clock.tick(now: t0) == hlc(t0 + 1, 1))
    }

    @Test func negativeWallTimeIsClampedToZero() {
        var clock = HybridLogicalClock()
        let stamp = clock.tick(now: -5_000)
        #expect(stamp.milliseconds == 0)
        #expect(stamp > .zero)
    }

    @Test func randomWallClockWalkGivesStrictlyIncreasingStamps() {
        let random = SeededRandom(seed: 21)
        var clock = HybridLogicalClock()
        var now = t0
        var previous = HLCTimestamp.zero
        for _ in 0..<20_000 {
            // Mostly small steps, sometimes none, sometimes a step back of up to 10 s.
            switch random.next(below: 10) {
            case 0: now -= Int64(random.next(below: 10_000))
            case 1, 2, 3: break
            default: now += Int64(random.next(below: 20))
            }
            let stamp = clock.tick(now: now)
            #expect(stamp > previous)
            #expect(stamp.milliseconds >= now)
            previous = stamp
        }
    }

    @Test func observingAStampWithinTheDriftMovesTheClockToIt() {
        var clock = HybridLogicalClock()
        _ = clock.tick(now: t0)
        let remote = hlc(t0 + 30_000, 7)
        #expect(clock.observe(remote, now: t0) == true)
        #expect(clock.last == remote)
        #expect(clock.tick(now: t0) == hlc(t0 + 30_000, 8))
    }

    @Test func observingAnOlderStampChangesNothing() {
        var clock = HybridLogicalClock()
        let mine = clock.tick(now: t0)
        #expect(clock.observe(hlc(t0 - 1_000, 9), now: t0) == true)
        #expect(clock.last == mine)
        #expect(clock.observe(mine, now: t0) == true)
        #expect(clock.last == mine)
    }

    @Test func aStampExactlyAtTheBoundIsAccepted() {
        var clock = HybridLogicalClock()
        let bound = hlc(t0 + HybridLogicalClock.defaultMaximumDrift, 0xFFFF)
        #expect(clock.observe(bound, now: t0) == true)
        #expect(clock.last == bound)
    }

    @Test func aStampBeyondTheDriftIsReportedAndTheClockIsBounded() {
        #expect(HybridLogicalClock.defaultMaximumDrift == 60_000)
        var clock = HybridLogicalClock()
        _ = clock.tick(now: t0)
        let justBeyond = hlc(t0 + 60_001, 0)
        #expect(clock.observe(justBeyond, now: t0) == false)
        #expect(clock.last == hlc(t0 + 60_000, 0xFFFF))
        #expect(clock.last < justBeyond)

        // A peer whose clock says 2100 cannot drag this one there.
        let year2100 = hlc(4_102_444_800_000, 0)
        var other = HybridLogicalClock()
        #expect(other.observe(year2100, now: t0) == false)
        #expect(other.last.milliseconds == t0 + 60_000)
        #expect(other.tick(now: t0) == hlc(t0 + 60_001, 0))
    }

    @Test func theBoundFollowsTheLocalWallClock() {
        var clock = HybridLogicalClock(maximumDrift: 1_000)
        let remote = hlc(t0 + 5_000, 0)
        #expect(clock.observe(remote, now: t0) == false)
        #expect(clock.last == hlc(t0 + 1_000, 0xFFFF))
        // Later, when the local wall clock is close enough, the same stamp is accepted.
        #expect(clock.observe(remote, now: t0 + 4_000) == true)
        #expect(clock.last == remote)
    }

    @Test func zeroDriftAcceptsNothingAheadOfTheWallClock() {
        var clock = HybridLogicalClock(maximumDrift: 0)
        #expect(clock.observe(hlc(t0, 0xFFFF), now: t0) == true)
        #expect(clock.observe(hlc(t0 + 1, 0), now: t0) == false)
        #expect(clock.last == hlc(t0, 0xFFFF))
    }

    @Test func observingNeverMovesTheClockBackwards() {
        // A clock already ahead of the bound (restored from disk) stays where it is.
        var clock = HybridLogicalClock(last: hlc(t0 + 3_600_000, 0))
        #expect(clock.observe(hlc(t0 + 7_200_000, 0), now: t0) == false)
        #expect(clock.last == hlc(t0 + 3_600_000, 0))
        #expect(clock.tick(now: t0) == hlc(t0 + 3_600_000, 1))
    }
}

@Suite struct VersionVectorTests {
    @Test func missingOriginsReadAsZero() {
        let v = VersionVector()
        #expect(v["a"] == 0)
        #expect(v.isEmpty)
        #expect(v.entries.isEmpty)
    }

    @Test func subscriptSetsAndKeepsOriginsSorted() {
        var v = VersionVector()
        v["c"] = 3
        v["a"] = 1
        v["b"] = 2
        #expect(v.entries.map(\.origin) == ["a", "b", "c"])
        #expect(v.entries.map(\.sequence) == [1, 2, 3])
        v["b"] = 9
        #expect(v["b"] == 9)
        #expect(v.entries.count == 3)
        #expect(!v.isEmpty)
    }

    @Test func settingZeroRemovesTheOrigin() {
        var v = VersionVector([("a", 1), ("b", 2)])
        v["a"] = 0
        #expect(v.entries.map(\.origin) == ["b"])
        v["zzz"] = 0  // removing an absent origin is a no-op
        #expect(v == VersionVector([("b", 2)]))
        v["b"] = 0
        #expect(v.isEmpty)
        #expect(v == VersionVector())
    }

    @Test func initKeepsTheHighestOfRepeatedOriginsAndDropsZeros() {
        let v = VersionVector([("b", 2), ("a", 5), ("b", 7), ("a", 1), ("z", 0)])
        #expect(v.entries.map(\.origin) == ["a", "b"])
        #expect(v["a"] == 5)
        #expect(v["b"] == 7)
    }

    @Test func equalityAndHashIgnoreConstructionOrder() {
        let a = VersionVector([("x", 1), ("y", 2)])
        var b = VersionVector()
        b["y"] = 2
        b["x"] = 1
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b]).count == 1)
        #expect(a != VersionVector([("x", 1), ("y", 3)]))
        #expect(a != VersionVector([("x", 1)]))
    }

    @Test func joinedIsTheElementwiseMaximum() {
        let a = VersionVector([("a", 3), ("b", 1)])
        let b = VersionVector([("b", 4), ("c", 2)])
        let j = a.joined(with: b)
        #expect(j == VersionVector([("a", 3), ("b", 4), ("c", 2)]))
        #expect(b.joined(with: a) == j)
        #expect(a.joined(with: a) == a)
        #expect(a.joined(with: VersionVector()) == a)
        #expect(j.dominates(a) && j.dominates(b))
    }

    /// The one-pass join and the taking of pairs already in order give what origin-by-origin
    /// maxima give, on vectors of every shape (shared, disjoint, interleaved, empty).
    @Test func joinAndConstructionAgreeWithOriginByOriginMaxima() {
        let random = SeededRandom(seed: 9)
        func vector() -> [(String, UInt64)] {
            (0..<Int(random.next(below: 8))).map { _ in ("o\(random.next(below: 12))", random.next(below: 4)) }
        }
        for _ in 0..<2_000 {
            let (x, y) = (vector(), vector())
            var expected: [String: UInt64] = [:]
            for (origin, sequence) in x + y where sequence > 0 { expected[origin] = max(expected[origin] ?? 0, sequence) }
            let joined = VersionVector(x).joined(with: VersionVector(y))
            #expect(joined.entries.map(\.origin) == expected.keys.sorted())
            #expect(joined.entries.allSatisfy { expected[$0.origin] == $0.sequence })
            let sorted = expected.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            #expect(VersionVector(sorted) == joined)
        }
    }

    @Test func joinIsCommutativeAssociativeAndIdempotentOnRandomVectors() {
        let random = SeededRandom(seed: 31)
        func vector() -> VersionVector {
            VersionVector((0..<Int(random.next(below: 5))).map { _ in
                (["a", "b", "c", "d"][Int(random.next(below: 4))], random.next(below: 6))
            })
        }
        for _ in 0..<500 {
            let a = vector(), b = vector(), c = vector()
            #expect(a.joined(with: b) == b.joined(with: a))
            #expect(a.joined(with: b).joined(with: c) == a.joined(with: b.joined(with: c)))
            #expect(a.joined(with: a) == a)
            let j = a.joined(with: b)
            #expect(j.dominates(a) && j.dominates(b))
            // Dominance means the join adds nothing.
            #expect(a.dominates(b) == (a.joined(with: b) == a))
        }
    }

    @Test func dominance() {
        let a = VersionVector([("a", 2), ("b", 1)])
        #expect(a.dominates(a))
        #expect(a.dominates(VersionVector()))
        #expect(!VersionVector().dominates(a))
        #expect(VersionVector().dominates(VersionVector()))
        #expect(a.dominates(VersionVector([("a", 1)])))
        #expect(a.dominates(VersionVector([("a", 2), ("b", 1)])))
        #expect(!a.dominates(VersionVector([("a", 3)])))
        #expect(!a.dominates(VersionVector([("c", 1)])))
        #expect(VersionVector([("a", 2), ("b", 1), ("c", 1)]).dominates(a))
    }

    @Test func concurrency() {
        let a = VersionVector([("a", 2), ("b", 1)])
        let b = VersionVector([("a", 1), ("b", 2)])
        #expect(a.isConcurrent(with: b))
        #expect(b.isConcurrent(with: a))
        #expect(!a.isConcurrent(with: a))
        #expect(!a.isConcurrent(with: VersionVector([("a", 1)])))
        #expect(!VersionVector([("a", 1)]).isConcurrent(with: a))
        #expect(VersionVector([("x", 1)]).isConcurrent(with: VersionVector([("y", 1)])))
        #expect(!VersionVector().isConcurrent(with: a))
    }

    @Test func storedTextRoundTrips() throws {
        let v = VersionVector([("watch-inc", 3), ("mac-inc", 12), ("phone-inc", UInt64.max)])
        #expect(v.description == "mac-inc=12,phone-inc=18446744073709551615,watch-inc=3")
        let back = try #require(VersionVector(storedText: v.description))
        #expect(back == v)
        #expect(VersionVector().description == "")
        #expect(VersionVector(storedText: "") == VersionVector())
        // The origin is everything before the last "=".
        let odd = try #require(VersionVector(storedText: "a=b=4"))
        #expect(odd["a=b"] == 4)
        #expect(VersionVector(storedText: odd.description) == odd)
    }

    @Test func storedTextOfRealIncarnationsRoundTrips() throws {
        let random = SeededRandom(seed: 8)
        var v = VersionVector()
        for i in 1...20 { v[Identifier.uuidV4(random: random)] = UInt64(i * 1_000) }
        #expect(VersionVector(storedText: v.description) == v)
    }

    @Test(arguments: [
        "a", "a=", "=1", "a=0", "a=x", "a=-1", "a=1.5", "a=1,", ",a=1", "a=1,,b=2", "a=1,a=2", "a=1,b", "a=18446744073709551616",
        "a=1 ", "a= 1",
    ])
    func malformedStoredTextIsRefused(text: String) {
        #expect(VersionVector(storedText: text) == nil)
    }
}
