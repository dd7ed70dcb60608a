import LifeSync

/// The run's trace: every processed event folded into one SHA-256 (equal seeds give equal
/// hashes), and the last lines kept for a failure report.
struct Trace {
    private let hasher = SHA256()
    private(set) var events = 0
    private var recent: [String] = []
    private var recentStart = 0
    static let keep = 60
    /// Where every event goes as it is recorded (`simulate --trace`); nil: only the hash and the
    /// last lines are kept.
    var echo: (@Sendable (String) -> Void)?

    mutating func record(_ time: Int64, _ line: String, bytes: [UInt8]? = nil) {
        events += 1
        let text = "\(time) \(line)"
        echo?(text)
        hasher.update(text.utf8)
        hasher.update([0x0A])
        if let bytes { bytes.withUnsafeBytes { hasher.update($0) } }
        if recent.count < Trace.keep {
            recent.append(text)
        } else {
            recent[recentStart] = text
            recentStart = (recentStart + 1) % Trace.keep
        }
    }

    /// The last events, oldest first.
    var excerpt: [String] { Array(recent[recentStart...] + recent[..<recentStart]) }

    /// The trace hash; call once, at the end of the run.
    func finish() -> String { hasher.finalize().hex }
}
