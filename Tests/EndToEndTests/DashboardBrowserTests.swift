import Foundation
import Testing
import TestSupport

/// `GET /dashboard` in a real headless Chromium, driven over the DevTools protocol: the page
/// asks for the key, draws the timeline, charts, filters, places and recordings from a node
/// with entries, and shows an entry written afterwards without a reload.
@Suite(.serialized) struct DashboardBrowserTests {
    /// A short mono 8 kHz WAV tone: a recording a browser's <audio> can load.
    static func tone() -> Data {
        let samples = (0..<8000).map { Int16(sin(Double($0) * 2 * .pi * 440 / 8000) * 8000) }
        var data = Data("RIFF".utf8)
        func le<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        le(UInt32(36 + samples.count * 2)); data += Data("WAVEfmt ".utf8)
        le(UInt32(16)); le(UInt16(1)); le(UInt16(1)); le(UInt32(8000)); le(UInt32(16000)); le(UInt16(2)); le(UInt16(16))
        data += Data("data".utf8); le(UInt32(samples.count * 2))
        for sample in samples { le(sample) }
        return data
    }

    /// Entries over the last days: mood and energy metrics, places, categories and sources.
    static func seed(_ api: HTTPNode) throws {
        let now = Date()
        let places = [(48.8566, 2.3522, "Paris"), (48.8606, 2.3376, "Louvre"), (48.8530, 2.3499, "Notre-Dame"), (48.8738, 2.2950, "Arc")]
        var batch: [String] = []
        for day in 0..<6 {
            let stamp = ISO8601DateFormatter().string(from: now.addingTimeInterval(Double(-day) * 86_400 - 3_600))
            batch.append(#"{"timestamp": "\#(stamp)", "category": "mood", "source": "watch", "data": {"metric": {"name": "mood", "value": \#(5 + day % 4), "scale_min": 1, "scale_max": 10}}}"#)
            batch.append(#"{"timestamp": "\#(stamp)", "category": "health", "source": "phone", "data": {"metric": {"name": "energy", "value": \#(3 + day % 3)}, "tags": ["morning"]}}"#)
            let place = places[day % places.count]
            batch.append(#"{"timestamp": "\#(stamp)", "category": "location", "source": "phone", "data": {"text": "at \#(place.2)", "location": {"latitude": \#(place.0), "longitude": \#(place.1), "place_name": "\#(place.2)"}}}"#)
        }
        let posted = try api.curl.request("POST", "/api/entries", body: "[" + batch.joined(separator: ",") + "]")
        guard posted.status == 200 else { throw ServeError("seeding: \(posted.status) \(posted.body)") }
    }

    @Test(.timeLimit(.minutes(3)), .enabled(if: DevToolsPage.chromium != nil,
                                            "chromium is not installed (apt-get install chromium; .ci/run installs it): the dashboard's browser test cannot run"))
    func theDashboardDrawsTheNodeAndFollowsItLive() throws {
        let api = try HTTPNode()
        try Self.seed(api)
        let directory = TemporaryDirectory("lifesync-browser")
        try Self.tone().write(to: URL(fileURLWithPath: directory.file("tone.wav")))
        let uploaded = try api.curl.request("POST", "/api/recordings?file_name=tone.wav", headers: ["Content-Type: audio/wav"],
                                            extra: ["--data-binary", "@" + directory.file("tone.wav")])
        #expect(uploaded.status == 201, "\(uploaded.body)")

        let page = try DevToolsPage(profile: directory.file("profile"), log: directory.file("chromium.log"))
        defer { page.close() }
        try page.navigate("http://127.0.0.1:\(api.port)/dashboard")
        #expect(try page.waitUntil("!!document.querySelector('#login:not([hidden]) #key')", timeout: 20), "the page asks for the key first")
        _ = try page.evaluate("document.querySelector('#key').value = '\(api.key)'; document.querySelector('#login-form').requestSubmit(); true")

        let drawn = """
            !!document.querySelector('#timeline .entry') && !!document.querySelector('#charts svg[data-metric="mood"] circle')
            && !!document.querySelector('#charts svg[data-metric="energy"]') && !!document.querySelector('#category-filter option[value="mood"]')
            && !!document.querySelector('#search') && document.querySelectorAll('#map-svg circle').length === 6
            && !!document.querySelector('#recordings audio') && document.querySelector('#streak-current').textContent !== ''
            """
        let ready = try page.waitUntil(drawn, timeout: 30)
        let text = try page.evaluate("document.body.innerText") as? String ?? ""
        #expect(ready, "the dashboard did not draw: \(text.prefix(2000))\nerrors: \(page.exceptions) \(page.consoleErrors)")
        #expect(try page.evaluate("localStorage.getItem('lifesync.key')") as? String == api.key, "the key is kept for next time")
        #expect(try page.evaluate("document.querySelector('#streak-current').textContent") as? String == "6")

        // The filter narrows the timeline to one category.
        _ = try page.evaluate("{ const f = document.querySelector('#category-filter'); f.value = 'location'; f.dispatchEvent(new Event('change')); } true")
        #expect(try page.waitUntil("[...document.querySelectorAll('#timeline .badge')].every(b => b.textContent === 'location') && document.querySelectorAll('#timeline .entry').length === 6", timeout: 10))
        _ = try page.evaluate("{ const f = document.querySelector('#category-filter'); f.value = ''; f.dispatchEvent(new Event('change')); } true")

        // A write from the command line appears without a reload (change stream, or polling).
        let marker = "live marker \(UInt32.random(in: 0...UInt32.max))"
        let added = try LifeSyncBinary.run(["add", "--db", api.node.db, "--text", marker, "--category", "note", "--metric", "mood=9"])
        #expect(added.status == 0, "\(added.stderr)")
        let live = try page.waitUntil("document.querySelector('#timeline').innerText.includes('\(marker)')", timeout: 30)
        let liveState = try page.evaluate("document.querySelector('#live').textContent") as? String ?? "?"
        #expect(live, "the new entry never appeared; live state: \(liveState)")

        #expect(liveState == "live", "the page follows the change stream (with its media token), not polling")

        // The player loads the recording through the content route with the media token.
        _ = try page.evaluate("{ const a = document.querySelector('#recordings audio'); a.preload = 'auto'; a.load(); } true")
        let played = try page.waitUntil("document.querySelector('#recordings audio').duration > 0.9", timeout: 20)
        let audioError = try page.evaluate("String(document.querySelector('#recordings audio').error && document.querySelector('#recordings audio').error.message)")
        #expect(played, "the <audio> never loaded: \(audioError ?? "?")")

        let shot = directory.file("dashboard.png")
        try page.screenshot(to: shot)
        let png = try Data(contentsOf: URL(fileURLWithPath: shot))
        #expect(png.count > 10_000 && png.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]), "a real PNG of the page")
        if let keep = ProcessInfo.processInfo.environment["LIFESYNC_KEEP_SCREENSHOT"] { try? png.write(to: URL(fileURLWithPath: keep)) }
        #expect(page.exceptions.isEmpty, "script errors: \(page.exceptions)")
    }
}
