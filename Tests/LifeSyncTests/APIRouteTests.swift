@testable import LifeSync
@testable import LifeSyncAPI
import LifeSyncHTTP
import TestSupport
import Testing

/// The API's table of routes (`LifeLogAPI.routes`): every path answers the methods its row
/// names, a method it lacks gets a 405 whose `Allow` header lists them, an unknown path a 404.
@Suite struct APIRouteTests {
    static func send(_ api: LifeLogAPI, _ method: String, _ target: String, key: String) throws -> HTTPResponse {
        api.handle(try HTTPRequest(method: method, target: target, headers: HTTPHeaders([("Host", "x"), ("Authorization", "Bearer \(key)")]))).response
    }

    @Test func everyMethodARouteLacksIsRefusedWithTheMethodsItHas() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 31)
        let key = try replica.createAPIKey(name: "admin", admin: true)
        let api = LifeLogAPI(replica: replica)
        let all = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
        for route in LifeLogAPI.routes {
            let target = "/api/" + route.path.map { $0.hasPrefix(":") ? "phone_00000000-0000-4000-8000-000000000000" : $0 }.joined(separator: "/")
            let methods = Set(route.methods.map(\.method) + (route.methods.contains { $0.method == "GET" } ? ["HEAD"] : []))
            for method in all where !methods.contains(method) {
                let response = try Self.send(api, method, target, key: key)
                #expect(response.status == 405, "\(method) \(target): \(response.status)")
                #expect(response.headers["Allow"] == route.allowed, "\(method) \(target): Allow \(response.headers["Allow"] ?? "none")")
            }
            for method in methods {
                #expect(try Self.send(api, method, target, key: key).status != 405, "\(method) \(target) is in the table")
            }
        }
        #expect(try Self.send(api, "GET", "/api/nothing-here", key: key).status == 404)
        #expect(try Self.send(api, "GET", "/api/entries/", key: key).status == 404, "an empty ID is no entry's")
        #expect(try Self.send(api, "POST", "/metrics", key: key).headers["Allow"] == "GET, HEAD")
        #expect(try Self.send(api, "GET", "/api/entries/stats", key: key).status == 200, "a literal segment before a captured one")
    }
}
