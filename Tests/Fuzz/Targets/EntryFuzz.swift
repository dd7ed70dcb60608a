// libFuzzer target `entry`: the entry JSON a BATCH change carries (PROTOCOL.md §5.2.2-5.2.3).
//
// Input: the entry JSON bytes. The receiver reads them with a fast scanner
// (`LogEntry.scanComplete`) that may only say yes where the reference path
// (`JSONValue.parse(bytes:)` then `LogEntry.validatedComplete`) says yes, with the same entry.
//
// Oracles (any of them traps):
//  - the scanner accepts what the reference refuses, or accepts a different entry (and the
//    same for the input read as an entry's `data` object, `LogData.scanned`);
//  - an accepted entry's canonical JSON does not parse and validate back to the same entry,
//    or is not a fixed point (canonical(parse(canonical(e))) == canonical(e)).
//
// Compiled as one module with all of Sources/LifeSync (see Tests/Fuzz/run.sh); `FuzzMain.swift` calls `fuzzEntry`.

private let fallbackID = "phone_9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f"

private func text(_ bytes: [UInt8]) -> String {
    let s = String(decoding: bytes.prefix(600), as: UTF8.self)
    return bytes.count > 600 ? s + "…(\(bytes.count) bytes)" : s
}

func fuzzEntry(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var reference: LogEntry?
    var refusal = ""
    do {
        reference = try LogEntry.validatedComplete(from: try JSONValue.parse(bytes: bytes))
    } catch {
        refusal = "\(error)"
    }
    // A replica reads its rows' `data` with the data scanner: the same rule, on the input taken
    // as a `data` object.
    if let scannedData = bytes.withUnsafeBufferPointer(LogData.scanned) {
        let referenceData = try? LogData.validated(from: JSONValue.parse(bytes: bytes), path: "data")
        guard referenceData == scannedData else {
            fatalError("FUZZ: the data scanner reads what the reference reads otherwise (\(String(describing: referenceData))): \(text(bytes))")
        }
    }
    // The decoder calls the scanner with the change's id, already checked to be an entry ID.
    let id = reference.map(\.id) ?? fallbackID
    if let scanned = bytes.withUnsafeBufferPointer({ LogEntry.scanComplete($0, id: id) }) {
        guard let reference else {
            fatalError("FUZZ: the scanner accepts an entry the reference refuses (\(refusal)): \(text(bytes))")
        }
        guard scanned == reference else {
            fatalError("FUZZ: scanner and reference disagree on \(text(bytes))\n  scanned:   \(scanned)\n  reference: \(reference)")
        }
    }
    guard let reference else { return 0 }
    let canonical = Array(reference.json.canonicalText.utf8)
    let again: LogEntry
    do {
        again = try LogEntry.validatedComplete(from: try JSONValue.parse(bytes: canonical))
    } catch {
        fatalError("FUZZ: the canonical JSON of an accepted entry is refused (\(error)): \(text(canonical))\n  input: \(text(bytes))")
    }
    guard again == reference else {
        fatalError("FUZZ: an entry changes through its canonical JSON\n  input:     \(text(bytes))\n  canonical: \(text(canonical))\n  first:  \(reference)\n  second: \(again)")
    }
    let canonicalAgain = Array(again.json.canonicalText.utf8)
    guard canonicalAgain == canonical else {
        fatalError("FUZZ: canonical JSON is not a fixed point\n  first:  \(text(canonical))\n  second: \(text(canonicalAgain))")
    }
    if let scanned = canonical.withUnsafeBufferPointer({ LogEntry.scanComplete($0, id: reference.id) }), scanned != reference {
        fatalError("FUZZ: the scanner reads the canonical JSON as another entry: \(text(canonical))")
    }
    // The store writes `data` with its own writer (what BATCHes are later assembled from).
    let direct = reference.data.canonicalJSON, tree = reference.data.json.canonicalText
    guard direct == tree, Array(direct.utf8) == Array(tree.utf8) else {
        fatalError("FUZZ: LogData.canonicalJSON differs from json.canonicalText\n  direct: \(text(Array(direct.utf8)))\n  tree:   \(text(Array(tree.utf8)))")
    }
    return 0
}
