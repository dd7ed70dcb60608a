extension Replica {
    /// Rows the full-text index may narrow a search to: the rule is checked on each of them, so
    /// more than this and a page of matches is found sooner by walking the time order.
    static let indexedSearchLimit = 10_000
    /// How far a trigram's rows are counted when every one of the query's trigrams names more
    /// than `indexedSearchLimit` rows: two such, each in a few tens of thousands of rows, may
    /// still share only a few thousand ("424" and "242" of "4242" in a journal of 10 million).
    static let narrowingTrigramLimit = 200_000

    /// The `WHERE` term for `--search`: the `TextSearch` rule over each row's text (what decides),
    /// narrowed first through `entries_text` (schema step 22) when the query has a word the
    /// index can find. A row matches only if its lowercased text holds each query word's stem
    /// (the shortest form that counts), so it holds every trigram of that stem: the rows the
    /// index names are a superset of the matches, and the rule keeps exactly today's meaning.
    /// Only ASCII stems of three letters or more are looked up (the index folds case as SQLite
    /// does, which for ASCII is Swift's `lowercased()`); a query without one is a scan, as before.
    func searchClause(_ search: String) throws -> (clause: String, values: [SQLValue]) {
        // A damaged row (data not JSON) has no text: json_extract would fail the whole search.
        let exact = "lifesync_search(CASE WHEN json_valid(data) THEN json_extract(data, '$.text') END, ?)"
        let stems = TextSearch(query: search).words.compactMap { $0.last }.filter { $0.count >= 3 && $0.utf8.allSatisfy { $0 < 0x80 } }
        var trigrams = Set<String>()
        for stem in stems {
            let letters = Array(stem)
            for start in 0...(letters.count - 3) { trigrams.insert(String(letters[start..<start + 3])) }
        }
        // How many rows a MATCH names, counted no further than `cap` (a count of a whole list,
        // fts5vocab, read all million row numbers of a trigram in every entry), among the newest
        // `newest` when given (FTS5 seeks to the first row number in range).
        let match = try Replica.narrowingMatch(trigrams, limit: Replica.indexedSearchLimit, wide: Replica.narrowingTrigramLimit) { match, cap, newest in
            var range = "", values: [SQLValue] = [.text(match)]
            if let newest {
                range = " AND rowid > coalesce((SELECT max(feed_seq) FROM entries), 0) - ?"
                values.append(.integer(Int64(newest)))
            }
            return try database.firstRow("SELECT count(*) FROM (SELECT rowid FROM entries_text WHERE entries_text MATCH ?\(range) LIMIT \(cap + 1))",
                                         values, { Int($0.int64(0)) }) ?? 0
        }
        guard let match else { return (exact, [.text(search)]) }
        // Rows past the backlog's mark are not in the index yet: added to the candidates (a
        // burst's worth at most). Inside the IN list, not an OR beside it: with an OR, SQLite
        // walked every row in time order (0.76 s at 100k entries against 0.012 s).
        return ("feed_seq IN (SELECT rowid FROM entries_text WHERE entries_text MATCH ? UNION ALL SELECT feed_seq FROM entries "
                + "WHERE feed_seq > coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?), 9223372036854775807)) AND " + exact,
                [.text(match), .text(Replica.textBacklogKey), .text(search)])
    }

    /// The FTS5 MATCH expression that narrows a search for `trigrams` to at most `limit` rows,
    /// or nil when none does and the rows are scanned. `rows(match, cap, newest)` counts the
    /// rows a MATCH names, up to `cap + 1`, among the newest `newest` rows when not nil.
    ///
    /// The rarest trigrams narrow about as well as all of them, at a fraction of the reading:
    /// at most three are used. A trigram in at most `limit` rows narrows alone. When every one
    /// is commoner, the words are common: if they are all in 1 % of the newest `limit` rows, a
    /// page of matches is found soonest by walking the time order. If not, they may be common
    /// apart and rare together: those in at most `wide` rows are joined (AND), the rarest three,
    /// and narrow if together they name at most `limit`. A trigram in every entry ("ent" of
    /// "entry") is never read to its end, nor joined: that would cost reading a million row
    /// numbers to rule out none. Trigrams are ASCII letters and digits (TextSearch splits on
    /// anything else).
    static func narrowingMatch(_ trigrams: Set<String>, limit: Int, wide: Int,
                               rows: (_ match: String, _ cap: Int, _ newest: Int?) throws -> Int) throws -> String? {
        func and(_ trigrams: [String]) -> String { trigrams.map { "\"\($0)\"" }.joined(separator: " AND ") }
        func rarest(cap: Int, among: [String]) throws -> [String] {
            try among.map { (trigram: $0, rows: try rows(and([$0]), cap, nil)) }
                .filter { $0.rows <= cap }
                .sorted { ($0.rows, $0.trigram) < ($1.rows, $1.trigram) }
                .prefix(3).map(\.trigram)
        }
        let sorted = trigrams.sorted()
        guard !sorted.isEmpty else { return nil }
        let rare = try rarest(cap: limit, among: sorted)
        if !rare.isEmpty { return and(rare) }
        let dense = max(1, limit / 100)
        if try rows(and(sorted), dense, limit) >= dense { return nil }
        let narrowing = try rarest(cap: wide, among: sorted)
        guard narrowing.count > 1 else { return nil }
        return try rows(and(narrowing), limit, nil) <= limit ? and(narrowing) : nil
    }
}
