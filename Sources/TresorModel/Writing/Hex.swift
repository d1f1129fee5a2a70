extension Sequence<UInt8> {
    /// The bytes as lowercase hexadecimal, two digits each — ids, hashes and digests written as
    /// text. The one hex encoder: FoundationEssentials has no `String(format:)`.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
