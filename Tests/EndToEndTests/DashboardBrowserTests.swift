import Foundation
import Testing
import TestSupport

/// `GET /dashboard` in a real headless Chromium, driven over the DevTools protocol: the page
/// asks for the key, draws the day, charts, the paged journal, filters, places and recordings
/// from a node with entries, shows an entry written afterwards without a reload, and lays out
/// on a phone without sideways scrolling, the charts before the journal. Screenshots at
/// 1280x800 and 390x844 are kept in LIFESYNC_SCREENSHOTS (a directory) when it is set.
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
        // Each an hour before now on its day, or half the time since midnight when the day is
        // younger than two hours: in the first hour of a day, "an hour ago" was yesterday, and
        // the six days' streak was five (CI ran across midnight and said so).
        let back = min(3_600, now.timeIntervalSince(Calendar.current.startOfDay(for: now)) / 2)
        for day in 0..<6 {
            let stamp = ISO8601DateFormatter().string(from: now.addingTimeInterval(Double(-day) * 86_400 - back))
            batch.append(#"{"timestamp": "\#(stamp)", "category": "mood", "source": "watch", "data": {"metric": {"name": "mood", "value": \#(5 + day % 4), "scale_min": 1, "scale_max": 10}}}"#)
            batch.append(#"{"timestamp": "\#(stamp)", "category": "health", "source": "phone", "data": {"metric": {"name": "energy", "value": \#(3 + day % 3)}, "tags": ["morning"]}}"#)
            let place = places[day % places.count]
            batch.append(#"{"timestamp": "\#(stamp)", "category": "location", "source": "phone", "data": {"text": "at \#(place.2)", "location": {"latitude": \#(place.0), "longitude": \#(place.1), "place_name": "\#(place.2)"}}}"#)
        }
        // A walk a week ago, from noon local time (a day with no other places): the day's path.
        let noon = Calendar.current.date(bySettingHour: 12, minute: 0, second: 0, of: now.addingTimeInterval(-7 * 86_400))!
        for (n, place) in [(48.8809, 2.3553, "Gare du Nord"), (48.8867, 2.3431, "Montmartre"), (48.8720, 2.3316, "Opéra")].enumerated() {
            let stamp = ISO8601DateFormatter().string(from: noon.addingTimeInterval(Double(n) * 1_200))
            batch.append(#"{"timestamp": "\#(stamp)", "category": "location", "source": "phone", "data": {"location": {"latitude": \#(place.0), "longitude": \#(place.1), "place_name": "\#(place.2)"}}}"#)
        }
        // Older notes, so the journal has more than one page.
        for n in 0..<60 {
            let stamp = ISO8601DateFormatter().string(from: now.addingTimeInterval(-8 * 86_400 - Double(n) * 3_600))
            batch.append(#"{"timestamp": "\#(stamp)", "category": "note", "source": "mac", "data": {"text": "older note \#(n)"}}"#)
        }
        let posted = try api.curl.request("POST", "/api/entries", body: "[" + batch.joined(separator: ",") + "]")
        guard posted.status == 200 else { throw ServeError("seeding: \(posted.status) \(posted.body)") }
    }

    static let enabled = DevToolsPage.chromium != nil

    @Test(.timeLimit(.minutes(3)), .enabled(if: enabled, "chromium is not installed (apt-get install chromium; .ci/run installs it): the dashboard's browser test cannot run"))
    func theDashboardDrawsTheNodeAndFollowsItLive() throws {
        let api = try HTTPNode()
        try Self.seed(api)
        #expect(try LifeSyncBinary.run(["name", "Kitchen iPad", "--db", api.node.db]).status == 0)
        let directory = TemporaryDirectory("lifesync-browser")
        try Self.tone().write(to: URL(fileURLWithPath: directory.file("tone.wav")))
        let uploaded = try api.curl.request("POST", "/api/recordings?file_name=tone.wav", headers: ["Content-Type: audio/wav"],
                                            extra: ["--data-binary", "@" + directory.file("tone.wav")])
        #expect(uploaded.status == 201, "\(uploaded.body)")

        let page = try DevToolsPage(profile: directory.file("profile"), log: directory.file("chromium.log"))
        defer { page.close() }
        try page.setViewport(width: 1280, height: 800, mobile: false)
        try page.navigate("http://127.0.0.1:\(api.port)/dashboard")
        #expect(try page.waitUntil("!!document.querySelector('#login:not([hidden]) #key')", timeout: 20), "the page asks for the key first")
        _ = try page.evaluate("document.querySelector('#key').value = '\(api.key)'; document.querySelector('#login-form').requestSubmit(); true")

        let drawn = """
            !!document.querySelector('#timeline .entry') && !!document.querySelector('#charts svg[data-metric="mood"] circle')
            && !!document.querySelector('#charts svg[data-metric="energy"]') && !!document.querySelector('#category-filter option[value="mood"]')
            && !!document.querySelector('#search') && !!document.querySelector('#places-month')
            && !!document.querySelector('#recordings audio') && document.querySelector('#streak-current').textContent !== ''
            && !!document.querySelector('#day-total')
            """
        let ready = try page.waitUntil(drawn, timeout: 30)
        let text = try page.evaluate("document.body.innerText") as? String ?? ""
        #expect(ready, "the dashboard did not draw: \(text.prefix(2000))\nerrors: \(page.exceptions) \(page.consoleErrors)")
        #expect(try page.evaluate("localStorage.getItem('lifesync.key')") as? String == api.key, "the key is kept for next time")
        #expect(try page.evaluate("document.querySelector('#streak-current').textContent") as? String == "6")
        #expect(try page.evaluate("document.querySelector('#node').textContent.startsWith('Kitchen iPad · phone')") as? Bool == true, "the node shows by name")
        // Places: the chosen day's, and the last 30 days' on request, labelled with their names,
        // on land, with a world map locating them.
        _ = try page.evaluate("document.querySelector('#places-month').click(); true")
        #expect(try page.waitUntil("document.querySelectorAll('#map-svg circle').length === 9 && document.querySelectorAll('#map-svg path.land').length > 0", timeout: 15))
        #expect(try page.evaluate("[...document.querySelectorAll('#map-svg text.place')].map(t => t.textContent).sort().join()") as? String
                == "Arc,Gare du Nord,Louvre,Montmartre,Notre-Dame,Opéra,Paris")
        #expect(try page.evaluate("!!document.querySelector('#map-inset rect[stroke]')") as? Bool == true)

        // The journal is paged: 50 entries a page, newest first, the older ones a click away.
        #expect(try page.evaluate("document.querySelectorAll('#timeline .entry').length") as? Int == 50)
        _ = try page.evaluate("document.querySelector('#older').click(); true")
        #expect(try page.waitUntil("document.querySelector('#page').textContent === 'page 2' && document.querySelectorAll('#timeline .entry').length === 31", timeout: 10))
        #expect(try page.evaluate("document.querySelector('#older').disabled && document.querySelector('#timeline').innerText.includes('older note 59')") as? Bool == true)
        _ = try page.evaluate("document.querySelector('#newer').click(); true")
        #expect(try page.waitUntil("document.querySelector('#page').textContent === 'page 1'", timeout: 10))

        // The filter narrows the journal to one category, on the node.
        _ = try page.evaluate("{ const f = document.querySelector('#category-filter'); f.value = 'location'; f.dispatchEvent(new Event('change')); } true")
        #expect(try page.waitUntil("[...document.querySelectorAll('#timeline .badge')].every(b => b.textContent === 'location') && document.querySelectorAll('#timeline .entry').length === 9", timeout: 10))
        _ = try page.evaluate("{ const f = document.querySelector('#category-filter'); f.value = ''; f.dispatchEvent(new Event('change')); } true")

        // A week ago: the walk's three places joined in time order, with a scale.
        _ = try page.evaluate("{ const d = document.querySelector('#day'); d.value = stepDay(dayOf(Date.now()), -7); d.dispatchEvent(new Event('change')); } true")
        #expect(try page.waitUntil("(document.querySelector('#day-path') || {getAttribute: () => ''}).getAttribute('data-points') === '3'", timeout: 10))
        let legend = try page.evaluate("document.querySelector('#path-legend').textContent + ' on ' + document.querySelector('#day').value + ' ' + document.querySelector('#today').innerText") as? String ?? ""
        #expect(legend.hasPrefix("the day's path: 3 points, 12:00–12:40"), "\(legend)")
        #expect(try page.evaluate("/ k?m$/.test(document.querySelector('#map-svg .scale text').textContent)") as? Bool == true)
        // The day before yesterday: its summary.
        _ = try page.evaluate("{ const d = document.querySelector('#day'); d.value = stepDay(dayOf(Date.now()), -3); d.dispatchEvent(new Event('change')); } document.querySelector('#day-next').click(); true")
        let dayShown = try page.waitUntil("document.querySelector('#day-total') && document.querySelector('#day-total').textContent === '3'", timeout: 10)
        let dayText = try page.evaluate("document.querySelector('#today').innerText") ?? ""
        #expect(dayShown, "\(dayText)")

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

        try Self.screenshot(page, directory, "dashboard-1280x800.png")
        // On a phone: nothing wider than the screen, the day and the charts before the journal.
        for width in [360, 390, 414] {
            try page.setViewport(width: width, height: 844, mobile: true)
            _ = try page.evaluate("window.scrollTo(0, 0); true")
            let overflow = try page.evaluate("document.documentElement.scrollWidth + ' > ' + innerWidth") as? String ?? "?"
            #expect(try page.evaluate("document.documentElement.scrollWidth <= innerWidth") as? Bool == true, "sideways scroll at \(width) px: \(overflow)")
        }
        try page.setViewport(width: 390, height: 844, mobile: true)
        let order = "document.querySelector('#today-card').getBoundingClientRect().top < document.querySelector('#charts-card').getBoundingClientRect().top"
            + " && document.querySelector('#charts-card').getBoundingClientRect().top < document.querySelector('#journal-card').getBoundingClientRect().top"
        #expect(try page.evaluate(order) as? Bool == true, "on a phone the day and the charts come before the journal")
        #expect(try page.evaluate("!!document.querySelector('#tabs a[href=\"#charts-card\"]') && !!document.querySelector('#tabs a[href=\"#places-card\"]')") as? Bool == true)
        try Self.screenshot(page, directory, "dashboard-390x844.png")
        try Self.screenshot(page, directory, "dashboard-390-whole.png", wholePage: true)
        _ = try page.evaluate("document.querySelector('#places-card').scrollIntoView(); true")
        try Self.screenshot(page, directory, "dashboard-390-places.png")
        #expect(page.exceptions.isEmpty, "script errors: \(page.exceptions)")
    }

    /// A PNG of what the viewport shows (or the whole page), checked to be one; kept in LIFESYNC_SCREENSHOTS if set.
    static func screenshot(_ page: DevToolsPage, _ directory: TemporaryDirectory, _ name: String, wholePage: Bool = false) throws {
        let shot = directory.file(name)
        try page.screenshot(to: shot, wholePage: wholePage)
        let png = try Data(contentsOf: URL(fileURLWithPath: shot))
        #expect(png.count > 10_000 && png.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]), "a real PNG of the page")
        if let keep = ProcessInfo.processInfo.environment["LIFESYNC_SCREENSHOTS"] { try? png.write(to: URL(fileURLWithPath: keep + "/" + name)) }
    }
}
