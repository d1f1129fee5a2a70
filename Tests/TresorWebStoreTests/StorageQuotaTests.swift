import Testing
import TresorNotesDomain

/// The quota's refusal in the words a person reads, as the web client shows it.
@Suite struct StorageQuotaTests {
    @Test func aRefusalSaysSizesAsAPersonReadsThem() {
        let quota = StorageQuota(limitBytes: 25_000_000, addingBytes: 20_000_000)
        #expect(throws: NotesError.quotaExceeded("this account stores 19.1 MB of its 23.8 MB: no room for 19.1 MB more")) {
            try quota.check(used: 20_000_760)
        }
        #expect(throws: NotesError.quotaExceeded("this account stores 512 bytes of its 40 KB: no room for 40 KB more")) {
            try StorageQuota(limitBytes: 40_960, addingBytes: 40_960).check(used: 512)
        }
        #expect(throws: Never.self) { try StorageQuota(limitBytes: 100, addingBytes: 50).check(used: 50) }
    }
}
