import Foundation

/// Reads a Prometheus text exposition (format 0.0.4) line by line and names every rule it
/// breaks: what `GET /metrics` tests hold the node's output to. Independent of the writer
/// (`PrometheusText`), so a mistake there cannot hide itself here.
package enum PrometheusCheck {
    package struct Sample: Equatable, Sendable {
        package var name: String
        package var labels: [String: String]
        package var value: Double
    }

    /// The problems found (empty: the text follows the format) and the samples read.
    package static func check(_ text: String) -> (problems: [String], samples: [Sample]) {
        var problems: [String] = []
        var samples: [Sample] = []
        var types: [String: String] = [:]
        var helped: Set<String> = []
        var seenSamples: Set<String> = []
        var closedFamilies: Set<String> = []
        var currentFamily: String?
        if !text.isEmpty && !text.hasSuffix("\n") { problems.append("the text does not end with a line feed") }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() {
            let where_ = "line \(index + 1) '\(line.prefix(80))'"
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
                guard parts.count >= 3, parts[0] == "#", ["HELP", "TYPE"].contains(parts[1]) else { continue }  // a comment
                let name = parts[2]
                if !isMetricName(name) { problems.append("\(where_): bad metric name") }
                if closedFamilies.contains(name) { problems.append("\(where_): family \(name) appears in two places") }
                if currentFamily != name, let current = currentFamily { closedFamilies.insert(current) }
                currentFamily = name
                if parts[1] == "HELP" {
                    if !helped.insert(name).inserted { problems.append("\(where_): second HELP for \(name)") }
                } else {
                    let kind = parts.count == 4 ? parts[3] : ""
                    guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(kind) else {
                        problems.append("\(where_): unknown type '\(kind)'"); continue
                    }
                    if types[name] != nil { problems.append("\(where_): second TYPE for \(name)") }
                    if seenSamples.contains(where: { Self.family(of: String($0.prefix { $0 != "{" }), types: [name: kind]) == name }) {
                        problems.append("\(where_): TYPE after samples of \(name)")
                    }
                    if kind == "counter" && !name.hasSuffix("_total") { problems.append("\(where_): counter \(name) does not end in _total") }
                    types[name] = kind
                }
                continue
            }
            guard let sample = Self.parseSample(String(line)) else { problems.append("\(where_): not a sample line"); continue }
            let family = Self.family(of: sample.name, types: types)
            if types[family] == nil { problems.append("\(where_): sample of \(family) before its TYPE") }
            if currentFamily != family { problems.append("\(where_): sample of \(family) outside its family's block") }
            let key = sample.name + "{" + sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "}"
            if !seenSamples.insert(key).inserted { problems.append("\(where_): duplicate sample \(key)") }
            if types[family] == "counter" && !(sample.value >= 0) { problems.append("\(where_): negative counter") }
            samples.append(sample)
        }
        for (name, kind) in types where kind == "histogram" { problems += histogramProblems(name, samples) }
        return (problems, samples)
    }

    /// `name_bucket`, `_sum`, `_count` belong to histogram `name`; other samples to their own name.
    static func family(of sample: String, types: [String: String]) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where sample.hasSuffix(suffix) {
            let base = String(sample.dropLast(suffix.count))
            if types[base] == "histogram" || types[base] == "summary" { return base }
        }
        return sample
    }

    static func histogramProblems(_ name: String, _ samples: [Sample]) -> [String] {
        var problems: [String] = []
        let buckets = samples.filter { $0.name == name + "_bucket" }
        guard !buckets.isEmpty else { return ["histogram \(name) has no buckets"] }
        var lastBound = -Double.infinity, lastCount = -1.0
        for bucket in buckets {
            guard let text = bucket.labels["le"], let bound = parseNumber(text) else { problems.append("\(name): a bucket without a numeric le"); continue }
            if bound <= lastBound { problems.append("\(name): le \(text) does not increase") }
            if bucket.value < lastCount { problems.append("\(name): bucket counts are not cumulative at le \(text)") }
            (lastBound, lastCount) = (bound, bucket.value)
        }
        if buckets.last?.labels["le"] != "+Inf" { problems.append("\(name): the last bucket is not le=\"+Inf\"") }
        let count = samples.first { $0.name == name + "_count" }
        if count == nil { problems.append("\(name): no _count") }
        if samples.first(where: { $0.name == name + "_sum" }) == nil { problems.append("\(name): no _sum") }
        if let count, count.value != lastCount { problems.append("\(name): _count \(count.value) is not the +Inf bucket \(lastCount)") }
        return problems
    }

    /// `name{a="x",b="y"} value [timestamp]`, label values with `\\`, `\"`, `\n` escapes.
    static func parseSample(_ line: String) -> Sample? {
        let chars = Array(line)
        var i = 0
        while i < chars.count && chars[i] != "{" && chars[i] != " " { i += 1 }
        let name = String(chars[0..<i])
        guard isMetricName(name) else { return nil }
        var labels: [String: String] = [:]
        if i < chars.count && chars[i] == "{" {
            i += 1
            while i < chars.count && chars[i] != "}" {
                var j = i
                while j < chars.count && chars[j] != "=" { j += 1 }
                let label = String(chars[i..<j])
                guard j + 1 < chars.count, chars[j + 1] == "\"", isLabelName(label) else { return nil }
                var value = ""
                var k = j + 2
                var closed = false
                while k < chars.count {
                    if chars[k] == "\\" {
                        guard k + 1 < chars.count else { return nil }
                        switch chars[k + 1] {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: return nil
                        }
                        k += 2
                    } else if chars[k] == "\"" {
                        closed = true
                        k += 1
                        break
                    } else {
                        value.append(chars[k]); k += 1
                    }
                }
                guard closed, labels.updateValue(value, forKey: label) == nil else { return nil }
                i = k
                if i < chars.count && chars[i] == "," { i += 1 }
            }
            guard i < chars.count else { return nil }
            i += 1
        }
        guard i < chars.count, chars[i] == " " else { return nil }
        let rest = String(chars[(i + 1)...]).split(separator: " ", omittingEmptySubsequences: false)
        guard (1...2).contains(rest.count), let value = parseNumber(String(rest[0])) else { return nil }
        if rest.count == 2 && Int64(rest[1]) == nil { return nil }
        return Sample(name: name, labels: labels, value: value)
    }

    static func parseNumber(_ text: String) -> Double? {
        switch text {
        case "+Inf": return .infinity
        case "-Inf": return -.infinity
        case "NaN": return .nan
        default: return text.isEmpty || text.contains(where: { $0.isLetter && $0 != "e" && $0 != "E" }) ? nil : Double(text)
        }
    }

    static func isMetricName(_ name: String) -> Bool {
        name.range(of: "^[a-zA-Z_:][a-zA-Z0-9_:]*$", options: .regularExpression) != nil
    }

    static func isLabelName(_ name: String) -> Bool {
        name.range(of: "^[a-zA-Z_][a-zA-Z0-9_]*$", options: .regularExpression) != nil && !name.hasPrefix("__")
    }
}
