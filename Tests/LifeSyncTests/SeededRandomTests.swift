import LifeSync
import Testing

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
        let start: Int64 = 1_795_305_600_000  // 2026-11-22T00:00:00Z
        let clock = ManualClock(milliseconds: start)
        #expect(clock.nowMilliseconds() == start)
        clock.advance(by: 250)
        #expect(clock.nowMilliseconds() == start + 250)
        clock.advance(by: -1_000)
        #expect(clock.nowMilliseconds() == start - 750)
        clock.milliseconds = 0
        #expect(clock.nowMilliseconds() == 0)
    }
}
