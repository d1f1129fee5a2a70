import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// `tresor sync now` with notes (docs/SYNC.md, "Notes"): two device homes, each with its own
/// `tresord`, joined to a real server instance; notes written with `tresor note …` on one are on
/// the other, edits go both ways, late edits merge or become conflict copies, and an edit
/// outlives a deletion made from before it.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncNotesE2ETests {
    static func newNote(_ device: Harness, _ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> NoteSummary {
        let made = try device.tresor(["note", "new", "--body-stdin", "--json"], input: text)
        #expect(made.succeeded, "\(made.stderr)", sourceLocation: sourceLocation)
        return try CLIJSON.decode(NoteSummary.self, from: Data(made.stdout.utf8))
    }

    static func edit(_ device: Harness, _ id: String, body: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let edited = try device.tresor(["note", "edit", id, "--body-stdin"], input: body)
        #expect(edited.succeeded, "\(edited.stderr)", sourceLocation: sourceLocation)
    }

    /// The device's notes (not in Recently Deleted) by title, with their bodies.
    static func notes(_ device: Harness) throws -> [String: (id: String, body: String)] {
        var found: [String: (id: String, body: String)] = [:]
        for summary in try device.json([NoteSummary].self, ["note", "list"]) {
            found[summary.title] = (summary.id, try device.json(OpenedNote.self, ["note", "show", summary.id]).body)
        }
        return found
    }

    static func syncNow(_ device: Harness, sourceLocation: SourceLocation = #_sourceLocation) throws -> SyncNowNotes {
        try #require(try SyncE2E.sync(device, SyncNowAnswer.self, ["now"], sourceLocation: sourceLocation).notes, sourceLocation: sourceLocation)
    }

    @Test func aNoteMadeOnOneDeviceIsOnTheOtherAndEditsGoBothWays() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let made = try Self.newNote(laptop, "Groceries\ne2e-note-marker milk\neggs")
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).notesWaiting == 1)
        sleep(2)  // the sync comes later than the writing: the note keeps the writing's time
        #expect(try Self.syncNow(laptop).sent == 1)
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).notesWaiting == 0)
        #expect(try Self.syncNow(phone).applied == 1)
        let onPhone = try #require(try Self.notes(phone)["Groceries"])
        #expect(onPhone.body == "Groceries\ne2e-note-marker milk\neggs")
        let (laptopDates, phoneDates) = (
            try laptop.json(OpenedNote.self, ["note", "show", made.id]).summary,
            try phone.json(OpenedNote.self, ["note", "show", onPhone.id]).summary
        )
        for dates in [laptopDates, phoneDates] {
            #expect(abs(dates.created.timeIntervalSince(made.created)) < 1 && abs(dates.modified.timeIntervalSince(made.modified)) < 1, "\(dates)")
        }

        try Self.edit(phone, onPhone.id, body: "Groceries\ne2e-note-marker milk\neggs\nbread")
        #expect(try Self.syncNow(phone).sent == 1)
        #expect(try Self.syncNow(laptop).applied == 1)
        #expect(try Self.notes(laptop)["Groceries"]?.body == "Groceries\ne2e-note-marker milk\neggs\nbread")
        #expect(try Self.notes(laptop)["Groceries"]?.id == made.id, "the laptop's note keeps its own id")

        // A pin and a folder travel too (the folder's name on standard input, not in argv).
        let moved = try laptop.tresor(["note", "edit", made.id, "--pin", "--folder", "-"], input: "Home\n")
        #expect(moved.succeeded, "\(moved.stderr)")
        #expect(try Self.syncNow(laptop).sent == 1)
        #expect(try Self.syncNow(phone).applied == 1)
        #expect(try phone.json(OpenedNote.self, ["note", "show", onPhone.id]).summary.isPinned)
        #expect(try phone.json([NoteSummary].self, ["note", "list", "--folder", "-"], input: "Home\n").map(\.id) == [onPhone.id])
        // Up to date both ways: nothing more to do.
        #expect(try Self.syncNow(laptop) == SyncNowNotes(sent: 0, applied: 0, conflictCopies: 0, waiting: 0))
        #expect(try Self.syncNow(phone) == SyncNowNotes(sent: 0, applied: 0, conflictCopies: 0, waiting: 0))
        #expect(!laptop.daemonLog.contains("e2e-note-marker") && !phone.daemonLog.contains("e2e-note-marker"))
    }

    @Test func lateEditsOfOtherLinesMergeAndOfTheSameLineMakeAConflictCopy() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let note = try Self.newNote(laptop, "List\none\ntwo\nthree")
        _ = try Self.syncNow(laptop)
        _ = try Self.syncNow(phone)
        let onPhone = try #require(try Self.notes(phone)["List"])

        // Different lines, edited on both before either syncs: merged on both.
        try Self.edit(laptop, note.id, body: "List\nONE\ntwo\nthree")
        try Self.edit(phone, onPhone.id, body: "List\none\ntwo\nTHREE")
        _ = try Self.syncNow(laptop)
        _ = try Self.syncNow(phone)
        _ = try Self.syncNow(laptop)
        for device in [laptop, phone] {
            #expect(try Self.notes(device)["List"]?.body == "List\nONE\ntwo\nTHREE")
        }

        // The same line: the note keeps the version the server had first, the other is a copy.
        try Self.edit(laptop, note.id, body: "List\nONE\nlaptop\nTHREE")
        try Self.edit(phone, onPhone.id, body: "List\nONE\nphone\nTHREE")
        _ = try Self.syncNow(laptop)
        #expect(try Self.syncNow(phone).conflictCopies == 1)
        _ = try Self.syncNow(laptop)
        for device in [laptop, phone] {
            let notes = try Self.notes(device)
            #expect(notes["List"]?.body == "List\nONE\nlaptop\nTHREE")
            let copy = notes.first { $0.key.hasPrefix("List (conflict copy") }
            #expect(copy?.value.body == "List\nONE\nphone\nTHREE", "\(notes.keys.sorted())")
            #expect(notes.count == 2)
        }
    }

    @Test func anEditOutlivesADeletionMadeBeforeItAndADeletionForGoodFollows() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let note = try Self.newNote(laptop, "Trip\npassport")
        _ = try Self.syncNow(laptop)
        _ = try Self.syncNow(phone)
        let onPhone = try #require(try Self.notes(phone)["Trip"])

        // The laptop deletes the note while the phone edits it: the edit survives on both.
        #expect(try laptop.tresor(["note", "delete", note.id]).succeeded)
        try Self.edit(phone, onPhone.id, body: "Trip\npassport\ntickets")
        _ = try Self.syncNow(phone)
        _ = try Self.syncNow(laptop)
        _ = try Self.syncNow(phone)
        for device in [laptop, phone] {
            #expect(try Self.notes(device)["Trip"]?.body == "Trip\npassport\ntickets")
        }

        // Deleted for good from the version both hold: gone from both.
        #expect(try laptop.tresor(["note", "delete", note.id]).succeeded)
        #expect(try laptop.tresor(["note", "trash", "delete", note.id]).succeeded)
        #expect(try Self.syncNow(laptop).sent == 1)
        #expect(try Self.syncNow(phone).applied == 1)
        #expect(try Self.notes(phone)["Trip"] == nil)
        #expect(try phone.json([NoteSummary].self, ["note", "trash", "list"]).isEmpty)
    }

    @Test func aLockedNoteOpensOnTheOtherDeviceWithItsPassphraseAndLateLockedEditsMakeACopy() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let passphrase = "e2e-notes-passphrase-" + UUID().uuidString.prefix(8)
        let set = try laptop.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n")
        #expect(set.succeeded, "\(set.stderr)")
        let note = try Self.newNote(laptop, "Bank\ne2e-locked-marker PIN 4711")
        #expect(try laptop.tresor(["note", "lock", note.id]).succeeded)
        #expect(try Self.syncNow(laptop).sent == 1)
        #expect(try Self.syncNow(phone).applied == 1)

        // On the phone it is locked, and opens with the passphrase — which never left the laptop.
        let listed = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Bank" })
        #expect(listed.isLocked)
        let wrong = try phone.tresor(["note", "show", listed.id, "--passphrase-stdin", "--json"], input: "not-the-passphrase\n")
        #expect(!wrong.succeeded)
        let opened = try phone.json(OpenedNote.self, ["note", "show", listed.id, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(opened.body == "Bank\ne2e-locked-marker PIN 4711")

        // Both edit it (each with its session open): no key on the server to merge with, so the
        // later one is kept as a locked conflict copy.
        try Self.edit(laptop, note.id, body: "Bank\ne2e-locked-marker PIN 4711\nlaptop")
        try Self.edit(phone, listed.id, body: "Bank\ne2e-locked-marker PIN 4711\nphone")
        _ = try Self.syncNow(laptop)
        #expect(try Self.syncNow(phone).conflictCopies == 1)
        _ = try Self.syncNow(laptop)
        for device in [laptop, phone] {
            let notes = try device.json([NoteSummary].self, ["note", "list"])
            #expect(notes.count == 2 && notes.allSatisfy(\.isLocked), "\(notes.map(\.title))")
            let bodies = try Set(notes.map { try device.json(OpenedNote.self, ["note", "show", $0.id]).body })
            #expect(bodies == ["Bank\ne2e-locked-marker PIN 4711\nlaptop", "Bank\ne2e-locked-marker PIN 4711\nphone"])
        }
        for device in [laptop, phone] {
            #expect(!device.daemonLog.contains("e2e-locked-marker") && !device.daemonLog.contains(passphrase))
        }
    }

    /// A notes passphrase set on the laptop, and a note written there — locked, or not — synced to
    /// the phone: the passphrase, the laptop's note and the phone's id of it.
    static func noteOnBoth(_ laptop: Harness, _ phone: Harness, _ text: String, locked: Bool) throws -> (String, NoteSummary, String) {
        let passphrase = "e2e-notes-passphrase-" + UUID().uuidString.prefix(8)
        #expect(try laptop.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n").succeeded)
        let note = try Self.newNote(laptop, text)
        if locked { #expect(try laptop.tresor(["note", "lock", note.id]).succeeded) }
        _ = try Self.syncNow(laptop)
        _ = try Self.syncNow(phone)
        let title = String(text.prefix { $0 != "\n" })
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == title })
        return (passphrase, note, onPhone.id)
    }

    /// A note on both devices, locked on the laptop (and synced) while the phone edits its
    /// `text`'s last line to `edited`, unlocked: the passphrase, the laptop's note, the phone's id.
    static func lockedThereEditedHere(
        _ laptop: Harness, _ phone: Harness, _ text: String, edited: String
    ) throws -> (String, NoteSummary, String) {
        let (passphrase, note, onPhone) = try noteOnBoth(laptop, phone, text, locked: false)
        #expect(try laptop.tresor(["note", "lock", note.id]).succeeded)
        _ = try syncNow(laptop)
        try edit(phone, onPhone, body: edited)
        return (passphrase, note, onPhone)
    }

    /// A note locked on the laptop while the phone edits it unlocked: the server keeps nothing
    /// of the phone's edit unlocked — the phone holds it, says so, and sends nothing of it again —
    /// until the note is locked there too; then it goes, locked, as a conflict copy beside the
    /// laptop's version, and both devices open both with the passphrase.
    @Test func anEditOfANoteLockedElsewhereMeanwhileStaysHereUntilLockedHere() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let (passphrase, note, onPhone) = try Self.noteOnBoth(laptop, phone, "Bank\ne2e-lock-race PIN 1234", locked: false)

        #expect(try laptop.tresor(["note", "lock", note.id]).succeeded)
        try Self.edit(phone, onPhone, body: "Bank\ne2e-lock-race PIN 5678")
        _ = try Self.syncNow(laptop)
        let said = try phone.tresor(["sync", "now"])
        #expect(said.stdout.hasPrefix("Keychain: sent 0, applied 0.\nNotes: sent "), "each count says what it counts: \(said.stdout)")
        #expect(said.stdout.contains("Held here: note \(onPhone) was locked on another device"), "\(said.stdout)")
        #expect(said.stdout.contains("tresor note lock \(onPhone)"), "\(said.stdout)")
        let again = try Self.syncNow(phone)
        #expect(again.heldUntilLocked == [onPhone] && again.conflictCopies == 0 && again.waiting == 1, "\(again)")
        #expect(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"]).notesHeldUntilLocked == 1)
        let status = try phone.tresor(["sync", "status"])
        #expect(status.stdout.contains("1 note edited here, locked on another device since"), "\(status.stdout)")
        #expect(try phone.json(OpenedNote.self, ["note", "show", onPhone]).body == "Bank\ne2e-lock-race PIN 5678", "the edit stays here")
        _ = try Self.syncNow(laptop)
        let onLaptop = try laptop.json([NoteSummary].self, ["note", "list"])
        #expect(onLaptop.map(\.id) == [note.id] && onLaptop.first?.isLocked == true, "no unlocked copy: \(onLaptop.map(\.title))")

        let locked = try phone.tresor(["note", "lock", onPhone, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(locked.succeeded, "\(locked.stderr)")
        let sent = try Self.syncNow(phone)
        #expect(sent.conflictCopies == 1 && sent.heldUntilLocked == nil && sent.waiting == 0, "\(sent)")
        _ = try Self.syncNow(phone)
        _ = try Self.syncNow(laptop)
        for device in [laptop, phone] {
            let notes = try device.json([NoteSummary].self, ["note", "list"])
            #expect(notes.count == 2 && notes.allSatisfy(\.isLocked), "\(notes.map { ($0.title, $0.isLocked) })")
            let bodies = try notes.map {
                try device.json(OpenedNote.self, ["note", "show", $0.id, "--passphrase-stdin"], input: passphrase + "\n").body
            }
            #expect(Set(bodies) == ["Bank\ne2e-lock-race PIN 1234", "Bank\ne2e-lock-race PIN 5678"], "\(bodies)")
        }
    }

    /// The same edit on a phone whose passphrase session is open: the sync locks the held edit
    /// itself and sends it at once, as a locked conflict copy.
    @Test func anEditOfANoteLockedElsewhereGoesLockedAtOnceWithASessionOpen() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let (passphrase, _, _) = try Self.lockedThereEditedHere(
            laptop, phone, "Locker\ne2e-lock-session code 1234", edited: "Locker\ne2e-lock-session code 5678")
        // Locking another note with the passphrase opens the phone's session.
        let other = try Self.newNote(phone, "Other\ne2e-lock-session")
        #expect(try phone.tresor(["note", "lock", other.id, "--passphrase-stdin"], input: passphrase + "\n").succeeded)

        let sent = try Self.syncNow(phone)
        #expect(sent.conflictCopies == 1 && sent.heldUntilLocked == nil && sent.waiting == 0, "\(sent)")
        _ = try Self.syncNow(laptop)
        let copy = try #require(try laptop.json([NoteSummary].self, ["note", "list"]).first { $0.title.contains("conflict copy") })
        #expect(copy.isLocked)
        let opened = try laptop.json(OpenedNote.self, ["note", "show", copy.id, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(opened.body == "Locker\ne2e-lock-session code 5678")
    }

    /// A held edit given up: the note moved to Recently Deleted on the phone, the laptop's locked
    /// note comes back there, and no copy is made.
    @Test func aHeldEditDeletedHereGivesTheNoteLockedElsewhereBack() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let (passphrase, note, onPhone) = try Self.lockedThereEditedHere(
            laptop, phone, "Alarm\ne2e-held-delete code 1234", edited: "Alarm\ne2e-held-delete code 5678")
        #expect(try Self.syncNow(phone).heldUntilLocked == [onPhone])

        #expect(try phone.tresor(["note", "delete", onPhone]).succeeded)
        let given = try Self.syncNow(phone)
        #expect(given.heldUntilLocked == nil && given.waiting == 0 && given.conflictCopies == 0, "\(given)")
        let notes = try phone.json([NoteSummary].self, ["note", "list"])
        #expect(notes.map(\.id) == [onPhone] && notes.first?.isLocked == true, "\(notes.map { ($0.title, $0.isLocked) })")
        let opened = try phone.json(OpenedNote.self, ["note", "show", onPhone, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(opened.body == "Alarm\ne2e-held-delete code 1234")
        _ = try Self.syncNow(laptop)
        #expect(try laptop.json([NoteSummary].self, ["note", "list"]).map(\.id) == [note.id], "nothing new on the laptop")
    }

    /// A held edit whose note has its lock removed on the laptop meanwhile: nothing holds it any
    /// more — the phone's next sync sends it and the server merges it into the unlocked note.
    @Test func aHeldEditGoesOnceTheLockIsRemovedElsewhere() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let (_, note, onPhone) = try Self.lockedThereEditedHere(
            laptop, phone, "Garage\ne2e-held-unlock code 1234", edited: "Garage\ne2e-held-unlock code 5678")
        #expect(try Self.syncNow(phone).heldUntilLocked == [onPhone])

        let unlocked = try laptop.tresor(["note", "unlock", note.id])
        #expect(unlocked.succeeded, "\(unlocked.stderr)")
        _ = try Self.syncNow(laptop)
        let sent = try Self.syncNow(phone)
        #expect(sent.heldUntilLocked == nil && sent.waiting == 0 && sent.sent == 1 && sent.conflictCopies == 0, "\(sent)")
        _ = try Self.syncNow(laptop)
        for (device, id) in [(laptop, note.id), (phone, onPhone)] {
            let notes = try device.json([NoteSummary].self, ["note", "list"])
            #expect(notes.map(\.id) == [id] && notes.first?.isLocked == false, "\(notes.map { ($0.title, $0.isLocked) })")
            #expect(try device.json(OpenedNote.self, ["note", "show", id]).body == "Garage\ne2e-held-unlock code 5678")
        }
    }

    /// A locked note pinned and moved on the laptop, whose locked text it did not change, while
    /// the phone edits that text: both go — pinned, in its folder, with the phone's text — and no
    /// copy of the older text appears.
    @Test func aLockedNotePinnedOnOneDeviceWhileTheOtherEditsItKeepsBoth() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let (passphrase, note, onPhone) = try Self.noteOnBoth(laptop, phone, "Vault\ne2e-pinned-lock combination 1234", locked: true)
        _ = try phone.json(OpenedNote.self, ["note", "show", onPhone, "--passphrase-stdin"], input: passphrase + "\n")

        #expect(try laptop.tresor(["note", "edit", note.id, "--pin"]).succeeded)
        #expect(try laptop.tresor(["note", "edit", note.id, "--folder", "-"], input: "Safe\n").succeeded)
        try Self.edit(phone, onPhone, body: "Vault\ne2e-pinned-lock combination 5678")
        _ = try Self.syncNow(phone)
        let laptopSync = try Self.syncNow(laptop)
        #expect(laptopSync.conflictCopies == 0, "\(laptopSync)")
        _ = try Self.syncNow(phone)
        for (device, id) in [(laptop, note.id), (phone, onPhone)] {
            let notes = try device.json([NoteSummary].self, ["note", "list"])
            #expect(notes.map(\.id) == [id], "no copy: \(notes.map(\.title))")
            #expect(notes.first?.isPinned == true && notes.first?.folder == "Safe" && notes.first?.isLocked == true)
            let opened = try device.json(OpenedNote.self, ["note", "show", id, "--passphrase-stdin"], input: passphrase + "\n")
            #expect(opened.body == "Vault\ne2e-pinned-lock combination 5678")
        }
    }

    /// Over the web account's storage quota, a device's note waits — `tresor sync status` counts
    /// it — and the others go; made smaller, it goes.
    @Test func aNoteOverTheAccountsQuotaWaitsAndTheOthersGo() async throws {
        let (cluster, _, laptop, phone) = try await SyncE2E.twoJoinedDevicesAndBrowser(configuration: ["webAccountQuotaBytes": 20_000])
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        _ = try Self.newNote(laptop, "Before\nsmall")
        let big = try Self.newNote(laptop, "Big\n" + String(repeating: "b", count: 30_000))
        _ = try Self.newNote(laptop, "After\nsmall too")
        let first = try Self.syncNow(laptop)
        #expect(first.sent == 2 && first.waiting == 1, "\(first)")
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).notesWaiting == 1)
        #expect(try Self.syncNow(phone).applied == 2)
        #expect(Set(try Self.notes(phone).keys) == ["Before", "After"])

        try Self.edit(laptop, big.id, body: "Big\nnow small")
        #expect(try Self.syncNow(laptop).sent == 1)
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).notesWaiting == 0)
        #expect(try Self.syncNow(phone).applied == 1)
        #expect(try Self.notes(phone)["Big"]?.body == "Big\nnow small")
    }
}
