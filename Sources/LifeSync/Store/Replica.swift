import CSQLite
import Glibc

/// Who a replica is: a stable node ID, its role, and the incarnation (history) it writes under.
public struct ReplicaIdentity: Equatable, Sendable {
    /// `{role}_{uuid-v4}`, created once at init and never changed.
    public var nodeID: String
    public var role: Role
    /// The origin under which this replica numbers its writes. A new history (a replica restored
    /// from an old backup) gets a new incarnation, so its sequence numbers never collide with the
    /// ones peers already hold.
    public var incarnation: String
}

/// A node's SQLite replica: the entries, their replication metadata, and the operations the
/// CLI, the sync session and the simulator perform on it.
///
/// ```swift
/// let replica = try Replica.create(path: "watch.sqlite", role: .watch, clock: clock, random: random)
/// let entry = try replica.add(json: try JSONValue.parse(#"{"category": "mood"}"#))
/// try replica.entry(id: entry.id)
/// ```
///
/// The clock and randomness are injected: the daemon passes the system's, the simulator seeded
/// ones. One `Replica` is used from one thread at a time; other processes may write the same file
/// (every write re-reads the sequence counter and clock inside its transaction).
public final class Replica {
    package let database: Database
    public let path: String
    public internal(set) var identity: ReplicaIdentity
    let clock: WallClock
    let random: RandomSource
    var hlc: HybridLogicalClock
    /// Deliberate defects, for the simulator's planted-bug tests only.
    package var plantedBugs: PlantedBugs = []
    /// Checks the origin signatures of recording metadata from peers: ECDSA P-256 for real
    /// nodes; the simulator models it without the crypto.
    package var signatureVerifier: SignatureVerifier = ECDSAP256Verifier()
    /// This node's key, which seals the writes of its own origins as they are sent (PROTOCOL.md
    /// §5.2.5). Set by `adoptSigningKey`; without it, this node's own writes cannot be sent.
    package internal(set) var signer: RecordingSigner?
    /// Where this node notes how far its own writes went, outside the replica (nil: nowhere,
    /// and a replica put back from an older copy is noticed only through its peers).
    package var writeMarks: WriteMarkStore?
    /// Told when a write found the replica restored from an older copy and started a new
    /// incarnation (the evidence, the old incarnation, the new one), to tell the user.
    package var onRestoreNoticed: ((RestoreEvidence, _ old: String, _ new: String) -> Void)?
    /// The text index's bookkeeping (`deferringTextIndex`): how deep write transactions are
    /// nested now, and whether the outermost leaves its rows for the next catch-up.
    var textIndexDepth = 0
    var keepsTextPending = false
    /// The counts of the rows the current write transaction wrote, not yet in the tables.
    let countTally = CountTally()
    /// A burst left more of a backlog than one step indexes (`checkpoint`): whoever drives the
    /// replica calls `stepTextCatchUp` until this is false (a serving node, once a turn).
    public internal(set) var textCatchUpDue = false
    /// Own writes whose digests the current write transaction noted as it wrote them (an
    /// import): `noteOwnWrites` reads back only the writes after this mark.
    var ownWritesNoted: WriteMark?

    /// Opens an existing replica. Refuses a missing file, a file that is not SQLite, a SQLite
    /// file of another program, and a schema newer than this build.
    public convenience init(path: String, clock: WallClock, random: RandomSource) throws {
        if path != ":memory:" && !path.hasPrefix("file:") && !Replica.fileExists(path) { throw ReplicaError.notInitialized(path: path) }
        let database = try Replica.openDatabase(path: path, create: false)
        guard let identity = try Replica.readIdentity(database) else {
            throw ReplicaError.notInitialized(path: path)
        }
        try self.init(database: database, path: path, identity: identity, clock: clock, random: random)
    }

