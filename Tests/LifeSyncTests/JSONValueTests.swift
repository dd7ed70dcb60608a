@testable import LifeSync
import Testing

/// Parses `text`, or records the error and returns nil.
private func parsed(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> JSONValue? {
    do {
        return try JSONValue.parse(text)
    } catch {
        Issue.record("expected \(text.debugDescription) to parse, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The parse error for `text`, or nil (recording an issue) when it parses.
private func parseError(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> JSONParseError? {
    parseError(bytes: Array(text.utf8), sourceLocation: sourceLocation)
}

private func parseError(bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> JSONParseError? {
    do {
        let value = try JSONValue.parse(bytes: bytes)
        Issue.record("expected \(bytes) to be refused, parsed \(value)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

@Suite struct JSONParsingTests {
    @Test func scalarsParse() throws {
        #expect(try JSONValue.parse("null") == .null)
        #expect(try JSONValue.parse("true") == .bool(true))
        #expect(try JSONValue.parse("false") == .bool(false))
        #expect(try JSONValue.parse("0") == .number(0))
        #expect(try JSONValue.parse("42") == .number(42))
        #expect(try JSONValue.parse("-7") == .number(-7))
        #expect(try JSONValue.parse("3.25") == .number(3.25))
        #expect(try JSONValue.parse(#""hi""#) == .string("hi"))
        #expect(try JSONValue.parse(#""""#) == .string(""))
    }

    @Test func containersParseAndKeepMemberOrder() throws {
        let value = try JSONValue.parse(#" { "b" : [1, 2, {"x": null}], "a" : {"c": true}, "e": [], "f": {} } "#)
        guard case .object(let members) = value else {
            Issue.record("expected an object, got \(value)")
            return
        }
        #expect(members.map(\.0) == ["b", "a", "e", "f"])
        #expect(value["b"] == .array([.number(1), .number(2), .object([("x", .null)])]))
        #expect(value["a"]?["c"] == .bool(true))
        #expect(value["e"] == .array([]))
        #expect(value["f"] == .object([]))
        #expect(value["missing"] == nil)
    }

    @Test func whitespaceOfAllFourKindsIsSkipped() throws {
        let value = try JSONValue.parse(" \t\r\n[ 1 ,\n\t2 ] \r\n ")
        #expect(value == .array([.number(1), .number(2)]))
    }

    @Test func accessorsReturnNilForOtherTypes() throws {
        let value = try JSONValue.parse(#"{"s": "text", "n": 2.5, "b": true}"#)
        #expect(value["s"]?.stringValue == "text")
        #expect(value["s"]?.numberValue == nil)
        #expect(value["n"]?.numberValue == 2.5)
        #expect(value["n"]?.stringValue == nil)
        #expect(value["b"]?.stringValue == nil)
        // Subscripting a non-object yields nil rather than trapping.
        #expect(JSONValue.array([.string("s")])["s"] == nil)
        #expect(JSONValue.string("s")["s"] == nil)
    }

    @Test func objectEqualityIgnoresMemberOrder() {
        let a = JSONValue.object([("a", .number(1)), ("b", .string("x"))])
        let b = JSONValue.object([("b", .string("x")), ("a", .number(1))])
        #expect(a == b)
        #expect(a != JSONValue.object([("a", .number(1))]))
        #expect(a != JSONValue.object([("a", .number(1)), ("b", .string("y"))]))
        #expect(JSONValue.array([.number(1), .number(2)]) != JSONValue.array([.number(2), .number(1)]))
        #expect(JSONValue.null != JSONValue.bool(false))
        #expect(JSONValue.number(0) != JSONValue.string("0"))
    }

    // MARK: Strings and escapes

    @Test func simpleEscapesDecode() throws {
        let value = try JSONValue.parse(#""q\" b\\ s\/ \b\f\n\r\t end""#)
        #expect(value == .string("q\" b\\ s/ \u{08}\u{0C}\n\r\t end"))
    }

    @Test func unicodeEscapesDecode() throws {
        #expect(try JSONValue.parse(#""\u0041\u00e9\u00E9\u20AC""#) == .string("Aéé€"))
        #expect(try JSONValue.parse(#""\u0000""#) == .string("\u{0}"))
        // A surrogate pair becomes one scalar outside the BMP.
        let emoji = try JSONValue.parse(#""\ud83d\ude00""#)
        #expect(emoji == .string("😀"))
        #expect(emoji.stringValue?.unicodeScalars.map(\.value) == [0x1F600])
        #expect(try JSONValue.parse(#""\uD834\uDD1E""#) == .string("\u{1D11E}"))
    }

    @Test func rawUTF8IsKept() throws {
        #expect(try JSONValue.parse("\"grüße 日本 🎉\"") == .string("grüße 日本 🎉"))
    }

    @Test(arguments: [
        #""\ud83d""#,            // lone high surrogate at the end
        #""\ud83d x""#,          // high surrogate followed by text
        #""\ud83d\u0041""#,      // high surrogate followed by a non-surrogate escape
        #""\ud83d\ud83d""#,      // two high surrogates
        #""\ude00""#,            // lone low surrogate
        #""\ude00\ud83d""#,      // pair in the wrong order
    ])
    func unpairedSurrogatesAreRefused(text: String) {
        let error = parseError(text)
        #expect(error?.message.contains("surrogate") == true, "\(String(describing: error))")
    }

    @Test(arguments: [
        #""\x41""#, #""\a""#, #""\U0041""#, #""\u12""#, #""\u12G4""#, #""\""#, #""abc"#, #""\"#,
    ])
    func badEscapesAndUnterminatedStringsAreRefused(text: String) {
        _ = parseError(text)
    }

    @Test func rawControlCharactersInStringsAreRefused() throws {
        for byte: UInt8 in [0x00, 0x01, 0x0A, 0x09, 0x1F] {
            let error = parseError(bytes: [0x22, 0x61, byte, 0x62, 0x22])
            #expect(error?.offset == 2, "byte \(byte)")
        }
        // DEL (0x7F) is not a control character in JSON's sense.
        #expect(try JSONValue.parse(bytes: [0x22, 0x7F, 0x22]) == .string("\u{7F}"))
    }

    @Test func invalidUTF8IsRefused() {
        _ = parseError(bytes: [0x22, 0xFF, 0x22])               // never valid
        _ = parseError(bytes: [0x22, 0xC3, 0x22])               // truncated 2-byte sequence
        _ = parseError(bytes: [0x22, 0xED, 0xA0, 0x80, 0x22])   // CESU-style encoded surrogate
        _ = parseError(bytes: [0x22, 0xC0, 0xAF, 0x22])         // overlong "/"
    }

    // MARK: Objects

    @Test func duplicateKeysAreRefusedAtEveryLevel() {
        let top = parseError(#"{"a": 1, "a": 2}"#)
        #expect(top?.message.contains("duplicate") == true)
        #expect(top?.offset == 9)  // the second "a"
        let nested = parseError(#"{"x": [{"k": true, "b": 0, "k": false}]}"#)
        #expect(nested?.message.contains("\"k\"") == true)
        // The same name written with an escape is still the same name.
        _ = parseError(#"{"a": 1, "\u0061": 2}"#)
    }

    @Test func sameKeyInSiblingObjectsIsFine() throws {
        let value = try JSONValue.parse(#"[{"a": 1}, {"a": 2}]"#)
        #expect(value == .array([.object([("a", .number(1))]), .object([("a", .number(2))])]))
    }

    @Test(arguments: [
        "{", "}", "[", "]", "{,}", "[,]", "[1,]", "[1 2]", "{\"a\"}", "{\"a\" 1}", "{\"a\":}", "{\"a\":1,}",
        "{a:1}", "{'a':1}", "{\"a\":1 \"b\":2}", "[1,,2]", "nul", "tru", "falsey", "True", "NaN", "Infinity",
        "undefined", "'text'",
    ])
    func malformedDocumentsAreRefused(text: String) {
        _ = parseError(text)
    }

    // MARK: Document boundaries

    @Test func emptyAndBlankTextsAreRefused() {
        #expect(parseError("")?.message == "unexpected end of text")
        _ = parseError("   \n\t ")
    }

    @Test func trailingTextIsRefused() {
        let error = parseError("{} x")
        #expect(error?.message == "unexpected text after the JSON value")
        #expect(error?.offset == 3)
        _ = parseError("1 2")
        _ = parseError("[]]")
        _ = parseError("null null")
        _ = parseError(#""a""b""#)
        _ = parseError("{}\u{0}")
    }

    @Test func trailingWhitespaceIsAllowed() throws {
        #expect(try JSONValue.parse("{}  \n\t\r\n") == .object([]))
    }

    // MARK: Depth

    @Test func nestingUpToTheLimitIsAccepted() throws {
        let depth = JSONValue.maximumDepth
        #expect(depth == 64)
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var value = try JSONValue.parse(arrays)
        for _ in 0..<(depth - 1) {
            guard case .array(let items) = value, items.count == 1 else {
                Issue.record("unexpected shape \(value)")
                return
            }
            value = items[0]
        }
        #expect(value == .array([]))

        var objects = ""
        for _ in 0..<(depth - 1) { objects += #"{"k":"# }
        objects += "{}" + String(repeating: "}", count: depth - 1)
        _ = parsed(objects)
    }

    @Test func nestingBeyondTheLimitIsRefused() {
        let depth = JSONValue.maximumDepth + 1
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(parseError(arrays)?.message.contains("nesting") == true)
        var objects = ""
        for _ in 0..<(depth - 1) { objects += #"{"k":"# }
        objects += "{}" + String(repeating: "}", count: depth - 1)
        #expect(parseError(objects)?.message.contains("nesting") == true)
        // A scalar at depth 64 is one level too deep as well.
        let deepScalar = String(repeating: "[", count: JSONValue.maximumDepth) + "1" + String(repeating: "]", count: JSONValue.maximumDepth)
        _ = parseError(deepScalar)
    }

    @Test func hostileDepthDoesNotExhaustTheStack() {
        let text = String(repeating: "[", count: 200_000)
        let error = parseError(text)
        #expect(error?.message.contains("nesting") == true)
        #expect(error?.offset == JSONValue.maximumDepth)
    }

    // MARK: Numbers

    @Test(arguments: [
        ("0", 0.0), ("-0", -0.0), ("1", 1), ("-1", -1), ("123456789", 123_456_789), ("0.5", 0.5), ("-0.5", -0.5),
        ("1e2", 100), ("1E2", 100), ("1e+2", 100), ("1e-2", 0.01), ("2.5E-3", 0.0025), ("-1.5e3", -1500),
        ("0e0", 0), ("10E0", 10), ("1.7976931348623157e308", 1.7976931348623157e308), ("5e-324", .leastNonzeroMagnitude),
        ("9007199254740993", 9_007_199_254_740_992), ("1e-400", 0),
    ] as [(String, Double)])
    func numbersParse(text: String, expected: Double) throws {
        let value = try JSONValue.parse(text)
        #expect(value.numberValue == expected)
    }

    @Test func negativeZeroKeepsItsSign() throws {
        let value = try JSONValue.parse("-0")
        let n = try #require(value.numberValue)
        #expect(n == 0)
        #expect(n.sign == .minus)
        let fractional = try #require(try JSONValue.parse("-0.0").numberValue)
        #expect(fractional.sign == .minus)
    }

    @Test(arguments: ["1e400", "-1e400", "1e309", "123456789e999", "-2e308"])
    func outOfRangeNumbersAreRefused(text: String) {
        let error = parseError(text)
        #expect(error?.message == "number out of range")
        #expect(error?.offset == 0)
    }

    @Test func outOfRangeNumberInsideAnArrayReportsItsOffset() {
        #expect(parseError("[1, 1e999]")?.offset == 4)
    }

    @Test(arguments: [
        "01", "-01", "00", "+1", ".5", "1.", "-", "-a", "1e", "1e+", "1E-", "--1", "1.e3", "0x10", "1_000", "- 1", "1.5.2",
        "-.5", "0.", "1ee2",
    ])
    func malformedNumbersAreRefused(text: String) {
        _ = parseError(text)
    }
}
