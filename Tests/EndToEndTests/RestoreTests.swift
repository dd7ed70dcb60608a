import Foundation
import Glibc
import LifeSyncRuntime
import Testing
import TestSupport

/// A replica restored from an older copy (issue: "nothing lost in the user's world" §1), with
/// real `serve` processes: every write made before and after the restore reaches both replicas,
/// and they converge.
@Suite(.serialized) struct RestoreTests {
    /// `lifesync add --text TEXT` on `node`'s file: its entry ID and what it said on stderr.
    private func add(_ node: ServeNode, _ text: String) throws -> (id: String, stderr: String) {
        let result = try node.cli(["add", "--category", "note", "--text", text])
        return (result.stdout, result.stderr)
    }

    private func waitFor(_ ids: [String], on node: ServeNode) throws { try node.waitFor(ids) }

    private func stateHash(_ node: ServeNode) throws -> String { try node.status()["state_hash"] as? String ?? "?" }

    /// The replica's own files (`mac.sqlite`, `-wal`, `-shm`, `.key`), as a user copies them aside.
    private func replicaFiles(_ node: ServeNode) throws -> [String] {
        let folder = (node.db as NSString).deletingLastPathComponent, base = (node.db as NSString).lastPathComponent
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { name in
            var isFolder: ObjCBool = false
            return name.hasPrefix(base) && FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isFolder) && !isFolder.boolValue
        }.map { folder + "/" + $0 }
    }

    /// A phone and a mac, paired and serving, the mac's entry "one" on the phone.
    private func pairServingWithOneEntry() throws -> (ServeGroup, ServeNode, ServeNode) {
        let group = ServeGroup()
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        try phone.start()
        try mac.start(peers: [phone.address])
        let one = try add(mac, "one")
        try waitFor([one.id], on: phone)
        return (group, phone, mac)
    }

    /// The mac stopped, `files()` copied aside, the mac serving again to write "two" (which the
    /// phone gets), stopped, and the copies put back in place of `files()`. Returns "two".
    private func restoredAfterWritingTwo(_ group: ServeGroup, _ phone: ServeNode, _ mac: ServeNode,
                                         files: () throws -> [String]) throws -> (id: String, stderr: String) {
        mac.terminate()
        let aside = group.directory.file("aside")
        try FileManager.default.createDirectory(atPath: aside, withIntermediateDirectories: true)
        let copied = try files()
        for file in copied { try FileManager.default.copyItem(atPath: file, toPath: aside + "/" + (file as NSString).lastPathComponent) }

        try mac.start(peers: [phone.address])
        let two = try add(mac, "two")
        try waitFor([two.id], on: phone)
        mac.terminate()
        for file in try files() { try FileManager.default.removeItem(atPath: file) }
        for file in copied { try FileManager.default.copyItem(atPath: aside + "/" + (file as NSString).lastPathComponent, toPath: file) }
        return two
    }

    /// The mac serves again: the phone gets `with`, the mac gets `back`, their states agree.
    private func servesAndConverges(_ phone: ServeNode, _ mac: ServeNode, with sent: [String], back: [String]) throws {
        try mac.start(peers: [phone.address])
        try waitFor(sent, on: phone)
        try waitFor(back, on: mac)
        #expect(eventually(timeout: 20, interval: 0.2) { (try? stateHash(mac)) == (try? stateHash(phone)) },
                "the replicas converge\n\(mac.allOutput)\n\(phone.allOutput)")
        #expect(mac.entryCount == 3 && phone.entryCount == 3)
    }

    @Test(.timeLimit(.minutes(2)))
    func aReplicaPutBackByHandLosesNothing() throws {
        let (group, phone, mac) = try pairServingWithOneEntry()
        defer { group.stopAll() }

        let two = try restoredAfterWritingTwo(group, phone, mac, files: { try replicaFiles(mac) })

        let three = try add(mac, "three")
        #expect(three.stderr.contains("restored from an older copy"), "the user is told: \(three.stderr)")
        try servesAndConverges(phone, mac, with: [three.id], back: [two.id])
    }

    /// The device restored whole (a phone put back from its backup): its replica and its write
    /// mark come back together, so nothing local tells it was restored. Its write "three" reuses
    /// the number "two" took; comparing histories with the phone at the handshake (PROTOCOL.md
    /// §7.2.3) moves "three" to a new incarnation and brings "two" back.
    @Test(.timeLimit(.minutes(2)))
    func aDeviceRestoredWholeWithItsWriteMarkLosesNothing() throws {
        let (group, phone, mac) = try pairServingWithOneEntry()
        defer { group.stopAll() }
        let stateFolder = LifeSyncBinary.environment["LIFESYNC_STATE_DIR"] ?? ""
        let mark = stateFolder + "/" + mac.nodeID + ".mark"

        let two = try restoredAfterWritingTwo(group, phone, mac, files: { try replicaFiles(mac) + [mark] })

        let three = try add(mac, "three")
        #expect(!three.stderr.contains("restored"), "nothing local tells: \(three.stderr)")
        try servesAndConverges(phone, mac, with: [three.id], back: [two.id])
        #expect(mac.allOutput.contains("restored with its write mark"), "the user is told: \(mac.allOutput)")
    }

    @Test(.timeLimit(.minutes(2)))
    func backupWhileServingThenRestoreLosesNothing() throws {
        let (group, phone, mac) = try pairServingWithOneEntry()
        defer { group.stopAll() }

        let backup = group.directory.file("mac-backup.sqlite")
        let made = try LifeSyncBinary.run(["backup", backup, "--db", mac.db])
        try #require(made.status == 0, "backup: \(made.stderr)")
        #expect(made.stdout.contains("backed up") && made.stdout.contains("the key was not copied"))
        let refused = try LifeSyncBinary.run(["backup", backup, "--db", mac.db])
        #expect(refused.status == 1 && refused.stderr.contains("exists"))

        let two = try add(mac, "two")
        try waitFor([two.id], on: phone)
        let whileServing = try LifeSyncBinary.run(["restore", backup, "--db", mac.db])
        #expect(whileServing.status == 1 && whileServing.stderr.contains("serving"), "restore refused while the node serves: \(whileServing.stderr)")
        mac.terminate()
        let restored = try LifeSyncBinary.run(["restore", backup, "--db", mac.db])
        try #require(restored.status == 0, "restore: \(restored.stderr)")
        #expect(mac.entryCount == 1, "the backup holds the state before two")

        let three = try add(mac, "three")
        #expect(three.stderr.contains("lifesync backup"), "the user is told why: \(three.stderr)")
        try mac.start(peers: [phone.address])
        try waitFor([three.id], on: phone)
        try waitFor([two.id], on: mac)
        #expect(eventually(timeout: 20, interval: 0.2) { (try? stateHash(mac)) == (try? stateHash(phone)) },
                "the replicas converge\n\(mac.allOutput)\n\(phone.allOutput)")
        phone.terminate()
        let wrong = try LifeSyncBinary.run(["restore", backup, "--db", phone.db])
        #expect(wrong.status == 1 && wrong.stderr.contains("is a backup of"), "another node's backup is refused: \(wrong.stderr)")
    }

    /// README's "Backup and restore" block pasted into bash -e in a fresh folder: every line does
    /// what its comment says.
    @Test(.timeLimit(.minutes(3)))
    func theReadmeBlockDoesWhatItSays() throws {
        let block = try #require(try Readme.codeBlocks(under: "Backup and restore").first)
        let directory = TemporaryDirectory("lifesync-readme-backup")
        try block.write(toFile: directory.file("backup.sh"), atomically: true, encoding: .utf8)
        var environment = LifeSyncBinary.environment
        environment["PATH"] = (LifeSyncBinary.path as NSString).deletingLastPathComponent + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let result = try Captured.run("/bin/bash", ["-e", "backup.sh"], environment: environment, directory: directory.path, timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("backed up mac_") && result.stdout.contains("restored mac_"), "\(result.stdout)")
        #expect(result.stdout.contains("\"category\":\"mood\"") || result.stdout.contains("\"category\": \"mood\""), "the mood is back: \(result.stdout)")
        #expect(result.stdout.hasSuffix("not here until a peer sends it back\n"), "\(result.stdout)")
        #expect(FileManager.default.fileExists(atPath: directory.file("mac-backup.sqlite")))
    }
}
