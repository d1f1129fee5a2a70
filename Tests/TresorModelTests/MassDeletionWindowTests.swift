import Foundation
import Testing
import TresorModel

/// The mass-deletion hold's arithmetic (docs/SYNC.md, "Conflicts and deletions").
@Suite("Mass-deletion window")
struct MassDeletionWindowTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func moreThanFiftyOrAQuarterFromTwentyIsAMassDeletion() {
        let window = MassDeletionWindow(start: start)
        #expect(!window.isMassDeletion(adding: 50, remaining: 1000))
        #expect(window.isMassDeletion(adding: 51, remaining: 1000))
        // From 20 there, a quarter: 5 of 20 is not more than a quarter, 6 is.
        #expect(!window.isMassDeletion(adding: 5, remaining: 20))
        #expect(window.isMassDeletion(adding: 6, remaining: 20))
        // Under 20 there, only the 50 count.
        #expect(!window.isMassDeletion(adding: 19, remaining: 19))
        #expect(!window.isMassDeletion(adding: 0, remaining: 0))
        // Those applied in the window count, and count among what there was.
        #expect(MassDeletionWindow(start: start, deleted: 20).isMassDeletion(adding: 10, remaining: 80))
        #expect(!MassDeletionWindow(start: start, deleted: 20).isMassDeletion(adding: 5, remaining: 80))
    }

    @Test func aWindowLastsADayAndAClockSetBackEndsIt() {
        let stored = MassDeletionWindow(start: start, deleted: 30)
        #expect(MassDeletionWindow.current(stored, now: start.addingTimeInterval(23 * 3600)) == stored)
        #expect(
            MassDeletionWindow.current(stored, now: start.addingTimeInterval(24 * 3600))
                == MassDeletionWindow(start: start.addingTimeInterval(24 * 3600)))
        #expect(MassDeletionWindow.current(stored, now: start.addingTimeInterval(-60)).deleted == 0)
        #expect(MassDeletionWindow.current(nil, now: start) == MassDeletionWindow(start: start))
    }
}
