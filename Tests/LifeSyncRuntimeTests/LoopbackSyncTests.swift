import Foundation
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

@Suite(.serialized) struct LoopbackSyncTests {
    static func note(_ text: String) throws -> JSONValue {
        try JSONValue.parse(#"{"category": "note", "data": {"text": "\#(text)"}}"#)
    }

    @Test func twoNodesConvergeOverLoopback() throws {
        let cluster = LoopbackCluster()
        try cluster.create("phone", role: .phone)
        try cluster.create("mac", role: .mac)
        let phone = try cluster.open("phone"), mac = try cluster.open("mac")
        for i in 0..<50 { try phone.add(json: Self.note("phone \(i)")) }
        for i in 0..<20 { try mac.add(json: Self.note("mac \(i)")) }
        try cluster.start("phone")
        try cluster.start("mac", peers: [cluster.address("phone")])
        #expect(waitUntil(timeout: 20) { (try? phone.liveEntryCount()) == 70 && (try? mac.liveEntryCount()) == 70 })
        #expect(try phone.canonicalHash() == mac.canonicalHash())
        // A write while both serve is noticed (data_version) and synced.
        try mac.add(json: Self.note("while serving"))
        #expect(waitUntil(timeout: 10) { (try? phone.liveEntryCount()) == 71 })
    }

    @Test func theWatchRelaysThroughThePhoneToTheMac() throws {
        let cluster = LoopbackCluster()
        try cluster.create("watch", role: .watch)
        try cluster.create("phone", role: .phone)
        try cluster.create("mac", role: .mac)
        let watch = try cluster.open("watch"), mac = try cluster.open("mac")
        let mood = try watch.add(json: try JSONValue.parse(#"{"category": "mood", "data": {"metric": {"name": "mood", "value": 5}}}"#))
        try mac.add(json: Self.note("mac only"))
        try cluster.start("phone")
        try cluster.start("mac", listen: nil, peers: [cluster.address("phone")])
        try cluster.start("watch", listen: nil, peers: [cluster.address("phone")])
        #expect(waitUntil(timeout: 20) { (try? mac.entry(id: mood.id)) != nil })
        let watchHolds = try watch.liveEntryCount()
        #expect(watchHolds == 1, "a watch receives no entries by default")
        // The relayed entry keeps its origin: the watch's incarnation.
        #expect(try mac.versionStamp(id: mood.id)?.origin == watch.identity.incarnation)
    }

    @Test func concurrentUpdatesResolveToOneWinnerEverywhere() throws {
        let cluster = LoopbackCluster()
        try cluster.create("phone", role: .phone)
        try cluster.create("mac", role: .mac)
        let phone = try cluster.open("phone"), mac = try cluster.open("mac")
        let shared = try phone.add(json: Self.note("original"))
        try cluster.start("phone")
        try cluster.start("mac", peers: [cluster.address("phone")])
        #expect(waitUntil(timeout: 20) { (try? mac.entry(id: shared.id)) != nil })
        cluster.stop("mac")
        try mac.update(id: shared.id, patch: try JSONValue.parse(#"{"data": {"text": "mac edit"}}"#))
        usleep(5_000)
        try phone.update(id: shared.id, patch: try JSONValue.parse(#"{"data": {"text": "phone edit"}}"#))
        try cluster.start("mac", peers: [cluster.address("phone")])
        #expect(waitUntil(timeout: 20) { (try? phone.canonicalHash()) == (try? mac.canonicalHash()) })
        #expect(try phone.entry(id: shared.id).data.text == "phone edit")
        #expect(try mac.entry(id: shared.id).data.text == "phone edit")
        #expect(try mac.conflicts().contains { $0.loserEntry?.data.text == "mac edit" })
    }
}
