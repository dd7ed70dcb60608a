import CLinux
import Glibc
import LifeSync

/// What all connections together may make the node hold, beyond each one's own bound: the
/// unfinished frames their sessions buffer (`Limits.maximumBufferedInput`) and the output queued
/// for them (`Limits.maximumTotalQueuedOutput`). A connection is charged what it really holds;
/// over a budget the heavy ones wait (TCP's back-pressure holds the rest in the peer's buffers,
/// not ours), the rest go on. Memory freed when a heavy connection goes is given back.
extension NodeServer {
    /// Reads the session's unfinished frame after a read and keeps the sum current.
    func noteHeldInput(_ connection: PeerConnection, now: Int64) {
        guard connections[connection.id] != nil else { return }
        let (held, remaining) = core.bufferedInput(connection: connection.id)
        inputBudget.note(connection.id, held: held, remaining: remaining, now: now)
        stats.largestBufferedInput = inputBudget.largest
    }

    /// Whether the connection is not read now: the budget is spent and it holds an unfinished
    /// frame, and it is not that frame's turn (`InputBudget`), so what is held grows by one frame
    /// at most while over the budget, and completing frames free it.
    func waitsForInputBudget(_ connection: PeerConnection) -> Bool { inputBudget.waits(connection.id) }

    /// While over the input budget, a connection whose unfinished frame has not grown for
    /// `Limits.stalledFrameTimeout`, nor in two turns of its own, is closed: a peer that parks
    /// most of a frame and sends no more (a LAN moves megabytes a second) holds its share no
    /// longer. A frame that waits for its turn is not closed for waiting.
    func closeStalledFrames(now: Int64) {
        for stalled in inputBudget.stalled(now: now) {
            guard let connection = connections[stalled.connection] else { continue }
            log("\(connection.remote) held \(stalled.bytes) bytes of an unfinished frame for \(stalled.heldFor) ms "
                + "without sending more while the node was short of room; closing it")
            closeNow(connection, now: now)
        }
    }

    /// Whether a connection is among those that wait while all queued output is over its budget
    /// (until it is below half): those holding a 64th of the budget or more (1 MiB by default).
    func chargedForTotalOutput(_ connection: PeerConnection) -> Bool {
        totalQueued > limits.maximumTotalQueuedOutput / (connection.readPaused ? 2 : 1)
            && connection.queued >= max(64 << 10, limits.maximumTotalQueuedOutput / 64)
    }

    /// A connection went: its share is free.
    func releaseBudget(of connection: PeerConnection) { inputBudget.release(connection.id) }

    /// Returns freed heap memory to the kernel (`malloc_trim`) when more than
    /// `Limits.keptFreeMemory` of it lies free, looked at every 2 s: glibc keeps what a flood
    /// made it allocate (most of 90 MiB stayed after a PING flood ended; the replies and actions
    /// of one read are freed as soon as they went, without any connection closing). And once a
    /// node has not synced for such a turn, the replica's page cache (up to
    /// 16 MiB a sync fills) goes back too: an idle node holds about what a fresh one does
    /// (36 MiB, was 58, on a mac idle after taking 20k entries); the next burst reads its pages
    /// again from the kernel's cache. Keepalives do not count as syncing: a node paired with many
    /// devices reads a PING or PONG in nearly every turn, and kept its cache for good.
    func giveMemoryBack(now: Int64) {
        guard now >= nextTrim else { return }
        nextTrim = now + 2_000
        defer { syncedSinceTrim = false }
        if syncedSinceTrim || core.replica.textCatchUpDue {
            // Still busy: a text catch-up's steps fill the page cache as a sync does.
            cacheGivenBack = false
        } else if !cacheGivenBack {
            cacheGivenBack = true
            // Idle: a burst a peer broke off before its CAUGHT_UP is indexed now, not at the
            // next sync or local write.
            core.replica.checkpoint()
            core.replica.database.releaseMemory()
            malloc_trim(0)
            return
        }
        if mallinfo2().fordblks >= limits.keptFreeMemory { malloc_trim(0) }
    }
}
