import Foundation
import Glibc
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// README's blocks pasted into a real terminal, as a reader does: a tmux session (a pty, an
/// interactive bash with readline, job control and bracketed paste), the Quick start, then
/// Recordings, then Backup and restore, one after another in one shell, each pasted whole and
/// run with Enter. A command that fails is reported by the shell's ERR trap and fails the test,
/// and what each line's comment promises is checked in what the terminal shows. (The demo and
/// test commands, the HTTP API's examples with their placeholders, and the simulator's long
/// sweeps are run elsewhere: DemoTests, HTTPSTests, ReadmeExampleTests.)
@Suite(.serialized) struct ReadmeTerminalTests {
    static let tmux = ["/usr/bin/tmux", "/usr/local/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.timeLimit(.minutes(3)), .enabled(if: tmux != nil, "tmux is not installed (apt-get install tmux; .ci/run installs it)"))
    func theBlocksDoWhatTheirCommentsSayWhenPasted() throws {
        let directory = TemporaryDirectory("lifesync-terminal")
        // The Quick start's build (see quickStartTools), and voice.m4a, "a recording of yours".
        let bin = try ReadmeExampleTests.quickStartTools(in: directory)
        let voice = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
        try voice.write(to: URL(fileURLWithPath: directory.file("voice.m4a")))
        let voiceHash = SHA256.hash(Array(voice)).hex

        let port = String(try freeLoopbackPort())
        let quick = try #require(try Readme.codeBlocks(under: "Quick start").first)
        let recordings = try #require(try Readme.codeBlocks(under: "Recordings").first)
        let backup = try #require(try Readme.codeBlocks(under: "Backup and restore").first)
        try #require(quick.contains("7002") && recordings.contains("7002"), "the blocks no longer use port 7002; update this test")

        let terminal = try Terminal(tmux: Self.tmux!, directory: directory.path, path: bin + ":/usr/local/bin:/usr/bin:/bin")
        defer {
            terminal.close()
            for replica in ["phone.sqlite", "watch.sqlite", "mac.sqlite"].map(directory.file) {
                if let pid = ServeLock.holder(replicaPath: replica), pid > 0 { kill(pid, SIGKILL) }
            }
        }
        try terminal.type(#"trap 'echo "__ERR__ $BASH_COMMAND"' ERR"#)

        // Quick start.
        let first = try terminal.run(quick.replacingOccurrences(of: "7002", with: port), step: 1, timeout: 60)
        #expect(!first.contains("__ERR__"), "a Quick start command failed:\n\(first)")
        #expect(first.contains("mood 7 (1–10) \"slept well\" #morning"), "the mood is there:\n\(first)")
        #expect(first.contains("\"Buy groceries\""), "the search finds the note:\n\(first)")
        // The watch shows by the name it announces once HELLO carries names, by its short ID until then.
        #expect(first.contains("node        \"Kitchen iPad\" (phone)") && first.contains("vector:")
                && first.range(of: #"\n  (Running watch|watch_[0-9a-f]{8}) \(watch\) "#, options: .regularExpression) != nil,
                "status shows the node by name, its peer and the vector:\n\(first)")
        #expect(!first.contains("[phone]") && !first.contains("[watch]"), "a node's log reached the terminal:\n\(first)")
        #expect(Self.stopped(directory, ["phone.sqlite", "watch.sqlite"]), "kill %1 %2 left a serve running")

        // Recordings, with the Quick start's replicas.
        let second = try terminal.run(recordings.replacingOccurrences(of: "7002", with: port), step: 2, timeout: 60)
        #expect(!second.contains("__ERR__"), "a Recordings command failed:\n\(second)")
        let lines = second.split(separator: "\n").map(String.init)
        // A recording's line, wherever it starts: the terminal can echo a pasted command onto it.
        let listed = lines.indices.filter { lines[$0].range(of: #"watch_[0-9a-f-]{36}  (pending|synced)"#, options: .regularExpression) != nil }
        #expect(listed.count == 2, "each recordings command lists the one recording:\n\(second)")
        if listed.count == 2 {
            #expect(lines[listed[0]].contains("pending") && lines[listed[1]].contains("synced"), "pending on the watch, synced on the phone:\n\(second)")
            #expect(lines[listed[0]...].filter { $0 == "    sha256 \(voiceHash)" }.count == 2, "both show voice.m4a's SHA-256:\n\(second)")
        }
        #expect(Self.stopped(directory, ["phone.sqlite", "watch.sqlite"]), "kill %1 %2 left a serve running")

        // Backup and restore.
        let third = try terminal.run(backup, step: 3, timeout: 30)
        #expect(!third.contains("__ERR__"), "a Backup and restore command failed:\n\(third)")
        #expect(third.contains("\"name\" : \"mood\"") || third.contains("\"name\": \"mood\""), "the backup's mood is back:\n\(third)")
        #expect(third.split(separator: "\n").contains("not here until a peer sends it back"), "\(third)")
    }

    /// Whether no `serve` holds any of `replicas` (within 10 s).
    static func stopped(_ directory: TemporaryDirectory, _ replicas: [String]) -> Bool {
        eventually(timeout: 10) { replicas.allSatisfy { ServeLock.holder(replicaPath: directory.file($0)) == nil } }
    }
}

/// A tmux session on a socket of its own, running an interactive bash in `directory` with only
/// `path`, a home of its own there and a plain prompt.
final class Terminal {
    let tmux: String
    let socket = "lifesync-readme-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

    init(tmux: String, directory: String, path: String) throws {
        self.tmux = tmux
        try command(["start-server", ";", "set-option", "-g", "history-limit", "100000", ";",
                     "new-session", "-d", "-s", "readme", "-x", "200", "-y", "50", "-c", directory,
                     "env", "-i", "PATH=" + path, "HOME=" + directory, "TERM=xterm-256color", "LANG=C.UTF-8", "PS1=$ ",
                     "/bin/bash", "--norc", "--noprofile", "-i"])
    }

    @discardableResult
    func command(_ arguments: [String], input: String? = nil) throws -> String {
        let result = try Captured.run(tmux, ["-L", socket, "-f", "/dev/null"] + arguments, input: input, timeout: 20)
        guard result.status == 0 else { throw ServeError("tmux \(arguments.first ?? ""): \(result.stderr)") }
        return result.stdout
    }

    /// Types `line` and Enter.
    func type(_ line: String) throws {
        try command(["send-keys", "-t", "readme", "-l", line])
        try command(["send-keys", "-t", "readme", "Enter"])
    }

    /// Pastes `block` (bracketed, as a terminal pastes) after a marker the shell echoes, presses
    /// Enter, then types another marker it echoes once the block is done; returns what the
    /// terminal showed between the two.
    func run(_ block: String, step: Int, timeout: Double) throws -> String {
        try type("echo __START_\(step)__")
        guard eventually(timeout: 10, interval: 0.1, { ((try? self.screen()) ?? "").split(separator: "\n").contains("__START_\(step)__") }) else {
            throw ServeError("the shell did not answer before block \(step):\n\(try screen())")
        }
        try command(["load-buffer", "-b", "block", "-"], input: block)
        try command(["paste-buffer", "-p", "-d", "-b", "block", "-t", "readme"])
        try command(["send-keys", "-t", "readme", "Enter"])
        try type("echo __DONE_\(step)__")
        let done = eventually(timeout: timeout, interval: 0.2) { ((try? self.screen()) ?? "").split(separator: "\n").contains("__DONE_\(step)__") }
        let lines = try screen().split(separator: "\n", omittingEmptySubsequences: false)
        let start = lines.firstIndex(of: "__START_\(step)__").map { $0 + 1 } ?? 0
        let shown = lines[start...].prefix { $0 != "__DONE_\(step)__" }.joined(separator: "\n")
        guard done else { throw ServeError("block \(step) did not finish within \(timeout) s:\n\(shown)") }
        return shown
    }

    /// All the terminal showed, wrapped lines joined.
    func screen() throws -> String { try command(["capture-pane", "-p", "-J", "-S", "-", "-t", "readme"]) }

    func close() { _ = try? command(["kill-server"]) }
}
