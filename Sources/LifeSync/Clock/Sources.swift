/// Where the core reads the time. The daemon passes the system clock; the simulator a virtual one.
/// Nothing in the core reads the system clock itself, so a simulated run replays exactly from its seed.
public protocol WallClock: AnyObject {
    /// Milliseconds since 1970-01-01T00:00:00Z. May step backwards; the HLC copes.
    func nowMilliseconds() -> Int64
}

/// Where the core draws randomness (new IDs, jitter). Injected for the same reason as the clock.
public protocol RandomSource: AnyObject {
    func nextUInt64() -> UInt64
}

extension RandomSource {
    /// A uniformly distributed value in `0..<bound` (bound > 0), without modulo bias.
    public func next(below bound: UInt64) -> UInt64 {
        precondition(bound > 0)
        let limit = UInt64.max - UInt64.max % bound
        while true {
            let value = nextUInt64()
            if value < limit { return value % bound }
        }
    }

    /// A uniformly distributed Double in `0..<1`.
    public func nextUnit() -> Double {
        Double(nextUInt64() >> 11) * 0x1.0p-53
    }
}

/// xoshiro256** seeded through SplitMix64: small, fast, and the same stream on every platform.
package final class SeededRandom: RandomSource {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    package init(seed: UInt64) {
        var sm = seed
        func splitMix() -> UInt64 {
            sm &+= 0x9E37_79B9_7F4A_7C15
            var z = sm
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        state = (splitMix(), splitMix(), splitMix(), splitMix())
    }

    package func nextUInt64() -> UInt64 {
        let result = rotl(state.1 &* 5, 7) &* 9
        let t = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= t
        state.3 = rotl(state.3, 45)
        return result
    }

    /// A generator for one subsystem, derived so that drawing more in one subsystem does not
    /// shift the numbers another sees.
    package func derive(_ label: String) -> SeededRandom {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in label.utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return SeededRandom(seed: nextUInt64() ^ h)
    }

    private func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
}

/// A clock that reads a fixed value until told otherwise: for tests and the simulator.
package final class ManualClock: WallClock {
    package var milliseconds: Int64

    package init(milliseconds: Int64) { self.milliseconds = milliseconds }

    package func nowMilliseconds() -> Int64 { milliseconds }

    package func advance(by ms: Int64) { milliseconds += ms }
}
