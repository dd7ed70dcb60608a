import Foundation
import LifeSync

extension LifeSyncCommandLine {
    static let importCommand = Command(
        spec: CommandSpec(
            name: "import", summary: "import entries from NDJSON or a JSON array, all or nothing",
            positionals: ["FILE|-"], options: [CommandSpec.dbOption],
            details: "Each record is a LifeLog entry; `timestamp` is required. A bad record is refused naming its line\n(NDJSON) or index (array), and nothing is written. Entries already present unchanged are skipped."),
        run: { arguments, context in
            let source = arguments.positional(0)!
            let bytes: [UInt8]
            if source == "-" {
                guard let input = context.console.readInput() else { throw CLIError.refused("cannot read standard input") }
                bytes = input
            } else {
                guard let data = FileManager.default.contents(atPath: source) else { throw CLIError.refused("cannot read \(source)") }
                bytes = [UInt8](data)
            }
            let replica = try context.openReplica(arguments)
            let (entries, positionName) = try parseImport(bytes, defaults: replica.entryDefaults(requireTimestamp: true))
            let written = try replica.importEntries(entries, positionName: positionName)
            let skipped = entries.count - written
            context.console.print("imported \(written) entries" + (skipped > 0 ? " (\(skipped) already present)" : ""))
            return 0
        })

    /// Parses and validates every record before anything is written. Returns the entries and a
    /// function naming a record's position for later errors.
    static func parseImport(_ bytes: [UInt8], defaults: EntryDefaults) throws -> ([LogEntry], (Int) -> String) {
        let firstSignificant = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if firstSignificant == UInt8(ascii: "[") {
            let document: JSONValue
            do { document = try JSONValue.parse(bytes: bytes) } catch { throw CLIError.refused("import: \(error)") }
            guard case .array(let items) = document else { throw CLIError.refused("import: expected a JSON array") }
            var entries: [LogEntry] = []
            for (index, item) in items.enumerated() {
                do { entries.append(try LogEntry.validated(from: item, defaults: defaults)) } catch {
                    throw CLIError.refused("import: record [\(index)]: \(error)")
                }
            }
            return (entries, { "record [\($0)]" })
        }
        var entries: [LogEntry] = []
        var lineNumbers: [Int] = []
        var lineNumber = 0
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.allSatisfy({ [0x20, 0x09, 0x0D].contains($0) }) { continue }
            let item: JSONValue
            do { item = try JSONValue.parse(bytes: Array(line)) } catch { throw CLIError.refused("import: line \(lineNumber): \(error)") }
            do { entries.append(try LogEntry.validated(from: item, defaults: defaults)) } catch {
                throw CLIError.refused("import: line \(lineNumber): \(error)")
            }
            lineNumbers.append(lineNumber)
        }
        return (entries, { "line \(lineNumbers[$0])" })
    }
}
