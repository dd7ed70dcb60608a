extension Double {
    /// The number with `decimals` digits after the point, rounded half away from zero, as
    /// `printf("%.2f")` writes it: `3.14159.fixed(2)` is "3.14", `2.0.fixed(2)` is "2.00". For
    /// what the command line and the benchmarks print, without Foundation's `String(format:)`.
    package func fixed(_ decimals: Int) -> String {
        precondition((0...9).contains(decimals), "0 to 9 decimals")
        var scale: UInt64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (magnitude * Double(scale)).rounded(.toNearestOrAwayFromZero)
        guard isFinite, scaled < 9e15 else { return description }
        let units = UInt64(scaled)
        var text = String(units / scale)
        if decimals > 0 {
            let fraction = String(units % scale)
            text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
        }
        return (self < 0 && units != 0 ? "-" : "") + text
    }

    /// `fixed(decimals)` padded with spaces on the left to `width` characters (`%12.2f`).
    package func fixed(_ decimals: Int, width: Int) -> String {
        let text = fixed(decimals)
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
