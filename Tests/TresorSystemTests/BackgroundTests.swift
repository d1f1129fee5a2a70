import Foundation
import Synchronization
import Testing
import TresorSystem

/// Work on threads of its own: a result taken later, two steps side by side, a read-ahead that
/// is abandoned mid-read.
@Suite struct BackgroundTests {
    struct Failure: Error, Equatable { let name: String }

    @Test func aResultIsTakenLaterAsOftenAsAsked() throws {
        let started = Mutex(false)
        let work = Background { () -> Int in
            started.withLock { $0 = true }
            usleep(20_000)
            return 42
        }
        #expect(try work.value() == 42)
        #expect(try work.value() == 42, "the result is kept")
        #expect(started.withLock { $0 })
        let failing = Background { () -> Int in throw Failure(name: "kdf") }
        #expect(throws: Failure(name: "kdf")) { try failing.value() }
    }

    /// The check's error comes first: a caller learns of a wrong passcode before anything the
    /// work found; the work still ran to its end.
    @Test func alongsideRunsBothAndTheChecksErrorComesFirst() throws {
        let checked = Mutex(false)
        let result = try alongside({
            usleep(10_000); checked.withLock { $0 = true }
        }) { 7 }
        #expect(result == 7)
        #expect(checked.withLock { $0 }, "alongside waits for the check")
        var worked = false
        #expect(throws: Failure(name: "check")) {
            try alongside({ throw Failure(name: "check") }) { () throws -> Int in
                worked = true
                throw Failure(name: "work")
            }
        }
        #expect(worked)
    }

    /// A read-ahead given up while its thread is inside a read waits for that read to end: what
    /// the read uses (an open file of the caller's scope) may be gone right after.
    @Test func anAbandonedReadAheadWaitsForTheReadInProgress() throws {
        let inside = Mutex(false)
        let entered = Mutex(0)
        do {
            let owner = ReadAhead<Int>.Owner(
                ReadAhead(name: "test-ahead", depth: 1) {
                    inside.withLock { $0 = true }
                    entered.withLock { $0 += 1 }
                    usleep(50_000)
                    inside.withLock { $0 = false }
                    return 1
                })
            #expect(try owner.reader.next() == 1)
            // The thread is (or soon is) inside its next read when the owner goes.
            while entered.withLock({ $0 }) < 2 { usleep(1_000) }
        }
        #expect(!inside.withLock { $0 }, "the owner's end waited for the read to finish")
    }
}
