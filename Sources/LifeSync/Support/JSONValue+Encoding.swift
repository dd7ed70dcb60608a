extension JSONValue {
    /// Compact JSON with object keys sorted by their UTF-8 bytes: equal values give equal text,
    /// which is what canonical dumps and hashes are built on.
    public var canonicalText: String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        write(to: &out, pretty: false, indent: 0)
        return String(decoding: out, as: UTF8.self)
    }

    /// Indented JSON with sorted keys, for people to read.
    public var prettyText: String {
        var out: [UInt8] = []
        write(to: &out, pretty: true, indent: 0)
        return String(decoding: out, as: UTF8.self)
    }

    package func write(to out: inout [UInt8], pretty: Bool, indent: Int) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): JSONValue.writeNumber(n, to: &out)
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            if items.isEmpty { out.append(contentsOf: "[]".utf8); return }
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { newline(&out, indent + 1) }
                item.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { newline(&out, indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty { out.append(contentsOf: "{}".utf8); return }
            out.append(UInt8(ascii: "{"))
            let sorted = members.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
            for (i, member) in sorted.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { newline(&out, indent + 1) }
                JSONValue.writeString(member.0, to: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                member.1.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { newline(&out, indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private func newline(_ out: inout [UInt8], _ indent: Int) {
        out.append(0x0A)
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    /// Integral values within 2^53 print without a fraction ("5", not "5.0"); others use Swift's
    /// shortest round-tripping form, which is valid JSON for finite numbers.
    static func numberText(_ n: Double) -> String {
        precondition(n.isFinite, "JSON has no representation for \(n)")
        if n == n.rounded(), abs(n) < 9_007_199_254_740_992 {
            if n == 0 { return "0" }
            return String(Int64(n))
        }
        return "\(n)"
    }

    /// Appends `numberText(n)`; whole numbers digit by digit, without making a string.
    package static func writeNumber(_ n: Double, to out: inout [UInt8]) {
        precondition(n.isFinite, "JSON has no representation for \(n)")
        guard n == n.rounded(), abs(n) < 9_007_199_254_740_992 else {
            out.append(contentsOf: "\(n)".utf8)
            return
        }
        if n < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = UInt64(abs(n))
        var digits: (UInt64, UInt64) = (0, 0)  // 16 digits hold any magnitude below 2^53
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = 16
            repeat {
                start -= 1
                buffer[start] = UInt8(0x30 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start..<16]))
        }
    }

    static func writeString(_ s: String, to out: inout [UInt8]) {
        var copy = s
        copy.withUTF8 { writeString(utf8: $0, to: &out) }
    }

    /// Reads the string's bytes in place: this runs for every string of every stored entry.
    static func writeString(utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escaping: copy them whole.
        if !utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            out.append(contentsOf: utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in utf8 {
            switch byte {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
