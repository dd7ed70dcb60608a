/// The journal's counts kept up to date (schema step 25), so `status`, `stats` and the
/// dashboard answer without reading every entry: how many live entries and tombstones there are,
/// how many per category, per source and per UTC hour (hours make any zone's days, see
/// Replica+SummaryStats), and how many entries hold each metric value (exact minimum, maximum
/// and sum after deletes, which a running minimum could not give); and per UTC hour, the counts
/// per category and source and each metric's count, sum, minimum and maximum, which a window of
/// time (the dashboard's day and month) adds up hour by hour (Replica+WindowStats).
///
/// They follow the text index's mark (Replica+TextIndex): the tables count exactly the rows at
/// or below it, the rows above it (the backlog) are counted when read. So each write path needs
/// nothing of its own: the one place the mark moves (`indexTextBacklog`) adds what it moves
/// past, in one grouped statement for a whole transaction or sync burst, and the one writer of
/// rows (`RecordWriter`) takes a row at or below the mark out before it replaces or deletes it.
/// Not triggers: a trigger on `entries` makes SQLite journal every row written (schema step 23).
/// A user's own SQL on the tables bypasses both, as it does the text index.
enum EntrySummary {
    /// The meta key of the mark the tables count up to (shared with the text index).
    static let markKey = Replica.textBacklogKey
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

    /// Adds the rows of both tables that `condition` selects to the counts.
    static func addSQL(where condition: String) -> [String] {
        [
            """
            INSERT INTO entry_summary(kind, key, count)
            SELECT kind, key, count(*) FROM (\(keys("entries", where: condition)) UNION ALL \(keys("tombstones", where: condition)))
            WHERE true GROUP BY kind, key
            ON CONFLICT(kind, key) DO UPDATE SET count = count + excluded.count
            """,
            """
            INSERT INTO metric_summary(name, value, count)
            SELECT name, value, count(*) FROM (\(metrics(where: condition))) WHERE true GROUP BY name, value
            ON CONFLICT(name, value) DO UPDATE SET count = count + excluded.count
            """,
            // A metric's row is never left with no entries (`retireMetricHourSQL`), so its
            // minimum and maximum are never NULL here.
            """
            INSERT INTO hour_summary(hour, kind, key, count, total, low, high)
            SELECT hour, kind, key, count(*), sum(value), min(value), max(value) FROM (\(hourKeys(where: condition))) WHERE true GROUP BY hour, kind, key
            ON CONFLICT(hour, kind, key) DO UPDATE SET count = count + excluded.count, total = total + excluded.total,
                low = min(low, excluded.low), high = max(high, excluded.high)
            """,
        ]
    }

    /// Step 25: the tables, counting the rows at or below the mark as they stand. Counted
    /// afresh if they exist: a replica whose version was set back (a test's) runs it again.
    static let createStep = """
        CREATE TABLE IF NOT EXISTS entry_summary (kind TEXT NOT NULL, key TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS metric_summary (name TEXT NOT NULL, value REAL NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (name, value)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS hour_summary (hour TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, count INTEGER NOT NULL,
                                                 total REAL, low REAL, high REAL, PRIMARY KEY (hour, kind, key)) WITHOUT ROWID;
        DELETE FROM entry_summary;
        DELETE FROM metric_summary;
        DELETE FROM hour_summary;
        """ + addSQL(where: "feed_seq <= \(mark)").map { $0 + ";" }.joined(separator: "\n")

    /// Adds the backlog to the counts, before the mark moves past it.
    static let addBacklogSQL = addSQL(where: "feed_seq > \(mark)")

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

    /// Takes record `?1`'s tombstone out of the counts if it is at or below the mark.
    static let retireTombstoneSQL = """
        UPDATE entry_summary SET count = count - 1
        WHERE (kind, key) IN (\(keys("tombstones", where: "id = ?1 AND feed_seq <= \(mark)")))
        """
}
