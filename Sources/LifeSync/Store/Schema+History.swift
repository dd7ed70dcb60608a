extension Schema {
    /// Step 24: the write digest of each write of our own origins, made here or given back by a
    /// peer (Replica+History, PROTOCOL.md §7.2.3), which tells a replica whose history forked
    /// from its peers'. Origins that had writes log from after them (`own_writes_from`); later
    /// ones from 1. And the repairs of forked origins, ours and those we took in, signed by the
    /// node that made them, told to peers that may hold the writes given up.
    static let ownWritesStep = """
        CREATE TABLE IF NOT EXISTS own_writes (origin TEXT NOT NULL, seq INTEGER NOT NULL, digest BLOB NOT NULL, PRIMARY KEY (origin, seq)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS own_writes_from (origin TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID;
        INSERT OR IGNORE INTO own_writes_from(origin, seq)
            SELECT origin, seq + 1 FROM replica_vector
            WHERE node_id = (SELECT value FROM meta WHERE key = 'node_id')
               OR origin = (SELECT value FROM meta WHERE key = 'incarnation');
        CREATE TABLE IF NOT EXISTS history_repairs (id INTEGER PRIMARY KEY, node_id TEXT NOT NULL, origin TEXT NOT NULL, fork INTEGER NOT NULL,
                                                    moved_to TEXT NOT NULL, base INTEGER NOT NULL, members BLOB NOT NULL,
                                                    public_key BLOB NOT NULL, signature BLOB NOT NULL UNIQUE);
        """
}

extension Schema {
    /// Step 26: the forks of third nodes' origins this replica knows of (Replica+Forks,
    /// PROTOCOL.md §7.2.4), one per origin, kept until a repair settles them.
    static let knownForksStep = """
        CREATE TABLE IF NOT EXISTS known_forks (origin TEXT PRIMARY KEY NOT NULL, agreed INTEGER NOT NULL, seq INTEGER NOT NULL,
                                                first BLOB NOT NULL, second BLOB NOT NULL) WITHOUT ROWID;
        """
}

extension Schema {
    /// Step 29: the incarnations this replica started, in order: its own line, which a repair of
    /// a forked origin follows (Replica+Reissue, PROTOCOL.md §7.2.3 step 4). One started after
    /// the copy a replica was restored from, on the line it lost, is bound to the same node but
    /// is not in it. A replica from before takes its own origins as they stand, in the order of
    /// the HLC of the first write it holds of each (one line's clock only goes forward, and an
    /// incarnation is done before the next starts; none held: first), the current last.
    static let lineageStep = """
        CREATE TABLE IF NOT EXISTS own_incarnations (started INTEGER PRIMARY KEY, origin TEXT NOT NULL UNIQUE);
        INSERT OR IGNORE INTO own_incarnations(origin)
            SELECT origin FROM replica_vector
            WHERE node_id = (SELECT value FROM meta WHERE key = 'node_id') AND origin IS NOT (SELECT value FROM meta WHERE key = 'incarnation')
            ORDER BY (SELECT hlc FROM entries WHERE origin_no = (SELECT number FROM origins WHERE incarnation = replica_vector.origin)
                      ORDER BY origin_seq LIMIT 1), origin;
        INSERT OR IGNORE INTO own_incarnations(origin) SELECT value FROM meta WHERE key = 'incarnation';
        """
}
