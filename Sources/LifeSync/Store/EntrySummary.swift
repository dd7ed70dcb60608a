/// The journal's counts kept up to date (schema step 25), so `status`, `stats` and the
/// dashboard answer without reading every entry: how many live entries and tombstones there are,
/// how many per category, per source and per UTC hour (hours make any zone's days, see
/// Replica+SummaryStats), and how many entries hold each metric value (exact minimum, maximum
/// and sum after deletes, which a running minimum could not give); and per UTC hour, the counts
/// per category and source and each metric's count, sum, minimum and maximum, which a window of
/// time (the dashboard's day and month) adds up hour by hour (Replica+WindowStats).
///
/// They keep a mark of their own (schema step 30): the tables count exactly the rows at or
/// below it, and it is at the latest feed number whenever no write transaction is open (rows
/// above it are counted when read all the same). So each write path needs nothing of its own:
/// the one writer of rows (`RecordWriter`) counts each row it writes (`CountTally`, added to the
/// tables as the transaction ends, a received batch's included), and takes a row at or below
/// the mark out before it replaces or deletes it. Until step 30 they shared the text index's
/// mark, which a sync burst leaves behind until it ends: a million-row burst left every count
/// reading a million rows (300–450 ms a request) while the text caught up. The text index's
/// mark is never above this one.
/// Not triggers: a trigger on `entries` makes SQLite journal every row written (schema step 23).
/// A user's own SQL on the tables bypasses both, as it does the text index.
enum EntrySummary {
    /// The meta key of the mark the tables count up to.
    static let markKey = "summary_from"
    static let mark = "(SELECT CAST(value AS INTEGER) FROM meta WHERE key = '\(markKey)')"

    /// What each kind counts an `entries` row under: its SQL key expression. `(none)` is what
    /// `stats` has always called an entry without category.
    static let entryKeys: [(kind: String, key: String)] = [
        ("all", "''"), ("category", "coalesce(category, '(none)')"), ("source", "source"), ("hour", "substr(timestamp, 1, 13)"),
    ]
    /// Damaged data (not JSON) holds no metric, as it holds no text for the index.
    static let metricName = "CASE WHEN json_valid(data) THEN json_extract(data, '$.metric.name') END"
    static let metricValue = "CASE WHEN json_valid(data) THEN json_extract(data, '$.metric.value') END"

    /// (kind, key) of every row of `table` that `condition` selects.
    static func keys(_ table: String, where condition: String) -> String {
        let pairs = table == "entries" ? entryKeys : [("tombstones", "''")]
        return pairs.map { "SELECT '\($0.kind)' AS kind, \($0.key) AS key FROM \(table) WHERE \(condition)" }.joined(separator: " UNION ALL ")
    }

    /// (name, value) of the metric of every entry `condition` selects that has one.
    static func metrics(where condition: String) -> String {
        """
        SELECT name, value FROM (SELECT \(metricName) AS name, \(metricValue) AS value FROM entries WHERE \(condition))
        WHERE name IS NOT NULL AND value IS NOT NULL
        """
    }

    /// (hour, kind, key, value) of every entry `condition` selects: its category, its source and
    /// its metric with the value, in its UTC hour.
    static func hourKeys(where condition: String) -> String {
        """
        SELECT substr(timestamp, 1, 13) AS hour, 'category' AS kind, \(entryKeys[1].key) AS key, NULL AS value FROM entries WHERE \(condition)
        UNION ALL SELECT substr(timestamp, 1, 13), 'source', \(entryKeys[2].key), NULL FROM entries WHERE \(condition)
        UNION ALL SELECT hour, 'metric', name, value FROM (SELECT substr(timestamp, 1, 13) AS hour, \(metricName) AS name, \(metricValue) AS value
            FROM entries WHERE \(condition)) WHERE name IS NOT NULL AND value IS NOT NULL
        """
    }

