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

@Suite struct SeededRandomTests {
    /// Reference values of xoshiro256** seeded through SplitMix64, computed independently.
    @Test func matchesTheReferenceStream() {
        let expected: [UInt64: [UInt64]] = [
            0: [0x99EC_5F36_CB75_F2B4, 0xBF6E_1F78_4956_452A, 0x1A5F_849D_4933_E6E0, 0x6AA5_94F1_262D_2D2C],
            1: [0xB3F2_AF6D_0FC7_10C5, 0x853B_5596_4736_4CEA, 0x92F8_9756_082A_4514, 0x642E_1C7B_C266_A3A7],
            42: [0x1578_0B2E_0C2E_C716, 0x6104_D986_6D11_3A7E, 0xAE17_5332_39E4_99A1, 0xECB8_AD47_03B3_60A1],
        ]
        for (seed, values) in expected {
            let random = SeededRandom(seed: seed)
            #expect((0..<4).map { _ in random.nextUInt64() } == values, "seed \(seed)")
        }
    }

    @Test func sameSeedGivesTheSameStream() {
        let a = SeededRandom(seed: 123), b = SeededRandom(seed: 123)
        for _ in 0..<1_000 { #expect(a.nextUInt64() == b.nextUInt64()) }
    }

    @Test func differentSeedsGiveDifferentStreams() {
        let a = SeededRandom(seed: 123), b = SeededRandom(seed: 124)
        let xs = (0..<16).map { _ in a.nextUInt64() }, ys = (0..<16).map { _ in b.nextUInt64() }
        #expect(xs != ys)
        #expect(Set(xs).isDisjoint(with: ys))
    }

    @Test func derivedStreamsDoNotDependOnDrawsElsewhere() {
        let rootA = SeededRandom(seed: 9), rootB = SeededRandom(seed: 9)
        let netA = rootA.derive("network"), diskA = rootA.derive("disk")
        let netB = rootB.derive("network"), diskB = rootB.derive("disk")
        // Drawing heavily from one subsystem does not shift what the other sees.
        for _ in 0..<1_000 { _ = netB.nextUInt64() }
        for _ in 0..<100 { _ = rootB.nextUInt64() }
        #expect((0..<50).map { _ in diskA.nextUInt64() } == (0..<50).map { _ in diskB.nextUInt64() })
        #expect((0..<10).map { _ in netA.nextUInt64() } != (0..<10).map { _ in diskA.nextUInt64() })
    }

    @Test func labelsSelectDifferentStreams() {
        let a = SeededRandom(seed: 9).derive("alpha"), b = SeededRandom(seed: 9).derive("beta")
        #expect((0..<8).map { _ in a.nextUInt64() } != (0..<8).map { _ in b.nextUInt64() })
        let c = SeededRandom(seed: 9).derive("alpha")
        let d = SeededRandom(seed: 9).derive("alpha")
        #expect((0..<8).map { _ in c.nextUInt64() } == (0..<8).map { _ in d.nextUInt64() })
    }

    @Test func derivedStreamDiffersFromItsParent() {
        let root = SeededRandom(seed: 4), copy = SeededRandom(seed: 4)
        let child = root.derive("x")
        _ = copy.nextUInt64()  // derive consumed exactly one draw from the parent
        #expect(root.nextUInt64() == copy.nextUInt64())
        let parentNext = (0..<8).map { _ in root.nextUInt64() }
        #expect((0..<8).map { _ in child.nextUInt64() } != parentNext)
    }

    @Test func boundedDrawsStayInRangeAndCoverIt() {
        let random = SeededRandom(seed: 77)
        var counts = [Int](repeating: 0, count: 6)
        for _ in 0..<60_000 {
            let value = random.next(below: 6)
            #expect(value < 6)
            counts[Int(value)] += 1
        }
        for count in counts { #expect((9_400...10_600).contains(count), "\(counts)") }
        #expect(random.next(below: 1) == 0)
        for _ in 0..<1_000 { #expect(random.next(below: UInt64.max) < UInt64.max) }
    }

    @Test func unitDrawsAreInTheHalfOpenInterval() {
        let random = SeededRandom(seed: 78)
        var sum = 0.0
        for _ in 0..<20_000 {
            let u = random.nextUnit()
            #expect(u >= 0 && u < 1)
            sum += u
        }
        #expect(abs(sum / 20_000 - 0.5) < 0.01)
    }

    @Test func identifiersFromTheSameSeedAreTheSame() {
        let a = SeededRandom(seed: 5), b = SeededRandom(seed: 5)
        #expect(Identifier.make(role: .watch, random: a) == Identifier.make(role: .watch, random: b))
        #expect(Identifier.uuidV4(random: a) != Identifier.uuidV4(random: a))
    }
}

@Suite struct ManualClockTests {
    @Test func readsWhatItIsToldAndAdvances() {
        let clock = ManualClock(milliseconds: t0)
        #expect(clock.nowMilliseconds() == t0)
        clock.advance(by: 250)
        #expect(clock.nowMilliseconds() == t0 + 250)
        clock.advance(by: -1_000)
        #expect(clock.nowMilliseconds() == t0 - 750)
        clock.milliseconds = 0
        #expect(clock.nowMilliseconds() == 0)
    }
}

@Suite struct MergePatchTests {
    /// RFC 7396, Appendix A: (original, patch, result).
    @Test(arguments: [
        (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
        (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
        (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
        (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
        (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
        (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
        (#"["a","b"]"#, #"["c","d"]"#, #"["c","d"]"#),
        (#"{"a":"b"}"#, #"["c"]"#, #"["c"]"#),
        (#"{"a":"foo"}"#, #"null"#, #"null"#),
        (#"{"a":"foo"}"#, #""bar""#, #""bar""#),
        (#"{"e":null}"#, #"{"a":1}"#, #"{"e":null,"a":1}"#),
        (#"[1,2]"#, #"{"a":"b","c":null}"#, #"{"a":"b"}"#),
        (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
    ])
    func rfc7396AppendixA(original: String, patch: String, result: String) throws {
        let merged = MergePatch.apply(try JSONValue.parse(patch), to: try JSONValue.parse(original))
        #expect(merged == (try JSONValue.parse(result)))
        #expect(merged.canonicalText == (try JSONValue.parse(result)).canonicalText)
    }

    /// RFC 7396, section 3: the worked example.
    @Test func rfc7396Section3Example() throws {
        let target = try JSONValue.parse("""
            {"title": "Goodbye!", "author": {"givenName": "John", "familyName": "Doe"},
             "tags": ["example", "sample"], "content": "This will be unchanged"}
            """)
        let patch = try JSONValue.parse("""
            {"title": "Hello!", "phoneNumber": "+01-123-456-7890", "author": {"familyName": null}, "tags": ["example"]}
            """)
        let expected = try JSONValue.parse("""
            {"title": "Hello!", "author": {"givenName": "John"}, "tags": ["example"],
             "content": "This will be unchanged", "phoneNumber": "+01-123-456-7890"}
            """)
        #expect(MergePatch.apply(patch, to: target) == expected)
    }

    @Test func emptyPatchChangesNothingAndPatchingIsIdempotent() throws {
        let target = try JSONValue.parse(#"{"a": {"b": [1, 2]}, "c": null, "d": 1}"#)
        #expect(MergePatch.apply(.object([]), to: target) == target)
        let patch = try JSONValue.parse(#"{"a": {"b": null, "x": {"y": 1}}, "d": null, "e": "new"}"#)
        let once = MergePatch.apply(patch, to: target)
        #expect(once == (try JSONValue.parse(#"{"a": {"x": {"y": 1}}, "c": null, "e": "new"}"#)))
        #expect(MergePatch.apply(patch, to: once) == once)
    }

    @Test func removingAnAbsentMemberIsANoOp() throws {
        let target = try JSONValue.parse(#"{"a": 1}"#)
        #expect(MergePatch.apply(try JSONValue.parse(#"{"zzz": null}"#), to: target) == target)
    }

    @Test func patchingAnEntryChangesOnlyWhatThePatchNames() throws {
        let entry = try JSONValue.parse("""
            {"id": "watch_550e8400-e29b-41d4-a716-446655440000", "category": "mood",
             "data": {"text": "hi", "metric": {"name": "mood", "value": 3}, "tags": ["a"]}}
            """)
        let patched = MergePatch.apply(try JSONValue.parse(#"{"data": {"metric": {"value": 8}, "tags": null}, "category": "energy"}"#), to: entry)
        #expect(patched == (try JSONValue.parse("""
            {"id": "watch_550e8400-e29b-41d4-a716-446655440000", "category": "energy",
             "data": {"text": "hi", "metric": {"name": "mood", "value": 8}}}
            """)))
    }
}
