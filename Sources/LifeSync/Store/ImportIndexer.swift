/// Indexes the text of the rows an import writes as it writes them, from the entries in hand:
/// what `Replica.indexTextBacklog` would do at the end, without reading every row back and
/// parsing its JSON in SQL. (The writer counts them, `CountTally`.)
///
/// Its rows must be the whole text backlog: made after the backlog was caught up, in the same
/// transaction, and every row written meanwhile handed to `add`; `finish` moves the text
/// index's mark past them.
struct ImportIndexer {
    private let database: Database
    private let text: Statement
    private var latest: Int64?

    init(database: Database) throws {
        self.database = database
        text = try database.prepare("INSERT INTO entries_text(rowid, text) VALUES (?1, ?2)")
    }

    /// Indexes `entry`'s text, just written with feed number `feed`.
    mutating func add(_ entry: LogEntry, feed: Int64) throws {
        text.bind(feed, at: 1)
        text.bind(entry.data.text, at: 2)
        defer { text.clearBindings() }
        try text.execute()
        latest = feed
    }

    /// Moves the text index's mark past the rows indexed.
    func finish() throws {
        guard let latest else { return }
        try database.run("UPDATE meta SET value = ? WHERE key = ?", [.text(String(latest)), .text(Replica.textBacklogKey)])
    }
}
