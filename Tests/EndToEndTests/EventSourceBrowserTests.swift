import Foundation
import Testing
import TestSupport

/// A browser's own `EventSource` on `/api/changes/stream?since=…`: when the node restarts, the
/// browser reconnects to the same URL with `Last-Event-ID`, and it must resume after the last
/// event it got, not replay from the URL's `since` (it replayed the whole history).
@Suite(.serialized) struct EventSourceBrowserTests {
    @Test(.timeLimit(.minutes(3)), .enabled(if: DevToolsPage.chromium != nil,
                                            "chromium is not installed (apt-get install chromium; .ci/run installs it)"))
    func aReconnectingBrowserResumesAfterItsLastEvent() throws {
        let api = try HTTPNode()
        var ids: [String] = []
        for i in 0..<4 { ids.append(try HTTPFeedTests.post(api, "before \(i)")) }
        // The URL's cursor: just after the first entry, so the stream starts with the second.
        let first = try api.curl.request("GET", "/api/changes?limit=1")
        let since = try #require(first.object["next_cursor"] as? String, "\(first.body)")

        let directory = TemporaryDirectory("lifesync-eventsource")
        let page = try DevToolsPage(profile: directory.file("profile"), log: directory.file("chromium.log"))
        defer { page.close() }
        try page.navigate("http://127.0.0.1:\(api.port)/dashboard")
        #expect(try page.waitUntil("document.readyState === 'complete'", timeout: 20))
        _ = try page.evaluate("""
            window.seen = []; window.opened = 0;
            fetch('/api/media-token', {method: 'POST', headers: {Authorization: 'Bearer \(api.key)'}})
              .then(r => r.json()).then(t => {
                const source = new EventSource('/api/changes/stream?since=\(since)&token=' + encodeURIComponent(t.token));
                source.onopen = () => { window.opened += 1; };
                source.addEventListener('change', e => { window.seen.push(JSON.parse(e.data).id); });
              });
            true
            """)
        #expect(try page.waitUntil("window.seen.length === 3", timeout: 20), "\(String(describing: try? page.evaluate("JSON.stringify(window.seen)")))")

        // The node goes away and comes back on the same port; the browser reconnects by itself.
        #expect(api.node.terminate(timeout: 10) != nil)
        try api.node.start(listen: false, extra: ["--http", "\(api.port)"])
        #expect(try page.waitUntil("window.opened >= 2", timeout: 60), "the browser never reconnected")
        ids.append(try HTTPFeedTests.post(api, "after the restart"))
        #expect(try page.waitUntil("window.seen.length >= 4", timeout: 20))
        Thread.sleep(forTimeInterval: 0.5)  // a replay, if any, would arrive with the new event
        let seen = try page.evaluate("JSON.stringify(window.seen)") as? String ?? "?"
        let expected = String(decoding: try JSONSerialization.data(withJSONObject: Array(ids.dropFirst())), as: UTF8.self)
        #expect(seen == expected, "each change once, in order, from the URL's cursor on: \(seen)")
        #expect(page.exceptions.isEmpty, "script errors: \(page.exceptions)")
    }
}
