/// A Prometheus-style histogram: observations counted into fixed upper bounds (`le`), with
/// their sum and count. Counts are kept per bucket and made cumulative when exposed.
package struct Histogram: Equatable, Sendable {
    /// Upper bounds, strictly increasing; `+Inf` is implied.
    package let bounds: [Double]
    /// Observations per bucket (not cumulative); the last one is the `+Inf` bucket.
    package private(set) var counts: [UInt64]
    package private(set) var sum = 0.0
    package private(set) var count: UInt64 = 0

    package init(bounds: [Double]) {
        precondition(!bounds.isEmpty && zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 } && bounds.allSatisfy(\.isFinite),
                     "histogram bounds are finite and strictly increasing")
        self.bounds = bounds
        counts = [UInt64](repeating: 0, count: bounds.count + 1)
    }

    package mutating func observe(_ value: Double) {
        guard value.isFinite else { return }  // a broken clock reading must not poison the sum
        let index = bounds.firstIndex { value <= $0 } ?? bounds.count
        counts[index] &+= 1
        count &+= 1
        sum += value
    }

    /// `(le, cumulative count)` per bound, ending with `+Inf` (whose count is `count`).
    package var cumulative: [(le: Double, count: UInt64)] {
        var running: UInt64 = 0
        var result: [(le: Double, count: UInt64)] = []
        for (index, bucket) in counts.enumerated() {
            running &+= bucket
            result.append((index < bounds.count ? bounds[index] : .infinity, running))
        }
        assert(running == count, "the buckets account for every observation")
        return result
    }
}
