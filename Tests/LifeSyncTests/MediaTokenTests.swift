@testable import LifeSync
import LifeSyncAPI
import LifeSyncHTTP
import TestSupport
import Testing

/// The media tokens browsers put in URLs (LifeLogAPI+MediaToken): scoped, short-lived, and
/// ended with their key.
@Suite struct MediaTokenTests {
    struct Fixture {
        let clock = ManualClock(milliseconds: 1_795_000_000_000)
        let replica: Replica
        let api: LifeLogAPI
        let key: String

        init() throws {
            replica = try ReplicaFixtures.replica(role: .phone, seed: 9, clock: clock)
            key = try replica.createAPIKey(name: "dashboard")
            api = LifeLogAPI(replica: replica)
        }

        func send(_ method: String, _ target: String, key: String? = nil) throws -> HTTPResponse {
            var headers = HTTPHeaders([("Host", "x")])
            if let key { headers.add("Authorization", "Bearer \(key)") }
            return api.handle(try HTTPRequest(method: method, target: target, headers: headers)).response
        }

        func token() throws -> String {
            let made = try send("POST", "/api/media-token", key: key)
            #expect(made.status == 201)
            guard case .object(let members) = try JSONValue.parse(bytes: made.body.wholeBytes ?? []),
                  case .string(let token)? = members.first(where: { $0.0 == "token" })?.1 else { throw HTTPError(500, "no token") }
            return token
        }
    }

    static func error(_ response: HTTPResponse) -> String { String(decoding: response.body.wholeBytes ?? [], as: UTF8.self) }

    @Test func aTokenIsTakenOnlyOnTheTwoMediaRoutes() throws {
        let f = try Fixture()
        let token = try f.token()
        #expect(token.hasPrefix("lsm_") && !token.contains(f.key.dropFirst(4)), "the key never appears in the token")
        // Past authentication on the media routes: what answers is the route (404: nothing there), not 401.
        #expect(try f.send("GET", "/api/recordings/phone_00000000-0000-4000-8000-000000000000/content?token=\(token)").status != 401)
        #expect(try f.send("HEAD", "/api/changes/stream?token=\(token)").status != 401)
        for (method, target) in [("GET", "/api/entries"), ("GET", "/api/status"), ("POST", "/api/entries"), ("GET", "/metrics"),
                                 ("POST", "/api/media-token"), ("DELETE", "/api/recordings/x/content"), ("GET", "/api/recordings")] {
            let refused = try f.send(method, target + "?token=\(token)")
            #expect(refused.status == 401 && Self.error(refused).contains("only on GET of"), "\(method) \(target): \(Self.error(refused))")
        }
        #expect(try f.send("POST", "/api/media-token").status == 401, "a token is made only for the key")
    }

    @Test func aTokenExpiresAndEndsWithItsKey() throws {
        let f = try Fixture()
        let token = try f.token()
        let route = "/api/changes/stream?token="
        for forged in [token.dropLast() + (token.last == "0" ? "1" : "0"), "lsm_99999999999999_" + token.suffix(64), "lsm_1", f.key, ""] {
            let refused = try f.send("GET", route + String(forged))
            #expect(refused.status == 401 && Self.error(refused).contains("expired, not one of this node's"), "\(forged): \(Self.error(refused))")
        }
        f.clock.advance(by: LifeLogAPI.mediaTokenLifetime - 1_000)
        #expect(try f.send("GET", route + token).status != 401)
        f.clock.advance(by: 2_000)
        #expect(try f.send("GET", route + token).status == 401, "expired")

        let fresh = try f.token()
        #expect(try f.send("GET", route + fresh).status != 401)
        try f.replica.revokeAPIKey(name: "dashboard")
        #expect(try f.send("GET", route + fresh).status == 401, "revoking the key ends its tokens")
    }

    @Test func hmacMatchesRFC4231() {
        // RFC 4231 test case 2.
        let digest = SHA256.hmac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(digest.hex == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func theDashboardPageNeedsNoKeyAndLocksItselfDown() throws {
        let f = try Fixture()
        let page = try f.send("GET", "/dashboard")
        #expect(page.status == 200 && page.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(page.headers["Content-Security-Policy"]?.contains("default-src 'none'") == true)
        // Its own files only (the policy admits no other), and text is never parsed as HTML.
        #expect(page.headers["Content-Security-Policy"]?.contains("script-src 'self'") == true)
        let html = Self.error(page)
        #expect(html.contains("<script src=\"/dashboard/dashboard.js\">") && !html.contains("src=\"http") && !html.contains("href=\"http"), "\(html)")
        for name in ["dashboard.js", "dashboard-charts.js", "dashboard-map.js", "dashboard-manage.js", "dashboard.css"] {
            let file = try f.send("GET", "/dashboard/" + name)
            let text = Self.error(file).replacingOccurrences(of: "\"http://www.w3.org/2000/svg\"", with: "")  // a name, not a fetch
            #expect(file.status == 200 && !text.isEmpty && !text.contains("innerHTML") && !text.contains("@import") && !text.contains("http://")
                    && !text.contains("https://"), "\(name) fetches nothing from elsewhere and never parses text as HTML")
        }
        #expect(try f.send("POST", "/dashboard").status == 405)
    }
}