    /// Adds the rows of both tables that `condition` selects to the counts: one pass over the
    /// entries, grouped by everything a count is kept by (reading each row's JSON once: a pass
    /// per kept table took a sizeable share of an import), then each table from that.
    static func addSQL(where condition: String) -> [String] {
        let rows = "temp.summary_backlog"
        return [
            "CREATE TEMP TABLE IF NOT EXISTS summary_backlog (hour TEXT, category TEXT, source TEXT, name TEXT, value REAL, n INTEGER NOT NULL)",
            "DELETE FROM \(rows)",
            """
            INSERT INTO \(rows)(hour, category, source, name, value, n)
            SELECT substr(timestamp, 1, 13), \(entryKeys[1].key), \(entryKeys[2].key), \(metricName), \(metricValue), count(*)
            FROM entries WHERE \(condition) GROUP BY 1, 2, 3, 4, 5
            """,
            """
            INSERT INTO entry_summary(kind, key, count)
            SELECT kind, key, sum(n) FROM (
                SELECT 'all' AS kind, '' AS key, n FROM \(rows) UNION ALL SELECT 'category', category, n FROM \(rows)
                UNION ALL SELECT 'source', source, n FROM \(rows) UNION ALL SELECT 'hour', hour, n FROM \(rows)
                UNION ALL SELECT 'tombstones', '', count(*) FROM tombstones WHERE \(condition))
            WHERE true GROUP BY kind, key HAVING sum(n) > 0
            ON CONFLICT(kind, key) DO UPDATE SET count = count + excluded.count
            """,
            """
            INSERT INTO metric_summary(name, value, count)
            SELECT name, value, sum(n) FROM \(rows) WHERE name IS NOT NULL AND value IS NOT NULL GROUP BY name, value
            ON CONFLICT(name, value) DO UPDATE SET count = count + excluded.count
            """,
            // A metric's row is never left with no entries (`retireMetricHourSQL`), so its
            // minimum and maximum are never NULL here.
            """
            INSERT INTO hour_summary(hour, kind, key, count, total, low, high)
            SELECT hour, kind, key, sum(n), sum(total), min(low), max(high) FROM (
                SELECT hour, 'category' AS kind, category AS key, n, NULL AS total, NULL AS low, NULL AS high FROM \(rows)
                UNION ALL SELECT hour, 'source', source, n, NULL, NULL, NULL FROM \(rows)
                UNION ALL SELECT hour, 'metric', name, n, value * n, value, value FROM \(rows) WHERE name IS NOT NULL AND value IS NOT NULL)
            WHERE true GROUP BY hour, kind, key
            ON CONFLICT(hour, kind, key) DO UPDATE SET count = count + excluded.count, total = total + excluded.total,
                low = min(low, excluded.low), high = max(high, excluded.high)
            """,
            "DELETE FROM \(rows)",
        ]
    }

    /// Step 25: the tables, counting the rows at or below the text index's mark (which they
    /// shared until step 30) as they stand. Counted afresh if they exist: a replica whose
    /// version was set back (a test's) runs it again.
    static let createStep = """
        CREATE TABLE IF NOT EXISTS entry_summary (kind TEXT NOT NULL, key TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS metric_summary (name TEXT NOT NULL, value REAL NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (name, value)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS hour_summary (hour TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, count INTEGER NOT NULL,
                                                 total REAL, low REAL, high REAL, PRIMARY KEY (hour, kind, key)) WITHOUT ROWID;
        DELETE FROM entry_summary;
        DELETE FROM metric_summary;
        DELETE FROM hour_summary;
        """ + addSQL(where: "feed_seq <= (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'text_index_from')")
            .map { $0 + ";" }.joined(separator: "\n")

    /// Step 30: the counts' own mark, at the latest feed number, with every row counted afresh
    /// (a text backlog a burst left is counted now; run again, it counts nothing twice).
    static let markStep = """
        DELETE FROM entry_summary;
        DELETE FROM metric_summary;
        DELETE FROM hour_summary;
        """ + addSQL(where: "true").map { $0 + ";" }.joined(separator: "\n") + """
        INSERT OR REPLACE INTO meta(key, value) VALUES ('\(markKey)', (\(RecordWriter.latestFeedSQL)));
        """

