import Foundation
import LifeSyncRuntime
import Testing
import TestSupport

/// A `lifesync serve` node under a flood of strangers that never prove a key — idle TCP to its
/// peer port from many addresses, and unfinished HTTP requests without a key, each reopened as
/// soon as the node closes it — still admits its paired peer and its keyed HTTP client (128
/// idle connections locked every paired peer out for 9-10 s a wave; 64 unfinished requests gave
/// every keyed client 503 for 30 s).
@Suite(.serialized) struct StrangerFloodTests {
    static let flood = """
        import socket, sys, time
        peer_port, http_port, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
        def open_peer(n):
            s = socket.socket(); s.bind(('127.0.0.%d' % (2 + n % 39), 0)); s.settimeout(1); s.connect(('127.0.0.1', peer_port)); return s
        def open_http(n):
            s = socket.create_connection(('127.0.0.1', http_port), timeout=1); s.sendall(b'GET /api/status HTTP/1.1\\r\\nHo'); return s
        held = {}
        deadline = time.time() + seconds
        rounds = 0
        while time.time() < deadline:
            for n in range(150):
                key = ('peer', n)
                if key not in held:
                    try: held[key] = open_peer(n)
                    except OSError: pass
            for n in range(80):
                key = ('http', n)
                if key not in held:
                    try: held[key] = open_http(n)
                    except OSError: pass
            for key, s in list(held.items()):
                s.setblocking(False)
                try:
                    if s.recv(1) == b'': raise OSError()
                except BlockingIOError: pass
                except OSError:
                    s.close(); del held[key]
            rounds += 1
            if rounds == 1: print('flooding', flush=True)
            time.sleep(0.2)
        """

    @Test(.timeLimit(.minutes(2)))
    func aPairedPeerAndAKeyedClientGetInThroughAFloodOfStrangers() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        let key = try phone.cli(["keys", "create", "curl"]).stdout
        let httpPort = try freeLoopbackPort()
        try phone.start(extra: ["--http", "\(httpPort)"])
        let out = NSTemporaryDirectory() + "flood-\(UUID().uuidString).out"
        let flood = try Subprocess("/usr/bin/python3", ["-c", Self.flood, "\(phone.port)", "\(httpPort)", "40"], standardOutput: out)
        defer { _ = flood.kill() }
        #expect(eventually(timeout: 20) { ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains("flooding") })
        Thread.sleep(forTimeInterval: 1)

        // The keyed client: answered, not 503.
        let status = try Captured.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10",
                                                        "-H", "Authorization: Bearer \(key)", "http://127.0.0.1:\(httpPort)/api/status"], timeout: 20)
        #expect(status.stdout == "200", "\(status.stdout) \(status.stderr)")
        // The paired peer: admitted, and it syncs.
        _ = try mac.cli(["add", "--text", "through the flood"])
        try mac.start(peers: [phone.address], listen: false)
        let synced = eventually(timeout: 20, interval: 0.2) { phone.entryCount == 1 }
        #expect(synced, "phone:\n\(phone.allOutput.suffix(3000))\nmac:\n\(mac.allOutput.suffix(2000))")
        #expect(phone.isRunning && flood.isRunning)
        #expect(phone.stdout.contains("made room for a newer connection"), "\(phone.stdout.suffix(2000))")
    }
}
