import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol

extension SyncCommand {
    /// `tresor sync now`: one sync with the server (docs/SYNC.md, "What syncs").
    struct Now: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "now",
            abstract: "Send this device's changes and fetch the others' now.",
            discussion: """
                Pushes the items marked --synchronizable that changed here, then fetches and \
                applies what the other devices sent until this device is up to date. Concurrent \
                edits: the later one wins and the other is kept (`tresor sync conflicts`). When \
                the others deleted many items or notes at once, the deletions wait until you run \
                it again with --allow-deletions (exit status 2 while they wait). Exits 0 when up \
                to date.
                """)
        @Flag(help: "Let held deletions through (many items or notes deleted at once on another device).") var allowDeletions = false
        @OptionGroup var options: GlobalOptions

        func run() throws {
            var heldDeletions = 0
            try Output.run(options) {
                let answer = try options.connect().syncNow(allowDeletions: allowDeletions)
                heldDeletions = answer.heldDeletions + (answer.notes?.heldDeletions ?? 0)
                if options.json { return Output.json(answer) }
                print("Keychain: sent \(answer.pushed), applied \(answer.applied).")
                if let notes = answer.notes {
                    print("Notes: sent \(notes.sent), applied \(notes.applied)\(notes.waiting > 0 ? ", \(notes.waiting) waiting" : "").")
                    if notes.conflictCopies > 0 {
                        let copies =
                            notes.conflictCopies == 1 ? "1 note kept as a conflict copy" : "\(notes.conflictCopies) notes kept as conflict copies"
                        print("\(copies) (the same lines changed elsewhere).")
                    }
                    for copy in notes.unlockedCopiesOfLockedNotes ?? [] {
                        print(
                            "Unlocked: an edit made here of a note locked on another device meanwhile is kept as its conflict copy \(copy), not locked — its text is readable until you lock it (tresor note lock \(copy)) or delete it."
                        )
                    }
                    for held in notes.heldUntilLocked ?? [] {
                        print(
                            "Held here: note \(held) was locked on another device after the version edited here; your edit is not sent unlocked. Lock it here (tresor note lock \(held)) and it goes, locked, as a conflict copy beside the note — or delete it to keep the other device's."
                        )
                    }
                    if notes.passphraseOvertaken == true {
                        print(
                            "Notes passphrase: the one set here was overtaken by one another device set first, which is current now. Notes you locked here with yours still open with it; `tresor note rewrap NOTE` moves each to the current one."
                        )
                    }
                    if notes.heldDeletions > 0 {
                        print(
                            "Held \(notes.heldDeletions) note deletions: many notes were deleted for good at once on another device; they are still here."
                        )
                    }
                }
                if answer.conflictsKept > 0 {
                    let kept = answer.conflictsKept == 1 ? "1 conflicting version" : "\(answer.conflictsKept) conflicting versions"
                    print("Kept \(kept) (tresor sync conflicts).")
                }
                if answer.heldDeletions > 0 { print("Held \(answer.heldDeletions) deletions: many items were deleted at once.") }
                if heldDeletions > 0 { print("tresor sync now --allow-deletions lets them through.") }
                if answer.held > answer.heldDeletions { print("Held \(answer.held - answer.heldDeletions) changes until the keybag unlocks.") }
            }
            // Held deletions leave this device behind the others: a script sees it by the status.
            if heldDeletions > 0 { throw ExitCode(2) }
        }
    }
}
