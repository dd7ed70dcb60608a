/// The export formats of `lifesync export` and `GET /api/export`, one home for both: a pretty
/// JSON array of entries as `GET /api/entries/:id` shows each, or RFC 4180 CSV with a header
/// row, nested fields flattened (metric_name, latitude, …) and tags a JSON array in one cell.
import LifeSync
import LifeSyncHTTP

package enum ExportFormat: String, Sendable {
    case json
    case csv

    package var mediaType: String { self == .json ? "application/json; charset=utf-8" : "text/csv; charset=utf-8" }
}

package enum CSVExport {
    package static let header = ["id", "timestamp", "recorded_at", "source", "device_id", "category", "text",
                                "metric_name", "metric_value", "metric_unit", "metric_scale_min", "metric_scale_max",
                                "latitude", "longitude", "accuracy", "altitude", "place_name", "tags", "extra"]

    /// Appends one row and its line end to `out`, each cell written straight into its bytes.
    package static func append(_ entry: LogEntry, to out: inout [UInt8]) {
        let data = entry.data
        // Numbers and times are ours and stay as they are (a negative latitude is not a
        // formula; neither holds a comma or a quote); every string came from someone's input
        // and is neutralised.
        func number(_ n: Double?) {
            out.append(UInt8(ascii: ","))
            if let n { JSONValue.writeNumber(n, to: &out) }
        }
        func text(_ s: String?, first: Bool = false) {
            if !first { out.append(UInt8(ascii: ",")) }
            if let s { cell(s, to: &out) }
        }
        text(entry.id, first: true)
        out.append(UInt8(ascii: ","))
        entry.timestamp.writeISO8601(to: &out)
        out.append(UInt8(ascii: ","))
        entry.recordedAt.writeISO8601(to: &out)
        text(entry.source)
        text(entry.deviceId)
        text(entry.category)
        text(data.text)
        text(data.metric?.name)
        number(data.metric?.value)
        text(data.metric?.unit)
        number(data.metric?.scaleMin)
        number(data.metric?.scaleMax)
        number(data.location?.latitude)
        number(data.location?.longitude)
        number(data.location?.accuracy)
        number(data.location?.altitude)
        text(data.location?.placeName)
        out.append(UInt8(ascii: ","))
        if let tags = data.tags { quote(JSONValue.array(tags.map(JSONValue.string)).canonicalText, to: &out) }
        // The extra members of data, as one canonical JSON object (empty when there are none).
        out.append(UInt8(ascii: ","))
        if !data.extra.isEmpty { quote(LogData(extra: data.extra).canonicalJSON, to: &out) }
        out.append(contentsOf: [0x0D, 0x0A])
    }

    /// The same row from a stored row's bytes: cell for cell what `append(_:to:)` writes for the
    /// entry they hold, times copied as stored (they are in the form `writeISO8601` writes).
    package static func append(_ row: EntryCells, to out: inout [UInt8]) {
        func number(_ n: Double?) {
            out.append(UInt8(ascii: ","))
            if let n { JSONValue.writeNumber(n, to: &out) }
        }
        func text(_ bytes: UnsafeBufferPointer<UInt8>?) {
            out.append(UInt8(ascii: ","))
            if let bytes { write(bytes, mark: needsMark(bytes), to: &out) }
        }
        write(row.id, mark: needsMark(row.id), to: &out)
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: row.timestamp)
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: row.recordedAt)
        text(row.source)
        text(row.deviceId)
        text(row.category)
        text(row.text)
        text(row.metric?.name)
        number(row.metric?.value)
        text(row.metric?.unit)
        number(row.metric?.scaleMin)
        number(row.metric?.scaleMax)
        number(row.location?.latitude)
        number(row.location?.longitude)
        number(row.location?.accuracy)
        number(row.location?.altitude)
        text(row.location?.placeName)
        out.append(UInt8(ascii: ","))
        if let tags = row.tags { write(tags, mark: false, to: &out) }
        // Cells are never made of a row with extra members: their column stays empty.
        out.append(contentsOf: [UInt8(ascii: ","), 0x0D, 0x0A])
    }

    /// `field` as a cell (`write`), neutralised (`needsMark`).
    static func cell(_ field: String, to out: inout [UInt8]) {
        var field = field
        field.withUTF8 { write($0, mark: needsMark($0), to: &out) }
    }

    /// The ASCII marks that make a cell starting with `+` or `-` a formula (`needsMark`).
    private static let formulaMarks: Set<UInt8> = Set("()!|&=\";+*/^".utf8)

    /// A cell a spreadsheet could run as a formula gets a leading apostrophe, which spreadsheets
    /// show as text and do not display. A cell starting with `=`, `@`, tab or carriage return
    /// always does (OWASP's list). One starting with `+` or `-` does only when it holds what a
    /// harmful formula needs — a call, a DDE link, an operator: `( ) ! | & = " ; + * / ^` after
    /// its sign — so honest text keeps its form: "- buy milk", "-5 degrees", "+61 2 9999".
    /// Every mark is ASCII, so UTF-8 bytes tell them: no byte of a longer character is one.
    private static func needsMark(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = bytes.first else { return false }
        switch first {
        case UInt8(ascii: "="), UInt8(ascii: "@"), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
            return true
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            return bytes.dropFirst().contains { formulaMarks.contains($0) }
        default:
            return false
        }
    }

    /// `field` as an RFC 4180 cell: quoted, its quotes doubled, when it holds a comma, a quote or
    /// a line break. Bytes, not Characters: "\r\n" is one Character equal to neither "\r" nor
    /// "\n", and every byte looked for is ASCII.
    package static func quote(_ field: String, to out: inout [UInt8]) {
        var field = field
        field.withUTF8 { write($0, mark: false, to: &out) }
    }

    /// The cell of `bytes`, after an apostrophe when `mark` is set (inside the quotes, if any).
    private static func write(_ bytes: UnsafeBufferPointer<UInt8>, mark: Bool, to out: inout [UInt8]) {
        guard bytes.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }) else {
            if mark { out.append(UInt8(ascii: "'")) }
            out.append(contentsOf: bytes)
            return
        }
        out.append(UInt8(ascii: "\""))
        if mark { out.append(UInt8(ascii: "'")) }
        for byte in bytes {
            if byte == UInt8(ascii: "\"") { out.append(byte) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// An export produced a page of entries at a time, oldest first (keyed on timestamp and ID, so a
/// page never repeats or skips a row): `GET /api/export` streams it, `lifesync export` drains it.
/// Entries written while it runs may or may not appear, as with any export of a live journal.
package final class EntryExportSource: HTTPBodySource {
    let replica: Replica
    let filter: EntryQuery
    package let format: ExportFormat
    /// IDs of rows that did not read back, passed over.
    package private(set) var damaged: [String] = []
    package private(set) var count = 0
    private var after: (timestamp: String, id: String)?
    private var started = false
    private var finished = false
    static let pageSize = 200

    package init(replica: Replica, filter: EntryQuery, format: ExportFormat) {
        self.replica = replica
        self.filter = filter
        self.format = format
    }

    package func next(maximumBytes: Int) throws -> HTTPBodyPiece {
        guard !finished else { return .end }
        var out: [UInt8] = []
        out.reserveCapacity(min(maximumBytes, 1 << 20) + 64 * 1024)
        if !started {
            started = true
            out += Array((format == .json ? "[" : CSVExport.header.joined(separator: ",") + "\r\n").utf8)
        }
        // Bounded: each page moves `after` on, and the loop stops at the byte budget.
        while out.count < maximumBytes {
            let page = try replica.forEachEntry(matching: filter, after: after, limit: Self.pageSize, cells: true, damaged: &damaged) { stored in
                switch (format, stored) {
                case (.csv, .cells(let row)): CSVExport.append(row, to: &out)
                case (.csv, .entry(let entry)): CSVExport.append(entry, to: &out)
                case (.json, _):
                    if count > 0 { out.append(UInt8(ascii: ",")) }
                    out.append(contentsOf: [0x0A, UInt8(ascii: " "), UInt8(ascii: " ")])
                    switch stored {
                    case .cells(let row): row.writeJSON(to: &out, pretty: true, indent: 1)
                    case .entry(let entry): entry.writeJSON(to: &out, pretty: true, indent: 1)
                    }
                }
                count += 1
            }
            after = page.last
            if page.last == nil || page.rows < Self.pageSize {
                finished = true
                if format == .json { out += Array((count == 0 ? "]\n" : "\n]\n").utf8) }
                break
            }
        }
        return .bytes(out)
    }

    /// The whole export at once (what `lifesync export` writes).
    package func drain() throws -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<Int.max {
            guard case .bytes(let bytes) = try next(maximumBytes: 1 << 20) else { break }
            out += bytes
        }
        return out
    }
}
