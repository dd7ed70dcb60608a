/// Writes versions of records into the replica's tables, holding its statements: a batch or an
/// import writes thousands of rows in one transaction, and looking the statement up by its SQL
/// text for every row (hashing a few hundred bytes) cost a sizeable share of binding the row.
/// Make one per transaction.
struct RecordWriter {
    private let database: Database
    /// Where the rows it writes are counted (the replica's, open for the transaction).
    private let counts: CountTally
    /// `created_at` of the entries written: when this replica first stored them.
    private let createdAt: String
    private var insertIfAbsent: Statement?
    private var upsert: Statement?
    private var latestFeed: Statement?
    private var unindex: Statement?
    private var indexed: Statement?
    private var retireEntry: [Statement?] = [nil, nil, nil]
    private var metricHour: Statement?
    private var retireMetricHour: [Statement?] = [nil, nil]
    private var retireTombstone: Statement?
    private var tombstoneCounted: Statement?
    private var clashing: Statement?
    /// The feed number of the last row this writer wrote (nil until it reads the tables' latest).
    private var latestFeedNumber: Int64?
    private var row = RowText()

    init(database: Database, counts: CountTally, createdAt: Timestamp) {
        self.database = database
        self.counts = counts
        self.createdAt = createdAt.iso8601
    }

    /// Writes `stamp`'s version of record `id` (content `entry`, nil for a delete) where
    /// `previous` was. With `ifAbsent`, a live entry that already holds the ID is left alone and
    /// false returned.
    @discardableResult
    ///
    /// `fields`: what the write changed (PROTOCOL.md §8); `own`: the write's own content when
    /// `entry`, the merged content, also holds fields of earlier writes.
    mutating func store(id: String, entry: LogEntry?, stamp: VersionStamp, previous: StoredPlace?, ifAbsent: Bool = false,
                        fields: FieldMask = .all, own: LogEntry? = nil) throws -> Bool {
        guard let entry else {
            precondition(stamp.deleted)
            // The new version first: if another record holds its (origin, sequence), this throws
            // before anything of the old version is gone (see `storeUnlessClashing`), its count
            // included: whether a tombstone is there already is read before, and it leaves the
            // counts after.
            let feed = try nextFeedSequence()
            let replaced = try Self.isCounted(held(&tombstoneCounted, RecordWriter.tombstoneCountedSQL), id)
            try database.run("""
                INSERT INTO tombstones(id, deleted_at, hlc, origin_no, origin_seq, vector, feed_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                ON CONFLICT(id) DO UPDATE SET hlc = ?3, origin_no = ?4, origin_seq = ?5, vector = ?6, feed_seq = ?7
                """, [.text(id), .text(createdAt), .integer(stamp.hlc.rawValue), .integer(try database.originNumber(stamp.origin)),
                      .counter(stamp.sequence), .blob(try StoredVector.bytes(stamp.vector, own: stamp.own, in: database)), .integer(feed)])
            latestFeedNumber = feed
            counts.addTombstone(feed: feed)
            if let replaced { try retireTombstone(counted: replaced) }
            if previous == .live {
                try retire(entry: id)
                try database.run("DELETE FROM entries WHERE id = ?", [.text(id)])
            }
            return true
        }
        precondition(entry.id == id && !stamp.deleted)
        // A row it replaces leaves the text index and the counts first; the new version lands in
        // their backlog.
        if !ifAbsent { try retire(entry: id, replacedBy: stamp) }
        let statement = ifAbsent ? try held(&insertIfAbsent, RecordWriter.insertIfAbsentSQL) : try held(&upsert, RecordWriter.upsertSQL)
        row.removeAll()
        row.set(1, id)
        row.set(2) { entry.timestamp.writeISO8601(to: &$0) }
        row.set(3) { entry.recordedAt.writeISO8601(to: &$0) }
        row.set(4, entry.source)
        row.set(5, entry.deviceId)
        row.set(6, entry.category)
        row.set(7) { entry.data.writeCanonicalJSON(to: &$0) }
        row.set(8, createdAt)
        try row.setBlob(12) { try StoredVector.write(stamp.vector, own: stamp.own, to: &$0, number: database.originNumber) }
        row.set(14, fields.storedText)
        if let own, own != entry { row.set(15) { $0.append(contentsOf: own.json.canonicalText.utf8) } } else { row.set(15, nil) }
        statement.bind(stamp.hlc.rawValue, at: 9)
        statement.bind(try database.originNumber(stamp.origin), at: 10)
        statement.bind(Int64(clamping: stamp.sequence), at: 11)  // bounded where it entered, as SQLValue.counter
        let feed = try nextFeedSequence()
        statement.bind(feed, at: 13)
        try row.execute(statement)
        let stored = database.changes > 0
        if stored {
            latestFeedNumber = feed
            counts.add(entry, feed: feed, hour: storedHour())
        }
        if previous == .tombstone {
            try retire(tombstone: id)
            try database.run("DELETE FROM tombstones WHERE id = ?", [.text(id)])
        }
        if counts.isFull { try counts.flush(into: database) }
        return stored
    }

