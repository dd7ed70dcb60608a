/// The replica's tables, created and upgraded through `PRAGMA user_version`.
///
/// `entries` holds live entries only, with the LifeLog document's columns first, so
/// `sqlite3 replica.sqlite 'SELECT id, timestamp, category, data FROM entries'` shows a user
/// exactly their journal. Deleted entries move to `tombstones`, which replicate and stay.
/// Both carry the replication metadata: the HLC, the write's origin incarnation and sequence
/// (a row is the latest write to its record, so the rows of one origin ordered by sequence are
/// that origin's change log), and the record's version vector; since step 27 the origin by its
/// number in `origins` and the vector as varints (OriginNumbers.swift).
enum Schema {
    /// Each step upgrades from version `index` to `index + 1`; steps are never edited once
    /// released, only appended.
    static let migrations: [String] = [
        """
        CREATE TABLE meta (
            key TEXT PRIMARY KEY NOT NULL,
            value TEXT NOT NULL
        );
        CREATE TABLE entries (
            id TEXT PRIMARY KEY NOT NULL,
            timestamp TEXT NOT NULL,
            recorded_at TEXT NOT NULL,
            source TEXT NOT NULL,
            device_id TEXT NOT NULL,
            category TEXT,
            data TEXT NOT NULL,
            created_at TEXT NOT NULL,
            hlc INTEGER NOT NULL,
            origin TEXT NOT NULL,
            origin_seq INTEGER NOT NULL,
            vv TEXT NOT NULL
        );
        CREATE INDEX idx_timestamp ON entries(timestamp DESC);
        CREATE INDEX idx_category ON entries(category);
        CREATE INDEX idx_source ON entries(source);
        CREATE UNIQUE INDEX idx_entries_origin_seq ON entries(origin, origin_seq);
        CREATE TABLE tombstones (
            id TEXT PRIMARY KEY NOT NULL,
            deleted_at TEXT NOT NULL,
            hlc INTEGER NOT NULL,
            origin TEXT NOT NULL,
            origin_seq INTEGER NOT NULL,
            vv TEXT NOT NULL
        );
        CREATE UNIQUE INDEX idx_tombstones_origin_seq ON tombstones(origin, origin_seq);
        CREATE TABLE replica_vector (
            origin TEXT PRIMARY KEY NOT NULL,
            seq INTEGER NOT NULL,
            node_id TEXT,
            role TEXT
        );
        CREATE TABLE conflicts (
            entry_id TEXT NOT NULL,
            loser_origin TEXT NOT NULL,
            loser_seq INTEGER NOT NULL,
            loser_hlc INTEGER NOT NULL,
            loser_deleted INTEGER NOT NULL,
            loser_entry TEXT,
            winner_origin TEXT NOT NULL,
            winner_seq INTEGER NOT NULL,
            winner_hlc INTEGER NOT NULL,
            winner_deleted INTEGER NOT NULL,
            detected_at TEXT NOT NULL,
            PRIMARY KEY (entry_id, loser_origin, loser_seq)
        );
        """,
        // 2: what a serving node knows of its peers, so `lifesync status` (another process) can show it.
        """
        CREATE TABLE peers (
            node_id TEXT PRIMARY KEY NOT NULL,
            role TEXT NOT NULL,
            address TEXT NOT NULL,
            direction TEXT NOT NULL,
            state TEXT NOT NULL,
            last_connected TEXT,
            last_sync TEXT,
            entries_sent INTEGER NOT NULL DEFAULT 0,
            entries_received INTEGER NOT NULL DEFAULT 0,
            pending INTEGER NOT NULL DEFAULT 0,
            vector TEXT NOT NULL DEFAULT '',
            updated_at TEXT NOT NULL
        );
        """,
        // 3: recordings. The metadata replicates like an entry (a deleted one stays, with
        // deleted = 1); what this replica holds of the bytes, and who confirmed them, is local.
        """
        CREATE TABLE recordings (
            id TEXT PRIMARY KEY NOT NULL,
            file_name TEXT NOT NULL,
            size INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            media_type TEXT NOT NULL,
            entry_id TEXT,
            origin_node TEXT NOT NULL,
            created_at TEXT NOT NULL,
            deleted INTEGER NOT NULL DEFAULT 0,
            hlc INTEGER NOT NULL,
            origin TEXT NOT NULL,
            origin_seq INTEGER NOT NULL,
            vv TEXT NOT NULL
        );
        CREATE UNIQUE INDEX idx_recordings_origin_seq ON recordings(origin, origin_seq);
        CREATE TABLE recording_files (
            id TEXT PRIMARY KEY NOT NULL,
            state TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            received INTEGER NOT NULL DEFAULT 0,
            removed_at TEXT,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE recording_confirmations (
            id TEXT NOT NULL,
            node_id TEXT NOT NULL,
            role TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            confirmed_at TEXT NOT NULL,
            PRIMARY KEY (id, node_id)
        );
        """,
        // 4: the trust store. Which node each trusted key belongs to, and where to reach it; and
        // the keys that tried to connect without being trusted (bounded, see Replica+Trust).
        """
        CREATE TABLE trusted_peers (
            node_id TEXT PRIMARY KEY NOT NULL,
            role TEXT NOT NULL,
            fingerprint TEXT NOT NULL UNIQUE,
            addresses TEXT NOT NULL DEFAULT '',
            trusted_at TEXT NOT NULL
        );
        CREATE TABLE pending_peers (
            fingerprint TEXT PRIMARY KEY NOT NULL,
            node_id TEXT,
            role TEXT,
            address TEXT NOT NULL,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL,
            attempts INTEGER NOT NULL
        );
        """,
        // 5: signed recordings (protocol version 2). Each recording's origin key and signature
        // (NULL in rows stored before), and the key each origin node signs with, bound by the
        // trust store or at the first signed recording seen from it (see Replica+Signatures).
        """
        ALTER TABLE recordings ADD COLUMN origin_key BLOB;
        ALTER TABLE recordings ADD COLUMN signature BLOB;
        CREATE TABLE origin_keys (
            node_id TEXT PRIMARY KEY NOT NULL,
            public_key BLOB NOT NULL,
            bound_at TEXT NOT NULL
        );
        """,
        // 6: nodes heard on the local network (LAN discovery) that are not trusted: listed by
        // `lifesync peers`, never dialled; bounded like pending_peers (see Replica+Discovery).
        """
        CREATE TABLE discovered_peers (
            node_id TEXT PRIMARY KEY NOT NULL,
            role TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            address TEXT NOT NULL,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL
        );
        """,
        // 7: keys the user stopped trusting: a pairing string of one of them is refused unless
        // the user says again, and they are not offered as pending (see Replica+Trust).
        """
        CREATE TABLE revoked_keys (
            fingerprint TEXT PRIMARY KEY NOT NULL,
            node_id TEXT NOT NULL,
            revoked_at TEXT NOT NULL
        );
        """,
        // 8: where a received recording's bytes came from (so they are not offered back), kept
        // apart from confirmations, which only a receiver's verified CONFIRM earns; and why a
        // local copy cannot be sent (damaged or missing), so it is shown and not offered again.
        // A receiver used to record its sender as a confirmation: such rows name the recording's
        // origin, which never confirms its own recording, and move to `received_from`.
        """
        ALTER TABLE recording_files ADD COLUMN received_from TEXT;
        ALTER TABLE recording_files ADD COLUMN damage TEXT;
        UPDATE recording_files SET received_from = (
            SELECT c.node_id FROM recording_confirmations c JOIN recordings r ON r.id = c.id
            WHERE c.id = recording_files.id AND c.node_id = r.origin_node);
        DELETE FROM recording_confirmations
        WHERE node_id = (SELECT r.origin_node FROM recordings r WHERE r.id = recording_confirmations.id);
        """,
        // 9: keys of the HTTP API (the LifeLog document's api_keys): only each key's SHA-256 is
        // kept; local to this node, never replicated (see Replica+APIKeys).
        """
        CREATE TABLE api_keys (
            key_hash TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL,
            last_used TEXT
        );
        """,
        // 10: a filtered page (`list --category`, `GET /api/entries?source=…`) is newest first;
        // with the time in the index, SQLite reads the newest rows of that category or source
        // and stops at the page's end, instead of sorting every match (0.7 s over 100k rows).
        // The names stay the LifeLog document's.
        """
        DROP INDEX idx_category;
        CREATE INDEX idx_category ON entries(category, timestamp DESC);
        DROP INDEX idx_source;
        CREATE INDEX idx_source ON entries(source, timestamp DESC);
        """,
        // 11: the change feed (`GET /api/changes`, `lifesync changes`): each record carries the
        // local sequence of the last write this replica applied to it, local or from a peer,
        // numbered by the one writer of rows (RecordWriter) inside the write's transaction. A
        // write moves its record to the top, so each entry is listed once, at its latest change.
        // A column with an index that only ever grows at its end costs an insert little; triggers
        // keeping a separate table keyed by entry ID doubled SQLite's time per insert.
        // Existing records are numbered oldest first.
        """
        ALTER TABLE entries ADD COLUMN feed_seq INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE tombstones ADD COLUMN feed_seq INTEGER NOT NULL DEFAULT 0;
        CREATE TEMP TABLE feed_order AS
            SELECT id, row_number() OVER (ORDER BY hlc, id) AS seq
            FROM (SELECT id, hlc FROM entries UNION ALL SELECT id, hlc FROM tombstones);
        CREATE UNIQUE INDEX feed_order_id ON feed_order(id);
        UPDATE entries SET feed_seq = (SELECT seq FROM feed_order WHERE feed_order.id = entries.id);
        UPDATE tombstones SET feed_seq = (SELECT seq FROM feed_order WHERE feed_order.id = tombstones.id);
        DROP TABLE feed_order;
        CREATE INDEX idx_entries_feed ON entries(feed_seq);
        CREATE INDEX idx_tombstones_feed ON tombstones(feed_seq);
        """,
        // 12: the per-field merge (PROTOCOL.md §8). A row's write may have changed only some
        // fields (`fields`, a FieldMask; NULL: all); when the row's content also holds fields of
        // earlier writes, `own` keeps the write's own content, which is what is sent on. Earlier
        // writes that still win a field, and the greatest delete an entry outlived, stay in
        // `kept_writes` (see Replica+EntryWrites): they are part of their origins' logs as the
        // rows are. A conflict that lost only some fields names them (`fields`).
        """
        ALTER TABLE entries ADD COLUMN fields INTEGER;
        ALTER TABLE entries ADD COLUMN own TEXT;
        CREATE TABLE kept_writes (
            id TEXT NOT NULL,
            hlc INTEGER NOT NULL,
            origin TEXT NOT NULL,
            origin_seq INTEGER NOT NULL,
            vv TEXT NOT NULL,
            deleted INTEGER NOT NULL,
            fields INTEGER,
            content TEXT
        );
        CREATE UNIQUE INDEX idx_kept_writes_origin_seq ON kept_writes(origin, origin_seq);
        CREATE INDEX idx_kept_writes_id ON kept_writes(id);
        ALTER TABLE conflicts ADD COLUMN fields INTEGER;
        """,
        // 13: the incarnation a peer confirmed a recording under, or sent it to us under: a peer
        // whose replica was put back from an older copy starts a new incarnation, and what it
        // confirmed or sent before may be gone from it, so it is offered the recording again (it
        // confirms at once if it holds it). NULL: kept before this was, taken as still standing.
        """
        ALTER TABLE recording_confirmations ADD COLUMN incarnation TEXT;
        ALTER TABLE recording_files ADD COLUMN received_from_incarnation TEXT;
        """,
        // 14: how a key's client reads entries (EntryPresentation): the key names the client,
        // so an app that cannot be rebuilt gets the form its model decodes.
        """
        ALTER TABLE api_keys ADD COLUMN presentation TEXT NOT NULL DEFAULT 'lifesync';
        """,
        // 15: wrong pairing codes typed for a pending key's claim (Replica+Pending): codes are
        // not tried until one fits.
        """
        ALTER TABLE pending_peers ADD COLUMN wrong_codes INTEGER NOT NULL DEFAULT 0;
        """,
        // 16: where each trusted node's dial targets came from (Replica+DialAddresses): the
        // user's (a pairing string, `pair`), never dropped by anything heard; addresses a
        // handshake with the pinned key completed at; and addresses only heard announced on the
        // LAN, which anyone can forge. `addresses` stays the dial order made of the three. The
        // addresses stored before are taken as the user's.
        """
        ALTER TABLE trusted_peers ADD COLUMN given_addresses TEXT NOT NULL DEFAULT '';
        ALTER TABLE trusted_peers ADD COLUMN verified_addresses TEXT NOT NULL DEFAULT '';
        ALTER TABLE trusted_peers ADD COLUMN heard_addresses TEXT NOT NULL DEFAULT '';
        UPDATE trusted_peers SET given_addresses = addresses;
        """,
        // 17: the last rotation of our incarnation each peer's HELLO claim caused, and whether
        // the peer then backed it with the writes it claimed (Replica+IncarnationClaims).
        """
        CREATE TABLE incarnation_claims (
            node_id TEXT PRIMARY KEY NOT NULL,
            incarnation TEXT NOT NULL,
            sequence INTEGER NOT NULL,
            backed INTEGER NOT NULL,
            claimed_at TEXT NOT NULL
        );
        """,
        // 18: device names ("Kitchen iPad"), per node ID: this node's own (`init --name`,
        // `lifesync name`) and its peers', as a peer announces it and as the user named it here
        // (`peers name`); the user's wins (Replica+DeviceNames). Local: names do not replicate.
        """
        CREATE TABLE device_names (
            node_id TEXT PRIMARY KEY NOT NULL,
            announced_name TEXT,
            local_name TEXT,
            updated_at TEXT NOT NULL
        );
        """,
        // 19: keys that may manage keys over HTTP (`keys create NAME --admin`; LifeLogAPI+Manage).
        """
        ALTER TABLE api_keys ADD COLUMN admin INTEGER NOT NULL DEFAULT 0;
        """,
        // 20: seals (PROTOCOL.md §5.2.5): each origin's signature over the writes it sent, kept as
        // received so this replica can relay those writes with their proof, found by the range
        // of sequences they span (Replica+Seals): one row per received batch and origin, nothing
        // per write. This node's own writes need none: it seals them as it sends them. Writes of
        // other origins received before seals existed have none, and are not relayed (their
        // origin sends them itself).
        """
        CREATE TABLE seals (
            id INTEGER PRIMARY KEY,
            origin TEXT NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            node_id TEXT NOT NULL,
            public_key BLOB NOT NULL,
            members BLOB NOT NULL,
            signature BLOB NOT NULL UNIQUE
        );
        CREATE INDEX idx_seals_origin ON seals(origin, last_seq);
        CREATE TABLE seal_owners (
            origin TEXT PRIMARY KEY NOT NULL,
            node_id TEXT NOT NULL
        ) WITHOUT ROWID;
        """,
        // 21: batches refused as forged (a change its origin did not seal, PROTOCOL.md §5.2.5):
        // which peer sent one, when and why, for `lifesync status` to list (the 50 latest;
        // Replica+Seals). Nothing of such a batch is stored, so this is the user's only trace.
        """
        CREATE TABLE refused_batches (
            id INTEGER PRIMARY KEY,
            node_id TEXT NOT NULL,
            refused_at TEXT NOT NULL,
            reason TEXT NOT NULL
        );
        """,
        // 22: a full-text index of each live entry's text for `--search` (Replica+TextSearch):
        // FTS5 trigrams, so any three letters of a word find it wherever they stand, as the
        // TextSearch rule's substrings do; the index narrows the rows, the rule still decides.
        // Contentless, without positions or sizes: it holds only which rows hold each trigram.
        // Keyed by the row's feed number, which every write renews and which VACUUM keeps
        // (rowids it may renumber). Triggers keep it in step with every write to `entries`,
        // local, imported, received or deleted, and with a user's own SQL; damaged data
        // (not JSON) is indexed as no text, the same on the way in and out. A row put into FTS5
        // by a trigger costs five times one put in with many others (each statement's savepoint
        // flushes FTS5's pending terms), so a write transaction of the replica's own marks where
        // it starts (meta `text_index_from`, the latest feed number) and indexes the rows written
        // after the mark in one statement before it commits; received batches leave the mark for
        // the end of the burst (Replica+TextIndex). Rows at or before the mark are in the index,
        // and are taken out of it as they are changed or deleted; searches scan the rows after it.
        """
        CREATE VIRTUAL TABLE entries_text USING fts5(text, content = '', tokenize = 'trigram', detail = 'none', columnsize = 0);
        INSERT INTO entries_text(rowid, text)
            SELECT feed_seq, CASE WHEN json_valid(data) THEN json_extract(data, '$.text') END FROM entries;
        CREATE TRIGGER entries_text_insert AFTER INSERT ON entries
        WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'text_index_from') BEGIN
            INSERT INTO entries_text(rowid, text)
                VALUES (new.feed_seq, CASE WHEN json_valid(new.data) THEN json_extract(new.data, '$.text') END);
        END;
        CREATE TRIGGER entries_text_delete AFTER DELETE ON entries
        WHEN old.feed_seq <= coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'text_index_from'), old.feed_seq) BEGIN
            INSERT INTO entries_text(entries_text, rowid, text)
                VALUES ('delete', old.feed_seq, CASE WHEN json_valid(old.data) THEN json_extract(old.data, '$.text') END);
        END;
        CREATE TRIGGER entries_text_update AFTER UPDATE OF data, feed_seq ON entries BEGIN
            INSERT INTO entries_text(entries_text, rowid, text)
                SELECT 'delete', old.feed_seq, CASE WHEN json_valid(old.data) THEN json_extract(old.data, '$.text') END
                WHERE old.feed_seq <= coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'text_index_from'), old.feed_seq);
            INSERT INTO entries_text(rowid, text)
                SELECT new.feed_seq, CASE WHEN json_valid(new.data) THEN json_extract(new.data, '$.text') END
                WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'text_index_from');
        END;
        """,
        // 23: the text index kept in step by the replica's writer, not by triggers: a trigger on
        // `entries` made SQLite keep a statement journal for every row written (the pages each
        // INSERT touched, copied to a temporary file before it ran: 2 million writes, 4 GiB, for a
        // 100k-entry sync, a quarter of the receiver's time). The mark is now always set: rows
        // with a greater feed number are the backlog, indexed at the end of each local write
        // transaction and when a sync burst ends (Replica+TextIndex); `RecordWriter` takes a row
        // at or below the mark out of the index before it replaces or deletes it. A replica whose
        // triggers left nothing pending is indexed up to its latest feed number.
        """
        DROP TRIGGER entries_text_insert;
        DROP TRIGGER entries_text_delete;
        DROP TRIGGER entries_text_update;
        INSERT OR IGNORE INTO meta(key, value)
            SELECT 'text_index_from', max(coalesce((SELECT max(feed_seq) FROM entries), 0), coalesce((SELECT max(feed_seq) FROM tombstones), 0));
        """,
        // 24: our own write digests and our repairs of forked origins (Schema+History.swift).
        ownWritesStep,
        // 25: the journal's counts, kept by the replica's writer (EntrySummary.swift).
        EntrySummary.createStep,
        // 26: forks of third nodes' origins, carried to their owners (Schema+History.swift).
        knownForksStep,
        // 27: origins by number in the write tables, vectors as varints (Schema+Compact.swift),
        // with a conversion in Swift after it (`conversions`).
        originsStep,
        // 28: the time indexes ascending, so rows written in time order fill their pages
        // (Schema+Compact.swift).
        ascendingTimeStep,
        // 29: the incarnations this replica started, in order (Schema+History.swift).
        lineageStep,
        // 30: the journal's counts with a mark of their own, kept in step with every write
        // (EntrySummary.swift).
        EntrySummary.markStep,
    ]

    static var currentVersion: Int { migrations.count }

    /// Brings `db` to the current version, all steps in one transaction.
    static func migrate(_ db: Database) throws {
        // A replica at the current version takes no lock to open: reading it must not wait for a
        // writer (an import holds the write lock for its whole run; `status` beside it waited
        // out the busy timeout and failed).
        guard try db.userVersion != currentVersion else { return }
        // Read the version again under the write lock, so two processes creating the same file
        // at once do not both run the first step.
        try db.transaction {
            let found = try db.userVersion
            guard found <= currentVersion else {
                throw ReplicaError.newerSchema(found: found, supported: currentVersion)
            }
            guard found < currentVersion else { return }
            let empty = try db.firstRow("SELECT 1 FROM sqlite_master") { _ in true } == nil
            if found == 0, empty {
                try db.execute(try freshScript())  // what the steps make of an empty file (Schema+Fresh.swift)
            } else {
                try runSteps(db, after: found)
            }
            try db.setUserVersion(currentVersion)
        }
    }
}
