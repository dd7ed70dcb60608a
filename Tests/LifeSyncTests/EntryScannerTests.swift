@testable import LifeSync
import Testing

/// The entry scanner may only ever say yes where the reference path (`JSONValue.parse` then
/// `validatedComplete`) says yes, with the same entry: everything it declines goes to the
/// reference, whose error a peer then sees. These tests hold the two together on valid entries
/// written many ways and on many broken ones.
@Suite struct EntryScannerTests {
    /// What the receiver concludes about `bytes` sent as the change `id`: the entry, or the
    /// reference's error text.
    enum Outcome: Equatable {
        case accepted(LogEntry)
        case refused(String)
    }

    static func reference(_ bytes: [UInt8], id: String) -> Outcome {
        do {
            let entry = try LogEntry.validatedComplete(from: try JSONValue.parse(bytes: bytes))
            guard entry.id == id else { return .refused("id: differs from the change's id") }
            return .accepted(entry)
        } catch {
            return .refused("\(error)")
        }
    }

    static func scanned(_ bytes: [UInt8], id: String) -> LogEntry? {
        bytes.withUnsafeBufferPointer { LogEntry.scanComplete($0, id: id) }
    }

    /// The property itself; returns whether the scanner vouched.
    @discardableResult
    static func check(_ bytes: [UInt8], id: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let entry = scanned(bytes, id: id) else { return false }
        let expected = reference(bytes, id: id)
        #expect(expected == .accepted(entry), "scanner accepted \(String(decoding: bytes.prefix(300), as: UTF8.self))",
                sourceLocation: sourceLocation)
        return true
    }

    @Test func canonicalEntriesAreAllScanned() {
        let random = SeededRandom(seed: 11)
        for _ in 0..<2_000 {
            let entry = EntryGenerator(random).entry()
            let bytes = Array(entry.json.canonicalText.utf8)
            #expect(Self.scanned(bytes, id: entry.id) == entry, "\(entry.json.canonicalText)")
        }
    }

    @Test func theBenchWorkloadIsScanned() {
        let random = SeededRandom(seed: 3)
        for i in 0..<200 {
            var data = LogData(text: "entry \(i): walked to the market")
            data.metric = Metric(name: "mood", value: Double(1 + random.next(below: 10)), scaleMin: 1, scaleMax: 10)
            data.location = Location(latitude: 52.5 + random.nextUnit(), longitude: 13.4 + random.nextUnit(), accuracy: 10, placeName: "Berlin")
            data.tags = ["bench", "t\(i % 7)"]
            let time = Timestamp(millisecondsSince1970: 1_795_305_600_000 + Int64(i) * 60_000)
            let entry = LogEntry(id: Identifier.make(role: .watch, random: random), timestamp: time, recordedAt: time,
                                 source: "watch", deviceId: Identifier.make(role: .watch, random: random), category: "mood", data: data)
            #expect(Self.scanned(Array(entry.json.canonicalText.utf8), id: entry.id) == entry)
        }
    }

    /// Other spellings of valid entries (whitespace, key order, number forms, escapes): whatever
    /// the scanner accepts, the reference accepts the same way. Without escapes it takes them all
    /// (escaped member names and IDs it leaves to the reference).
    @Test(arguments: [false, true]) func looselyWrittenEntriesAgree(escapes: Bool) {
        let random = SeededRandom(seed: escapes ? 12 : 15)
        var vouched = 0
        let count = 2_000
        for _ in 0..<count {
            let entry = EntryGenerator(random).entry()
            var writer = LooseWriter(random, escapes: escapes)
            writer.write(entry.json)
            #expect(Self.reference(writer.out, id: entry.id) == .accepted(entry))
            if Self.check(writer.out, id: entry.id) { vouched += 1 }
        }
        if !escapes { #expect(vouched == count) }
    }

    /// Broken members: wrong types, nulls, unknown and duplicate names, limits crossed by one,
    /// out-of-range values, bad times and IDs, deep nesting.
    @Test func brokenMembersAgree() {
        let random = SeededRandom(seed: 13)
        let generator = EntryGenerator(random)
        for _ in 0..<3_000 {
            let entry = generator.entry()
            let mutated = Mutation.apply(to: entry.json, random: random)
            Self.check(Array(mutated.canonicalText.utf8), id: entry.id)
            var writer = LooseWriter(random)
            writer.write(mutated)
            Self.check(writer.out, id: entry.id)
        }
    }

    /// Broken bytes: truncation at every length, flipped and inserted bytes (quotes, brackets,
    /// control characters, invalid UTF-8), trailing text.
    @Test func brokenBytesAgree() {
        let random = SeededRandom(seed: 14)
        let generator = EntryGenerator(random)
        let specials: [UInt8] = Array(#""\{}[],:0-e.+ nul"#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC3, 0xE2, 0xED, 0xF0, 0xFF]
        for round in 0..<300 {
            let entry = generator.entry()
            let bytes = Array(entry.json.canonicalText.utf8)
            if round < 10 {
                for length in 0..<bytes.count { Self.check(Array(bytes[..<length]), id: entry.id) }
            }
            for _ in 0..<20 {
                var copy = bytes
                let at = Int(random.next(below: UInt64(copy.count)))
                let byte = specials[Int(random.next(below: UInt64(specials.count)))]
                switch random.next(below: 4) {
                case 0: copy[at] = byte
                case 1: copy.insert(byte, at: at)
                case 2: copy.remove(at: at)
                default: copy += [byte]
                }
                Self.check(copy, id: entry.id)
            }
        }
    }

    /// A replica reads its rows' `data` back with `LogData.scanned`, held to the same rule
    /// against `LogData.validated`: canonical objects (what rows hold) are all scanned, and
    /// loosely written, mutated and broken ones are scanned only as the reference reads them.
    @Test func dataObjectsAgree() {
        let random = SeededRandom(seed: 16)
        let generator = EntryGenerator(random)
        func check(_ bytes: [UInt8]) -> Bool {
            guard let scanned = bytes.withUnsafeBufferPointer(LogData.scanned) else { return false }
            let reference = try? LogData.validated(from: JSONValue.parse(bytes: bytes), path: "data")
            #expect(reference == scanned, "data scanner accepted \(String(decoding: bytes.prefix(300), as: UTF8.self))")
            return true
        }
        var canonicalScanned = 0, brokenScanned = 0
        let rounds = 1_500
        for _ in 0..<rounds {
            let entry = generator.entry()
            let canonical = Array(entry.data.canonicalJSON.utf8)
            if check(canonical) { canonicalScanned += 1 }
            var loose = LooseWriter(random)
            loose.write(entry.data.json)
            _ = check(loose.out)
            if case .object(let members) = Mutation.apply(to: entry.json, random: random), let data = members.first(where: { $0.0 == "data" })?.1 {
                _ = check(Array(data.canonicalText.utf8))
            }
            var broken = canonical
            let at = Int(random.next(below: UInt64(broken.count)))
            let specials = Array(#""{}[],:0-e. "#.utf8)
            broken[at] = specials[Int(random.next(below: UInt64(specials.count)))]
            if check(broken) { brokenScanned += 1 }
        }
        #expect(canonicalScanned == rounds, "every canonical data object is read by the scanner")
        #expect(brokenScanned < rounds, "the broken ones cannot all be readable")
    }

    @Test func namedCasesAgree() {
        let id = "watch_550e8400-e29b-41d4-a716-446655440000"
        let base = #"{"data":{"text":"hi"},"device_id":"d","id":"\#(id)","recorded_at":"2026-11-22T08:30:00.000Z","source":"watch","timestamp":"2026-11-22T08:30:00+01:00"}"#
        #expect(Self.check(Array(base.utf8), id: id))
        func edit(_ old: String, _ new: String) -> String { base.replacingOccurrences(of: old, with: new) }
        let deep = #""text":"# + String(repeating: "[", count: 68) + String(repeating: "]", count: 68)
        let cases: [String] = [
            edit(#""id":"watch_"#, #""id":"phone_"#),                                  // another id
            edit(#""id":"w"#, #""id":"\u0077"#),                                       // escaped id
            edit(#""data":{"#, #""data":{"text":"a","#),                               // duplicate member
            edit(#""source":"watch""#, #""source":null"#),                             // null required
            edit(#""data":{"#, #""data":{"metric":null,"#),                            // null optional
            edit(#""source""#, #""sourc\u0065""#),                                     // escaped name
            edit(#"+01:00"#, ""),                                                      // no zone
            edit(#""text":"hi""#, #""text":"\ud800""#),                                // lone surrogate
            edit(#""text":"hi""#, deep),                                               // too deep
            edit(#""text":"hi""#, #""tags":[" "]"#),                                   // blank tag
            edit(#""text":"hi""#, #""metric":{"name":"m","value":1e400}"#),            // huge number
            edit(#""text":"hi""#, #""metric":{"name":"m","value":5,"scale_max":4}"#),
            edit(#""text":"hi""#, #""location":{"latitude":90.5,"longitude":0}"#),
            edit(#""text":"hi""#, #""location":{"latitude":0,"longitude":0,"accuracy":-1}"#),
            edit(#""text":"hi""#, #""metric":{"name":"m","value":0,"scale_min":1}"#),
            edit(#""text":"hi""#, #""metric":{"name":" ","value":0}"#),
            edit(#""text":"hi""#, #""metric":{"value":0}"#),
            edit(#""text":"hi""#, #""text":"hi","mood":7"#),
            edit(#""text":"hi""#, "\"tags\":[\(Array(repeating: "\"t\"", count: 65).joined(separator: ","))]"),
            edit(#""data":"#, #""category":"","data":"#),
            edit(#""data":"#, "\"category\":\"\(String(repeating: "c", count: 65))\",\"data\":"),
            edit(#""data":"#, #""catgory":"mood","data":"#),
            edit(#""source":"watch""#, "\"source\":\"\(String(repeating: "s", count: 257))\""),
            base + " x", " " + base + "\n", "\u{FEFF}" + base,
        ]
        for text in cases { Self.check(Array(text.utf8), id: id) }
        // A null member is absent for the reference; the scanner leaves such entries to it.
        let nullMember = Array(cases[4].utf8)
        #expect(Self.scanned(nullMember, id: id) == nil)
        guard case .accepted = Self.reference(nullMember, id: id) else { Issue.record("a null member must be accepted"); return }
    }
}

/// Random valid entries, with the strings that need care: quotes, backslashes, control
/// characters, CR LF, combining marks, emoji, leading spaces.
struct EntryGenerator {
    let random: SeededRandom

    init(_ random: SeededRandom) { self.random = random }

    func pick<T>(_ items: [T]) -> T { items[Int(random.next(below: UInt64(items.count)))] }
    func maybe<T>(_ make: () -> T) -> T? { random.next(below: 2) == 0 ? make() : nil }

    func word() -> String {
        pick(["walk", "Mood", "café", "😀 ok", "a b", "x\ty", "say \"hi\"", "back\\slash", "line\nbreak", "cr\r\nlf",
              " padded ", "e\u{301}", "\u{0}nul", "/slash/", "ünïcödé ☕", String(repeating: "z", count: 64)])
    }

    func number() -> Double {
        pick([0, -0.0, 1, 7, -3, 42.5, 0.1, 1e-7, 123456789012345, 1234567890123456, 2.5e15, 52.51234567, -13.4])
    }

    func entry() -> LogEntry {
        let value = Double(random.next(below: 5)) - 2 + random.nextUnit()
        return LogEntry(
            id: Identifier.make(role: pick(Role.allCases), random: random),
            timestamp: Timestamp(millisecondsSince1970: Int64(random.next(below: 4_000_000_000_000)) - 1_000_000_000_000),
            recordedAt: Timestamp(millisecondsSince1970: Int64(random.next(below: 4_000_000_000_000))),
            source: word(), deviceId: word(), category: maybe { pick(["mood", "note", "café", "x\u{301}", String(repeating: "c", count: 64)]) },
            data: LogData(text: maybe(word),
                          metric: maybe { Metric(name: pick(["mood", "pain", " padded", "é"]), value: maybe(number) ?? value, unit: maybe(word),
                                                 scaleMin: maybe { -1e16 }, scaleMax: maybe { 1e16 }) },
                          location: maybe { Location(latitude: random.nextUnit() * 180 - 90, longitude: random.nextUnit() * 360 - 180,
                                                     accuracy: maybe { random.nextUnit() * 100 }, altitude: maybe(number),
                                                     placeName: maybe(word)) },
                          tags: maybe { (0..<Int(random.next(below: 5))).map { _ in word() } }))
    }
}

/// Writes JSON as other clients might: members in any order, whitespace between tokens,
/// optional escapes, other spellings of the same number.
struct LooseWriter {
    let random: SeededRandom
    /// Whether to escape characters that need no escape (`\u0041`, `\/`).
    let escapes: Bool
    var out: [UInt8] = []

    init(_ random: SeededRandom, escapes: Bool = true) {
        self.random = random
        self.escapes = escapes
    }

    mutating func space() {
        for _ in 0..<Int(random.next(below: 3)) { out.append(Array(" \n\t\r".utf8)[Int(random.next(below: 4))]) }
    }

    mutating func write(_ value: JSONValue) {
        space()
        switch value {
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            var shuffled = members
            for i in shuffled.indices.reversed() { shuffled.swapAt(i, Int(random.next(below: UInt64(i + 1)))) }
            for (i, member) in shuffled.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                space()
                string(member.0)
                space()
                out.append(UInt8(ascii: ":"))
                write(member.1)
            }
            space()
            out.append(UInt8(ascii: "}"))
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(item)
            }
            space()
            out.append(UInt8(ascii: "]"))
        case .string(let s): string(s)
        case .number(let n): number(n)
        default: value.write(to: &out, pretty: false, indent: 0)
        }
        space()
    }

    mutating func number(_ n: Double) {
        let text = JSONValue.numberText(n)
        switch random.next(below: 4) {
        case 0 where !text.contains("e") && !text.contains("."): out.append(contentsOf: (text + ".0").utf8)
        case 1 where !text.contains("e"): out.append(contentsOf: (text + "e0").utf8)
        case 2 where !text.contains("e"): out.append(contentsOf: (text + "E+0").utf8)
        default: out.append(contentsOf: text.utf8)
        }
    }

    /// Escapes what must be escaped, and some of the rest (as `\uXXXX`, `\/`).
    mutating func string(_ s: String) {
        out.append(UInt8(ascii: "\""))
        for scalar in s.unicodeScalars {
            let escape = escapes && random.next(below: 4) == 0
            switch scalar {
            case "\"": out.append(contentsOf: #"\""#.utf8)
            case "\\": out.append(contentsOf: #"\\"#.utf8)
            case "/" where escape: out.append(contentsOf: #"\/"#.utf8)
            case _ where scalar.value < 0x20 || escape:
                for unit in String(scalar).utf16 {
                    out.append(contentsOf: "\\u".utf8)
                    let hex = String(unit, radix: 16, uppercase: random.next(below: 2) == 0)
                    out.append(contentsOf: (String(repeating: "0", count: 4 - hex.count) + hex).utf8)
                }
            default: out.append(contentsOf: String(scalar).utf8)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// One change to an entry's JSON that may or may not break a rule.
enum Mutation {
    static let names = ["id", "timestamp", "recorded_at", "source", "device_id", "category", "data", "text", "metric", "location",
                        "tags", "name", "value", "unit", "scale_min", "scale_max", "latitude", "longitude", "accuracy", "altitude",
                        "place_name", "extra", "Text", "id "]

    static func weirdValue(_ random: SeededRandom) -> JSONValue {
        let strings = ["", " ", "x", String(repeating: "s", count: 257), String(repeating: "c", count: 65), "2026-13-01T00:00:00Z",
                       "2026-11-22T08:30:00Z", "2026-11-22T08:30", "watch_550e8400-e29b-41d4-a716-446655440000",
                       "WATCH_550e8400-e29b-41d4-a716-446655440000", "watch_\u{301}550e8400-e29b-41d4-a716-446655440000", "\r\n", "\u{85}",
                       String(repeating: "t", count: EntryLimits.textBytes + 1)]
        let numbers: [Double] = [0, -1, 91, -181, 1e300, -1e300, 0.5, 11, 1e16]
        switch random.next(below: 8) {
        case 0: return .null
        case 1: return .bool(random.next(below: 2) == 0)
        case 2: return .number(numbers[Int(random.next(below: UInt64(numbers.count)))])
        case 3, 4: return .string(strings[Int(random.next(below: UInt64(strings.count)))])
        case 5: return .array((0..<Int(random.next(below: 3))).map { _ in .string("t") } + (random.next(below: 2) == 0 ? [.null] : []))
        case 6: return .array(Array(repeating: .string("t"), count: 65))
        default:
            var nested = JSONValue.string("deep")
            for _ in 0..<Int(random.next(below: 80)) { nested = .array([nested]) }
            return random.next(below: 2) == 0 ? nested : .object([("name", .string("m")), ("value", .number(1)), ("x", nested)])
        }
    }

    /// Applies one random mutation somewhere in `json` (the entry, or an object inside it).
    static func apply(to json: JSONValue, random: SeededRandom, depth: Int = 0) -> JSONValue {
        guard case .object(var members) = json else { return json }
        let nestedObjects = members.indices.filter { if case .object = members[$0].1 { return true } else { return false } }
        if !nestedObjects.isEmpty, depth < 2, random.next(below: 2) == 0 {
            let i = nestedObjects[Int(random.next(below: UInt64(nestedObjects.count)))]
            members[i].1 = apply(to: members[i].1, random: random, depth: depth + 1)
            return .object(members)
        }
        let name = names[Int(random.next(below: UInt64(names.count)))]
        switch random.next(below: 5) {
        case 0 where !members.isEmpty: members.remove(at: Int(random.next(below: UInt64(members.count))))
        case 1 where !members.isEmpty:
            let i = Int(random.next(below: UInt64(members.count)))
            members.append(members[i])                                       // a duplicate name
        case 2 where !members.isEmpty: members[Int(random.next(below: UInt64(members.count)))].1 = weirdValue(random)
        default: members.append((name, weirdValue(random)))
        }
        return .object(members)
    }
}
