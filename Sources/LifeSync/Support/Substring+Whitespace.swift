extension Substring {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    package var withoutOptionalWhitespace: String {
        var s = self[...]
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return String(s)
    }
}
