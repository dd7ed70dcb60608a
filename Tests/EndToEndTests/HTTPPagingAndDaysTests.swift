import Foundation
import Testing
import TestSupport

/// `GET /api/entries/stats?utc_offset=MINUTES` counts a browser's days.
@Suite(.serialized) struct HTTPPagingAndDaysTests {
    @Test(.timeLimit(.minutes(1)))
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
