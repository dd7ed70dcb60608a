import Glibc

/// One thread's poll(2) loop. Each round it asks every participant what to wait for and by
/// when, waits once for all of them, then hands each the readiness of its own descriptors. The
/// node server is one participant; an HTTP front end can be another on the same thread, so
/// nothing needs a lock around the replica.
///
/// ```swift
/// let loop = PollLoop(participants: [server])
/// while running { loop.runOnce(maximumWait: 100) }
/// ```
final class PollLoop {
    /// A descriptor and the poll events wanted for it this round.
    struct Interest {
        var fd: Int32
        var events: Int16
    }

    private let participants: [PollParticipant]
    private var fds: [pollfd] = []
    private var counts: [Int] = []

    init(participants: [PollParticipant]) {
        self.participants = participants
    }

    /// One round: gather interests, wait at most `maximumWait` ms (less when a participant has
    /// a deadline sooner), deliver readiness, let each participant's time pass.
    func runOnce(maximumWait: Int64) {
        let now = MonotonicClock.milliseconds()
        var deadline = now + maximumWait
        counts.removeAll(keepingCapacity: true)
        fds.removeAll(keepingCapacity: true)
        for participant in participants {
            let (interests, due) = participant.interests(now: now)
            if let due { deadline = min(deadline, due) }
            counts.append(interests.count)
            for interest in interests { fds.append(pollfd(fd: interest.fd, events: interest.events, revents: 0)) }
        }
        precondition(counts.reduce(0, +) == fds.count, "one pollfd per interest")
        _ = poll(&fds, nfds_t(fds.count), Int32(clamping: max(0, deadline - now)))
        let after = MonotonicClock.milliseconds()
        var start = 0
        for (participant, count) in zip(participants, counts) {
            participant.ready(fds[start..<(start + count)].map(\.revents), now: after)
            start += count
        }
    }
}

/// Something that waits on descriptors in a `PollLoop`.
protocol PollParticipant: AnyObject {
    /// What to poll this round, and the latest time it needs to run again (nil: no deadline).
    func interests(now: Int64) -> (interests: [PollLoop.Interest], deadline: Int64?)
    /// The poll results for this round's interests, in their order; then whatever time-driven
    /// work is due.
    func ready(_ revents: [Int16], now: Int64)
}
