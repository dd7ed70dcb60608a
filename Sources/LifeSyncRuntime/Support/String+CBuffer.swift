extension String {
    /// The text a C call wrote into `buffer`, up to its first NUL (all of it when there is none):
    /// `String(cString:)` on an array is deprecated, and a full buffer has no terminator to find.
    init(cBuffer buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