    /// Creates a replica for `role`, or opens the one already at `path` when it has that role.
    public static func create(path: String, role: Role, clock: WallClock, random: RandomSource) throws -> Replica {
        let database = try openDatabase(path: path, create: true)
        let identity = try database.transaction { () throws -> ReplicaIdentity in
            if let existing = try readIdentity(database) {
                guard existing.role == role else {
                    throw ReplicaError.alreadyInitialized(role: existing.role, nodeID: existing.nodeID)
                }
                return existing
            }
            let nodeID = Identifier.make(role: role, random: random)
            let identity = ReplicaIdentity(nodeID: nodeID, role: role, incarnation: Identifier.incarnation(boundTo: nodeID, random: random))
            let created = Timestamp(millisecondsSince1970: clock.nowMilliseconds()).iso8601
            for (key, value) in [("node_id", identity.nodeID), ("role", role.rawValue),
                                 ("incarnation", identity.incarnation), ("created_at", created), ("hlc", "0")] {
                try database.run("INSERT INTO meta(key, value) VALUES (?, ?)", [.text(key), .text(value)])
            }
            try database.run("INSERT INTO replica_vector(origin, seq, node_id, role) VALUES (?, 0, ?, ?)",
                             [.text(identity.incarnation), .text(identity.nodeID), .text(role.rawValue)])
            try database.run("INSERT INTO own_incarnations(origin) VALUES (?)", [.text(identity.incarnation)])
            return identity
        }
        return try Replica(database: database, path: path, identity: identity, clock: clock, random: random)
    }

    private init(database: Database, path: String, identity: ReplicaIdentity, clock: WallClock, random: RandomSource) throws {
        self.database = database
        self.path = path
        self.identity = identity
        self.clock = clock
        self.random = random
        hlc = HybridLogicalClock()
        try refreshClock()
    }

    private static func fileExists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// `PRAGMA journal_mode = WAL`, retried while another process holds the new file: SQLite
    /// answers a journal mode change that meets another connection's lock with SQLITE_BUSY at
    /// once, without the busy handler (six `init`s of one new file on a loaded machine failed
    /// so). Bounded: 10 s, as SQLite's own sleep between tries.
    static func enterWAL(_ database: Database) throws(SQLiteError) {
        var attempt = 0
        while true {
            do {
                try database.execute("PRAGMA journal_mode = WAL")
                return
            } catch {
                attempt += 1
                guard error.primaryCode == SQLITE_BUSY, attempt < 200 else { throw error }
                sqlite3_sleep(50)
            }
        }
    }

    /// Opens the file, proves it is a SQLite database, and brings the schema up to date.
    static func openDatabase(path: String, create: Bool) throws -> Database {
        let database: Database
        do {
            database = try Database(path: path, create: create)
            // Reading the schema is the first thing that touches the file's contents. Nothing is
            // written before we know the file is ours (or empty and we were asked to create).
            let tables = try database.rows("SELECT name FROM sqlite_master WHERE type = 'table'") { $0.string(0) }
            if !tables.isEmpty, !tables.contains("meta") {
                throw ReplicaError.notAReplica(path: path, reason: "it is a SQLite database of another program (tables: \(tables.prefix(5).joined(separator: ", ")))")
            }
            let version = try database.userVersion
            if version > Schema.currentVersion { throw ReplicaError.newerSchema(found: version, supported: Schema.currentVersion) }
            if tables.isEmpty, !create { throw ReplicaError.notInitialized(path: path) }
            try Self.enterWAL(database)
            // FULL: a batch we acknowledge must survive a power cut, not only a crash.
            try database.execute("PRAGMA synchronous = FULL")
            try database.execute("PRAGMA foreign_keys = ON")
            // 16 MiB of page cache: a sync touches five indexes per row; re-reading their pages
            // through the kernel was a visible cost.
            try database.execute("PRAGMA cache_size = -16384")
            // A bulk sync grows the WAL (see `apply`); once checkpointed, it shrinks back to this.
            try database.execute("PRAGMA journal_size_limit = \(Database.journalLimit)")
        } catch let error as SQLiteError {
            switch error.primaryCode {
            case SQLITE_NOTADB: throw ReplicaError.notAReplica(path: path, reason: "the file is not a SQLite database")
            case SQLITE_CORRUPT: throw ReplicaError.notAReplica(path: path, reason: "the database file is damaged (\(error.message))")
            case SQLITE_CANTOPEN: throw ReplicaError.storage("cannot open \(path): \(error.message)")
            default: throw ReplicaError.storage("cannot open \(path): \(error)")
            }
        }
        try Schema.migrate(database)
        return database
    }

