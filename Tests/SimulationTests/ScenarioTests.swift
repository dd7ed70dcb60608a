import LifeSync
import LifeSyncSimulation
import Testing

/// Scripted scenarios for the situations the users asked about, each checked against every
/// invariant (the checker proves each watch write reached the full replicas, or was superseded
/// or kept).
@Suite struct ScenarioTests {
    static func options(_ roles: [Role], seconds: Int64, _ script: [ScriptedEvent]) -> SimulationOptions {
        var options = SimulationOptions()
        options.roles = roles
        options.duration = seconds * 1000
        options.scriptOnly = true
        options.faults = false
        options.script = script
        return options
    }

    static func at(_ seconds: Double, _ action: ScriptedEvent.Action) -> ScriptedEvent {
        ScriptedEvent(time: Int64(seconds * 1000), action: action)
    }

    static func expectOK(_ result: SimulationResult, _ sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.ok, "\(result.violations.prefix(3))\n\(result.traceExcerpt.suffix(15).joined(separator: "\n"))", sourceLocation: sourceLocation)
    }

    @Test func aWatchOfflineForADayCatchesUp() {
        var script = [Self.at(1, .add(node: "watch")), Self.at(2, .isolate(node: "watch"))]
        for hour in 0..<24 {
            script.append(Self.at(Double(hour * 3600 + 10), .add(node: "watch")))
            script.append(Self.at(Double(hour * 3600 + 20), .add(node: "phone")))
            if hour % 3 == 0 { script.append(Self.at(Double(hour * 3600 + 30), .update(node: "watch"))) }
        }
        script.append(Self.at(86_400 + 60, .heal))
        let result = Simulator(seed: 11, options: Self.options([.phone, .mac, .watch], seconds: 86_500, script)).run()
        Self.expectOK(result)
        #expect(result.writes == 1 + 24 * 2 + 8)
        #expect(result.simulatedMilliseconds >= 86_400_000)
    }

    @Test func thePhoneCrashingMidTransferLosesNothing() {
        var script: [ScriptedEvent] = [Self.at(0.5, .isolate(node: "watch"))]
        for i in 0..<3000 { script.append(Self.at(1 + Double(i) / 1000, .add(node: "watch"))) }
        for i in 0..<20 { script.append(Self.at(4 + Double(i) / 10, .attach(node: "watch"))) }
        script.append(Self.at(10, .heal))
        script.append(Self.at(10.3, .crash(node: "phone")))  // while the batches stream in
        script.append(Self.at(20, .restart(node: "phone")))
        script.append(Self.at(20.5, .crash(node: "phone")))
        script.append(Self.at(30, .restart(node: "phone")))
        let result = Simulator(seed: 12, options: Self.options([.phone, .mac, .watch], seconds: 60, script)).run()
        Self.expectOK(result)
        #expect(result.faults["crash"] == 2)
    }

    @Test func anAsymmetricPartitionHeals() {
        var script: [ScriptedEvent] = [Self.at(1, .add(node: "watch")), Self.at(2, .add(node: "mac"))]
        script.append(Self.at(5, .block(from: "watch", to: "phone")))
        script.append(Self.at(5, .block(from: "phone", to: "mac")))
        for i in 0..<20 {
            script.append(Self.at(6 + Double(i), .add(node: ["watch", "phone", "mac"][i % 3])))
            script.append(Self.at(6.5 + Double(i), .update(node: ["mac", "phone"][i % 2])))
        }
        script.append(Self.at(90, .heal))
        let result = Simulator(seed: 13, options: Self.options([.phone, .mac, .watch], seconds: 120, script)).run()
        Self.expectOK(result)
        #expect(result.faults["one_way"] == 2)
    }

    @Test func aWatchWhoseClockIsADayAheadStillRespectsCausality() {
        var script: [ScriptedEvent] = [Self.at(0, .clockJump(node: "watch", by: 86_400_000))]
        for i in 0..<15 {
            script.append(Self.at(1 + Double(i) * 4, .add(node: "watch")))
            // The phone edits what the watch wrote, a day "earlier" by its own clock: causally
            // later all the same, so the phone's edit must win.
            script.append(Self.at(3 + Double(i) * 4, .update(node: "phone")))
            script.append(Self.at(3.5 + Double(i) * 4, .delete(node: "mac")))
        }
        let result = Simulator(seed: 14, options: Self.options([.phone, .mac, .watch], seconds: 90, script)).run()
        Self.expectOK(result)
    }

    @Test func aRelayCarriesWatchEntriesToAMacItNeverMeets() throws {
        var script: [ScriptedEvent] = [Self.at(0, .unlink(a: "watch", b: "mac"))]
        for i in 0..<30 { script.append(Self.at(1 + Double(i), .add(node: "watch"))) }
        // Described in the JSON form users write, to exercise the parser as well.
        var json = #"{"nodes": ["phone", "mac", "watch"], "duration": 60, "random_workload": false, "faults": false, "events": ["#
        json += script.map { event -> String in
            switch event.action {
            case .unlink(let a, let b): return #"{"at": 0, "do": "unlink", "a": "\#(a)", "b": "\#(b)"}"#
            case .add(let node): return #"{"at": \#(Double(event.time) / 1000), "do": "add", "node": "\#(node)"}"#
            default: return ""
            }
        }.joined(separator: ", ") + "]}"
        let options = try Scenario.options(from: try JSONValue.parse(json))
        #expect(options.script.count == 31)
        let result = Simulator(seed: 15, options: options).run()
        Self.expectOK(result)
        #expect(result.writes == 30)
    }

    @Test func aScenarioWithAnUnknownNodeIsRefusedNamingTheField() throws {
        let json = try JSONValue.parse(#"{"nodes": ["phone"], "events": [{"at": 1, "do": "add", "node": "toaster"}]}"#)
        #expect(throws: ValidationError.self) { try Scenario.options(from: json) }
        do { _ = try Scenario.options(from: json) } catch { #expect(error.field == "events[0].node") }
    }
}
