/// The `--search` rule: case-insensitive, every word of the query must occur in the text, and a
/// word also matches through its stem, so "grocery" finds "Buy groceries" (the Cafe document's
/// partial-match requirement) and "walking" finds "walked".
///
/// ```swift
/// TextSearch(query: "grocery").matches("Buy groceries")   // true
/// ```
package struct TextSearch: Sendable {
    /// Each query word with the forms that count as a match, longest first.
    let words: [[String]]

    package init(query: String) {
        words = query.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map { word in
            let word = String(word)
            let stem = TextSearch.stem(word)
            return stem == word ? [word] : [word, stem]
        }
    }

    package var isEmpty: Bool { words.isEmpty }

    package func matches(_ text: String) -> Bool {
        let folded = text.lowercased()
        return words.allSatisfy { forms in forms.contains { folded.contains($0) } }
    }

    /// Strips one common English inflection, keeping at least three letters.
    static func stem(_ word: String) -> String {
        for suffix in ["ies", "ing", "es", "ed", "y", "s"] where word.hasSuffix(suffix) && word.count - suffix.count >= 3 {
            return String(word.dropLast(suffix.count))
        }
        return word
    }
}
