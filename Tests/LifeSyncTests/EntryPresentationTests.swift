import LifeSync
import LifeSyncAPI
import TestSupport
import Testing

/// How a key's client reads entries, and which entry the `id` it read addresses.
@Suite struct EntryPresentationTests {
    static let uuid = "550e8400-e29b-41d4-a716-446655440000"

    func entry(_ id: String, on replica: Replica) throws {
        _ = try replica.add(json: .object([("id", .string(id)), ("timestamp", .string("2026-11-22T08:00:00.250Z")),
                                           ("data", .object([("location", .object([("latitude", .number(1)), ("longitude", .number(2)),
                                                                                    ("place_name", .string("Home"))]))]))]))
    }

    @Test func theAppFormHasABareUUIDCamelCaseWholeSecondsAndSynced() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        try entry("phone_" + Self.uuid, on: replica)
        let json = EntryPresentation.lifeLogApp.json(try replica.entry(id: "phone_" + Self.uuid))
        #expect(json["id"] == .string(Self.uuid.uppercased()))
        #expect(json["timestamp"] == .string("2026-11-22T08:00:00Z"))
        #expect(json["recordedAt"] != nil && json["recorded_at"] == nil && json["deviceId"] != nil && json["device_id"] == nil)
        #expect(json["data"]?["location"]?["placeName"] == .string("Home") && json["data"]?["location"]?["place_name"] == nil)
        #expect(json["synced"] == .bool(true))
        #expect(EntryPresentation.lifeSync.json(try replica.entry(id: "phone_" + Self.uuid)) == (try replica.entry(id: "phone_" + Self.uuid)).json)
    }

    @Test func aBareUUIDNamesTheLifeLogEntryFirstThenTheOneDeviceEntryWithIt() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let bare = Self.uuid.uppercased()
        #expect(try replica.entryID(addressedBy: bare) == "lifelog_" + Self.uuid)       // none yet: the rule's own ID
        try entry("phone_" + Self.uuid, on: replica)
        #expect(try replica.entryID(addressedBy: bare) == "phone_" + Self.uuid)         // the one device entry
        #expect(try replica.entryID(addressedBy: "lifelog_" + Self.uuid) == "lifelog_" + Self.uuid)  // a full ID names itself
        try entry("mac_" + Self.uuid, on: replica)
        #expect(try replica.entryID(addressedBy: bare) == "lifelog_" + Self.uuid)       // two: neither is guessed
        try entry("lifelog_" + Self.uuid, on: replica)
        #expect(try replica.entryID(addressedBy: Self.uuid) == "lifelog_" + Self.uuid)  // lifelog_ wins
    }
}
