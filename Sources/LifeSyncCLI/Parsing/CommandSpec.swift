/// One option a command accepts.
struct OptionSpec: Sendable {
    enum Kind: Sendable {
        /// `--json`: present or not.
        case flag
        /// `--db PATH`: takes the next argument (or `--db=PATH`).
        case value
        /// `--tag T`, given any number of times.
        case repeated
    }

    var name: String
    var kind: Kind
    var valueName: String = ""
    var help: String
}

/// What a command takes and how it explains itself in `--help`.
struct CommandSpec: Sendable {
    var name: String
    var summary: String
    /// Positional arguments, e.g. `["ID"]`; `optionalPositionals` of them may be left out.
    var positionals: [String] = []
    var optionalPositionals = 0
    var options: [OptionSpec] = []
    /// Extra paragraphs for `--help`.
    var details: String = ""

    static let dbOption = OptionSpec(name: "--db", kind: .value, valueName: "PATH",
                                     help: "the replica file (default: $LIFESYNC_DB, else ./lifesync.sqlite)")
    static let jsonFlag = OptionSpec(name: "--json", kind: .flag, help: "print JSON instead of text")

    var usage: String {
        var parts = ["lifesync", name]
        for option in options {
            switch option.kind {
            case .flag: parts.append("[\(option.name)]")
            case .value: parts.append("[\(option.name) \(option.valueName)]")
            case .repeated: parts.append("[\(option.name) \(option.valueName)]...")
            }
        }
        for (i, positional) in positionals.enumerated() {
            parts.append(i >= positionals.count - optionalPositionals ? "[\(positional)]" : positional)
        }
        return parts.joined(separator: " ")
    }

    var help: String {
        var lines = ["\(summary)", "", "Usage: \(usage)", "", "Options:"]
        for option in options {
            let left = option.kind == .flag ? option.name : "\(option.name) \(option.valueName)"
            lines.append("  " + left.padded(to: max(left.count + 2, 24)) + option.help)
        }
        lines.append("  --help                  show this help")
        if !details.isEmpty { lines += ["", details] }
        return lines.joined(separator: "\n")
    }
}
