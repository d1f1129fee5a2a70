import Foundation

/// Comparisons whose running time does not depend on where the inputs differ.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes. Inputs of different lengths compare unequal;
    /// the length itself is not treated as secret.
    @inline(never)
    public static func equals<A: DataProtocol, B: DataProtocol>(_ a: A, _ b: B) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
