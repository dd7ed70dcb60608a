import LifeSyncRuntime
import Testing

/// Where a node announces itself: only on the interfaces its listener is reachable on, so a
/// loopback listener (the demo's, the benches', every test's) sends nothing to any network.
@Suite struct DiscoveryInterfaceTests {
    static let interfaces = [
        DiscoveryInterface(name: "eth0", address: "192.168.1.20", broadcast: "192.168.1.255"),
        DiscoveryInterface(name: "wlan0", address: "10.0.0.7", broadcast: "10.0.0.255"),
    ]

    @Test func aLoopbackListenerAnnouncesNowhere() {
        for listening in ["127.0.0.1:7002", "127.0.0.53:7002", "[::1]:7002"] {
            #expect(DiscoveryInterface.targets(listening: listening, among: Self.interfaces).isEmpty, "\(listening)")
        }
    }

    @Test func aWildcardListenerAnnouncesOnEveryInterfaceAndASpecificOneOnItsOwn() {
        #expect(DiscoveryInterface.targets(listening: "0.0.0.0:7002", among: Self.interfaces) == Self.interfaces)
        #expect(DiscoveryInterface.targets(listening: "[::]:7002", among: Self.interfaces) == Self.interfaces)
        #expect(DiscoveryInterface.targets(listening: "10.0.0.7:7002", among: Self.interfaces).map(\.name) == ["wlan0"])
        #expect(DiscoveryInterface.targets(listening: "172.16.0.1:7002", among: Self.interfaces).isEmpty)
    }

    @Test func theInterfacesListedAreNeverLoopback() {
        for interface in DiscoveryInterface.current() {
            #expect(!interface.address.hasPrefix("127.") && interface.name != "lo", "\(interface)")
        }
    }
}
