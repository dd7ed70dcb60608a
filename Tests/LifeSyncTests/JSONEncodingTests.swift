@testable import LifeSync
import Testing

@Suite struct JSONCanonicalEncodingTests {
    @Test func keysAreSortedByUTF8Bytes() {
        let value = JSONValue.object([("b", .number(1)), ("a", .number(2)), ("B", .number(3)), ("é", .number(4)),
                                      ("aa", .number(5)), ("", .number(6))])
        #expect(value.canonicalText == #"{"":6,"B":3,"a":2,"aa":5,"b":1,"é":4}"#)
    }

    /// `writeNumber` writes whole numbers digit by digit and the rest as Swift prints them:
    /// the same text as `numberText`, which every export and canonical dump relied on.
    @Test func numbersAreWrittenAsTheirText() {
        let numbers: [Double] = [0, -0.0, 1, -1, 7, 42.5, -3.25, 0.1, 1e-7, 123456789012345, 1234567890123456, -9_007_199_254_740_991,
                                 9_007_199_254_740_992, 1e21, -1e30, 2.5e15, 52.51234567, .ulpOfOne, .greatestFiniteMagnitude]
        for n in numbers {
            var out: [UInt8] = []
            JSONValue.writeNumber(n, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == JSONValue.numberText(n))
        }
    }

