/// The text (and blob) columns of one row, written end to end into one buffer and bound to a statement in
/// place. Bound as ordinary Swift strings, SQLite copies each into an allocation of its own:
/// ten allocations per stored row, and the timestamps, version vector and canonical `data`
/// would first each have been made into a string of their own.
///
/// Reuse one across rows: the buffer keeps its capacity.
struct RowText {
    private var bytes: [UInt8] = []
    /// Parameter index and byte range of each column, and whether it binds a blob; a nil range
    /// binds NULL.
    private var columns: [(index: Int32, range: Range<Int>?, blob: Bool)] = []

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        columns.removeAll(keepingCapacity: true)
    }

    /// Parameter `index` takes what `write` appends.
    mutating func set(_ index: Int32, _ write: (inout [UInt8]) -> Void) {
        let start = bytes.count
        write(&bytes)
        columns.append((index, start..<bytes.count, false))
    }

    /// Parameter `index` takes what `write` appends, as a blob.
    mutating func setBlob(_ index: Int32, _ write: (inout [UInt8]) throws -> Void) rethrows {
        let start = bytes.count
        try write(&bytes)
        columns.append((index, start..<bytes.count, true))
    }

    /// Parameter `index` takes `text`, or NULL.
    mutating func set(_ index: Int32, _ text: String?) {
        guard let text else { columns.append((index, nil, false)); return }
        set(index) { $0.append(contentsOf: text.utf8) }
    }

    /// Whether parameter `index` binds NULL (or was not set).
    func isNull(_ index: Int32) -> Bool {
        columns.last(where: { $0.index == index })?.range == nil
    }

    /// Runs `body` over the bytes parameter `index` takes (empty for NULL).
    func withBytes(of index: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        let range = columns.last(where: { $0.index == index })?.range ?? 0..<0
        bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// Binds the columns and runs `statement` while the buffer cannot move; the bindings are
    /// cleared before it can.
    func execute(_ statement: Statement) throws(SQLiteError) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(SQLiteError) in
            defer { statement.clearBindings() }
            for column in columns {
                guard let range = column.range else { statement.bind(nil as String?, at: column.index); continue }
                let bytes = UnsafeBufferPointer(rebasing: buffer[range])
                if column.blob { statement.bindUncopiedBlob(bytes, at: column.index) } else { statement.bindUncopied(bytes, at: column.index) }
            }
            try statement.execute()
        }
    }
}