    /// The canonical JSON of the entry row this writer stored last, without `own` (what
    /// `Replica.encodedChanges` reads back of it, and its write digest covers).
    func writeStoredPayload(to out: inout [UInt8]) {
        Replica.writeEntryPayload(hasCategory: !row.isNull(6), to: &out) { column, body in
            // category, data, device_id, id, recorded_at, source, timestamp: their parameters in `store`.
            let parameter: Int32 = switch column { case 0: 6; case 1: 7; case 2: 5; case 3: 1; case 4: 3; case 5: 4; default: 2 }
            row.withBytes(of: parameter, body)
        }
    }

    /// The feed number of the row this writer wrote last.
    var lastFeedNumber: Int64? { latestFeedNumber }

    /// The UTC hour of the entry row this writer stored last, as the counts key it
    /// (`substr(timestamp, 1, 13)`, EntrySummary).
    private func storedHour() -> String {
        var hour = ""
        row.withBytes(of: 2) { hour = String(decoding: $0.prefix(13), as: UTF8.self) }
        return hour
    }

    /// Takes entry `id`'s live row out of `entries_text` if it is at or below the text index's
    /// mark (contentless: FTS5 needs the text it was given to find its rows), and out of the
    /// journal's counts (EntrySummary). A row above the counts' mark was written earlier in this
    /// transaction and is only in the tally: the tally is added first (`CountTally`). Schema
    /// step 23 says why this is not a trigger.
    /// With `stamp`, the version about to replace the row: if another entry holds its (origin,
    /// sequence), this throws as SQLite would refuse it, before the row has left anything
    /// (`storeUnlessClashing` records the clash and goes on).
    private mutating func retire(entry id: String, replacedBy stamp: VersionStamp? = nil) throws {
        // One lookup first, what the text index alone cost before: most rows a sync writes are
        // new, and the statements below would look each of them up five more times.
        guard let counted = try Self.isCounted(held(&indexed, RecordWriter.indexedSQL), id) else { return }
        if let stamp {
            let clash = try held(&clashing, RecordWriter.clashingSQL)
            try clash.bind([try database.originParameter(stamp.origin), .counter(stamp.sequence), .text(id)])
            defer { clash.reset() }
            if try clash.step() {
                throw SQLiteError(code: Replica.uniqueConstraintFailed, message: "UNIQUE constraint failed: entries.origin_no, entries.origin_seq",
                                  sql: RecordWriter.clashingSQL)
            }
        }
        if !counted { try counts.flush(into: database) }
        let statement = try held(&unindex, RecordWriter.unindexSQL)
        statement.bind(id, at: 1)
        try statement.execute()
        for (index, sql) in EntrySummary.retireEntrySQL.enumerated() {
            let statement = try held(&retireEntry[index], sql)
            statement.bind(id, at: 1)
            try statement.execute()
        }
        let metric = try held(&metricHour, EntrySummary.metricHourSQL)
        metric.bind(id, at: 1)
        let place = try metric.step() ? (hour: metric.string(0), name: metric.string(1)) : nil
        metric.reset()
        guard let place else { return }
        for (index, sql) in EntrySummary.retireMetricHourSQL.enumerated() {
            let statement = try held(&retireMetricHour[index], sql)
            statement.bind(id, at: 1)
            statement.bind(place.hour, at: 2)
            statement.bind(place.name, at: 3)
            try statement.execute()
        }
    }

