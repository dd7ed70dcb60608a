import Foundation
import Glibc
@testable import LifeSyncRuntime
import Testing

/// `import` reads its file a line at a time: every line comes back whole however the buffer's
/// refills cut it, a line longer than the buffer grows it, and a last line without "\n" counts.
@Suite struct LineReaderTests {
    private func lines(of text: String, bufferBytes: Int) throws -> [String] {
        let path = NSTemporaryDirectory() + "lifesync-linereader-\(getpid())-\(bufferBytes).txt"
        defer { unlink(path) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let reader = try LineReader(path: path, bufferBytes: bufferBytes)
        var found: [String] = []
        while let line = try reader.nextLine() { found.append(String(decoding: line, as: UTF8.self)) }
        return found
    }

    @Test(arguments: [16, 17, 64, 1 << 20])
    func everyLineComesBackWhole(bufferBytes: Int) throws {
        let expected = (0..<200).map { i in String(repeating: "x", count: i % 53) + "line \(i)" } + ["", "last without newline"]
        #expect(try lines(of: expected.joined(separator: "\n"), bufferBytes: bufferBytes) == expected)
        #expect(try lines(of: "a\n\nb\n", bufferBytes: bufferBytes) == ["a", "", "b"])
        #expect(try lines(of: "", bufferBytes: bufferBytes).isEmpty)
    }

    @Test func aDirectoryOrAMissingFileIsRefusedSayingWhy() {
        #expect(throws: RuntimeError.self) { try LineReader(path: NSTemporaryDirectory()) }
        do {
            _ = try LineReader(path: "/nonexistent/lifesync.ndjson")
            Issue.record("a missing file was read")
        } catch {
            #expect("\(error)".contains("No such file or directory"))
        }
    }
}
