import LifeSync
import LifeSyncRuntime

/// The records `lifesync import` reads, one at a time: NDJSON lines from a file (read through
/// one buffer, so a journal of any length costs the memory of its longest line), NDJSON or a
/// JSON array already in memory (standard input; an array is one JSON document, parsed
/// whole), or a LifeLog backend database's rows; each as JSON (`next`) or as a validated entry
/// (`nextEntry`).
final class ImportSource {
    struct Record {
        /// The line, index or row number, what `positionName` names.
        var key: Int
        /// "line 3", "record [2]", "row 4 (id …)".
        var position: String
        var json: JSONValue
    }

    private enum Kind {
        case lines(next: () throws -> [UInt8]?)
        case array([JSONValue])
        case backend(LifeLogBackendFile.Reader)
    }

    private let kind: Kind
    private var index = 0
    private var current: Record?

    private init(_ kind: Kind) { self.kind = kind }

    static func file(path: String) throws -> ImportSource {
        let reader: LineReader
        do { reader = try LineReader(path: path) } catch { throw CLIError.refused("\(error)") }
        var pending: [[UInt8]] = []
        // A file whose first significant byte is "[" is one JSON array: read it whole.
        while let line = try readLine(reader, path: path) {
            pending.append(line)
            guard let first = line.first(where: { !isSpace($0) }) else { continue }
            if first == UInt8(ascii: "[") {
                do { return try array(UserFile.read(path)) } catch let error as RuntimeError { throw CLIError.refused("\(error)") }
            }
            break
        }
        return ImportSource(.lines(next: {
            if !pending.isEmpty { return pending.removeFirst() }
            return try readLine(reader, path: path)
        }))
    }

    static func bytes(_ bytes: [UInt8]) throws -> ImportSource {
        if bytes.first(where: { !isSpace($0) }) == UInt8(ascii: "[") { return try array(bytes) }
        var offset = 0
        return ImportSource(.lines(next: {
            guard offset < bytes.count else { return nil }
            let end = bytes[offset...].firstIndex(of: 0x0A) ?? bytes.count
            defer { offset = end + 1 }
            return Array(bytes[offset..<end])
        }))
    }

    static func backend(path: String) throws -> ImportSource {
        do { return ImportSource(.backend(try LifeLogBackendFile.Reader(path: path))) } catch {
            throw CLIError.refused("import: \(error)")
        }
    }

    private static func array(_ bytes: [UInt8]) throws -> ImportSource {
        let document: JSONValue
        do { document = try JSONValue.parse(bytes: bytes) } catch { throw CLIError.refused("import: \(error)") }
        guard case .array(let items) = document else { throw CLIError.refused("import: expected a JSON array") }
        return ImportSource(.array(items))
    }

    private static func readLine(_ reader: LineReader, path: String) throws -> [UInt8]? {
        do { return try reader.nextLine() } catch { throw CLIError.refused("\(error)") }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// The next record (blank lines passed over); nil after the last. A line that is not JSON
    /// is refused, naming it.
    func next() throws -> Record? {
        switch kind {
        case .lines(let nextLine):
            while let line = try nextLine() {
                index += 1
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                do { current = Record(key: index, position: "line \(index)", json: try JSONValue.parse(bytes: line)) } catch {
                    throw CLIError.refused("import: line \(index): \(error)")
                }
                return current
            }
            return nil
        case .array(let items):
            guard index < items.count else { return nil }
            defer { index += 1 }
            current = Record(key: index, position: "record [\(index)]", json: items[index])
            return current
        case .backend(let reader):
            do {
                guard let record = try reader.next() else { return nil }
                current = Record(key: reader.rowNumber, position: record.position, json: record.json)
                return current
            } catch { throw CLIError.refused("import: \(error)") }
        }
    }

    /// The next record as an entry (blank lines passed over); nil after the last. A record that
    /// is not JSON, or not a valid entry, is refused, naming it. An NDJSON line that is a complete
    /// entry in the canonical spelling is read straight from its bytes (`LogEntry.scanImported`:
    /// building its JSON tree and validating the tree took a sixth of a 100k import); any other
    /// goes the reference way, which gives the same entry or the exact refusal.
    func nextEntry(defaults: EntryDefaults) throws -> (position: Int, entry: LogEntry)? {
        if case .lines(let nextLine) = kind {
            while let line = try nextLine() {
                index += 1
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                if let entry = line.withUnsafeBufferPointer({ LogEntry.scanImported($0) }) {
                    current = nil
                    return (index, entry)
                }
                do { current = Record(key: index, position: "line \(index)", json: try JSONValue.parse(bytes: line)) } catch {
                    throw CLIError.refused("import: line \(index): \(error)")
                }
                return (index, try Self.validated(current!, defaults: defaults))
            }
            return nil
        }
        guard let record = try next() else { return nil }
        return (record.key, try Self.validated(record, defaults: defaults))
    }

    private static func validated(_ record: Record, defaults: EntryDefaults) throws -> LogEntry {
        do { return try LogEntry.validated(from: record.json, defaults: defaults) } catch {
            throw CLIError.refused("import: \(record.position): \(error)")
        }
    }

    /// The name of the record at `key`: the current one's in full, an earlier one's by number.
    func positionName(_ key: Int) -> String {
        if let current, current.key == key { return current.position }
        switch kind {
        case .lines: return "line \(key)"
        case .array: return "record [\(key)]"
        case .backend: return "row \(key)"
        }
    }
}
