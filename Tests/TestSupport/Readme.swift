import Foundation

/// The repository's README.md, read by the tests that run its examples as written.
package enum Readme {
    /// The repository root (this file is Tests/TestSupport/Readme.swift).
    package static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    package struct MissingSection: Error, CustomStringConvertible {
        package var title: String
        package var description: String { "README.md has no code block under \"\(title)\"" }
    }

    /// The text of README.md.
    package static func text() throws -> String {
        try String(contentsOfFile: root + "/README.md", encoding: .utf8)
    }

    /// The fenced code blocks (their text without the fences) between the heading `title` and the
    /// next heading of the same or a higher level, in order.
    package static func codeBlocks(under title: String) throws -> [String] {
        let lines = try text().components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix("#") && $0.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces) == title })
        else { throw MissingSection(title: title) }
        let level = lines[start].prefix { $0 == "#" }.count
        var blocks: [String] = [], current: [String]?
        for line in lines[(start + 1)...] {
            if current == nil, line.hasPrefix("#"), line.prefix(while: { $0 == "#" }).count <= level { break }
            if line.hasPrefix("```") {
                if let block = current { blocks.append(block.joined(separator: "\n") + "\n"); current = nil } else { current = [] }
            } else if current != nil {
                current!.append(line)
            }
        }
        guard !blocks.isEmpty else { throw MissingSection(title: title) }
        return blocks
    }
}
