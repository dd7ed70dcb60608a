extension Replica {
    /// Rows the full-text index may narrow a search to before the `TextSearch` rule decides:
    /// driven from the index when its rarest trigram is in at most this many rows; a commoner
    /// query matches so many rows that a page of them is found sooner by walking the time order.
    static let indexedSearchLimit = 10_000

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
        guard !trigrams.isEmpty else { return (exact, [.text(search)]) }
        var counted: [(trigram: String, rows: Int64)] = []
        // How many rows hold each trigram, counted no further than the limit: a count of its
        // whole list (fts5vocab) read all million row numbers of a trigram in every entry.
        for trigram in trigrams.sorted() {
            let rows = try database.firstRow("""
                SELECT count(*) FROM (SELECT rowid FROM entries_text WHERE entries_text MATCH ? LIMIT \(Replica.indexedSearchLimit + 1))
                """, [.text("\"\(trigram)\"")], { $0.int64(0) }) ?? 0
            counted.append((trigram, rows))
        }
        counted.sort { ($0.rows, $0.trigram) < ($1.rows, $1.trigram) }
        guard counted[0].rows <= Replica.indexedSearchLimit else { return (exact, [.text(search)]) }
        // The rarest trigrams narrow about as well as all of them, at a fraction of the reading:
        // at most three, none in more than the limit's rows (one in every entry, "ent" of
        // "entry", would cost reading a million row numbers to rule out none). Trigrams are
        // ASCII letters and digits (TextSearch splits on anything else).
        let match = counted.prefix(3).filter { $0.rows <= Replica.indexedSearchLimit }.map { "\"\($0.trigram)\"" }.joined(separator: " AND ")
        // Rows past the backlog's mark are not in the index yet: added to the candidates (a
        // burst's worth at most). Inside the IN list, not an OR beside it: with an OR, SQLite
        // walked every row in time order (0.76 s at 100k entries against 0.012 s).
        return ("feed_seq IN (SELECT rowid FROM entries_text WHERE entries_text MATCH ? UNION ALL SELECT feed_seq FROM entries "
                + "WHERE feed_seq > coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?), 9223372036854775807)) AND " + exact,
                [.text(match), .text(Replica.textBacklogKey), .text(search)])
    }
}
