/// Writes the Prometheus text exposition format, version 0.0.4: per metric family a `# HELP`
/// and a `# TYPE` line, then its samples `name{label="value"} number`, each line ending in `\n`.
/// Names are checked against the format's grammar as they are written, so a typo in a metric
/// name fails at once rather than in somebody's scraper.
package struct PrometheusText: Sendable {
    package enum Kind: String, Sendable { case counter, gauge, histogram }

    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    package private(set) var text = ""
    private var families: Set<String> = []

    package init() {}

    /// Starts a family; its samples follow. Counters are named `…_total`, by convention.
    package mutating func family(_ name: String, _ kind: Kind, help: String) {
        precondition(Self.isMetricName(name), "a metric name matches [a-zA-Z_:][a-zA-Z0-9_:]*")
        precondition(kind != .counter || name.hasSuffix("_total"), "a counter's name ends in _total")
        precondition(families.insert(name).inserted, "each family is written once")
        text += "# HELP \(name) \(Self.escaped(help, quote: false))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    package mutating func sample(_ name: String, _ value: Double, labels: [(String, String)] = []) {
        precondition(Self.isMetricName(name) && labels.allSatisfy { Self.isLabelName($0.0) }, "sample and label names follow the grammar")
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escaped($0.1, quote: true))\"" }.joined(separator: ",") + "}"
        }
        text += " " + Self.number(value) + "\n"
    }

    package mutating func sample(_ name: String, _ value: UInt64, labels: [(String, String)] = []) {
        sample(name, Double(value), labels: labels)
    }

    /// A whole histogram family: cumulative `_bucket{le=…}` lines ending with `+Inf`, `_sum`, `_count`.
    package mutating func histogram(_ name: String, help: String, _ histogram: Histogram) {
        family(name, .histogram, help: help)
        for (le, count) in histogram.cumulative { sample(name + "_bucket", count, labels: [("le", Self.number(le))]) }
        sample(name + "_sum", histogram.sum)
        sample(name + "_count", histogram.count)
    }

    /// Go's float formatting as Prometheus reads it: `+Inf`, `-Inf`, `NaN`, integers without a fraction.
    package static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// HELP text escapes `\` and line feeds; label values also `"`.
    static func escaped(_ text: String, quote: Bool) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\"" where quote: result += "\\\""
            default: result.append(character)
            }
        }
        return result
    }

    package static func isMetricName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first.isLetter || first == UInt8(ascii: "_") || first == UInt8(ascii: ":") else { return false }
        return name.utf8.allSatisfy { $0.isLetter || $0.isDigit || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ":") }
    }

    package static func isLabelName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first.isLetter || first == UInt8(ascii: "_"), !name.hasPrefix("__") else { return false }
        return name.utf8.allSatisfy { $0.isLetter || $0.isDigit || $0 == UInt8(ascii: "_") }
    }
}

private extension UInt8 {
    var isLetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
    var isDigit: Bool { (0x30...0x39).contains(self) }
}
