import Glibc
import LifeSync

/// The `entries` table of a LifeLog backend database (the LifeLog document's `schema.sql`),
/// read as JSON records for the same validation as a JSON import:
///
/// ```sql
/// CREATE TABLE entries (id TEXT PRIMARY KEY, timestamp TEXT NOT NULL, recorded_at TEXT NOT NULL,
///     source TEXT NOT NULL, device_id TEXT NOT NULL, category TEXT, data TEXT NOT NULL,
///     created_at TEXT DEFAULT (datetime('now')));
/// ```
///
/// The file is opened read-only and never changed. A row becomes the object its columns name:
/// `data` is parsed as the JSON text the backend stored, NULL is an absent field (a NULL `id`
/// is recognised by content, like any record without one), and `created_at` goes through to
/// be checked and dropped. A column the schema does not have is refused before any row is read.
package enum LifeLogBackendFile {
    package struct Record: Sendable {
        /// "row 3 (id …)": the row's place in rowid order, and its ID when it has one.
        package var position: String
        package var json: JSONValue
    }

    static let columns = ["id", "timestamp", "recorded_at", "source", "device_id", "category", "data", "created_at"]
    /// Everything but `created_at`, which only some versions of the schema have.
    static let requiredColumns = Array(columns.dropLast())

    /// Every row as a record, in rowid order.
    package static func records(path: String) throws(RuntimeError) -> [Record] {
        let reader = try Reader(path: path)
        var records: [Record] = []
        while let record = try reader.next() { records.append(record) }
        return records
    }

    /// The rows read one at a time, for an import whose memory does not grow with the table.
    package final class Reader {
        private let path: String
        private let database: Database
        private let statement: Statement
        private let names: [String]
        /// The number of the row `next` returned last (1 for the first).
        package private(set) var rowNumber = 0

        package init(path: String) throws(RuntimeError) {
            // SQLite says only "unable to open database file"; the system says why.
            guard access(path, R_OK) == 0 else { throw RuntimeError("cannot read \(path): \(errnoText())") }
            self.path = path
            do {
                database = try Database(path: path, create: false, readOnly: true)
                let present = try database.rows("SELECT name FROM pragma_table_info('entries')") { $0.string(0) }
                guard !present.isEmpty else {
                    throw RuntimeError("\(path) has no entries table; expected a LifeLog backend database (the LifeLog document's schema.sql)")
                }
                if let unknown = present.first(where: { !columns.contains($0) }) {
                    throw RuntimeError("\(path): the entries table has a column \(unknown), which the LifeLog schema does not; nothing imported")
                }
                if let missing = requiredColumns.first(where: { !present.contains($0) }) {
                    throw RuntimeError("\(path): the entries table has no \(missing) column, which the LifeLog schema requires; nothing imported")
                }
                names = columns.filter(present.contains)
                let select = names.map { "typeof(\($0)), \($0)" }.joined(separator: ", ")
                statement = try database.prepare("SELECT \(select) FROM entries ORDER BY rowid")
            } catch {
                throw LifeLogBackendFile.explained(error, path: path)
            }
        }

        /// The next row as a record; nil after the last.
        package func next() throws(RuntimeError) -> Record? {
            do {
                guard try statement.step() else { return nil }
            } catch {
                throw LifeLogBackendFile.explained(error, path: path)
            }
            rowNumber += 1
            let row = statement
            let id = names.firstIndex(of: "id").flatMap { row.isNull(Int32($0 * 2 + 1)) ? nil : row.string(Int32($0 * 2 + 1)) }
            let position = "row \(rowNumber)" + (id.map { " (id \($0.prefix(80)))" } ?? "")
            var members: [(String, JSONValue)] = []
            for (index, name) in names.enumerated() {
                let column = Int32(index * 2 + 1)
                let value: JSONValue
                switch row.string(column - 1) {
                case "null": value = .null
                case "integer", "real": value = .number(row.double(column))
                case "text" where name == "data":
                    do { value = try JSONValue.parse(row.string(column)) } catch {
                        throw RuntimeError("\(position): data: not JSON (\(error))")
                    }
                case "text": value = .string(row.string(column))
                default: throw RuntimeError("\(position): \(name): a blob, where the schema stores text")
                }
                members.append((name, value))
            }
            return Record(position: position, json: .object(members))
        }
    }

    static func explained(_ error: any Error, path: String) -> RuntimeError {
        if let error = error as? RuntimeError { return error }
        if let error = error as? SQLiteError, error.primaryCode == 26 {  // SQLITE_NOTADB
            return RuntimeError("\(path) is not an SQLite database")
        }
        return RuntimeError("cannot read \(path): \(error)")
    }
}
