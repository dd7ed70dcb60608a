import Glibc
import FoundationEssentials
import LifeSync
import LifeSyncRuntime

/// Sends one large recording watch → phone over loopback (two `lifesync serve` processes) and
/// times start-to-confirmation, next to the floor measured in the same run: the larger of one
/// SHA-256 pass over the same file and one durable copy of it.
enum TransferBench {
    static func run(mebibytes: Int, directory: String) throws -> BenchReport {
        let binary = try SyncBench.selfExecutable()
        let source = directory + "/recording.m4a"
        try writePattern(to: source, mebibytes: mebibytes)
        defer { unlink(source) }
        let watchPath = directory + "/watch.sqlite", phonePath = directory + "/phone.sqlite"
        for path in [watchPath, phonePath] { ImportBench.removeDatabase(path) }
        let watch = try Replica.create(path: watchPath, role: .watch, clock: SystemClock(), random: SystemRandom())
        let phone = try Replica.create(path: phonePath, role: .phone, clock: SystemClock(), random: SystemRandom())
        for path in [watchPath, phonePath] { unlink(NodeKey.path(forReplica: path)) }
        try LocalPairing.pair([watch, phone])
        let storage = try FileRecordingStorage(replicaPath: watchPath)
        let recording = try storage.attach(source, to: watch, mediaType: "audio/mp4", random: SystemRandom())
        let (id, sha) = (recording.id, recording.sha256)
        defer { for path in [watchPath, phonePath] { try? FileManager.default.removeItem(atPath: path + ".recordings") } }

        // The baseline: one streaming SHA-256 pass over the same file (warm in the page cache, as
        // the sender's copy is).
        var passes: [Double] = []
        for _ in 0..<3 {
            let hashStart = MonotonicClock.seconds()
            let (_, baseline) = try hashFile(storage.path(of: recording.storageName))
            passes.append(MonotonicClock.seconds() - hashStart)
            precondition(baseline == sha.hex)
        }
        let hashSeconds = BenchReport.median(passes)
        // And one durable copy of it (write + fsync), the other thing a receiver cannot skip: the
        // floor is the larger of the two.
        var copies: [Double] = []
        for _ in 0..<3 {
            let copyStart = MonotonicClock.seconds()
            try durableCopy(storage.path(of: recording.storageName), to: directory + "/copy.m4a")
            copies.append(MonotonicClock.seconds() - copyStart)
            unlink(directory + "/copy.m4a")
        }
        let copySeconds = BenchReport.median(copies)
        let floorSeconds = max(hashSeconds, copySeconds)

        let port = try SyncBench.freeLoopbackPort()
        let phoneProcess = try SyncBench.spawn(binary, ["serve", "--db", phonePath, "--listen", "127.0.0.1:\(port)"], log: directory + "/phone.log")
        defer { phoneProcess.terminate() }
        try SyncBench.waitUntilListening(log: directory + "/phone.log")
        let start = MonotonicClock.seconds()
        let watchProcess = try SyncBench.spawn(binary, ["serve", "--db", watchPath, "--peer", "127.0.0.1:\(port)", "--keep-recordings"],
                                               log: directory + "/watch.log")
        defer { watchProcess.terminate() }
        guard waitUntil(timeout: 900, every: 0.005, { ((try? watch.confirmations(id: id)) ?? []).contains { $0.sha256 == sha } }) else {
            throw CLIError.refused("bench transfer: no confirmation within 15 minutes")
        }
        let seconds = MonotonicClock.seconds() - start
        let rss = ProcessMemory.peak(phoneProcess.pid)
        let received = try FileRecordingStorage(replicaPath: phonePath).path(of: recording.storageName)
        let copy = try hashFile(received).1
        precondition(copy == sha.hex, "bench transfer: the phone's copy differs")
        _ = phone
        return BenchReport(title: "transfer a \(mebibytes) MiB recording watch → phone over loopback TCP", figures: [
            ("one SHA-256 pass (s)", hashSeconds, "s"),
            ("one durable copy (write, fsync)", copySeconds, "s"),
            ("start to confirmation (s)", seconds, "s"),
            ("ratio transfer / floor", seconds / floorSeconds, "x"),
            ("throughput", Double(mebibytes) / seconds, "MiB/s"),
            ("phone peak RSS", rss, "MiB"),
        ])
    }

    /// A file of varied bytes (not all zeros, so nothing along the way can compress it away).
    static func writePattern(to path: String, mebibytes: Int) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw CLIError.refused("cannot write \(path)") }
        defer { close(fd) }
        let random = SeededRandom(seed: 7)
        var block = [UInt8](repeating: 0, count: 1 << 20)
        for i in block.indices { block[i] = UInt8(truncatingIfNeeded: random.nextUInt64()) }
        for n in 0..<mebibytes {
            block[0] = UInt8(truncatingIfNeeded: n)
            block[1] = UInt8(truncatingIfNeeded: n >> 8)
            let written = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == block.count else { throw CLIError.refused("cannot write \(path)") }
        }
    }

    /// Copies `source` to `destination` in 1 MiB writes and fsyncs it.
    static func durableCopy(_ source: String, to destination: String) throws {
        let input = open(source, O_RDONLY)
        guard input >= 0 else { throw CLIError.refused("cannot read \(source)") }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard output >= 0 else { throw CLIError.refused("cannot write \(destination)") }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let got = read(input, &buffer, buffer.count)
            if got <= 0 { break }
            guard buffer.withUnsafeBytes({ write(output, $0.baseAddress, got) }) == got else { throw CLIError.refused("cannot write \(destination)") }
        }
        guard fsync(output) == 0 else { throw CLIError.refused("cannot fsync \(destination)") }
    }

    static func hashFile(_ path: String) throws -> (UInt64, String) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw CLIError.refused("cannot read \(path)") }
        defer { close(fd) }
        let hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var total: UInt64 = 0
        while true {
            let got = read(fd, &buffer, buffer.count)
            if got <= 0 { break }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<got])) }
            total += UInt64(got)
        }
        return (total, hasher.finalize().hex)
    }
}
