@testable import LifeSync
import Testing

/// `lifesync import` reads a record straight from its bytes (`LogEntry.scanImported`) only
/// where its reference path, `JSONValue.parse` then `validated(from:defaults:)` with an
/// import's defaults, gives the same entry: on canonical entries (all scanned), loosely written,
/// mutated and broken ones, and records in the LifeLog app's own forms (bare or capital UUIDs,
/// camelCase names, `created_at`, no `id`), which the reference reads its own way.
@Suite struct ImportScannerTests {
    static var defaults: EntryDefaults { EntryDefaults(makeID: { "unused" }, recordedAt: Timestamp(millisecondsSince1970: 0), timestamp: nil,
                                        source: "mac", deviceId: "mac_import", acceptsLifeLogForm: true, derivesAbsentID: true) }

    /// The property; returns whether the scanner vouched.
    @discardableResult
    static func check(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let scanned = bytes.withUnsafeBufferPointer({ LogEntry.scanImported($0) }) else { return false }
        let reference = try? LogEntry.validated(from: JSONValue.parse(bytes: bytes), defaults: defaults)
        #expect(reference == scanned, "scanner accepted \(String(decoding: bytes.prefix(300), as: UTF8.self))", sourceLocation: sourceLocation)
        return true
    }

    @Test func canonicalLooseMutatedAndBrokenRecordsAgree() {
        let random = SeededRandom(seed: 31)
        let generator = EntryGenerator(random)
        var canonical = 0
        let rounds = 1_500
        for _ in 0..<rounds {
            let entry = generator.entry()
            let bytes = Array(entry.json.canonicalText.utf8)
            if Self.check(bytes) { canonical += 1 }
            var loose = LooseWriter(random)
            loose.write(entry.json)
            Self.check(loose.out)
            Self.check(Array(Mutation.apply(to: entry.json, random: random).canonicalText.utf8))
            var broken = bytes
            let at = Int(random.next(below: UInt64(broken.count)))
            let specials = Array(#""{}[],:0-e. "#.utf8)
            broken[at] = specials[Int(random.next(below: UInt64(specials.count)))]
            Self.check(broken)
        }
        #expect(canonical == rounds, "every canonical entry is read by the scanner")
    }

    @Test func lifeLogFormsGoTheReferenceWay() {
        let uuid = "550e8400-e29b-41d4-a716-446655440000"
        let base = #"{"data":{"text":"hi"},"device_id":"d","id":"mac_\#(uuid)","recorded_at":"2026-11-22T08:30:00.000Z","source":"mac","timestamp":"2026-11-22T08:30:00.000Z"}"#
        #expect(Self.check(Array(base.utf8)))
        func edit(_ old: String, _ new: String) -> String { base.replacingOccurrences(of: old, with: new) }
        let forms = [
            edit(#""id":"mac_\#(uuid)""#, #""id":"\#(uuid)""#),                       // bare UUID: lifelog_…
            edit(#""id":"mac_\#(uuid)""#, #""id":"mac_\#(uuid.uppercased())""#),      // capitals: lowercased
            edit(#""id":"mac_\#(uuid)","#, ""),                                       // no id: derived
            edit(#""recorded_at""#, #""recordedAt""#),                                // camelCase
            edit(#""device_id""#, #""deviceId""#),
            edit(#""data":{"#, #""created_at":"2026-11-22T08:30:00.000Z","data":{"#), // dropped copy field
            edit(#""data":{"#, #""synced":true,"data":{"#),
            edit(#""text":"hi""#, #""metric":{"name":"m","value":1,"scaleMin":0}"#), // camelCase inside data
            edit(#""source":"mac","#, ""),                                            // default source
        ]
        for form in forms {
            #expect(!Self.check(Array(form.utf8)), "\(form)")
            #expect((try? LogEntry.validated(from: JSONValue.parse(bytes: Array(form.utf8)), defaults: Self.defaults)) != nil, "\(form)")
        }
    }
}
