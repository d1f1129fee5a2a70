import Dispatch
import Foundation
import Testing
import TresorCrypto

@Suite("ConstantTime")
struct ConstantTimeTests {
    @Test("Equal inputs compare equal, including empty ones and different containers")
    func equal() {
        #expect(ConstantTime.equals(Data(), Data()))
        #expect(ConstantTime.equals(Data([1, 2, 3]), Data([1, 2, 3])))
        #expect(ConstantTime.equals(Data([1, 2, 3]), [UInt8]([1, 2, 3])))
        // Slices with different start indices.
        let a = Data([9, 9, 1, 2, 3])[2...]
        let b = Data([1, 2, 3, 7])[0..<3]
        #expect(ConstantTime.equals(a, b))
    }

    @Test("A difference in any byte or bit makes them unequal")
    func unequal() {
        let base = Data((0..<32).map { UInt8($0) })
        for bit in 0..<(base.count * 8) {
            #expect(!ConstantTime.equals(base, base.flippingBit(bit)), "bit \(bit)")
        }
    }

    @Test("Different lengths compare unequal, even when one is a prefix of the other")
    func differentLengths() {
        #expect(!ConstantTime.equals(Data([1, 2, 3]), Data([1, 2])))
        #expect(!ConstantTime.equals(Data([1, 2]), Data([1, 2, 3])))
        #expect(!ConstantTime.equals(Data(), Data([0])))
        #expect(!ConstantTime.equals(Data([0]), Data()))
    }

    @Test("Non-contiguous data (two regions) compares byte by byte like contiguous data")
    func nonContiguous() {
        let base = Data((0..<32).map { UInt8($0) })
        var split = DispatchData.empty
        base.prefix(13).withUnsafeBytes { split.append($0) }
        base.dropFirst(13).withUnsafeBytes { split.append($0) }
        #expect(split.regions.count == 2)
        #expect(ConstantTime.equals(split, base))
        #expect(ConstantTime.equals(base, split))
        for bit in stride(from: 0, to: base.count * 8, by: 7) {
            #expect(!ConstantTime.equals(split, base.flippingBit(bit)), "bit \(bit)")
        }
    }
}