    /// Takes record `id`'s tombstone, if it has one, out of the counts.
    private mutating func retire(tombstone id: String) throws {
        guard let counted = try Self.isCounted(held(&tombstoneCounted, RecordWriter.tombstoneCountedSQL), id) else { return }
        try retireTombstone(counted: counted)
    }

    /// Takes one tombstone out of the counts: one they count, or one only in the tally
    /// (`counted` false), which is added first, as for an entry.
    private mutating func retireTombstone(counted: Bool) throws {
        if !counted { try counts.flush(into: database) }
        try held(&retireTombstone, EntrySummary.retireTombstoneSQL).execute()
    }

    /// Whether record `id`'s row that `probe` finds is at or below the counts' mark; nil: no row.
    private static func isCounted(_ probe: Statement, _ id: String) throws -> Bool? {
        probe.bind(id, at: 1)
        defer { probe.reset() }
        return try probe.step() ? probe.int64(0) != 0 : nil
    }

    private static let clashingSQL = "SELECT 1 FROM entries WHERE origin_no = ?1 AND origin_seq = ?2 AND id != ?3"
    private static let indexedSQL = "SELECT feed_seq <= \(EntrySummary.mark) FROM entries WHERE id = ?1"
    private static let tombstoneCountedSQL = "SELECT feed_seq <= \(EntrySummary.mark) FROM tombstones WHERE id = ?1"

    private static let unindexSQL = """
        INSERT INTO entries_text(entries_text, rowid, text)
        SELECT 'delete', feed_seq, CASE WHEN json_valid(data) THEN json_extract(data, '$.text') END FROM entries
        WHERE id = ?1 AND feed_seq <= (SELECT CAST(value AS INTEGER) FROM meta WHERE key = '\(Replica.textBacklogKey)')
        """

    /// The change feed's number for the row about to be written: one above the latest on either
    /// table. Read from the tables once, then counted here: a lookup per row cost a sizeable share
    /// of a bulk insert. A writer lives within one transaction and rows are written only through
    /// writers, so no other one numbers rows while this one counts (asserted in debug builds). A
    /// row left alone (`ifAbsent`) leaves no gap; a failed write may, which a reader never notices.
    private mutating func nextFeedSequence() throws -> Int64 {
        let latest: Int64
        if let counted = latestFeedNumber {
            assert(counted == (try? readLatestFeedNumber()), "another writer numbered rows inside this writer's transaction")
            latest = counted
        } else {
            latest = try readLatestFeedNumber()
        }
        precondition(latest >= 0 && latest < Int64.max, "feed numbers only grow, from 1")
        return latest + 1
    }

    private mutating func readLatestFeedNumber() throws -> Int64 {
        let statement = try held(&latestFeed, RecordWriter.latestFeedSQL)
        defer { statement.reset() }
        return try statement.step() ? statement.int64(0) : 0
    }

    /// The latest number of the change feed (0 before the first change).
    static let latestFeedSQL = "SELECT max(coalesce((SELECT max(feed_seq) FROM entries), 0), coalesce((SELECT max(feed_seq) FROM tombstones), 0))"

    private func held(_ slot: inout Statement?, _ sql: String) throws(SQLiteError) -> Statement {
        if let statement = slot { return statement }
        let statement = try database.prepare(sql)
        slot = statement
        return statement
    }

    private static let columns = "id, timestamp, recorded_at, source, device_id, category, data, created_at, hlc, origin_no, origin_seq, vector, feed_seq, fields, own"

    private static let insertIfAbsentSQL = """
        INSERT INTO entries(\(columns))
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) ON CONFLICT(id) DO NOTHING
        """

    private static let upsertSQL = """
        INSERT INTO entries(\(columns))
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
        ON CONFLICT(id) DO UPDATE SET timestamp = ?2, recorded_at = ?3, source = ?4, device_id = ?5,
            category = ?6, data = ?7, hlc = ?9, origin_no = ?10, origin_seq = ?11, vector = ?12, feed_seq = ?13,
            fields = ?14, own = ?15
        """
}
