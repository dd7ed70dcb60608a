import Glibc
import FoundationEssentials
import LifeSync
import LifeSyncRuntime

extension LifeSyncCommandLine {
    static let demoCommand = Command(
        spec: CommandSpec(
            name: "demo", summary: "watch, phone and mac on loopback: write offline, partition, converge",
            options: [OptionSpec(name: "--dir", kind: .value, valueName: "DIR", help: "keep the three replicas here (default: a temporary folder, removed)"),
                      OptionSpec(name: "--verbose", kind: .flag, help: "also print the nodes' own log lines")],
            details: "Starts three real nodes on 127.0.0.1, tells what happens in plain words, and exits by itself."),
        run: { arguments, context in
            let keep = arguments.value("--dir")
            let dir = keep ?? UserFile.temporaryDirectory + "lifesync-demo-\(getpid())"
            try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { if keep == nil { try? FileManager.default.removeItem(atPath: dir) } }
            let demo = Demo(directory: dir, console: context.console, verbose: arguments.flag("--verbose"))
            return try demo.run() ? 0 : 1
        })
}

/// The README's main command: three nodes converging, a partition, a conflict, told as a story.
struct Demo {
    let directory: String
    let console: Console
    let verbose: Bool

    func say(_ line: String) { console.print(line) }

    func path(_ role: Role) -> String { "\(directory)/\(role.rawValue).sqlite" }

    /// A separate connection to a node's replica, as the CLI would open it.
    func open(_ role: Role) throws -> Replica { try Replica(path: path(role), clock: SystemClock(), random: SystemRandom()) }

    func start(_ role: Role, listen: String?, peers: [String]) throws -> NodeThread {
        var configuration = NodeConfiguration(peers: peers)
        configuration.reconnectMaximum = 1_000
        configuration.debounce = 200
        let console = self.console, verbose = self.verbose
        return try NodeThread(path: path(role), configuration: configuration, listen: listen, name: role.rawValue) { line in
            if verbose { console.print("      \(line)") }
        }
    }

    /// What `lifesync attach` does, with generated audio-like bytes.
    func attachVoiceNote(to replica: Replica, entry: String) throws -> Recording {
        let source = directory + "/voice-note.m4a"
        let random = SeededRandom(seed: 2026)
        let bytes = (0..<(256 * 1024)).map { _ in UInt8(truncatingIfNeeded: random.nextUInt64()) }
        guard FileManager.default.createFile(atPath: source, contents: Data(bytes)) else { throw CLIError.refused("cannot write \(source)") }
        defer { unlink(source) }
        return try FileRecordingStorage(replicaPath: replica.path)
            .attach(source, to: replica, entryID: entry, mediaType: "audio/mp4", random: SystemRandom())
    }

