import LifeSync
import Testing

@Suite struct IdentifierTests {
    @Test func madeIdentifiersHaveTheRoleAndAVersion4UUID() {
        let random = SeededRandom(seed: 7)
        for role in Role.allCases {
            let id = Identifier.make(role: role, random: random)
            #expect(id.hasPrefix(role.rawValue + "_"))
            #expect(Identifier.role(of: id) == role)
        }
    }

    @Test func malformedIdentifiersAreRefused() {
        #expect(Identifier.role(of: "watch_550e8400-e29b-41d4-a716-446655440000") == .watch)
        #expect(Identifier.role(of: "watch_550E8400-E29B-41D4-A716-446655440000") == nil)  // uppercase
        #expect(Identifier.role(of: "watch_550e8400-e29b-11d4-a716-446655440000") == nil)  // version 1
        #expect(Identifier.role(of: "tv_550e8400-e29b-41d4-a716-446655440000") == nil)
        #expect(Identifier.role(of: "watch550e8400-e29b-41d4-a716-446655440000") == nil)
    }
}
