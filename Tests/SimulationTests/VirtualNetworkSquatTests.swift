import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// What the strangers of the simulator stand on: a raw endpoint answering the address a node
/// dials (`squat`), a dial proving another key (`connect(key:)`), and the network's own record
/// of the frames to and from a watched host (`watch`), which the checker judges them by.
@Suite struct VirtualNetworkSquatTests {
    /// A raw endpoint that notes the dials it answers and keeps what arrives.
    final class Squatter: VirtualEndpoint {
        var accepted: [(end: Int, dialler: String)] = []
        var closes: [Int] = []
        func received(end: Int, bytes: [UInt8]) {}
        func closed(end: Int) { closes.append(end) }
        func accepted(end: Int, from dialler: String) { accepted.append((end, dialler)) }
    }

    @Test func aDialToASquattedAddressMeetsTheSquattersKeyAndSendsNoHello() throws {
        let (network, _) = try VirtualNetworkTests.network()
        let squatter = Squatter()
        network.attach("squatter", endpoint: squatter, key: VirtualNetworkTests.key("squatter"))
        network.watch("squatter")
        network.squat("phone", by: "squatter")
        network.start("mac", key: VirtualNetworkTests.key("mac"), core: try VirtualNetworkTests.core(.mac, seed: 2, peers: ["phone"]))
        network.run(until: 200)
        #expect(squatter.accepted.map(\.dialler) == ["mac"])
        let fromMac = network.watchedFrames.filter { $0.from == "mac" }
        #expect(!fromMac.isEmpty && fromMac.allSatisfy { $0.errorCode == ErrorCode.notTrusted.rawValue }, "\(fromMac.map(\.type))")
        #expect(squatter.closes == squatter.accepted.map(\.end), "the mac did not close")
        // Given back, the address is the phone's again: the mac's next dial reaches it.
        network.unsquat("phone")
        network.run(until: 120_000)
        #expect(network.openConnections(of: "phone").count == 1)
        #expect(squatter.accepted.count == 1)
        #expect(network.violations.isEmpty, "\(network.violations)")
    }

    @Test func theRecordHoldsEveryFrameBothWaysAndAKeyOfTheDiallersChoice() throws {
        let (network, _) = try VirtualNetworkTests.network()
        network.watch("raw")
        let trusted = try #require(network.connect("raw", to: "phone"))
        network.send(try VirtualNetworkTests.hello(), from: trusted)
        network.run(until: 100)
        let first = try #require(network.watchedFrames.first)
        #expect(first.from == "raw" && first.to == "phone" && first.type == MessageType.hello.rawValue)
        #expect(network.watchedFrames.contains { $0.from == "phone" && $0.to == "raw" && $0.type == MessageType.hello.rawValue })
        // The same HELLO under a key nobody trusts: refused.
        let before = network.watchedFrames.count
        let stranger = try #require(network.connect("raw", to: "phone", key: VirtualNetworkTests.key("nobody")))
        network.send(try VirtualNetworkTests.hello(), from: stranger)
        network.run(until: 200)
        let answers = network.watchedFrames[before...].filter { $0.from == "phone" }
        #expect(answers.map(\.errorCode) == [ErrorCode.notTrusted.rawValue], "\(answers.map(\.type))")
        // Bytes that do not frame are recorded as such.
        network.send([0xFF, 0xFF, 0xFF, 0xFF, 0x01], from: trusted)
        network.run(until: 300)
        #expect(network.watchedFrames.contains { $0.from == "raw" && $0.type == VirtualNetwork.WatchedFrame.undecodable })
    }
}
