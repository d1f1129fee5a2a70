import Testing
import TresorModel

/// The one hex encoder: two lowercase digits a byte, in order — what ids, executable groups and
/// digests written as text are made of.
struct HexTests {
    @Test func bytesAreTwoLowercaseDigitsEach() {
        #expect([UInt8]().hexString == "")
        #expect([0x00, 0x0f, 0xa5, 0xff, 0x10].hexString == "000fa5ff10")
        #expect((0...255).map(UInt8.init).hexString.count == 512)
        #expect(ExecutableGroup.byHash([0xde, 0xad, 0xbe, 0xef]) == "exe-sha256:deadbeef")
    }
}
