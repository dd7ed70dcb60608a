import Glibc

/// One `lifesync serve` per replica. Two would be the same node twice: each dials the same peers
/// under the same node ID, and every connection of one closes the other's as a duplicate, for
/// ever. The lock is an `flock` on `<replica>.serve.lock`, which the kernel releases when the
/// process ends however it ends (kill -9 included), so a stale lock never blocks a restart; the
/// file holds the serving process's ID for `status`.
///
/// ```swift
/// let lock = try ServeLock.acquire(replicaPath: "phone.sqlite")   // refused while another serves
/// ServeLock.holder(replicaPath: "phone.sqlite")                  // that process's ID, or nil
/// ```
package final class ServeLock {
    let fd: Int32

    package static func path(forReplica path: String) -> String { path + ".serve.lock" }

    private init(fd: Int32) { self.fd = fd }

    deinit { close(fd) }  // closing releases the lock

    package static func acquire(replicaPath: String) throws(RuntimeError) -> ServeLock {
        let path = Self.path(forReplica: replicaPath)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw RuntimeError("cannot open \(path): \(errnoText())") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = readPID(fd)
            close(fd)
            throw RuntimeError("another lifesync serve" + (holder.map { " (process \($0))" } ?? "")
                               + " is already serving \(replicaPath); stop it first (two would keep knocking each other's connections off)")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pwrite(fd, pid, pid.count, 0)
        return ServeLock(fd: fd)
    }

    /// The process serving `replicaPath` now, or nil when none is.
    package static func holder(replicaPath: String) -> Int32? {
        let fd = open(Self.path(forReplica: replicaPath), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // A shared lock is granted only while nobody holds the exclusive one.
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        return readPID(fd) ?? -1
    }

    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = pread(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer.prefix(count), as: UTF8.self).filter(\.isNumber))
    }
}
