import Testing
import TresorModel

/// Sizes in the words a person reads: whole bytes below a KB, whole KB below a MB, then one
/// decimal only where it says something.
struct ByteSizeTests {
    @Test(arguments: [
        (0, "0 bytes"), (512, "512 bytes"), (1023, "1023 bytes"), (1024, "1 KB"), (40 * 1024, "40 KB"), (1_048_575, "1024 KB"),
        (1 << 20, "1 MB"), (20_000_000, "19.1 MB"), (25_000_000, "23.8 MB"), (1 << 30, "1 GB"), (5 * (1 << 29), "2.5 GB"),
    ])
    func aSizeInWords(bytes: Int, words: String) {
        #expect("\(ByteSize(bytes))" == words)
        #expect(ByteSize(Int64(bytes)).description == words)
    }
}
