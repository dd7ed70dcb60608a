import LifeSync

/// `LIFESYNC_PLANTED_BUGS=pong-wrong-nonce,…`: TEST-ONLY, debug builds only. Starts `serve` with deliberate
/// protocol defects, so the tests of `lifesync conformance` can prove the runner catches each one
/// by its case (a checker that cannot fail is a defect). Read by `serve` alone; a node started
/// with it says so loudly on stderr.
enum ServePlantedBugs {
    static let variable = "LIFESYNC_PLANTED_BUGS"

    /// Defects visible on the wire, which only the conformance runner looks for.
    static let wire: [(String, PlantedBugs)] = [
        ("pong-wrong-nonce", .pongWrongNonce),
        ("reversed-tie-break", .reversedOriginTieBreak),
        ("unknown-type-as-malformed", .unknownTypeAsMalformed),
        ("wrong-chunk-digest", .wrongChunkDigest),
        ("resume-from-zero", .resumeFromZero),
    ]
    static var table: [(String, PlantedBugs)] { PlantedBugNames.table + wire }

    /// The bugs the environment asks for; an unknown name is refused, not ignored. A release
    /// build plants none: it refuses to start with the variable set rather than run defective or
    /// pretend it is not set (the tests run the debug build).
    static func parse(_ environment: [String: String]) throws(CLIError) -> PlantedBugs {
        guard let text = environment[variable], !text.isEmpty else { return [] }
        #if !DEBUG
        throw CLIError.refused("\(variable) is set, but planted bugs exist only in test (debug) builds; unset it to run this node")
        #else
        var bugs: PlantedBugs = []
        for part in text.split(separator: ",") {
            let name = String(part.filter { $0 != " " })
            guard !name.isEmpty else { continue }
            guard let bug = table.first(where: { $0.0 == name })?.1 else {
                throw CLIError.refused("\(variable): unknown bug '\(name)' (\(table.map(\.0).joined(separator: ", ")))")
            }
            bugs.insert(bug)
        }
        return bugs
        #endif
    }
}
