import Testing
@testable import LifeSync
import TestSupport

/// Members of `data` beyond the document's four (PROTOCOL.md §5.2.1, §5.2.2): kept as sent,
/// canonical like the rest, each a field of its own for the merge, named in a write's mask.
@Suite struct ExtraFieldTests {
    typealias Pair = FieldMergeReplicaTests.Pair

    static func entry(_ text: String) throws -> LogEntry {
        try LogEntry.validatedComplete(from: try JSONValue.parse(text))
    }

    static let withExtras = #"""
        {"id": "drafts_2c1f0e4b-8a7d-4b6c-9e5f-3d2c1b0a9f8e", "timestamp": "2026-11-22T06:15:30.125Z",
         "recorded_at": "2026-11-22T06:16:00Z", "source": "drafts", "device_id": "mac_1",
         "data": {"text": "Walk", "weather": {"sky": "clear", "degrees": 7.0}, "Zeta": [1, "two", true, null],
                  "image_url": "https://example.org/a.jpg", "nothing": null, "mood2": 3}}
        """#

    @Test func extraMembersAreKeptAndEncodeCanonically() throws {
        let entry = try Self.entry(Self.withExtras)
        #expect(entry.data.extra.keys.sorted() == ["Zeta", "image_url", "mood2", "weather"], "a null member is absent")
        #expect(entry.data.extra["weather"] == .object([("degrees", .number(7)), ("sky", .string("clear"))]))
        // Sorted by bytes among the document's members ("Zeta" < "image_url" < "mood2" < "text" < "weather"),
        // nested objects sorted too, `7.0` written `7`; the direct writer agrees with the tree.
        #expect(entry.data.canonicalJSON
                == #"{"Zeta":[1,"two",true,null],"image_url":"https://example.org/a.jpg","mood2":3,"text":"Walk","weather":{"degrees":7,"sky":"clear"}}"#)
        #expect(entry.data.canonicalJSON == entry.data.json.canonicalText)
        var pretty: [UInt8] = []
        entry.writeJSON(to: &pretty, pretty: true, indent: 0)
        #expect(String(decoding: pretty, as: UTF8.self) == entry.json.prettyText)
        #expect(try Self.entry(entry.json.canonicalText) == entry, "what is stored reads back the same")
    }

    @Test func extraMembersObeyTheEntrysBounds() throws {
        let wide = (0..<65).map { "\"m\($0)\": 1" }.joined(separator: ",")
        #expect(throws: ValidationError.self) { try Self.entry(Self.withExtras.replacingOccurrences(of: #""mood2": 3"#, with: #""mood2": {\#(wide)}"#)) }
        let huge = String(repeating: "x", count: EntryLimits.encodedBytes)
        do {
            _ = try Self.entry(Self.withExtras.replacingOccurrences(of: #""mood2": 3"#, with: #""mood2": "\#(huge)""#))
            Issue.record("an entry past the content bound was taken")
        } catch let error as ValidationError {
            #expect(error.reason.contains("bytes of JSON"), "\(error)")
        }
        #expect(EntryField(name: "data.image_url") == .extra("image_url"))
        #expect(EntryField(name: "data.text") == .text && EntryField(name: "data.image-url") == nil)
    }

    @Test func concurrentEditsOfDifferentExtraMembersBothSurvive() throws {
        let p = try Pair()
        try p.a.update(id: p.id, patch: .object([("data", .object([("weather", .string("rain"))]))]))
        try p.b.update(id: p.id, patch: .object([("data", .object([("image_url", .string("https://example.org/b.jpg"))]))]))
        let edits = try p.a.changes(after: VersionVector()).filter { $0.fields != .all }
        #expect(edits.map(\.fields) == [FieldMask([.extra("weather")])], "an edit names the extra member it changed")
        try p.exchange()
        for replica in [p.a, p.b] {
            let data = try replica.entry(id: p.id).data
            #expect(data.extra == ["weather": .string("rain"), "image_url": .string("https://example.org/b.jpg")])
            #expect(data.text == "buy milk")
            #expect(try replica.conflicts().isEmpty, "different members do not conflict")
        }
        #expect(try p.a.canonicalDump() == p.b.canonicalDump())
    }

    @Test func concurrentEditsOfOneExtraMemberResolveByStampAndKeepTheLoser() throws {
        let p = try Pair()
        try p.a.update(id: p.id, patch: .object([("data", .object([("weather", .string("rain")), ("text", .string("buy oat milk"))]))]))
        try p.b.update(id: p.id, patch: .object([("data", .object([("weather", .string("snow"))]))]))
        try p.exchange()
        for replica in [p.a, p.b] {
            let entry = try replica.entry(id: p.id)
            #expect(entry.data.extra["weather"] == .string("snow"), "B's clock is later")
            #expect(entry.data.text == "buy oat milk", "A's text stands: B did not change it")
            let conflicts = try replica.conflicts()
            #expect(conflicts.count == 1 && conflicts.first?.lostFields == FieldMask([.extra("weather")]))
            #expect(conflicts.first?.loserEntry?.data.extra["weather"] == .string("rain"), "the loser's value is kept")
        }
        #expect(try p.a.canonicalDump() == p.b.canonicalDump())
        // Removing a member is a write of it too: A removes the member B set, having seen it.
        try p.a.update(id: p.id, patch: .object([("data", .object([("weather", .null)]))]))
        try p.exchange()
        for replica in [p.a, p.b] {
            #expect(try replica.entry(id: p.id).data.extra.isEmpty)
            #expect(try replica.conflicts().isEmpty, "a write of the member, having seen both, answers the loss")
        }
    }

    @Test func aBatchCarriesTheNamesAndTheDigestCoversThem() throws {
        let p = try Pair()
        try p.b.update(id: p.id, patch: .object([("data", .object([("weather", .string("rain")), ("image_url", .string("u"))]))]))
        let changes = try p.b.changes(after: VersionVector())
        let edit = try #require(changes.first { $0.fields != .all })
        #expect(edit.fields == FieldMask([.extra("image_url"), .extra("weather")]))
        let batch = Batch(id: 1, origins: [], changes: changes, through: try p.b.replicaVector())
        let decoded = try #require(SessionPair.decode(Message.batch(batch).encoded()))
        guard case .batch(let back) = decoded else { Issue.record("decoded as \(decoded)"); return }
        #expect(back == batch)
        let encoded = EncodedChange(id: edit.id, stamp: edit.stamp, payload: Array(edit.entry!.json.canonicalText.utf8), fields: edit.fields)
        var other = encoded
        other.fields = FieldMask([.extra("weather")])
        #expect(encoded.digest != other.digest, "a write's digest covers the members it names")
    }

    /// An edit can name up to twice the 64 members an object holds: those it removed and those it
    /// set. Such a write travels (a receiver refusing it would stall the sync for good).
    @Test func anEditReplacingEveryExtraMemberTravels() throws {
        let p = try Pair()
        let before = (0..<60).map { ("a\($0)", JSONValue.number(Double($0))) }
        try p.b.update(id: p.id, patch: .object([("data", .object(before))]))
        let after = (0..<60).map { ("a\($0)", JSONValue.null) } + (0..<60).map { ("b\($0)", JSONValue.number(Double($0))) }
        try p.b.update(id: p.id, patch: .object([("data", .object(after))]))
        let changes = try p.b.changes(after: VersionVector())
        #expect(changes.contains { $0.fields.extra?.count == 120 }, "the second edit names the 60 removed and the 60 set")
        let batch = Batch(id: 1, origins: [], changes: changes, through: try p.b.replicaVector())
        let decoded = try #require(SessionPair.decode(Message.batch(batch).encoded()))
        guard case .batch(let back) = decoded else { Issue.record("decoded as \(decoded)"); return }
        #expect(back == batch)
        try p.exchange()
        #expect(try p.a.entry(id: p.id).data.extra.keys.sorted() == (0..<60).map { "b\($0)" }.sorted())
    }

    /// The vector's two edits merge per field, extra members among them (PROTOCOL.md §8).
    @Test func theExtraFieldVectorMergesPerField() throws {
        let vector = try #require(try ProtocolVectorTests.load("batch").first { $0.name == "batch_extra_fields" })
        guard case .messages(let messages, _) = ProtocolVectorTests.read(vector.bytes), case .batch(let batch)? = messages.first else {
            Issue.record("\(vector): not a BATCH")
            return
        }
        #expect(batch.changes.map(\.fields) == [FieldMask([.text, .tags, .extra("image_url"), .extra("weather")]), FieldMask([.category])])
        let result = FieldMerge.merge(batch.changes.map { EntryWrite(stamp: $0.stamp, fields: $0.fields, entry: $0.entry) })
        let content = try #require(result.content)
        let phone = try #require(batch.changes.first?.entry), mac = try #require(batch.changes.last?.entry)
        #expect(content.data == phone.data && content.category == mac.category)
        #expect(mac.data.extra["weather"] != phone.data.extra["weather"], "the mac's entry holds a weather it did not change")
        #expect(result.losses.isEmpty)
    }

    /// Flag bit 2 and the names after `fields` (PROTOCOL.md §5.2.1), read as the decoder reads them.
    @Test(arguments: [
        ([0x06, 0x00, 0x01, 0x00, 0x01, 0x61], "ok: 0x00+a"),
        ([0x06, 0xFF, 0x00], "ok: 0xff"),
        ([0x02, 0xFF], "ok: all"),
        ([0x04], "malformed"),                                  // names without the fields
        ([0x07, 0x00, 0x00], "malformed"),                      // a delete names fields
        ([0x0E, 0x00, 0x00], "malformed"),                      // bit 3
        ([0x06, 0x00, 0x02, 0x00, 0x01, 0x62, 0x00, 0x01, 0x61], "malformed"),  // out of order
        ([0x06, 0x00, 0x02, 0x00, 0x01, 0x61, 0x00, 0x01, 0x61], "malformed"),  // twice
        ([0x06, 0x00, 0x01, 0x00, 0x04, 0x74, 0x65, 0x78, 0x74], "malformed"),  // "text" is no extra member
        ([0x06, 0x00, 0x01, 0x00, 0x41] + [UInt8](repeating: 0x61, count: 65), "malformed"),  // 65 bytes
        ([0x06, 0x00, 0x81] + [UInt8](repeating: 0, count: 400), "malformed"),  // 129 names
    ] as [([UInt8], String)])
    func theFlagsAndNamesDecodeByTheirRules(bytes: [UInt8], expected: String) {
        var reader = ByteReader(bytes[...])
        do {
            let (deleted, fields) = try FieldMask.readFlags(from: &reader, isEntry: true, change: 0)
            #expect(!deleted && "ok: \(fields)" == expected && reader.remaining == 0)
            var writer = ByteWriter()
            fields.writeFlags(deleted: false, to: &writer)
            #expect(writer.bytes == (fields == .all ? [0x00] : bytes), "canonical again")
        } catch {
            #expect(error.code == .malformed && expected == "malformed", "\(error)")
        }
    }
}
