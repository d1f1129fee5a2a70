/// A number of bytes as a person reads it: "512 bytes", "40 KB", "19.1 MB", "2.5 GB" — 1 KB is
/// 1,024 bytes, as file managers and the web client show sizes. The one way Tresor words a size:
/// a quota refusal, a backup's report.
public struct ByteSize: CustomStringConvertible, Equatable, Sendable {
    public var bytes: Int64

    public init(_ bytes: Int64) { self.bytes = bytes }
    public init(_ bytes: Int) { self.bytes = Int64(bytes) }

    public var description: String {
        if bytes < 1024 { return "\(bytes) bytes" }
        if bytes < 1 << 20 { return "\(Int((Double(bytes) / 1024).rounded())) KB" }
        let (unit, scale) = bytes < 1 << 30 ? ("MB", Double(1 << 20)) : ("GB", Double(1 << 30))
        let tenths = (Double(bytes) / scale * 10).rounded() / 10
        return tenths == tenths.rounded() ? "\(Int(tenths)) \(unit)" : "\(tenths) \(unit)"
    }
}
