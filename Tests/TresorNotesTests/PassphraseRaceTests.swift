import Foundation
import Synchronization
import Testing
import TresorNotesDomain

@testable import TresorNotes

/// docs/SECURITY.md, "Throttles that cannot be raced": the wrong-passphrase count is reserved in the database before
/// the key derivation runs, so many concurrent wrong entries cannot each be checked before
/// any of them is counted (the check-then-act race of reading the count, deriving for a
/// while, then writing it).
@Suite("Concurrent wrong passphrases")
struct PassphraseRaceTests {
    /// What each of `count` concurrent attempts ended with.
    static func concurrently(_ count: Int, _ attempt: @escaping @Sendable () throws -> Void) -> [String] {
        let outcomes = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: count) { _ in
            let outcome: String
            do {
                try attempt()
                outcome = "opened"
            } catch NotesError.wrongPassphrase {
                outcome = "wrong"
            } catch NotesError.throttled {
                outcome = "throttled"
            } catch {
                outcome = "\(error)"
            }
            outcomes.withLock { $0.append(outcome) }
        }
        return outcomes.withLock { $0 }
    }

    @Test func concurrentWrongPassphrasesInTheCLIAreCheckedAtMostFiveTimes() throws {
        // Rounds enough that every derivation overlaps the others (the race's window).
        let home = try NotesHome(kdfRounds: 100_000)
        try home.notes.setPassphrase(passphrase("the right one"))
        let note = try home.notes.createNote(NoteDraft(title: "Race", body: "body"))
        try home.notes.lockNote(note.id)
        home.notes.lockNow()
        let store = home.notes, id = note.id
        let outcomes = Self.concurrently(24) { _ = try store.openNote(id, passphrase: passphrase("wrong guess")) }
        let checked = outcomes.filter { $0 == "wrong" }.count
        #expect(outcomes.allSatisfy { $0 == "wrong" || $0 == "throttled" }, "\(outcomes)")
        #expect(checked == 5, "\(checked) wrong passphrases were checked, the free allowance is 5")
        #expect(try home.notes.passphraseStatus().failedAttempts == checked)
    }
}
