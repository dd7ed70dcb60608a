import FoundationEssentials

/// What a live process holds in memory, from its `/proc/PID/status`: for benches and tests that
/// watch a node process from outside.
///
///     let before = ProcessMemory.resident(pid)   // VmRSS, MiB
///     let peak = ProcessMemory.peak(pid)         // VmHWM, MiB
package enum ProcessMemory {
    /// A kB figure of the process's status (`VmRSS:`, `VmHWM:`), in MiB; -1 if it cannot be read.
    package static func mebibytes(_ pid: Int32, field: String) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
              let kib = Double(line.split(separator: " ").dropFirst().first ?? "") else { return -1 }
        return kib / 1024
    }

    /// Resident memory now (VmRSS), MiB.
    package static func resident(_ pid: Int32) -> Double { mebibytes(pid, field: "VmRSS:") }

    /// The most resident memory the process ever had (VmHWM), MiB.
    package static func peak(_ pid: Int32) -> Double { mebibytes(pid, field: "VmHWM:") }
}
