import Foundation
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// What the dashboard manages, in a real headless Chromium, through the API with the CLI's
/// rules: a quick note and mood, a conflict resolved by taking one field of the loser, and API
/// keys created, listed and revoked with an admin key (a key without the right is told so).
@Suite(.serialized) struct DashboardManageBrowserTests {
    /// An entry the serving phone and a mac edited concurrently (the mac's text and tags win).
    static func conflict(on api: HTTPNode, _ directory: TemporaryDirectory) throws -> String {
        let phone = try Replica(path: api.node.db, clock: SystemClock(), random: SystemRandom())
        let mac = try Replica.create(path: directory.file("mac.sqlite"), role: .mac, clock: SystemClock(), random: SystemRandom())
        let entry = try phone.add(json: try JSONValue.parse(#"{"category": "shopping", "data": {"text": "buy milk", "tags": ["home"]}}"#))
        try ReplicaFixtures.sync(from: phone, to: mac)
        try phone.update(id: entry.id, patch: try JSONValue.parse(#"{"data": {"text": "buy oat milk", "tags": ["home", "shop"]}}"#))
        usleep(5_000)
        try mac.update(id: entry.id, patch: try JSONValue.parse(#"{"data": {"text": "buy soy milk", "tags": ["home", "errand"]}}"#))
        try mac.recordOrigin(phone.identity.incarnation, nodeID: phone.identity.nodeID, role: .phone)
        try phone.recordOrigin(mac.identity.incarnation, nodeID: mac.identity.nodeID, role: .mac)
        try ReplicaFixtures.sync(from: mac, to: phone)
        try phone.setLocalPeerName("Work mac", for: mac.identity.nodeID)
        try phone.setOwnName("Kitchen iPad")
        return entry.id
    }

    @Test(.timeLimit(.minutes(3)), .enabled(if: DashboardBrowserTests.enabled, "chromium is not installed (apt-get install chromium)"))
    func theDashboardAddsResolvesAndManagesKeys() throws {
        let api = try HTTPNode()
        let directory = TemporaryDirectory("lifesync-browser-manage")
        let made = try LifeSyncBinary.run(["keys", "create", "dashboard", "--admin", "--db", api.node.db])
        try #require(made.status == 0, "\(made.stderr)")
        let admin = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let conflicted = try Self.conflict(on: api, directory)

        let page = try DevToolsPage(profile: directory.file("profile"), log: directory.file("chromium.log"))
        defer { page.close() }
        try page.navigate("http://127.0.0.1:\(api.port)/dashboard")
        #expect(try page.waitUntil("!!document.querySelector('#login:not([hidden]) #key')", timeout: 20))
        // A key without the admin right reads the journal, and is told it cannot manage keys.
        _ = try page.evaluate("document.querySelector('#key').value = '\(api.key)'; document.querySelector('#login-form').requestSubmit(); true")
        #expect(try page.waitUntil("document.querySelector('#keys').innerText.includes('needs an admin key') && document.querySelector('#key-form').hidden", timeout: 20),
                "\(page.exceptions)")
        _ = try page.evaluate("document.querySelector('#forget').click(); true")
        _ = try page.evaluate("document.querySelector('#key').value = '\(admin)'; document.querySelector('#login-form').requestSubmit(); true")
        let managing = try page.waitUntil("!!document.querySelector('#keys .key[data-name=\"curl\"]') && !!document.querySelector('#conflicts .conflict')", timeout: 20)
        let shown = try page.evaluate("document.body.innerText") ?? ""
        #expect(managing, "\(shown)")

        // Quick add: a note and a mood, stored as the API stores any entry.
        _ = try page.evaluate("document.querySelector('#note-text').value = 'called the plumber'; document.querySelector('#quick-note').requestSubmit(); true")
        #expect(try page.waitUntil("document.querySelector('#timeline').innerText.includes('called the plumber')", timeout: 15))
        _ = try page.evaluate("{ const m = document.querySelector('#mood-value'); m.value = '4'; m.dispatchEvent(new Event('input')); } document.querySelector('#quick-mood').requestSubmit(); true")
        #expect(try page.waitUntil("document.querySelector('#quick-status').textContent.startsWith('Mood 4 added')", timeout: 15))
        let moods = try api.curl.request("GET", "/api/entries?category=mood")
        #expect(moods.body.contains("\"value\":4") || moods.body.contains("\"value\": 4"), "\(moods.body)")
        _ = try page.evaluate("document.querySelector('#note-text').value = ' '; document.querySelector('#quick-note').requestSubmit(); true")
        #expect(try page.waitUntil("document.querySelector('#quick-status').textContent === 'Write the note first.'", timeout: 5))

        // The conflict says what the entry is and whose sides met; take the loser's text only.
        let conflictText = try page.evaluate("document.querySelector('#conflicts .conflict').innerText") as? String ?? ""
        #expect(conflictText.contains("shopping · buy soy milk") && conflictText.contains("Kitchen iPad (phone) lost to Work mac (mac)"), "\(conflictText)")
        _ = try page.evaluate("document.querySelector('#conflicts button[data-field=\"data.text\"]').click(); true")
        #expect(try page.waitUntil("document.querySelector('#conflicts').innerText.includes('No conflicts.')", timeout: 15))
        let resolved = try parseJSON(try api.curl.request("GET", "/api/entries/\(conflicted)").body) as? [String: Any]
        let data = resolved?["data"] as? [String: Any]
        #expect(data?["text"] as? String == "buy oat milk" && data?["tags"] as? [String] == ["home", "errand"], "\(resolved ?? [:])")

        // Keys: create one (shown once), see it listed, revoke it; the node refuses it then.
        _ = try page.evaluate("document.querySelector('#key-name').value = 'shortcuts'; document.querySelector('#key-form').requestSubmit(); true")
        #expect(try page.waitUntil("(document.querySelector('#new-key') || {}).textContent?.startsWith('lsk_') && !!document.querySelector('#keys .key[data-name=\"shortcuts\"]')", timeout: 15))
        let newKey = try page.evaluate("document.querySelector('#new-key').textContent") as? String ?? ""
        #expect(try Curl(base: "http://127.0.0.1:\(api.port)", key: newKey).request("GET", "/api/status").status == 200)
        _ = try page.evaluate("window.confirm = () => true; document.querySelector('#keys .key[data-name=\"shortcuts\"] button.revoke').click(); true")
        #expect(try page.waitUntil("!document.querySelector('#keys .key[data-name=\"shortcuts\"]')", timeout: 15))
        #expect(try Curl(base: "http://127.0.0.1:\(api.port)", key: newKey).request("GET", "/api/status").status == 401)
        // The same rules as the CLI: a taken name is refused, naming it.
        _ = try page.evaluate("document.querySelector('#key-name').value = 'curl'; document.querySelector('#key-form').requestSubmit(); true")
        #expect(try page.waitUntil("document.querySelector('#key-made').textContent.includes('a key called \"curl\" exists')", timeout: 15))
        #expect(page.exceptions.isEmpty, "script errors: \(page.exceptions)")
    }
}
