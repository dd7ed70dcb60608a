import LifeSync
import Testing

@Suite struct MergePatchTests {
    /// RFC 7396, Appendix A: (original, patch, result).
    @Test(arguments: [
        (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
        (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
        (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
        (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
        (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
        (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
        (#"["a","b"]"#, #"["c","d"]"#, #"["c","d"]"#),
        (#"{"a":"b"}"#, #"["c"]"#, #"["c"]"#),
        (#"{"a":"foo"}"#, #"null"#, #"null"#),
        (#"{"a":"foo"}"#, #""bar""#, #""bar""#),
        (#"{"e":null}"#, #"{"a":1}"#, #"{"e":null,"a":1}"#),
        (#"[1,2]"#, #"{"a":"b","c":null}"#, #"{"a":"b"}"#),
        (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
    ])
    func rfc7396AppendixA(original: String, patch: String, result: String) throws {
        let merged = MergePatch.apply(try JSONValue.parse(patch), to: try JSONValue.parse(original))
        #expect(merged == (try JSONValue.parse(result)))
        #expect(merged.canonicalText == (try JSONValue.parse(result)).canonicalText)
    }

    /// RFC 7396, section 3: the worked example.
    @Test func rfc7396Section3Example() throws {
        let target = try JSONValue.parse("""
            {"title": "Goodbye!", "author": {"givenName": "John", "familyName": "Doe"},
             "tags": ["example", "sample"], "content": "This will be unchanged"}
            """)
        let patch = try JSONValue.parse("""
            {"title": "Hello!", "phoneNumber": "+01-123-456-7890", "author": {"familyName": null}, "tags": ["example"]}
            """)
        let expected = try JSONValue.parse("""
            {"title": "Hello!", "author": {"givenName": "John"}, "tags": ["example"],
             "content": "This will be unchanged", "phoneNumber": "+01-123-456-7890"}
            """)
        #expect(MergePatch.apply(patch, to: target) == expected)
    }

    @Test func emptyPatchChangesNothingAndPatchingIsIdempotent() throws {
        let target = try JSONValue.parse(#"{"a": {"b": [1, 2]}, "c": null, "d": 1}"#)
        #expect(MergePatch.apply(.object([]), to: target) == target)
        let patch = try JSONValue.parse(#"{"a": {"b": null, "x": {"y": 1}}, "d": null, "e": "new"}"#)
        let once = MergePatch.apply(patch, to: target)
        #expect(once == (try JSONValue.parse(#"{"a": {"x": {"y": 1}}, "c": null, "e": "new"}"#)))
        #expect(MergePatch.apply(patch, to: once) == once)
    }

    @Test func removingAnAbsentMemberIsANoOp() throws {
        let target = try JSONValue.parse(#"{"a": 1}"#)
        #expect(MergePatch.apply(try JSONValue.parse(#"{"zzz": null}"#), to: target) == target)
    }

    @Test func patchingAnEntryChangesOnlyWhatThePatchNames() throws {
        let entry = try JSONValue.parse("""
            {"id": "watch_550e8400-e29b-41d4-a716-446655440000", "category": "mood",
             "data": {"text": "hi", "metric": {"name": "mood", "value": 3}, "tags": ["a"]}}
            """)
        let patched = MergePatch.apply(try JSONValue.parse(#"{"data": {"metric": {"value": 8}, "tags": null}, "category": "energy"}"#), to: entry)
        #expect(patched == (try JSONValue.parse("""
            {"id": "watch_550e8400-e29b-41d4-a716-446655440000", "category": "energy",
             "data": {"text": "hi", "metric": {"name": "mood", "value": 8}}}
            """)))
    }
}
