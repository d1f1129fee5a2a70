import Foundation

/// Comparisons whose running time does not depend on where the inputs differ.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes. Inputs of different lengths compare unequal;
    /// the length itself is not treated as secret.
    @inline(never)
    public static func equals<A: DataProtocol, B: DataProtocol>(_ a: A, _ b: B) -> Bool {
        guard a.count == b.count else { return false }
        // Contiguous inputs (Data, arrays: every caller) compare as buffers, not through the
        // generic collection interface, which is slow on every request (BENCHMARKS.md, "Measured design choices").
        if let equal = a.withContiguousStorageIfAvailable({ a in b.withContiguousStorageIfAvailable { b in equals(a, b) } }),
            let equal
        {
            return equal
        }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }

    @inline(never)
    private static func equals(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var difference: UInt8 = 0
        for index in 0..<a.count { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