    static func readIdentity(_ database: Database) throws -> ReplicaIdentity? {
        let pairs = try database.rows("SELECT key, value FROM meta WHERE key IN ('node_id', 'role', 'incarnation')") {
            ($0.string(0), $0.string(1))
        }
        guard !pairs.isEmpty else { return nil }
        let meta = Dictionary(pairs, uniquingKeysWith: { a, _ in a })
        guard let nodeID = meta["node_id"], let roleText = meta["role"], let role = Role(rawValue: roleText),
              Identifier.role(of: nodeID) == role, let incarnation = meta["incarnation"],
              Identifier.isUUIDv4(Substring(incarnation)) else {
            throw ReplicaError.notAReplica(path: database.path, reason: "its identity in table meta is damaged")
        }
        return ReplicaIdentity(nodeID: nodeID, role: role, incarnation: incarnation)
    }

    /// Moves the in-memory clock past what any process has stamped into this file.
    func refreshClock() throws {
        if let text = try database.firstRow("SELECT value FROM meta WHERE key = 'hlc'", [], { $0.string(0) }),
           let raw = Int64(text) {
            hlc.catchUp(to: HLCTimestamp(rawValue: raw))
        }
    }

    /// Records the clock in the file, in the current transaction.
    func persistClock() throws {
        try database.run("UPDATE meta SET value = ? WHERE key = 'hlc' AND CAST(value AS INTEGER) < ?",
                         [.text(String(hlc.last.rawValue)), .integer(hlc.last.rawValue)])
    }

    /// The current wall time, as the injected clock reports it.
    public var now: Timestamp { Timestamp(millisecondsSince1970: clock.nowMilliseconds()) }

    /// The highest sequence applied from each origin: what a peer compares to send the delta.
    package func replicaVector() throws -> VersionVector {
        try database.vectorFromRows { rows in
            VersionVector(try rows.compactMap { row in row.sequence == 0 ? nil : (row.origin, try Replica.checkedSequence(row)) })
        }
    }

    /// The origins this replica knows, with the node and role they belong to when known.
    public func knownOrigins() throws -> [(origin: String, nodeID: String?, role: Role?, sequence: UInt64)] {
        try database.vectorRows().map { row in
            (row.origin, row.nodeID, row.role.flatMap(Role.init(rawValue:)), try Replica.checkedSequence(row))
        }
    }

    /// A `replica_vector` row's sequence, refused when outside `0…maximumSequence` (a damaged file).
    static func checkedSequence(_ row: VectorRows.Row) throws -> UInt64 {
        guard row.sequence >= 0, UInt64(row.sequence) <= Message.Limits.maximumSequence else {
            throw ReplicaError.damaged("replica_vector.seq of \(row.origin) holds \(row.sequence), outside 0…\(Message.Limits.maximumSequence)")
        }
        return UInt64(row.sequence)
    }

    /// Learns which node an origin belongs to from a batch: only an origin not known yet, so a
    /// batch can never reassign an incarnation the handshake checks vouched for.
    public func recordOriginIfUnknown(_ origin: String, nodeID: String, role: Role) throws {
        try database.run("""
            INSERT INTO replica_vector(origin, seq, node_id, role) VALUES (?, 0, ?, ?)
            ON CONFLICT(origin) DO UPDATE SET node_id = excluded.node_id, role = excluded.role WHERE node_id IS NULL
            """, [.text(origin), .text(nodeID), .text(role.rawValue)])
    }

    /// Remembers which node an origin belongs to (learned in a handshake).
    public func recordOrigin(_ origin: String, nodeID: String, role: Role) throws {
        try database.run("""
            INSERT INTO replica_vector(origin, seq, node_id, role) VALUES (?, 0, ?, ?)
            ON CONFLICT(origin) DO UPDATE SET node_id = excluded.node_id, role = excluded.role
            """, [.text(origin), .text(nodeID), .text(role.rawValue)])
    }
}
