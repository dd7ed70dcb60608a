/// Lines for an 80-column terminal: what a person reads fits it (`--json` has everything whole).
extension LifeSyncCommandLine {
    static let columns = 80

    /// `line` cut to `width` columns, with … where it was cut.
    static func fitted(_ line: String, width: Int = columns) -> String {
        line.count <= width ? line : line.prefix(width - 1) + "…"
    }

    /// `items` joined by spaces in lines of at most `columns` (an item longer than that alone on
    /// its line), the first line starting with `first`, the others with `then`.
    static func wrapped(_ items: [String], first: String, then: String) -> [String] {
        var lines: [String] = []
        for item in items {
            if let last = lines.last, last.count + 1 + item.count <= columns {
                lines[lines.count - 1] = last + " " + item
            } else {
                lines.append((lines.isEmpty ? first : then) + item)
            }
        }
        return lines
    }
}

extension String {
    /// Spaces added on the right up to `width` characters (nothing cut): a column of a table.
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
