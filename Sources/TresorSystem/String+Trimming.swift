import FoundationEssentials

extension StringProtocol {
    /// The text without the characters matching `isTrimmed` at either end.
    ///
    /// Foundation's `trimmingCharacters(in:)` lives in the part of Foundation the CLI does not
    /// link (BENCHMARKS.md, "Measured design choices"), hence this small twin.
    public func trimming(while isTrimmed: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(self[first...last])
    }

    /// The text without whitespace (spaces, tabs, line breaks) at either end.
    public func trimmingWhitespace() -> String {
        trimming(while: \.isWhitespace)
    }
}
