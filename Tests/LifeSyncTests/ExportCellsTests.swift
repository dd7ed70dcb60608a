@testable import LifeSync
import LifeSyncAPI
import TestSupport
import Testing

/// An export reads stored rows as cells (their bytes) when it can vouch for them, and orders a
/// page by time alone when no two of its rows share one. Both are only fast ways to the bytes
/// the reference way writes: each row read as an entry, pages ordered by time and ID.
@Suite struct ExportCellsTests {
    /// Each readable row of `replica`, oldest first, as what its cells write (nil when it came
    /// as an entry) and as what the entry read the reference way writes: its CSV row, then its
    /// JSON as an export lays it out and compact.
    static func rows(_ replica: Replica, limit: Int = 200) throws -> [(cells: [UInt8]?, entry: [UInt8])] {
        var fast: [[UInt8]?] = [], reference: [[UInt8]] = []
        var after: (timestamp: String, id: String)?, damaged: [String] = []
        while true {
            let page = try replica.forEachEntry(matching: EntryQuery(), after: after, limit: limit, cells: true, damaged: &damaged) { stored in
                guard case .cells(let row) = stored else { return fast.append(nil) }
                var out: [UInt8] = []
                CSVExport.append(row, to: &out)
                row.writeJSON(to: &out, pretty: true, indent: 1)
                row.writeJSON(to: &out, pretty: false, indent: 0)
                fast.append(out)
            }
            if page.rows < limit { break }
            after = page.last
        }
        for entry in try replica.allEntries(matching: EntryQuery(), damaged: &damaged) {
            var out: [UInt8] = []
            CSVExport.append(entry, to: &out)
            entry.writeJSON(to: &out, pretty: true, indent: 1)
            entry.writeJSON(to: &out, pretty: false, indent: 0)
            reference.append(out)
        }
        #expect(fast.count == reference.count)
        return Array(zip(fast, reference))
    }

    @Test func cellsWriteTheRowTheEntryWrites() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let random = SeededRandom(seed: 21)
        var extras = 0
        for i in 0..<1_500 {
            var entry = EntryGenerator(random).entry()
            if i % 10 == 0 { entry.data.extra = ["mood_note": .string("a,\"b\""), "n": .number(Double(i))]; extras += 1 }
            try replica.add(entry)
        }
        let rows = try Self.rows(replica)
        for row in rows where row.cells != nil {
            #expect(row.cells == row.entry, "\(String(decoding: row.entry, as: UTF8.self))")
        }
        // Escaped strings (quotes, line breaks, backslashes, NUL) and extra members go the
        // reference way; the rest, most of the journal, as cells.
        let asCells = rows.filter { $0.cells != nil }.count
        #expect(asCells > 300 && asCells <= rows.count - extras, "\(asCells) of \(rows.count) as cells")
    }

    @Test func theBenchWorkloadIsReadAsCells() throws {
        let replica = try ReplicaFixtures.replica(role: .watch)
        for i in 0..<300 {
            var data = LogData(text: "entry \(i): walked to the market, felt \(i % 10) out of ten")
            switch i % 3 {
            case 0: data.metric = Metric(name: "mood", value: Double(1 + i % 10), scaleMin: 1, scaleMax: 10)
            case 1: data.location = Location(latitude: 52.5 + Double(i) / 1_000, longitude: -13.4 - Double(i) / 7, accuracy: 10, placeName: "Berlin")
            default: data.tags = ["bench", "t\(i % 7)", "a,b"]
            }
            let time = Timestamp(millisecondsSince1970: 1_795_305_600_000 + Int64(i) * 60_000)
            try replica.add(LogEntry(id: Identifier.make(role: .watch, random: SeededRandom(seed: UInt64(i))), timestamp: time, recordedAt: time,
                                     source: "watch", deviceId: "=watch", category: i % 2 == 0 ? "mood" : nil, data: data))
        }
        let rows = try Self.rows(replica, limit: 7)
        #expect(rows.count == 300 && rows.allSatisfy { $0.cells == $0.entry })
    }

    /// Rows written by hand, not in the form the replica writes: each goes the reference way,
    /// and the export is the same bytes.
    @Test(arguments: [
        ("timestamp", "'2026-11-22T09:30:00+01:00'"), ("timestamp", "'2026-11-22T08:30:00Z'"), ("recorded_at", "'2026-11-22t08:30:00.000Z'"),
        ("data", "'{ \"text\": \"spaced\" }'"), ("data", "'{\"text\":\"a\\u0041\"}'"), ("data", "'{\"text\":\"x\",\"zz\":1}'"),
        ("data", "'{\"metric\":{\"name\":\" padded\",\"value\":1}}'"), ("data", "'{\"tags\":[\"a\", \"b\"]}'"),
        ("source", "CAST(x'ff41' AS TEXT)"), ("data", "CAST(x'7b2274657874223a22ff227d' AS TEXT)"),
    ])
    func rowsNotInTheStoredFormAreReadAsEntries(column: String, value: String) throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let entry = try replica.add(json: ReplicaFixtures.entryJSON(text: "plain"))
        try replica.database.run("UPDATE entries SET \(column) = \(value) WHERE id = ?", [.text(entry.id)])
        var cells = 0
        try replica.database.forEachRow("SELECT \(Replica.entryColumns) FROM entries") { row in
            if EntryCells.read(row) != nil { cells += 1 }
        }
        #expect(cells == 0)
        // Read as an entry, or passed over as damaged (invalid UTF-8 in `data`) both ways.
        #expect(try Self.rows(replica).allSatisfy { $0.cells == nil })
    }

    /// Pages of every size over a journal full of equal times, filtered and not: the order and
    /// the rows are those of `ORDER BY timestamp, id`.
    @Test(arguments: [1, 2, 3, 7, 200])
    func pagesFollowTimeAndIDWhereTimesAreEqual(limit: Int) throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let groups = [1, 1, 3, 1, 2, 9, 1, 1, 1, 1, 4, 1, 2, 1, 250, 1, 1]
        for (minute, size) in groups.enumerated() {
            for i in 0..<size {
                _ = try replica.add(json: ReplicaFixtures.entryJSON(text: "m\(minute) \(i)", category: i % 2 == 0 ? "note" : "mood",
                                                                    timestamp: "2026-11-22T08:\(minute < 10 ? "0" : "")\(minute):00Z"))
            }
        }
        for filter in [EntryQuery(), EntryQuery(category: "note")] {
            var ids: [String] = [], after: (timestamp: String, id: String)?, damaged: [String] = []
            while true {
                let page = try replica.forEachEntry(matching: filter, after: after, limit: limit, cells: true, damaged: &damaged) { stored in
                    if case .cells(let row) = stored { ids.append(String(decoding: row.id, as: UTF8.self)) }
                }
                if page.rows < limit { break }
                after = page.last
            }
            #expect(ids == (try replica.allEntries(matching: filter, damaged: &damaged)).map(\.id))
        }
    }
}
