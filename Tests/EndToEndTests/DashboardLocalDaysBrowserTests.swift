import Foundation
import Glibc
import Testing
import TestSupport

/// The dashboard in a browser in Auckland (the DevTools time-zone override): streaks count the
/// person's days, not UTC's, and a deep journal page stays where it is when an entry is written
/// meanwhile (keyset paging: with an offset, its first entry would be the last of page 1 again).
@Suite(.serialized) struct DashboardLocalDaysBrowserTests {
    @Test(.timeLimit(.minutes(3)), .enabled(if: DashboardBrowserTests.enabled, "chromium is not installed (apt-get install chromium)"))
    func streaksCountLocalDaysAndPagesHoldStill() throws {
        let api = try HTTPNode()
        var auckland = Calendar(identifier: .gregorian)
        auckland.timeZone = try #require(TimeZone(identifier: "Pacific/Auckland"))
        let today = auckland.startOfDay(for: Date())
        func local(daysAgo: Int, hour: Int, minute: Int) throws -> String {
            let day = try #require(auckland.date(byAdding: .day, value: -daysAgo, to: today))
            return ISO8601DateFormatter().string(from: try #require(auckland.date(bySettingHour: hour, minute: minute, second: 0, of: day)))
        }
        // The day before yesterday at 23:30 and yesterday at 09:00 there: one UTC day, two of theirs.
        var batch = [#"{"timestamp": "\#(try local(daysAgo: 2, hour: 23, minute: 30))", "category": "note", "data": {"text": "late"}}"#,
                     #"{"timestamp": "\#(try local(daysAgo: 1, hour: 9, minute: 0))", "category": "note", "data": {"text": "early"}}"#]
        for n in 0..<55 {
            batch.append(#"{"timestamp": "\#(try local(daysAgo: 10, hour: n % 24, minute: n / 24))", "category": "note", "data": {"text": "old note \#(n)"}}"#)
        }
        #expect(try api.curl.request("POST", "/api/entries", body: "[" + batch.joined(separator: ",") + "]").status == 200)

        let directory = TemporaryDirectory("lifesync-browser-days")
        let page = try DevToolsPage(profile: directory.file("profile"), log: directory.file("chromium.log"))
        defer { page.close() }
        try page.command("Emulation.setTimezoneOverride", ["timezoneId": "Pacific/Auckland"])
        try page.navigate("http://127.0.0.1:\(api.port)/dashboard")
        #expect(try page.waitUntil("!!document.querySelector('#login:not([hidden]) #key')", timeout: 20))
        #expect(try page.evaluate("new Date().getTimezoneOffset() <= -720") as? Bool == true, "the browser is in Auckland")
        _ = try page.evaluate("document.querySelector('#key').value = '\(api.key)'; document.querySelector('#login-form').requestSubmit(); true")
        let drawn = try page.waitUntil("document.querySelectorAll('#timeline .entry').length === 50 && !!document.querySelector('#streak-current')", timeout: 30)
        #expect(drawn, "errors: \(page.exceptions) \(page.consoleErrors)")
        #expect(try page.evaluate("document.querySelector('#streak-current').textContent") as? String == "2", "yesterday and the day before, there")
        #expect(try page.evaluate("document.querySelector('#streak-longest').textContent") as? String == "2")

        _ = try page.evaluate("document.querySelector('#older').click(); true")
        #expect(try page.waitUntil("document.querySelector('#page').textContent === 'page 2' && document.querySelectorAll('#timeline .entry').length === 7", timeout: 10))
        let firstOnPage2 = try page.evaluate("document.querySelector('#timeline .entry').dataset.id") as? String
        // An entry written now: the page is drawn again (the node's count says so) and holds still.
        #expect(try api.curl.request("POST", "/api/entries", body: #"{"category": "note", "data": {"text": "just now"}}"#).status == 201)
        #expect(try page.waitUntil("document.querySelector('#node').textContent.includes('58 entries')", timeout: 15))
        usleep(1_500_000)  // the journal's reload went out with the status's
        #expect(try page.evaluate("document.querySelectorAll('#timeline .entry').length") as? Int == 7)
        #expect(try page.evaluate("document.querySelector('#timeline .entry').dataset.id") as? String == firstOnPage2,
                "page 2 starts where it did")
        _ = try page.evaluate("document.querySelector('#newer').click(); true")
        #expect(try page.waitUntil("document.querySelector('#page').textContent === 'page 1' && document.querySelector('#timeline').innerText.includes('just now')", timeout: 10))
        #expect(page.exceptions.isEmpty && page.consoleErrors.isEmpty, "\(page.exceptions) \(page.consoleErrors)")
    }
}