    /// What `addSQL` adds, one group at a time, for counts gathered outside SQL (the writer's,
    /// `CountTally`): an `entry_summary` key `?1` `?2` counted `?3` times; a metric `?1`
    /// of value `?2` (its JSON text, read as SQLite reads it from `data`) `?3` times; an hour
    /// `?1`'s category or source (`?2`) `?3` counted `?4` times; an hour `?1`'s metric `?2` in
    /// `?3` entries, whose values sum to `?4` and range from `?5` to `?6` (text, as before).
    static let addCountSQL = """
        INSERT INTO entry_summary(kind, key, count) VALUES (?1, ?2, ?3)
        ON CONFLICT(kind, key) DO UPDATE SET count = count + excluded.count
        """
    static let addMetricSQL = """
        INSERT INTO metric_summary(name, value, count) VALUES (?1, CAST(?2 AS REAL), ?3)
        ON CONFLICT(name, value) DO UPDATE SET count = count + excluded.count
        """
    static let addHourCountSQL = """
        INSERT INTO hour_summary(hour, kind, key, count) VALUES (?1, ?2, ?3, ?4)
        ON CONFLICT(hour, kind, key) DO UPDATE SET count = count + excluded.count
        """
    static let addHourMetricSQL = """
        INSERT INTO hour_summary(hour, kind, key, count, total, low, high)
        VALUES (?1, 'metric', ?2, ?3, ?4, CAST(?5 AS REAL), CAST(?6 AS REAL))
        ON CONFLICT(hour, kind, key) DO UPDATE SET count = count + excluded.count, total = total + excluded.total,
            low = min(low, excluded.low), high = max(high, excluded.high)
        """

    /// Takes entry `?1`'s live row out of the counts if it is at or below the mark.
    static let retireEntrySQL = [
        """
        UPDATE entry_summary SET count = count - 1
        WHERE (kind, key) IN (\(keys("entries", where: "id = ?1 AND feed_seq <= \(mark)")))
        """,
        """
        UPDATE metric_summary SET count = count - 1
        WHERE (name, value) IN (\(metrics(where: "id = ?1 AND feed_seq <= \(mark)")))
        """,
        """
        UPDATE hour_summary SET count = count - 1
        WHERE kind != 'metric' AND (hour, kind, key) IN (SELECT hour, kind, key FROM (\(hourKeys(where: "id = ?1 AND feed_seq <= \(mark)"))))
        """,
    ]

    /// The hour and metric name of entry `?1`'s live row, if it is at or below the mark and has
    /// a metric: the hour's summary of that metric is made again without it (a minimum or
    /// maximum cannot be taken back by subtracting), from the hour's other counted rows.
    static let metricHourSQL = """
        SELECT hour, key FROM (\(hourKeys(where: "id = ?1 AND feed_seq <= \(mark)"))) WHERE kind = 'metric'
        """
    static let retireMetricHourSQL = [
        """
        REPLACE INTO hour_summary(hour, kind, key, count, total, low, high)
        SELECT ?2, 'metric', ?3, count(*), sum(value), min(value), max(value)
        FROM (\(hourKeys(where: "timestamp >= ?2 AND timestamp < ?2 || ';' AND feed_seq <= \(mark) AND id != ?1"))) WHERE kind = 'metric' AND key = ?3
        """,
        "DELETE FROM hour_summary WHERE hour = ?2 AND kind = 'metric' AND key = ?3 AND count = 0",
    ]

    /// Takes one tombstone out of the counts (one the writer found at or below the mark).
    static let retireTombstoneSQL = "UPDATE entry_summary SET count = count - 1 WHERE kind = 'tombstones' AND key = ''"
}
