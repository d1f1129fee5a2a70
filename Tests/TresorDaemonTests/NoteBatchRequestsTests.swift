import Testing

@testable import TresorDaemon

/// How a sync splits the waiting note changes into requests (docs/SYNC.md, "Notes"): at most
/// `SyncNoteBatch.maxChanges` changes and `SyncAccount.notesRequestBytes` bytes a request, in
/// order, each change once, one change at least.
@Suite("Note batch requests")
struct NoteBatchRequestsTests {
    @Test func changesAreSplitByCountAndBytesInOrder() {
        #expect(SyncAccount.requests([]).isEmpty)
        #expect(SyncAccount.requests([10, 20, 30]) == [0..<3])
        #expect(SyncAccount.requests(Array(repeating: 1, count: 250)) == [0..<100, 100..<200, 200..<250])
        let half = SyncAccount.notesRequestBytes / 2
        #expect(SyncAccount.requests([half, half, 1, half]) == [0..<2, 2..<4])
        // A change as large as a whole request goes alone.
        #expect(SyncAccount.requests([1, SyncAccount.notesRequestBytes, 1]) == [0..<1, 1..<2, 2..<3])
    }
}