    func run() throws -> Bool {
        let started = MonotonicClock.seconds()
        say("LifeSync demo — three nodes on this machine, each with its own SQLite replica in \(directory)")
        var replicas: [Replica] = []
        for role in [Role.watch, .phone, .mac] {
            for suffix in ["", "-wal", "-shm", ".key"] { unlink(path(role) + suffix) }
            try? FileManager.default.removeItem(atPath: path(role) + ".recordings")
            replicas.append(try Replica.create(path: path(role), role: role, clock: SystemClock(), random: SystemRandom()))
        }
        // Paired as `lifesync id` and `lifesync trust` would pair them: each trusts the others' keys.
        try LocalPairing.pair(replicas)
        replicas.removeAll()
        var phone = try start(.phone, listen: "127.0.0.1:0", peers: [])
        let phoneAddress = phone.listeningAddress!
        let mac = try start(.mac, listen: "127.0.0.1:0", peers: [phoneAddress])
        let watch = try start(.watch, listen: nil, peers: [phoneAddress])
        defer { watch.stop(); mac.stop(); phone.stop() }
        say("1. Started a phone on \(phoneAddress), a mac on \(mac.listeningAddress!) and a watch; the mac and the watch dial the phone.")

        let watchDB = try open(.watch), phoneDB = try open(.phone), macDB = try open(.mac)
        let mood = try watchDB.add(json: try JSONValue.parse(#"{"category": "mood", "data": {"metric": {"name": "mood", "value": 7, "scale_min": 1, "scale_max": 10}, "text": "good run this morning"}}"#))
        let plan = try macDB.add(json: try JSONValue.parse(#"{"category": "note", "data": {"text": "Plan: buy groceries", "tags": ["todo"]}}"#))
        _ = try macDB.add(json: try JSONValue.parse(#"{"category": "work", "data": {"text": "wrote the sync chapter", "metric": {"name": "focus", "value": 8, "scale_min": 1, "scale_max": 10}}}"#))
        let voice = try attachVoiceNote(to: watchDB, entry: mood.id)
        say("2. The watch logged a mood (7/10) with a 256 KiB voice note; the mac wrote two notes.")
        guard try waitUntil(timeout: 15, { try phoneDB.liveEntryCount() == 3 && macDB.liveEntryCount() == 3 }) else {
            say("   ✗ the nodes did not converge within 15 s"); return false
        }
        say("   ✓ converged: phone and mac hold all 3 entries (the watch keeps its own 1: watches send, they do not receive).")
        say("     replica hash phone \(try phoneDB.canonicalHash().prefix(12)) = mac \(try macDB.canonicalHash().prefix(12))")
        guard try waitUntil(timeout: 15, {
            try macDB.recordingFile(id: voice.id)?.state == .present && watchDB.recordingFile(id: voice.id)?.state == .removed
        }) else {
            say("   ✗ the voice note did not reach the mac within 15 s"); return false
        }
        say("   ✓ the voice note went watch → phone → mac in checksummed chunks; the phone confirmed SHA-256 \(voice.sha256.hex.prefix(12))…,")
        say("     and only then did the watch remove its copy (recordings are never dropped before a confirmation).")

        phone.stop()
        say("3. Stopped the phone. The mac and the watch keep working offline:")
        let run2 = try watchDB.add(json: try JSONValue.parse(#"{"category": "health", "data": {"metric": {"name": "pain", "value": 2, "scale_min": 1, "scale_max": 10}, "text": "knee ok"}}"#))
        _ = run2
        try macDB.update(id: plan.id, patch: try JSONValue.parse(#"{"data": {"text": "Plan: buy groceries and coffee"}}"#))
        try macDB.update(id: plan.id, patch: try JSONValue.parse(#"{"data": {"tags": ["errand"]}}"#))
        say("   - the watch logged knee pain 2/10; the mac edited the plan to \"…groceries and coffee\" and tagged it \"errand\".")
        usleep(20_000)
        try phoneDB.update(id: plan.id, patch: try JSONValue.parse(#"{"data": {"text": "Plan: buy groceries, skip the coffee"}}"#))
        say("   - meanwhile the phone, offline too, edited the same plan to \"…skip the coffee\" (a concurrent edit).")

        phone = try start(.phone, listen: phoneAddress, peers: [])
        say("4. Restarted the phone on \(phoneAddress); the others reconnect on their own.")
        guard try waitUntil(timeout: 20, {
            try phoneDB.liveEntryCount() == 4 && macDB.liveEntryCount() == 4 && phoneDB.canonicalHash() == macDB.canonicalHash()
        }) else {
            say("   ✗ the nodes did not converge within 20 s after the restart"); return false
        }
        let onPhone = try phoneDB.entry(id: plan.id).data.text ?? "", onMac = try macDB.entry(id: plan.id).data.text ?? ""
        say("   ✓ converged again: phone and mac hold the same 4 entries (hash \(try phoneDB.canonicalHash().prefix(12))).")
        say("   ✓ the conflict resolved the same way everywhere: the plan reads \"\(onPhone)\" on the phone and \"\(onMac)\" on the mac")
        say("     (last writer wins by hybrid logical clock; the phone's edit was later).")
        let tags = try phoneDB.entry(id: plan.id).data.tags ?? []
        guard tags == ["errand"], try macDB.entry(id: plan.id).data.tags == tags else {
            say("   ✗ the mac's tag did not survive the phone's concurrent text edit"); return false
        }
        say("   ✓ edits of different fields merge: the mac's tag \"errand\" stands beside the phone's text, on both.")
        let kept = try phoneDB.conflicts() + macDB.conflicts()
        if let loser = kept.first(where: { $0.entryID == plan.id }) {
            say("   ✓ nothing lost: the losing text \"\(loser.loserEntry?.data.text ?? "")\" is kept in the conflicts table (lifesync conflicts), that field only.")
        } else {
            say("   ✗ the losing edit was not kept"); return false
        }
        say("5. Done in \((MonotonicClock.seconds() - started).fixed(1)) s. Try it yourself: lifesync init, add, serve --listen/--peer, status.")
        return true
    }
}
