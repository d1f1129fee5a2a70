import Foundation
import NIOCore
import Testing
@testable import TresorServer

/// `ByteBuffer.wholeData` hands a request body to the stores: the same bytes, small or large
/// (large ones share the buffer's storage), from wherever the buffer's reader stands.
@Suite struct ByteBufferDataTests {
    @Test(arguments: [0, 1, 1000, 256 * 1024, 256 * 1024 + 1, 3_000_000])
    func theReadableBytesExactly(count: Int) {
        let bytes = (0..<count + 7).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var buffer = ByteBuffer(bytes: bytes)
        buffer.moveReaderIndex(forwardBy: 7)
        let data = buffer.wholeData
        #expect(data == Data(bytes.dropFirst(7)))
        #expect(data.startIndex == 0, "indexable from zero, as stores expect")
        // Writing to the data leaves the buffer as it was (value semantics, also when shared).
        var changed = data
        if !changed.isEmpty { changed[0] ^= 0xFF }
        #expect(buffer.readableBytesView.elementsEqual(bytes.dropFirst(7)))
    }
}
