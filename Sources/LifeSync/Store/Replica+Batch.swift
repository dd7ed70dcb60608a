/// What became of one entry of a batch (the HTTP API's POST of an array).
public enum BatchOutcome: Equatable, Sendable {
    case created
    /// The replica holds an entry with this ID and the same content: nothing to do, so a client
    /// retrying a batch it is unsure went through does no harm.
    case alreadyPresent
    case refused(ValidationError)
    /// Valid, but not written because another item of an all-or-nothing batch was refused.
    case notWritten
}

extension Replica {
    /// Writes a batch of entries (each already validated, or the reason it is not) in one
    /// transaction. Each item is written unless refused; with `atomic`, one refusal writes
    /// nothing and the valid items come back `.notWritten`.
    public func addBatch(_ items: [Result<LogEntry, ValidationError>], atomic: Bool) throws -> [BatchOutcome] {
        struct Refused: Error { var outcomes: [BatchOutcome] }
        do {
            return try writeTransaction {
                var outcomes: [BatchOutcome] = []
                outcomes.reserveCapacity(items.count)
                for item in items {
                    outcomes.append(try store(item))
                }
                if atomic && outcomes.contains(where: { if case .refused = $0 { return true } else { return false } }) {
                    throw Refused(outcomes: outcomes)  // rolls the transaction back
                }
                return outcomes
            }
        } catch let refused as Refused {
            return refused.outcomes.map { if case .refused = $0 { return $0 } else { return .notWritten } }
        }
    }

    private func store(_ item: Result<LogEntry, ValidationError>) throws -> BatchOutcome {
        let entry: LogEntry
        switch item {
        case .failure(let error): return .refused(error)
        case .success(let valid): entry = valid
        }
        guard let existing = try storedVersion(id: entry.id) else {
            try writeLocal(id: entry.id, entry: entry, previous: nil)
            return .created
        }
        if existing.place == .tombstone {
            return .refused(ValidationError(field: "id", reason: "entry \(entry.id) was deleted; deleted IDs are not reused"))
        }
        guard try self.entry(id: entry.id).isSameContent(as: entry) else {
            return .refused(ValidationError(field: "id", reason: "entry \(entry.id) already exists with other content; use PUT or PATCH to change it"))
        }
        return .alreadyPresent
    }
}
