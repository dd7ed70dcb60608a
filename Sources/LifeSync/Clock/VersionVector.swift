/// A map from origin (a replica's incarnation) to a sequence number, kept sorted by origin so
/// that iteration, encoding and hashing are the same on every machine.
///
/// Used twice: as a record's version vector (which writes this version has seen) and as a
/// replica's vector (the highest sequence applied from each origin).
///
/// ```swift
/// var v = VersionVector()
/// v["a"] = 3
/// v.dominates(VersionVector([("a", 2)]))   // true
/// ```
package struct VersionVector: Hashable, Sendable, CustomStringConvertible {
    package private(set) var entries: [(origin: String, sequence: UInt64)]

    package init() { entries = [] }

    package init(_ pairs: [(String, UInt64)]) {
        // Pairs already in order, none 0 (rows read in origin order): taken as they are.
        if pairs.indices.allSatisfy({ pairs[$0].1 > 0 && ($0 == 0 || pairs[$0 - 1].0 < pairs[$0].0) }) {
            entries = pairs.map { (origin: $0.0, sequence: $0.1) }
            return
        }
        entries = []
        for (origin, sequence) in pairs { self[origin] = max(self[origin], sequence) }
    }

    package static func == (a: VersionVector, b: VersionVector) -> Bool {
        a.entries.count == b.entries.count
            && zip(a.entries, b.entries).allSatisfy { $0.origin == $1.origin && $0.sequence == $1.sequence }
    }

    package func hash(into hasher: inout Hasher) {
        for entry in entries {
            hasher.combine(entry.origin)
            hasher.combine(entry.sequence)
        }
    }

    package var isEmpty: Bool { entries.isEmpty }

    /// The sequence for `origin`, 0 when absent. Setting 0 removes the origin.
    package subscript(origin: String) -> UInt64 {
        get {
            guard let i = position(of: origin) else { return 0 }
            return entries[i].sequence
        }
        set {
            let index = insertionIndex(of: origin)
            if index < entries.count, entries[index].origin == origin {
                if newValue == 0 { entries.remove(at: index) } else { entries[index].sequence = newValue }
            } else if newValue != 0 {
                entries.insert((origin, newValue), at: index)
            }
        }
    }

    /// Element-wise maximum.
    package func joined(with other: VersionVector) -> VersionVector {
        if other.entries.isEmpty || other == self { return self }
        if entries.isEmpty { return other }
        // Both are in origin order: one pass over the two.
        var result = VersionVector()
        result.entries.reserveCapacity(max(entries.count, other.entries.count))
        var i = 0, j = 0
        while i < entries.count, j < other.entries.count {
            let a = entries[i], b = other.entries[j]
            if a.origin == b.origin {
                result.entries.append((a.origin, max(a.sequence, b.sequence)))
                i += 1
                j += 1
            } else if a.origin < b.origin {
                result.entries.append(a)
                i += 1
            } else {
                result.entries.append(b)
                j += 1
            }
        }
        result.entries += entries[i...]
        result.entries += other.entries[j...]
        return result
    }

    /// True when every origin in `other` is at or below this vector.
    package func dominates(_ other: VersionVector) -> Bool {
        other.entries.allSatisfy { self[$0.origin] >= $0.sequence }
    }

    /// Neither vector has seen everything the other has.
    package func isConcurrent(with other: VersionVector) -> Bool {
        !dominates(other) && !other.dominates(self)
    }

    /// `origin=seq,origin=seq`, sorted: the form stored in the replica.
    package var description: String {
        var out: [UInt8] = []
        out.reserveCapacity(entries.count * 48)
        write(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the stored form to `out`, byte by byte: every row a replica stores carries one.
    func write(to out: inout [UInt8]) {
        for (i, entry) in entries.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: entry.origin.utf8)
            out.append(UInt8(ascii: "="))
            let start = out.count
            var sequence = entry.sequence
            repeat {
                out.append(UInt8(ascii: "0") + UInt8(sequence % 10))
                sequence /= 10
            } while sequence > 0
            out[start...].reverse()
        }
    }

    /// Parses the stored form. Returns nil on malformed text. Runs for every row a sync reads,
    /// so it scans bytes rather than splitting strings.
    package init?(storedText text: String) {
        var copy = text
        guard let parsed = copy.withUTF8({ VersionVector(storedText: $0) }) else { return nil }
        self = parsed
    }

    /// Parses the stored form from its bytes (a column read in place). An origin spelled like
    /// `known` shares its string instead of allocating one.
    init?(storedText bytes: UnsafeBufferPointer<UInt8>, reusing known: String? = nil) {
        self.init()
        var pairs: [(origin: String, sequence: UInt64)] = []
        var start = 0
        while start < bytes.count {
            var equals = -1, end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: ",") {
                if bytes[end] == UInt8(ascii: "=") { equals = end }
                end += 1
            }
            guard equals > start, equals + 1 < end, end - equals - 1 <= 20 else { return nil }
            var sequence: UInt64 = 0
            for i in (equals + 1)..<end {
                let digit = bytes[i] &- 0x30
                guard digit < 10 else { return nil }
                let (times10, o1) = sequence.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt64(digit))
                guard !o1, !o2 else { return nil }
                sequence = sum
            }
            guard sequence > 0 else { return nil }
            let spelled = UnsafeBufferPointer(rebasing: bytes[start..<equals])
            let origin = known.flatMap { $0.utf8.elementsEqual(spelled) ? $0 : nil } ?? String(decoding: spelled, as: UTF8.self)
            if let last = pairs.last, !(last.origin < origin) { return nil }
            pairs.append((origin, sequence))
            start = end + 1
            if start == bytes.count, end < bytes.count { return nil }  // a trailing comma
        }
        entries = pairs
    }

    /// A vector from pairs already in its order (a stored form read back); nil when the origins
    /// do not strictly ascend or a sequence is 0.
    init?(ascending pairs: [(origin: String, sequence: UInt64)]) {
        for i in pairs.indices {
            guard pairs[i].sequence > 0, i == 0 || pairs[i - 1].origin < pairs[i].origin else { return nil }
        }
        entries = pairs
    }

    private func position(of origin: String) -> Int? {
        let i = insertionIndex(of: origin)
        return i < entries.count && entries[i].origin == origin ? i : nil
    }

    private func insertionIndex(of origin: String) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].origin < origin { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