    @Test func nestedObjectsAreSortedToo() throws {
        let value = try JSONValue.parse(#"{"z": {"y": 1, "x": [ {"d": 1, "c": 2} ]}, "a": null}"#)
        #expect(value.canonicalText == #"{"a":null,"z":{"x":[{"c":2,"d":1}],"y":1}}"#)
    }

    @Test func equalValuesInDifferentOrderEncodeToEqualBytes() throws {
        let a = try JSONValue.parse(#"{"text": "x", "tags": ["a", "b"], "metric": {"value": 3, "name": "m"}}"#)
        let b = try JSONValue.parse(#"{"metric": {"name": "m", "value": 3}, "tags": ["a", "b"], "text": "x"}"#)
        #expect(a.canonicalText == b.canonicalText)
        // Array order is significant and kept.
        let c = try JSONValue.parse(#"{"metric": {"name": "m", "value": 3}, "tags": ["b", "a"], "text": "x"}"#)
        #expect(a.canonicalText != c.canonicalText)
    }

    @Test func outputIsCompact() throws {
        let value = try JSONValue.parse("[ 1 , { \"a\" : [ ] , \"b\" : { } } , true , false , null ]")
        #expect(value.canonicalText == #"[1,{"a":[],"b":{}},true,false,null]"#)
    }

    @Test(arguments: [
        (0.0, "0"), (-0.0, "0"), (1, "1"), (-1, "-1"), (5, "5"), (100, "100"), (1e15, "1000000000000000"),
        (9_007_199_254_740_991, "9007199254740991"), (-9_007_199_254_740_991, "-9007199254740991"),
        (0.5, "0.5"), (-2.25, "-2.25"), (0.1, "0.1"), (3.14159, "3.14159"),
    ] as [(Double, String)])
    func numbersEncode(value: Double, expected: String) {
        #expect(JSONValue.number(value).canonicalText == expected)
    }

    @Test func integersNeverCarryAFraction() throws {
        for text in ["7.0", "7.00", "70e-1", "0.7e1", "7"] {
            #expect(try JSONValue.parse(text).canonicalText == "7", "\(text)")
        }
        #expect(try JSONValue.parse("-0").canonicalText == "0")
        #expect(try JSONValue.parse("-0.0e5").canonicalText == "0")
    }

    /// Integers of up to 15 digits are read without going through text; they must come out as
    /// the text route reads them, sign of zero included, on both sides of the cut-over.
    @Test func integersReadAsTheirTextReads() throws {
        let random = SeededRandom(seed: 21)
        var texts = ["0", "-0", "7", "-7", "999999999999999", "-999999999999999", "1000000000000000", "9007199254740993", "12345678901234567890"]
        for _ in 0..<2_000 {
            let digits = 1 + Int(random.next(below: 18))
            var text = String(1 + random.next(below: 9))
            for _ in 1..<digits { text += String(random.next(below: 10)) }
            texts.append(random.next(below: 2) == 0 ? text : "-" + text)
        }
        for text in texts {
            guard case .number(let parsed) = try JSONValue.parse(text) else { Issue.record("\(text) is not a number"); continue }
            let expected = try #require(Double(text))
            #expect(parsed == expected && parsed.sign == expected.sign, "\(text)")
        }
    }

    @Test func hugeAndTinyNumbersEncodeAsValidJSONThatRoundTrips() throws {
        for n: Double in [1e300, -1e300, 1e20, 9_007_199_254_740_992, 1.7976931348623157e308, .leastNonzeroMagnitude, 1e-7, 123.456e-10, 2.5e21] {
            let text = JSONValue.number(n).canonicalText
            #expect(!text.contains("inf") && !text.contains("nan"))
            let back = try JSONValue.parse(text)
            #expect(back == .number(n), "\(n) encoded as \(text)")
        }
    }

    @Test func stringsEscapeQuotesBackslashesAndControlCharacters() {
        #expect(JSONValue.string("a\"b").canonicalText == #""a\"b""#)
        #expect(JSONValue.string("a\\b").canonicalText == #""a\\b""#)
        #expect(JSONValue.string("l1\nl2\r\tx").canonicalText == #""l1\nl2\r\tx""#)
        #expect(JSONValue.string("\u{0}").canonicalText == #""\u0000""#)
        #expect(JSONValue.string("\u{1}").canonicalText == #""\u0001""#)
        #expect(JSONValue.string("\u{8}\u{C}").canonicalText == #""\u0008\u000c""#)
        #expect(JSONValue.string("\u{1F}").canonicalText == #""\u001f""#)
        // Everything else is written as is: slash, DEL, non-ASCII.
        #expect(JSONValue.string("a/b\u{7F}é😀").canonicalText == "\"a/b\u{7F}é😀\"")
    }

    @Test func everyControlCharacterIsEscapedAndRoundTrips() throws {
        let all = String(String.UnicodeScalarView((0..<0x20).map { Unicode.Scalar(UInt8($0)) }))
        let text = JSONValue.string(all).canonicalText
        #expect(!text.utf8.dropFirst().dropLast().contains { $0 < 0x20 })
        #expect(try JSONValue.parse(text) == .string(all))
    }

    @Test func keysAreEscapedLikeStrings() {
        let value = JSONValue.object([("a\"\n", .null)])
        #expect(value.canonicalText == #"{"a\"\n":null}"#)
    }

    @Test func prettyTextIsIndentedSortedAndParsesBack() throws {
        let value = try JSONValue.parse(#"{"b": [1, {"d": true}], "a": "x", "c": [], "e": {}}"#)
        let pretty = value.prettyText
        #expect(pretty == """
            {
              "a": "x",
              "b": [
                1,
                {
                  "d": true
                }
              ],
              "c": [],
              "e": {}
            }
            """)
        #expect(try JSONValue.parse(pretty) == value)
    }
}

@Suite struct JSONRoundTripTests {
    @Test(arguments: [
        #"{"id":"watch_x","data":{"text":"héllo \"w\"\n","tags":["a","b"],"metric":{"value":7.5,"name":"mood"}}}"#,
        #"[null,true,false,0,-1,0.25,"",[],{},[[[]]],{"a":{"b":{"c":null}}}]"#,
        #""\u0000\u001f\t\\\/😀""#,
        "-0.000001",
        "1.5e300",
    ])
    func parseEncodeParseIsStable(text: String) throws {
        let first = try JSONValue.parse(text)
        let canonical = first.canonicalText
        let second = try JSONValue.parse(canonical)
        #expect(second == first)
        #expect(second.canonicalText == canonical)
    }

    /// Random documents built from a seeded source encode and parse back to themselves.
    @Test func randomDocumentsRoundTrip() throws {
        let random = SeededRandom(seed: 2024)
        func string() -> String {
            let alphabet: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "é", "€", "😀", "\u{7F}"]
            var s = String.UnicodeScalarView()
            for _ in 0..<Int(random.next(below: 6)) { s.append(alphabet[Int(random.next(below: UInt64(alphabet.count)))]) }
            return String(s)
        }
        func value(depth: Int) -> JSONValue {
            switch random.next(below: depth > 4 ? 4 : 6) {
            case 0: return .null
            case 1: return .bool(random.next(below: 2) == 0)
            case 2:
                let raw = Double(Int64(bitPattern: random.nextUInt64()) >> 20) / Double(UInt64(1) << random.next(below: 30))
                return .number(raw)
            case 3: return .string(string())
            case 4: return .array((0..<Int(random.next(below: 4))).map { _ in value(depth: depth + 1) })
            default:
                var members: [(String, JSONValue)] = []
                var used = Set<String>()
                for _ in 0..<Int(random.next(below: 4)) {
                    let key = string()
                    if used.insert(key).inserted { members.append((key, value(depth: depth + 1))) }
                }
                return .object(members)
            }
        }
        for _ in 0..<300 {
            let original = value(depth: 0)
            let text = original.canonicalText
            let back = try JSONValue.parse(text)
            #expect(back == original, "\(text)")
            #expect(back.canonicalText == text)
        }
    }
}
