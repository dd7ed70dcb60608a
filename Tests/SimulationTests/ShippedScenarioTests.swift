import Foundation
import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// The scenario files under Simulation/scenarios/ are the ones the README runs: each loads and
/// passes every invariant, and every `--scenario FILE` the README names is shipped.
@Suite struct ShippedScenarioTests {
    static let directory = Readme.root + "/Simulation/scenarios"

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
    }

    @Test func everyShippedScenarioLoadsAndPasses() throws {
        try #require(!Self.files.isEmpty, "no scenario files in \(Self.directory)")
        for file in Self.files {
            let data = try #require(FileManager.default.contents(atPath: Self.directory + "/" + file))
            let options = try Scenario.options(from: try JSONValue.parse(bytes: [UInt8](data)))
            #expect(!options.script.isEmpty, "\(file) scripts nothing")
            let result = Simulator(seed: 1, options: options).run()
            #expect(result.ok, "\(file): \(result.violations.prefix(3))")
            #expect(result.simulatedMilliseconds >= options.duration, "\(file) ended early")
        }
    }

    @Test func everyScenarioTheReadmeRunsIsShippedAndItsExampleIsTheFile() throws {
        let readme = try Readme.text()
        let named = readme.components(separatedBy: "--scenario ").dropFirst().map { $0.prefix { !$0.isWhitespace && $0 != "`" } }
            .filter { $0.hasSuffix(".json") }
        try #require(!named.isEmpty, "the README runs no scenario file")
        for path in named {
            #expect(FileManager.default.fileExists(atPath: Readme.root + "/" + path), "README runs --scenario \(path), which is not shipped")
        }
        // The scenario file the README shows is the shipped one, byte for byte.
        let shown = try Readme.codeBlocks(under: "The simulator").first { $0.hasPrefix("{") }
        let shipped = try String(contentsOfFile: Self.directory + "/day-offline.json", encoding: .utf8)
        #expect(shown == shipped)
    }
}
