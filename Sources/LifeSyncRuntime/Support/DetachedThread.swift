import CLinux
import Glibc

/// Runs `body` on a thread of its own, named `name` (at most 15 bytes show, in `top -H` and
/// debuggers): the node's loop and the benchmarks' clients, which block in poll and read and
/// so must not hold a thread of a shared pool. A plain pthread, so the runtime needs no
/// Foundation `Thread` (and the process maps no Foundation beyond FoundationEssentials).
package func detachThread(named name: String, _ body: @escaping @Sendable () -> Void) {
    final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let work = Unmanaged.passRetained(Work(body)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(&thread, nil, { raw in
        Unmanaged<Work>.fromOpaque(raw!).takeRetainedValue().body()
        return nil
    }, work)
    guard created == 0 else {
        Unmanaged<Work>.fromOpaque(work).release()
        preconditionFailure("no thread could be started for \(name): error \(created)")
    }
    _ = pthread_setname_np(thread, String(decoding: name.utf8.prefix(15), as: UTF8.self))
    pthread_detach(thread)
}
