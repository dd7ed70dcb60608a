import Foundation
import Testing
import TestSupport

/// What the dashboard costs on a large journal: a node with LIFESYNC_DASHBOARD_SCALE entries
/// (e.g. 100000, over about three years) opened in headless Chromium with its key already kept;
/// the time from navigation to the first full render (journal, day, charts and counts drawn) and
/// the bytes the page transferred, printed and held to bounds that do not grow with the journal.
/// Off unless the variable is set: importing 100,000 entries takes most of a minute.
@Suite(.serialized) struct DashboardScaleTests {
    static let count = ProcessInfo.processInfo.environment["LIFESYNC_DASHBOARD_SCALE"].flatMap(Int.init)

    @Test(.timeLimit(.minutes(10)), .enabled(if: count != nil && DashboardBrowserTests.enabled, "set LIFESYNC_DASHBOARD_SCALE=100000 (and install chromium)"))
    func theFirstRenderCostsWhatThePageShows() throws {
        let count = try #require(Self.count)
        let api = try HTTPNode()
        let directory = TemporaryDirectory("lifesync-dashboard-scale")
        let file = directory.file("journal.ndjson")
        // About a hundred entries a day back from now: moods, notes, places, walks.
        let now = Date().timeIntervalSince1970, formatter = ISO8601DateFormatter()
        var lines: [String] = []
        lines.reserveCapacity(count)
        for n in 0..<count {
            let stamp = formatter.string(from: Date(timeIntervalSince1970: now - Double(n) * 864 - 60))
            switch n % 4 {
            case 0: lines.append(#"{"timestamp": "\#(stamp)", "category": "mood", "source": "watch", "data": {"metric": {"name": "mood", "value": \#(n % 10 + 1), "scale_min": 1, "scale_max": 10}}}"#)
            case 1: lines.append(#"{"timestamp": "\#(stamp)", "category": "note", "source": "phone", "data": {"text": "note \#(n) about the day", "tags": ["t\#(n % 7)"]}}"#)
            case 2: lines.append(#"{"timestamp": "\#(stamp)", "category": "location", "source": "phone", "data": {"location": {"latitude": \#(48.80 + Double(n % 50) / 500), "longitude": \#(2.25 + Double(n % 37) / 300), "place_name": "place \#(n % 12)"}}}"#)
            default: lines.append(#"{"timestamp": "\#(stamp)", "category": "health", "source": "watch", "data": {"metric": {"name": "steps", "value": \#(n % 9000)}}}"#)
            }
        }
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let imported = try LifeSyncBinary.run(["import", file, "--db", api.node.db], timeout: 500)
        try #require(imported.status == 0, "\(imported.stderr)")

        for (width, height, mobile) in [(390, 844, true), (1280, 800, false)] {
            let page = try DevToolsPage(profile: directory.file("profile-\(width)"), log: directory.file("chromium-\(width).log"))
            defer { page.close() }
            try page.setViewport(width: width, height: height, mobile: mobile)
            // Keep the key first (as a returning user has it), then open the page afresh.
            try page.navigate("http://127.0.0.1:\(api.port)/dashboard")
            #expect(try page.waitUntil("!!document.querySelector('#key')", timeout: 20))
            _ = try page.evaluate("localStorage.setItem('lifesync.key', '\(api.key)'); true")
            _ = try page.command("Page.addScriptToEvaluateOnNewDocument", ["source": """
                new MutationObserver((_, observer) => {
                  if (document.querySelector('#timeline .entry') && document.querySelector('#charts svg') && document.querySelector('#day-total')
                      && document.querySelector('#by-category .bar') && document.querySelector('#map-svg circle, #places-month')) {
                    window.firstRender = performance.now(); observer.disconnect();
                  }
                }).observe(document, { childList: true, subtree: true });
                """])
            try page.navigate("http://127.0.0.1:\(api.port)/dashboard")
            #expect(try page.waitUntil("typeof window.firstRender === 'number'", timeout: 120), "never drawn: \(page.exceptions)")
            usleep(1_000_000)  // the requests still under way when it drew (the side lists, the stream) count too
            let figures = try page.evaluate("""
                JSON.stringify({ render_ms: Math.round(window.firstRender),
                  bytes: performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource')).reduce((t, e) => t + e.transferSize, 0),
                  requests: performance.getEntriesByType('resource').length,
                  biggest: performance.getEntriesByType('resource').map((e) => [e.name.replace(/^https?:\\/\\/[^/]+/, ''), e.transferSize]).sort((a, b) => b[1] - a[1]).slice(0, 4) })
                """) as? String ?? "{}"
            print("dashboard at \(count) entries, \(width)x\(height): \(figures)")
            let parsed = try #require(try parseJSON(figures) as? [String: Any])
            let bytes = parsed["bytes"] as? Int ?? .max, render = parsed["render_ms"] as? Int ?? .max
            #expect(bytes < 500_000, "the first page transferred \(bytes) bytes")
            #expect(render < 10_000, "the first render took \(render) ms")
            #expect(page.exceptions.isEmpty, "\(page.exceptions)")
        }
    }
}
