import Foundation
import Testing
import TestSupport

/// `GET /api/entries?before=TIMESTAMP,ID` pages by key, so entries written between two pages
/// are neither skipped nor repeated (where `offset`, kept for the clients that send it, shifts);
/// `GET /api/entries/stats?utc_offset=MINUTES` counts a browser's days.
@Suite(.serialized) struct HTTPPagingAndDaysTests {
    @Test(.timeLimit(.minutes(3)))
    func keysetPagesMissNothingWrittenBetweenThem() throws {
        let api = try HTTPNode()
        // Seven entries, two pairs of them at the same millisecond (the ID orders those).
        let stamps = ["2026-11-20T08:00:00Z", "2026-11-21T08:00:00Z", "2026-11-21T08:00:00Z", "2026-11-22T08:00:00Z",
                      "2026-11-23T08:00:00Z", "2026-11-23T08:00:00Z", "2026-11-24T08:00:00Z"]
        let body = "[" + stamps.enumerated().map { #"{"timestamp": "\#($1)", "category": "note", "data": {"text": "n\#($0)"}}"# }
            .joined(separator: ",") + "]"
        #expect(try api.curl.request("POST", "/api/entries", body: body).status == 200)
        func page(_ query: String) throws -> [[String: Any]] {
            let listed = try api.curl.request("GET", "/api/entries?" + query)
            #expect(listed.status == 200, "\(query): \(listed.body)")
            return listed.json as? [[String: Any]] ?? []
        }
        func cursor(_ entry: [String: Any]?) -> String {
            let key = "\(entry?["timestamp"] as? String ?? ""),\(entry?["id"] as? String ?? "")"
            return key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key
        }
        func texts(_ entries: [[String: Any]]) -> [String] { entries.map { ($0["data"] as? [String: Any])?["text"] as? String ?? "?" } }
        let whole = texts(try page("limit=100"))

        let first = try page("limit=3")
        // Written between the pages: a newer entry, as a phone syncing would add one.
        #expect(try api.curl.request("POST", "/api/entries", body: #"{"timestamp": "2026-11-25T08:00:00Z", "data": {"text": "new"}}"#).status == 201)
        let second = try page("limit=3&before=" + cursor(first.last))
        let third = try page("limit=3&before=" + cursor(second.last))
        #expect(texts(first + second + third) == whole, "each entry once, in order: \(texts(first + second + third)) vs \(whole)")
        // The same pages by offset repeat the last entry of the first page.
        #expect(texts(try page("limit=3&offset=3")).first == texts(first).last, "offset shifts when an entry is added")
        // The cursor's own entry need not exist any more; filters apply as ever.
        let gone = try #require(first.last?["id"] as? String)
        #expect(try api.curl.request("DELETE", "/api/entries/" + gone).status < 300)
        #expect(texts(try page("limit=3&before=" + cursor(first.last))) == texts(second), "the page after the deleted entry's place")
        #expect(texts(try page("before=" + cursor(second.last) + "&search=n0")) == ["n0"])

        for bad in ["2026-11-23T08:00:00Z", "yesterday,phone_x", ",phone_x", "2026-11-23T08:00:00Z,"] {
            let refused = try api.curl.request("GET", "/api/entries?before=" + (bad.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? bad))
            #expect(refused.status == 400 && (refused.object["error"] as? String)?.hasPrefix("before:") == true, "\(bad): \(refused.body)")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func statsCountTheDaysOfAnOffsetTheBrowserSends() throws {
        let api = try HTTPNode()
        // Saturday 23:30 and Sunday 09:00 in Auckland (UTC+13): one UTC day.
        let body = #"[{"timestamp": "2026-11-21T10:30:00Z", "category": "note", "data": {"text": "late"}},"#
            + #"{"timestamp": "2026-11-21T20:00:00Z", "category": "mood", "data": {"metric": {"name": "mood", "value": 6}}}]"#
        #expect(try api.curl.request("POST", "/api/entries", body: body).status == 200)
        func days(_ query: String) throws -> (byDay: [String: Int], mood: [String]) {
            let stats = try api.curl.request("GET", "/api/entries/stats?per_day=true" + query)
            #expect(stats.status == 200, "\(query): \(stats.body)")
            let byDay = (stats.object["by_day"] as? [String: Any] ?? [:]).compactMapValues { integer($0) }
            let mood = ((stats.object["metrics_by_day"] as? [String: Any])?["mood"] as? [String: Any] ?? [:]).keys.sorted()
            return (byDay, mood)
        }
        let utc = try days("")
        #expect(utc.byDay == ["2026-11-21": 2] && utc.mood == ["2026-11-21"])
        let auckland = try days("&utc_offset=780")
        #expect(auckland.byDay == ["2026-11-21": 1, "2026-11-22": 1] && auckland.mood == ["2026-11-22"], "\(auckland)")
        let newYork = try days("&utc_offset=-300")
        #expect(newYork.byDay == ["2026-11-21": 2], "\(newYork)")
        for bad in ["841", "-721", "13h", "", "1.5"] {
            let refused = try api.curl.request("GET", "/api/entries/stats?utc_offset=" + bad)
            #expect(refused.status == 400 && (refused.object["error"] as? String)?.contains("utc_offset") == true, "\(bad): \(refused.body)")
        }
    }
}
