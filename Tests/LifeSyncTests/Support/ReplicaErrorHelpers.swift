import Foundation
@testable import LifeSync
import Testing
import TestSupport

/// Runs `body`, expecting it to throw a `ReplicaError` that `matches` accepts.
func expectReplicaError(_ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                        _ body: () throws -> Void, matches: (ReplicaError) -> Bool) {
    do {
        try body()
        Issue.record("\(what): expected a ReplicaError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as ReplicaError {
        if !matches(error) { Issue.record("\(what): unexpected \(error)", sourceLocation: sourceLocation) }
    } catch {
        Issue.record("\(what): expected a ReplicaError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
    }
}

/// The field of an `.invalid` error, or nil.
func invalidField(_ error: ReplicaError) -> String? {
    if case .invalid(let validation) = error { return validation.field }
    return nil
}
