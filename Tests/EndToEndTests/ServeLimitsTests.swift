import Foundation
import Glibc
import Testing
import TestSupport

/// A `lifesync serve` process that runs out of file descriptors: its limit is lowered from
/// outside (prlimit) while peers keep connecting. It must back off instead of spinning on a
/// listener it cannot accept from, say so once, and serve again once descriptors are back.
@Suite(.serialized) struct ServeLimitsTests {
    /// User plus system CPU time of `pid`, in clock ticks (fields 14 and 15 of `/proc/PID/stat`).
    private static func cpuTicks(_ pid: pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    private static func lines(_ text: String, containing needle: String) -> Int {
        text.split(separator: "\n").filter { $0.contains(needle) }.count
    }

    @Test(.timeLimit(.minutes(3)))
    func aNodeOutOfDescriptorsBacksOffInsteadOfSpinningAndServesAgainAfterwards() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        try phone.start()
        let pid = try #require(phone.process?.pid)

        // Two descriptors above the lowest free one (what it holds above stays open): the third
        // connection meets EMFILE.
        let open = Set(ProcessControl.openDescriptors(of: pid))
        try #require(!open.isEmpty, "cannot list the node's descriptors")
        let lowestFree = (Int32(0)...).first { !open.contains($0) }!
        let original = try #require(ProcessControl.setOpenFileLimit(of: pid, soft: UInt64(lowestFree) + 2),
                                    "cannot lower the node's descriptor limit")
        var peers: [RawPeer] = []
        // Plain TCP connections: they wait in the backlog the node cannot drain.
        for _ in 0..<6 { peers.append(try RawPeer(port: phone.port, tls: false)) }
        let backedOff = eventually(timeout: 10) { phone.stdout.contains("cannot accept connections") }
        try #require(backedOff, "the node never reported that it cannot accept\n\(phone.allOutput)")

        // Connections it cannot take are waiting, the listener stays readable: a node that kept
        // polling it would burn a whole CPU here. This is no speed measure: one that backs off
        // wakes a few times a second (a tick or two of CPU in all), one that spins uses every
        // tick it gets; under 25 % of one CPU passes.
        let ticksPerSecond = Int(sysconf(Int32(_SC_CLK_TCK)))
        let before = try #require(Self.cpuTicks(pid))
        usleep(2_000_000)
        let after = try #require(Self.cpuTicks(pid))
        #expect(after - before < ticksPerSecond / 2,
                "the node used \(after - before) ticks of CPU in 2 s (\(ticksPerSecond) per second) while it could not accept")
        #expect(phone.isRunning)
        #expect(Self.lines(phone.stdout, containing: "cannot accept connections") == 1, "\(phone.stdout)")

        // Descriptors back: after the back-off it accepts again, and a good peer syncs.
        try #require(ProcessControl.setOpenFileLimit(of: pid, soft: original) != nil)
        peers.removeAll()
        let recovered = eventually(timeout: 10) { phone.stdout.contains("accepting connections again") }
        #expect(recovered, "\(phone.allOutput)")
        _ = try LifeSyncBinary.run(["add", "--text", "after the storm", "--db", mac.db])
        try mac.start(peers: [phone.address], listen: false)
        let synced = eventually(timeout: 20, interval: 0.2) { phone.entryCount == 1 }
        #expect(synced, "phone:\n\(phone.allOutput)\nmac:\n\(mac.allOutput)")
        #expect(Self.lines(phone.stdout, containing: "cannot accept connections") == 1)
    }
}
