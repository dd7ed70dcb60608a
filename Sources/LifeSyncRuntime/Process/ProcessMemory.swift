import FoundationEssentials
import Glibc

/// What a live process holds in memory, from its `/proc/PID/status`, and the processor time it
/// has used, from its `/proc/PID/stat`: for benches and tests that watch a node process from
/// outside.
///
///     let before = ProcessMemory.resident(pid)   // VmRSS, MiB
///     let peak = ProcessMemory.peak(pid)         // VmHWM, MiB
///     let busy = ProcessMemory.cpuSeconds(pid)   // user + system time, s
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

    /// Processor time the process has used so far, user and system (utime + stime), in seconds;
    /// -1 if it cannot be read.
    package static func cpuSeconds(_ pid: Int32) -> Double {
        // The command name (in parentheses) may hold spaces: the fields are counted after it.
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return -1 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Fields 14 and 15 of proc(5); the first after the name is field 3.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return -1 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
