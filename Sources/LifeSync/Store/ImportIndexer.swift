/// Indexes the rows an import writes as it writes them, from the entries in hand: each row's
/// text into `entries_text`, and its keys (hour, category, source, metric) gathered into groups
/// for the journal's counts (EntrySummary), which take them a bounded number of groups at a
/// time. What `Replica.indexTextBacklog` would do at the end, without reading every row back
/// and parsing its JSON in SQL (the counts' pass over a 100k import's rows took a tenth of it).
///
/// Its rows must be the whole backlog: made after the backlog was caught up, in the same
/// transaction, and every row written meanwhile handed to `add`; `finish` moves the mark past them.
struct ImportIndexer {
    private let database: Database
    private let text: Statement
    private var groups: [Group: Int64] = [:]
    private var latest: Int64?

    /// What the counts count an entry under: the keys of `EntrySummary.addSQL`'s groups, the
    /// metric value in its canonical JSON form, which SQLite reads as it reads it from `data`.
    private struct Group: Hashable {
        var hour: String
        var category: String
        var source: String
        var metricName: String?
        var metricValue: String?
    }

    /// Groups held before they are added to the counts: a bound on memory whatever the import's size.
    static let groupLimit = 4_096

    init(database: Database) throws {
        self.database = database
        text = try database.prepare("INSERT INTO entries_text(rowid, text) VALUES (?1, ?2)")
    }

    /// Indexes `entry`, just written with feed number `feed`; `hour`: its stored timestamp's
    /// first 13 characters (`RecordWriter.storedHour`).
    mutating func add(_ entry: LogEntry, feed: Int64, hour: String) throws {
        text.bind(feed, at: 1)
        text.bind(entry.data.text, at: 2)
        defer { text.clearBindings() }
        try text.execute()
        let metric = entry.data.metric
        let group = Group(hour: hour, category: entry.category ?? "(none)", source: entry.source,
                          metricName: metric?.name, metricValue: metric.map { JSONValue.numberText($0.value) })
        groups[group, default: 0] += 1
        latest = feed
        if groups.count >= Self.groupLimit { try addGroups() }
    }

    /// Adds the gathered groups to the counts and moves the mark past the rows added.
    mutating func finish() throws {
        try addGroups()
        guard let latest else { return }
        try database.run("UPDATE meta SET value = ? WHERE key = ?", [.text(String(latest)), .text(Replica.textBacklogKey)])
    }

    private mutating func addGroups() throws {
        guard !groups.isEmpty else { return }
        try database.execute(EntrySummary.backlogTableSQL)
        let insert = try database.prepare(EntrySummary.addImportedGroupSQL)
        for (group, count) in groups {
            insert.bind(group.hour, at: 1)
            insert.bind(group.category, at: 2)
            insert.bind(group.source, at: 3)
            insert.bind(group.metricName, at: 4)
            insert.bind(group.metricValue, at: 5)
            insert.bind(count, at: 6)
            try insert.execute()
        }
        for sql in EntrySummary.addImportedSQL { try database.run(sql) }
        groups.removeAll(keepingCapacity: true)
    }
}
