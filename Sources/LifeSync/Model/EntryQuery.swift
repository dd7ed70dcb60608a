/// Filters for listing entries (the LifeLog API's query parameters). Results are newest first.
public struct EntryQuery: Equatable, Sendable {
    /// Entries at or after this instant.
    public var since: Timestamp?
    /// Entries at or before this instant.
    public var until: Timestamp?
    public var category: String?
    public var source: String?
    /// Entries whose `data.tags` contains this tag exactly.
    public var tag: String?
    /// Case-insensitive partial match on `data.text` ("grocery" finds "Buy Groceries").
    public var search: String?
    /// Only entries with a `data.location` (a place on the map).
    public var hasLocation = false
    public var limit: Int
    public var offset: Int
    /// Only entries that come after this one newest first, by (timestamp, id): a keyset
    /// cursor, so a page deep in the journal costs what a first one does, and entries written
    /// between pages shift nothing. `list` and `GET /api/entries` only (stats and export ignore it).
    public var before: Key?

    /// Where an entry stands in the journal's order (`before`).
    public struct Key: Equatable, Sendable {
        public var timestamp: Timestamp
        public var id: String
        public init(timestamp: Timestamp, id: String) { self.timestamp = timestamp; self.id = id }
    }

    public static let defaultLimit = 100

    public init(since: Timestamp? = nil, until: Timestamp? = nil, category: String? = nil, source: String? = nil,
                tag: String? = nil, search: String? = nil, limit: Int = EntryQuery.defaultLimit, offset: Int = 0) {
        self.since = since
        self.until = until
        self.category = category
        self.source = source
        self.tag = tag
        self.search = search
        self.limit = limit
        self.offset = offset
    }
}
