import LifeSync

/// A scripted scenario (`lifesync simulate --scenario FILE`): the nodes, the length, and timed
/// steps, in JSON. Times are simulated seconds.
///
/// ```json
/// {"nodes": ["phone", "mac", "watch"], "duration": 90000, "random_workload": false, "faults": false,
///  "events": [{"at": 1, "do": "add", "node": "watch"},
///             {"at": 10, "do": "isolate", "node": "watch"},
///             {"at": 86410, "do": "heal"}]}
/// ```
/// Steps: add, attach, update, delete, isolate, crash, restart (`node`); block (`from`, `to`); heal;
/// clock_jump (`node`, `by` seconds, may be negative); unlink (`a`, `b`).
package enum Scenario {
    package static func options(from json: JSONValue) throws(ValidationError) -> SimulationOptions {
        guard case .object = json else { throw ValidationError(field: "", reason: "a scenario is a JSON object") }
        var options = SimulationOptions()
        if let nodes = json["nodes"] {
            guard case .array(let items) = nodes, !items.isEmpty, items.count <= 40 else {
                throw ValidationError(field: "nodes", reason: "must be an array of 1–40 roles")
            }
            options.roles = []
            for (i, item) in items.enumerated() {
                guard let text = item.stringValue, let role = Role(rawValue: text) else {
                    throw ValidationError(field: "nodes[\(i)]", reason: "must be watch, phone or mac")
                }
                options.roles.append(role)
            }
        }
        if let duration = json["duration"] {
            guard let seconds = duration.numberValue, seconds > 0, seconds <= 30 * 86_400 else {
                throw ValidationError(field: "duration", reason: "must be 0 < seconds ≤ 2592000")
            }
            options.duration = Int64(seconds * 1000)
        }
        if case .bool(let random)? = json["random_workload"] { options.scriptOnly = !random }
        if case .bool(let faults)? = json["faults"] { options.faults = faults }
        let names = options.nodeNames
        guard case .array(let events)? = json["events"] ?? .array([]) else { throw ValidationError(field: "events", reason: "must be an array") }
        for (i, event) in events.enumerated() {
            let field = "events[\(i)]"
            guard let at = event["at"]?.numberValue, at >= 0, Int64(at * 1000) <= options.duration else {
                throw ValidationError(field: field + ".at", reason: "must be a time in seconds within the duration")
            }
            func node(_ key: String) throws(ValidationError) -> String {
                guard let name = event[key]?.stringValue, names.contains(name) else {
                    throw ValidationError(field: "\(field).\(key)", reason: "must name a node: \(names.joined(separator: ", "))")
                }
                return name
            }
            let action: ScriptedEvent.Action
            switch event["do"]?.stringValue {
            case "add": action = .add(node: try node("node"))
            case "attach": action = .attach(node: try node("node"))
            case "update": action = .update(node: try node("node"))
            case "delete": action = .delete(node: try node("node"))
            case "isolate": action = .isolate(node: try node("node"))
            case "crash": action = .crash(node: try node("node"))
            case "restart": action = .restart(node: try node("node"))
            case "block": action = .block(from: try node("from"), to: try node("to"))
            case "heal": action = .heal
            case "unlink": action = .unlink(a: try node("a"), b: try node("b"))
            case "clock_jump":
                guard let by = event["by"]?.numberValue, abs(by) <= 365 * 86_400 else {
                    throw ValidationError(field: field + ".by", reason: "must be seconds within a year")
                }
                action = .clockJump(node: try node("node"), by: Int64(by * 1000))
            default:
                throw ValidationError(field: field + ".do", reason: "must be add, attach, update, delete, isolate, crash, restart, block, heal, unlink or clock_jump")
            }
            options.script.append(ScriptedEvent(time: Int64(at * 1000), action: action))
        }
        return options
    }
}
