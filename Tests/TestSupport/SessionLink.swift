import LifeSync

/// Two sessions joined in memory: what one sends, the other receives, until both are quiet.
/// The embedded event loop of the session tests — no sockets, no threads, no wall clock.
public final class SessionLink {
    public let a: SyncSession
    public let b: SyncSession
    public private(set) var events: [(side: String, event: SessionEvent)] = []
    public private(set) var closed: [(side: String, reason: String)] = []
    public var now: Int64

    public init(_ a: Replica, _ b: Replica, configuration: SessionConfiguration = .init(),
                configurationB: SessionConfiguration? = nil, now: Int64 = 0) {
        self.now = now
        self.a = SyncSession(replica: a, configuration: configuration, now: now)
        self.b = SyncSession(replica: b, configuration: configurationB ?? configuration, now: now)
    }

    /// Starts both sides and delivers until nothing is left to deliver (bounded).
    public func run(maximumRounds: Int = 10_000) {
        var toB = collect(a.start(now: now), side: "a")
        var toA = collect(b.start(now: now), side: "b")
        deliver(&toA, &toB, maximumRounds: maximumRounds)
    }

    /// Tells both sides the replica changed and delivers until quiet.
    public func replicaChanged() {
        var toB = collect(a.replicaChanged(now: now), side: "a")
        var toA = collect(b.replicaChanged(now: now), side: "b")
        deliver(&toA, &toB, maximumRounds: 10_000)
    }

    /// Delivers in rounds; after each, a side whose `nextDeadline` has come is ticked, as a
    /// runtime's loop would.
    public func deliver(_ toA: inout [[UInt8]], _ toB: inout [[UInt8]], maximumRounds: Int) {
        var rounds = 0
        while rounds < maximumRounds {
            if let due = a.nextDeadline, due <= now { toB += collect(a.tick(now: now), side: "a") }
            if let due = b.nextDeadline, due <= now { toA += collect(b.tick(now: now), side: "b") }
            guard !toA.isEmpty || !toB.isEmpty else { break }
            rounds += 1
            let forA = toA, forB = toB
            toA = []; toB = []
            for bytes in forA { toB += collect(a.receive(bytes, now: now), side: "a") }
            for bytes in forB { toA += collect(b.receive(bytes, now: now), side: "b") }
        }
        precondition(rounds < maximumRounds, "sessions did not go quiet")
    }

    /// Gathers the bytes to send, keeps events and closes.
    public func collect(_ actions: [SessionAction], side: String) -> [[UInt8]] {
        var out: [[UInt8]] = []
        for action in actions {
            switch action {
            case .send(let bytes): out.append(bytes)
            case .close(let reason): closed.append((side, reason))
            case .event(let event): events.append((side, event))
            }
        }
        return out
    }
}
