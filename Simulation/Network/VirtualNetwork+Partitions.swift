/// Partitions: directions whose traffic is held, and pairs with no link at all. Dials across
/// either fail; bytes already on a connection across a partition wait until it heals (or the
/// connection is reset, as a long partition eventually does).
extension VirtualNetwork {
    struct Direction: Hashable {
        let from: String
        let to: String
    }

    /// An unordered pair of hosts.
    struct Pair: Hashable {
        let first: String
        let second: String

        init(_ a: String, _ b: String) {
            (first, second) = a < b ? (a, b) : (b, a)
        }
    }

    /// Traffic from `from` to `to` is held (one way).
    package func block(from: String, to: String) {
        blocked.insert(Direction(from: from, to: to))
        note("block \(from)->\(to)")
    }

    /// `name` is cut off from each of `others`, both ways. Open connections stay (reset them to
    /// model a partition that outlasts TCP's patience).
    package func isolate(_ name: String, from others: [String]) {
        for other in others where other != name {
            blocked.insert(Direction(from: name, to: other))
            blocked.insert(Direction(from: other, to: name))
        }
        note("isolate \(name)")
    }

    /// `half` and the rest of `names` are cut off from each other, both ways.
    package func partition(_ half: Set<String>, among names: [String]) {
        for a in names {
            for b in names where half.contains(a) != half.contains(b) { blocked.insert(Direction(from: a, to: b)) }
        }
        note("partition halves \(half.sorted())")
    }

    /// Every partition ends; with `name`, only those involving it.
    package func heal(_ name: String? = nil) {
        if let name {
            blocked = blocked.filter { $0.from != name && $0.to != name }
        } else {
            blocked.removeAll()
        }
        note("heal")
    }

    /// The link between `a` and `b` goes for good: their connections reset, no dial either way.
    package func unlink(_ a: String, _ b: String) {
        unlinked.insert(Pair(a, b))
        resetConnections { Pair($0, $1) == Pair(a, b) }
    }

    package func isLinked(_ a: String, _ b: String) -> Bool { !unlinked.contains(Pair(a, b)) }
}
