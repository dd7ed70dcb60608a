@testable import LifeSync

/// A random history of the writes of ONE entry by a few origins, made the way replicas make
/// them: before each write its origin catches up on a random part of what the others wrote
/// (always whole causal pasts: joining the vector of a write it received brings everything that
/// write had seen), stamps an HLC above everything it has seen (as `Replica.nextStamp` does) from
/// a coarse shared wall clock (so concurrent origins often stamp the same HLC), and changes a
/// random set of fields of the entry as it reads there. An origin that reads no entry creates
/// it (every field); one that reads it sometimes deletes it.
///
/// The property tests need histories like these, not arbitrary stamps: the merge relies on a
/// write being stamped above whatever its writer had seen, and arbitrary stamps break that.
struct FieldMergeHistory {
    static let id = "phone_00000000-0000-4000-8000-000000000001"
    static let epoch: Int64 = 1_795_305_600_000

    private(set) var writes: [EntryWrite] = []
    let origins: [String]

    init(random: SeededRandom, steps: Int) {
        origins = (0..<(3 + Int(random.next(below: 2)))).map { "mac_origin\($0)" }
        var known = Array(repeating: VersionVector(), count: origins.count)
        var now = Self.epoch
        for _ in 0..<steps {
            now += Int64(random.next(below: 2))
            let o = Int(random.next(below: UInt64(origins.count)))
            // Catch up on a few writes made so far (each with its whole causal past).
            for _ in 0..<random.next(below: 3) where !writes.isEmpty {
                known[o] = known[o].joined(with: writes[Int(random.next(below: UInt64(writes.count)))].stamp.vector)
            }
            let seen = writes.filter { known[o][$0.stamp.origin] >= $0.stamp.sequence }
            let view = seen.isEmpty ? nil : FieldMerge.merge(seen).content
            let highest = seen.map(\.stamp.hlc).max()
            let hlc = max(HLCTimestamp(milliseconds: now, counter: 0), highest?.successor ?? .zero)
            let sequence = known[o][origins[o]] + 1
            known[o][origins[o]] = sequence

            let tag = writes.count + 1
            let deletes = view != nil && random.next(below: 6) == 0
            let stamp = VersionStamp(hlc: hlc, origin: origins[o], sequence: sequence, vector: known[o], deleted: deletes)
            let write: EntryWrite
            if deletes {
                write = EntryWrite(stamp: stamp, entry: nil)
            } else {
                let mask = view == nil || random.next(below: 8) == 0 ? FieldMask.all : Self.randomMask(random)
                var entry = view ?? Self.fresh(tag: 0)
                let fresh = Self.fresh(tag: tag)
                for field in mask.fields(among: Self.extraMembers) { entry.take(field, from: fresh) }
                entry.recordedAt = Timestamp(millisecondsSince1970: now)
                write = EntryWrite(stamp: stamp, fields: mask, entry: entry)
            }
            writes.append(write)
        }
    }

    /// The members of `data` beyond the document's four that every write holds: fields of their own.
    static let extraMembers = ["image_url", "weather"]
    static let everyField = EntryField.standard + extraMembers.map(EntryField.extra)

    /// One to three fields, mostly the ones users edit.
    static func randomMask(_ random: SeededRandom) -> FieldMask {
        let common: [EntryField] = [.text, .tags, .category, .text, .tags, .metric, .extra("weather")]
        var fields: [EntryField] = []
        for _ in 0...random.next(below: 3) {
            fields.append(random.next(below: 4) == 0
                ? everyField[Int(random.next(below: UInt64(everyField.count)))]
                : common[Int(random.next(below: UInt64(common.count)))])
        }
        return FieldMask(fields)
    }

    /// An entry whose every field holds a value no other write has (`tag` 0: the base a
    /// creation starts from), so the fields a write changed are exactly the fields it stamps.
    static func fresh(tag: Int) -> LogEntry {
        LogEntry(id: id, timestamp: Timestamp(millisecondsSince1970: epoch + Int64(tag)), recordedAt: Timestamp(millisecondsSince1970: epoch),
                 source: "s\(tag)", deviceId: "d\(tag)", category: "c\(tag)",
                 data: LogData(text: "t\(tag)", metric: Metric(name: "m", value: Double(tag)),
                               location: Location(latitude: Double(tag), longitude: 0), tags: ["g\(tag)"],
                               extra: ["image_url": .string("u\(tag)"), "weather": .object([("sky", .string("w\(tag)")), ("degrees", .number(Double(tag)))])]))
    }
}

extension SeededRandom {
    /// `items` in a random order.
    func shuffled<T>(_ items: [T]) -> [T] {
        var result = items
        for i in stride(from: result.count - 1, to: 0, by: -1) { result.swapAt(i, Int(next(below: UInt64(i + 1)))) }
        return result
    }
}
