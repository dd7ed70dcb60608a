import LifeSync
import LifeSyncAPI
import LifeSyncRuntime
import TestSupport
import Testing

/// The replica's change feed: what a local write, a merge from a peer and a delete put in it,
/// compaction, the cursor checks, and the SSE body built from it.
@Suite struct ChangeFeedTests {
    @Test func localWritesMergesAndDeletesAppearInApplyOrderEachOnce() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 1)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 2)
        let a = try phone.add(json: ReplicaFixtures.entryJSON(text: "a"))
        var observer = ChangeObserver(replica: phone)
        #expect(try observer.poll().map(\.id) == [a.id] && observer.caughtUp)
        let fromMac = try mac.add(json: ReplicaFixtures.entryJSON(text: "from the mac"))
        try ReplicaFixtures.sync(from: mac, to: phone)
        try phone.delete(id: a.id)
        let changes = try observer.poll()
        #expect(changes.map(\.id) == [fromMac.id, a.id])
        #expect(changes[0].entry == fromMac && changes[0].deletedAt == nil)
        #expect(changes[1].entry == nil && changes[1].deletedAt != nil)
        #expect(try observer.poll().isEmpty)
        // Compacted from the start: `a` once, at its delete.
        let all = try phone.changes(since: nil, limit: 10)
        #expect(all.changes.map(\.id) == [fromMac.id, a.id] && !all.hasMore)
        let latest = try phone.latestChangeSequence()
        #expect(all.next == observer.cursor && all.next.sequence == latest)
    }

    @Test func pagesFollowOnWithoutGapsOrRepeats() throws {
        let phone = try ReplicaFixtures.replica(role: .phone)
        let ids = try (0..<7).map { try phone.add(json: ReplicaFixtures.entryJSON(text: "n\($0)")).id }
        var seen: [String] = []
        var cursor: ChangeCursor?
        for _ in 0..<10 {
            let page = try phone.changes(since: cursor, limit: 3)
            seen += page.changes.map(\.id)
            cursor = page.next
            if !page.hasMore { break }
        }
        #expect(seen == ids)
    }

    @Test func cursorsOfAnotherReplicaOrTheFutureAreRefused() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 1)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 2)
        _ = try phone.add(json: ReplicaFixtures.entryJSON(text: "a"))
        let own = try phone.changes(since: nil, limit: 1).next
        #expect(try phone.cursor(parsing: own.description) == own)
        #expect(throws: CursorRefused.self) { try mac.cursor(parsing: own.description) }
        #expect(throws: CursorRefused.self) { try phone.cursor(parsing: "2-\(phone.feedTag)") }
        for garbage in ["", "-", "x-\(phone.feedTag)", "-1-\(phone.feedTag)", "99999999999999999999-\(phone.feedTag)", "1-"] {
            #expect(throws: CursorRefused.self, "\(garbage)") { try phone.cursor(parsing: garbage) }
        }
    }

    @Test func theEventStreamSendsEachChangeAsAnEventThenWaits() throws {
        let phone = try ReplicaFixtures.replica(role: .phone)
        let a = try phone.add(json: ReplicaFixtures.entryJSON(text: "line\nbreak"))
        let stream = ChangeEventStream(replica: phone, after: nil)
        guard case .bytes(let bytes) = try stream.next(maximumBytes: 1 << 16) else { Issue.record("no event"); return }
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 5 && lines[0] == "id: \(stream.cursor!)" && lines[1] == "event: change" && lines[2].hasPrefix("data: {"))
        #expect(text.hasSuffix("\n\n") && lines[2].contains(a.id))
        #expect(try stream.next(maximumBytes: 1 << 16) == .later)
        try phone.delete(id: a.id)
        guard case .bytes(let more) = try stream.next(maximumBytes: 1 << 16) else { Issue.record("no delete event"); return }
        #expect(String(decoding: more, as: UTF8.self).contains("\"entry\":null"))
    }

    @Test func aCSVExportIsOneHeaderAndARowPerEntryAcrossPages() throws {
        let phone = try ReplicaFixtures.replica(role: .phone)
        for i in 0..<450 { _ = try phone.add(json: ReplicaFixtures.entryJSON(text: "n\(i)", timestamp: "2026-11-22T08:00:00Z")) }
        let csv = String(decoding: try EntryExportSource(replica: phone, filter: EntryQuery(), format: .csv).drain(), as: UTF8.self)
        let rows = csv.components(separatedBy: "\r\n").dropLast()
        #expect(rows.count == 451 && rows.first == CSVExport.header.joined(separator: ","))
        #expect(Set(rows.dropFirst().map { $0.split(separator: ",")[0] }).count == 450, "no row twice across pages")
        let json = try JSONValue.parse(bytes: try EntryExportSource(replica: phone, filter: EntryQuery(), format: .json).drain())
        #expect(json == .array(try phone.allEntries().map(\.json)))
    }
}
