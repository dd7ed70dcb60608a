import Foundation
@testable import LifeSync
import Testing
import TestSupport

private func entryJSON(_ text: String?, timestamp: String, category: String? = nil, source: String? = nil,
                       tags: [String]? = nil, metric: (String, Double)? = nil) -> JSONValue {
    var data: [(String, JSONValue)] = []
    if let text { data.append(("text", .string(text))) }
    if let tags { data.append(("tags", .array(tags.map(JSONValue.string)))) }
    if let metric { data.append(("metric", .object([("name", .string(metric.0)), ("value", .number(metric.1))]))) }
    var members: [(String, JSONValue)] = [("timestamp", .string(timestamp)), ("data", .object(data))]
    if let category { members.append(("category", .string(category))) }
    if let source { members.append(("source", .string(source))) }
    return .object(members)
}

// MARK: - Queries

@Suite struct ReplicaQueryTests {
    struct Fixture {
        let replica: Replica
        let e1, e2, e3, e4, e5: LogEntry
    }

    static func fixture() throws -> Fixture {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 12)
        let e1 = try replica.add(json: entryJSON("Buy groceries", timestamp: "2026-11-20T08:00:00Z", category: "food",
                                                 source: "phone", tags: ["shopping"]))
        let e2 = try replica.add(json: entryJSON("Walked to the park", timestamp: "2026-11-21T09:00:00Z", category: "mood",
                                                 source: "watch", tags: ["morning", "walking"], metric: ("mood", 4)))
        let e3 = try replica.add(json: entryJSON("Grocery run, milk and bread", timestamp: "2026-11-22T10:00:00Z", category: "food",
                                                 source: "watch", tags: ["dinner"], metric: ("cost", 12.5)))
        let e4 = try replica.add(json: entryJSON(nil, timestamp: "2026-11-23T11:00:00Z", source: "drafts"))
        let e5 = try replica.add(json: entryJSON("Feeling GREAT", timestamp: "2026-11-24T12:00:00Z", category: "mood",
                                                 source: "phone", tags: ["walk"], metric: ("mood", 8)))
        return Fixture(replica: replica, e1: e1, e2: e2, e3: e3, e4: e4, e5: e5)
    }

    private func ids(_ f: Fixture, _ query: EntryQuery) throws -> [String] {
        try f.replica.entries(matching: query).map(\.id)
    }

    @Test func everythingNewestFirst() throws {
        let f = try Self.fixture()
        #expect(try ids(f, EntryQuery()) == [f.e5.id, f.e4.id, f.e3.id, f.e2.id, f.e1.id])
        #expect(try f.replica.entries(matching: EntryQuery()).first == f.e5)
        #expect(try f.replica.allEntries().map(\.id) == [f.e1.id, f.e2.id, f.e3.id, f.e4.id, f.e5.id])
    }

    @Test func sinceAndUntilAreInclusive() throws {
        let f = try Self.fixture()
        let at = try Timestamp(iso8601: "2026-11-22T10:00:00Z")
        #expect(try ids(f, EntryQuery(since: at)) == [f.e5.id, f.e4.id, f.e3.id])
        #expect(try ids(f, EntryQuery(until: at)) == [f.e3.id, f.e2.id, f.e1.id])
        #expect(try ids(f, EntryQuery(since: at, until: at)) == [f.e3.id])
        // The same instant written with an offset.
        let sameInstant = try Timestamp(iso8601: "2026-11-22T11:00:00+01:00")
        #expect(try ids(f, EntryQuery(since: sameInstant, until: sameInstant)) == [f.e3.id])
        let justAfter = Timestamp(millisecondsSince1970: at.millisecondsSince1970 + 1)
        #expect(try ids(f, EntryQuery(since: justAfter)) == [f.e5.id, f.e4.id])
        #expect(try ids(f, EntryQuery(since: try Timestamp(iso8601: "2027-01-01T00:00:00Z"))).isEmpty)
        #expect(try ids(f, EntryQuery(since: justAfter, until: at)).isEmpty)
    }

    @Test func categoryAndSourceMatchExactly() throws {
        let f = try Self.fixture()
        #expect(try ids(f, EntryQuery(category: "food")) == [f.e3.id, f.e1.id])
        #expect(try ids(f, EntryQuery(category: "mood")) == [f.e5.id, f.e2.id])
        #expect(try ids(f, EntryQuery(category: "FOOD")).isEmpty)
        #expect(try ids(f, EntryQuery(category: "foo")).isEmpty)
        #expect(try ids(f, EntryQuery(source: "watch")) == [f.e3.id, f.e2.id])
        #expect(try ids(f, EntryQuery(source: "drafts")) == [f.e4.id])
        #expect(try ids(f, EntryQuery(source: "mac")).isEmpty)
    }

    @Test func tagMatchesWholeTagsOnly() throws {
        let f = try Self.fixture()
        #expect(try ids(f, EntryQuery(tag: "walk")) == [f.e5.id])
        #expect(try ids(f, EntryQuery(tag: "walking")) == [f.e2.id])
        #expect(try ids(f, EntryQuery(tag: "morning")) == [f.e2.id])
        #expect(try ids(f, EntryQuery(tag: "shop")).isEmpty)
        #expect(try ids(f, EntryQuery(tag: "Morning")).isEmpty)
    }

    @Test func searchIsCaseInsensitiveAndStems() throws {
        let f = try Self.fixture()
        #expect(try ids(f, EntryQuery(search: "grocery")) == [f.e3.id, f.e1.id])
        #expect(try ids(f, EntryQuery(search: "GROCERIES")) == [f.e3.id, f.e1.id])
        #expect(try ids(f, EntryQuery(search: "great")) == [f.e5.id])
        #expect(try ids(f, EntryQuery(search: "walking")) == [f.e2.id])
        #expect(try ids(f, EntryQuery(search: "par")) == [f.e2.id])
        #expect(try ids(f, EntryQuery(search: "milk bread")) == [f.e3.id])
        #expect(try ids(f, EntryQuery(search: "milk park")).isEmpty)
        #expect(try ids(f, EntryQuery(search: "xyzzy")).isEmpty)
    }

    @Test func textSearchRule() {
        #expect(TextSearch(query: "grocery").matches("Buy groceries"))
        #expect(TextSearch(query: "Grocery").matches("BUY GROCERIES"))
        #expect(TextSearch(query: "walking").matches("walked home"))
        #expect(!TextSearch(query: "walking").matches("talked home"))
        #expect(TextSearch(query: "buy, milk!").matches("milk: buy it"))
        #expect(!TextSearch(query: "buy milk").matches("buy bread"))
        #expect(TextSearch(query: "  ").isEmpty)
    }

    @Test func filtersCombine() throws {
        let f = try Self.fixture()
        #expect(try ids(f, EntryQuery(category: "food", search: "milk")) == [f.e3.id])
        #expect(try ids(f, EntryQuery(category: "mood", source: "phone")) == [f.e5.id])
        #expect(try ids(f, EntryQuery(since: try Timestamp(iso8601: "2026-11-21T00:00:00Z"), source: "watch", tag: "dinner")) == [f.e3.id])
        #expect(try ids(f, EntryQuery(category: "food", tag: "walk")).isEmpty)
    }

    @Test func limitAndOffsetPage() throws {
        let f = try Self.fixture()
        #expect(try ids(f, EntryQuery(limit: 2)) == [f.e5.id, f.e4.id])
        #expect(try ids(f, EntryQuery(limit: 2, offset: 2)) == [f.e3.id, f.e2.id])
        #expect(try ids(f, EntryQuery(limit: 2, offset: 4)) == [f.e1.id])
        #expect(try ids(f, EntryQuery(limit: 2, offset: 10)).isEmpty)
        #expect(try ids(f, EntryQuery(limit: 0)).isEmpty)
        #expect(try ids(f, EntryQuery(category: "food", limit: 1, offset: 1)) == [f.e1.id])
    }

    @Test func entriesAtTheSameTimeAreOrderedByIDAndPagesNeverOverlap() throws {
        let replica = try ReplicaFixtures.replica(role: .mac, seed: 13)
        var added: [String] = []
        for i in 0..<7 { added.append(try replica.add(json: ReplicaFixtures.entryJSON(text: "same \(i)")).id) }
        var paged: [String] = []
        for page in 0..<4 { paged += try replica.entries(matching: EntryQuery(limit: 2, offset: page * 2)).map(\.id) }
        #expect(paged == added.sorted(by: >))
    }

    @Test func statsCountLiveEntries() throws {
        let f = try Self.fixture()
        var stats = try f.replica.stats()
        #expect(stats.total == 5)
        #expect(stats.byCategory.map(\.key) == ["(none)", "food", "mood"])
        #expect(stats.byCategory.map(\.count) == [1, 2, 2])
        #expect(stats.bySource.map(\.key) == ["drafts", "phone", "watch"])
        #expect(stats.bySource.map(\.count) == [1, 2, 2])
        #expect(stats.byDay.map(\.key) == ["2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24"])
        #expect(stats.byDay.map(\.count) == [1, 1, 1, 1, 1])
        #expect(stats.metrics == [
            EntryStats.MetricSummary(name: "cost", count: 1, average: 12.5, minimum: 12.5, maximum: 12.5),
            EntryStats.MetricSummary(name: "mood", count: 2, average: 6, minimum: 4, maximum: 8),
        ])
        let json = stats.json
        #expect(json["total"] == .number(5))
        #expect(json["by_category"]?["food"] == .number(2))
        #expect(json["metrics"]?["mood"]?["average"] == .number(6))

        try f.replica.delete(id: f.e5.id)
        stats = try f.replica.stats()
        #expect(stats.total == 4)
        #expect(stats.byCategory.map(\.count) == [1, 2, 1])
        #expect(stats.metrics.last == EntryStats.MetricSummary(name: "mood", count: 1, average: 4, minimum: 4, maximum: 4))
    }

    @Test func statsOfAnEmptyReplica() throws {
        let stats = try ReplicaFixtures.replica(role: .phone).stats()
        #expect(stats.total == 0)
        #expect(stats.byCategory.isEmpty && stats.bySource.isEmpty && stats.byDay.isEmpty && stats.metrics.isEmpty)
    }
}
