import LifeSync
import Testing
import TestSupport

/// `Seal.member(atMost:in:)`: the stored members of a seal searched by halving give what
/// reading them all and taking the greatest at or below the number gives.
@Suite struct SealMemberTests {
    @Test func halvingFindsWhatAFullReadFinds() {
        let random = SeededRandom(seed: 7)
        for round in 0..<200 {
            var members: [Seal.Member] = []
            var sequence: UInt64 = 1 + random.next(below: 5)
            for _ in 0..<(1 + Int(random.next(below: 60))) {
                let digest = SHA256.hash(Array("write \(round) \(sequence)".utf8))
                members.append(Seal.Member(sequence: sequence, digest: digest))
                sequence += 1 + random.next(below: 3)  // a seal may leave out writes of its range
            }
            let seal = Seal(origin: "o", nodeID: "n", publicKey: [], members: members, signature: [])
            let stored = seal.encodedMembers
            for asked in 0...(sequence + 1) {
                let found = stored.withUnsafeBytes { Seal.member(atMost: asked, in: $0) }
                #expect(found == members.last { $0.sequence <= asked }, "round \(round), asked \(asked)")
            }
        }
        #expect([UInt8](repeating: 1, count: 39).withUnsafeBytes { Seal.member(atMost: .max, in: $0) } == nil, "not whole members")
        #expect([UInt8]().withUnsafeBytes { Seal.member(atMost: .max, in: $0) } == nil)
    }
}
