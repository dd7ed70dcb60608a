import LifeSync

/// How the CLI shows a device to a person: its name ("Kitchen iPad"), else its role and the
/// first eight digits of its ID (`phone_ce2c2334`); with `--ids`, the full node ID after the name.
struct DeviceLabels {
    var names: [String: String]
    var showIDs: Bool

    static let idsFlag = OptionSpec(name: "--ids", kind: .flag, help: "show full node IDs beside device names")

    init(_ replica: Replica, _ arguments: ParsedArguments) throws {
        names = try replica.deviceNames().compactMapValues { $0.local ?? $0.announced }
        showIDs = arguments.flag("--ids")
    }

    func label(_ nodeID: String) -> String {
        guard !showIDs else { return names[nodeID].map { "\($0) \(nodeID)" } ?? nodeID }
        return names[nodeID] ?? Identifier.short(nodeID)
    }
}
