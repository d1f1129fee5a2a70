import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// `tresor backup create|verify|restore` with the real binaries (docs/FORMAT.md, "Backups";
/// README, "Backups"): what a backup holds, where it restores, and what it leaves alone.
@Suite(.blocksItsThread, .serialized) struct BackupTests {
    /// The backup rules of docs/FORMAT.md, "Backups": every item class × protection class goes into
    /// the backup and back into the same home — but `whenPasscodeSetThisDeviceOnly`, never written
    /// — with its attributes (dates too) and secret; into another home, the `…ThisDeviceOnly` items
    /// stay out and the report says so, item by item.
    @Test func everyItemClassAndProtectionClassRoundTripsIntoTheSameHomeAndOnlyTheOthersIntoAnotherHome() throws {
        let home = try BackupHome()
        try home.addEveryItem()
        try expectSucceeded(
            home.harness.tresor(
                ["app", "register", "--id", "BKTEAM.tool", "--team", "BKTEAM", "--exe", "/bin/true", "--group", "BKTEAM.shared", "--passcode-stdin"],
                input: home.passcode + "\n"))
        let applications = try home.harness.json([Application].self, ["app", "list"])
        let before = try home.items()
        #expect(before.count == 4 * 7 + 1)
        let file = home.harness.root.appendingPathComponent("home.tresor-backup")
        let created = try home.backup(to: file)
        #expect(created.count(.item, .backedUp) == 4 * 6 + 1)
        #expect(created.count(.item, .leftOut) == 4)
        #expect(created.entries.filter { $0.reason == .passcodeSetOnly }.count == 4)

        // The same home, its items deleted: everything but whenPasscodeSetThisDeviceOnly comes back as it was.
        for itemClass in BackupHome.itemClasses {
            // Certificates sit in groups not the tresor tool's own: deleting them needs the passcode.
            try expectSucceeded(
                home.harness.tresor(["item", "delete", "--class", itemClass.rawValue, "--all", "--passcode-stdin"], input: home.passcode + "\n"))
        }
        let (result, restored) = try home.restore(file, passphrase: home.backupPassphrase)
        try expectSucceeded(result)
        let report = try #require(restored)
        #expect(report.sameHome == true)
        #expect(report.count(.item, .restored) == 4 * 6 + 1)
        #expect(report.entries.filter { $0.kind == .item && $0.reason == .passcodeSetOnly }.count == 4)
        let after = try home.items()
        for (key, item) in before {
            if key.hasSuffix(ProtectionClass.whenPasscodeSetThisDeviceOnly.rawValue) {
                #expect(after[key] == nil, "\(key) is never in a backup")
                continue
            }
            let back = try #require(after[key], "\(key) was not restored")
            #expect(back.attributes == item.attributes, "\(key): attributes and dates as they were")
            #expect(BackupHome.secretText(back) == home.secrets[key], "\(key): its secret")
            #expect(back.id == item.id, "\(key): the same item, by its id")
        }

        // Another home: the …ThisDeviceOnly items are sealed with the first home's device key.
        let other = try BackupHome(name: "b")
        other.harness.secrets += home.harness.secrets
        let (otherResult, otherRestored) = try other.restore(file, passphrase: home.backupPassphrase, arguments: ["--allow-applications"])
        try expectSucceeded(otherResult)
        let otherReport = try #require(otherRestored)
        #expect(otherReport.sameHome == false)
        #expect(otherReport.count(.item, .restored) == 4 * 3 + 1)
        let deviceBound = otherReport.entries.filter { $0.reason == .deviceBoundToAnotherHome }
        #expect(deviceBound.count == 4 * 3, "each device-bound item reported: \(deviceBound.map(\.description))")
        let otherItems = try other.items()
        for (key, item) in before {
            let protectionClass = key == "presence" ? ProtectionClass.whenUnlocked : ProtectionClass(rawValue: String(key.split(separator: "/")[1]))!
            if protectionClass.isThisDeviceOnly {
                #expect(otherItems[key] == nil, "\(key) restores only into the home it was made in")
            } else {
                let back = try #require(otherItems[key], "\(key) was not restored into the other home")
                #expect(back.attributes == item.attributes && BackupHome.secretText(back) == home.secrets[key], "\(key)")
            }
        }
        // The application registry came along.
        #expect(otherReport.count(.application, .restored) == 1)
        #expect(try other.harness.json([Application].self, ["app", "list"]) == applications)
        // The user-presence item still needs the passcode there.
        let presence = try other.harness.tresor(["item", "get", "--service", "bk.presence", "--account", "ada"], input: "")
        #expect(!presence.succeeded)
        // The text report names what stayed out and why.
        let text = try other.harness.tresor(
            ["backup", "restore", file.path, "--passcode-stdin", "--dry-run"], input: "\(other.passcode)\n\(home.backupPassphrase)\n")
        #expect(text.succeeded && text.stdout.contains("ThisDeviceOnly item of another home") && text.stdout.contains("Already present"))
    }

    /// Notes come back with folders, pins and dates; locked notes — made in Tresor or imported
    /// still locked from Apple Notes — stay sealed as they were and open with their passphrase;
    /// attachments come back byte for byte, but the one left out of backups; a web account
    /// signs in again with its password and finds its note.
    @Test func notesAttachmentsAndWebAccountsRoundTripAndLockedNotesOpenWithTheirPassphrase() throws {
        let home = try BackupHome(web: true)
        try home.addNotes()
        var browser = WebBrowser(try #require(home.web))
        let webPassword = home.marked("web-password")
        home.harness.secrets.append(webPassword)
        let webBody = home.marked("web-body")
        #expect(try browser.register("bea", webPassword).status == 201)
        _ = try browser.createNote(title: home.marked("web-title"), body: webBody)
        // The flag set and cleared later: the plain attachment is in the backup again.
        let plainID = try #require(home.noteIDs["plain"]), plainAttachment = try #require(home.attachmentIDs["plain-attachment"])
        let excluded = try home.harness.json(AttachmentInfo.self, ["note", "attachment-backup", plainID, plainAttachment, "--exclude"])
        #expect(excluded.excludedFromBackup == true)
        let included = try home.harness.json(AttachmentInfo.self, ["note", "attachment-backup", plainID, plainAttachment, "--include"])
        #expect(included.excludedFromBackup == nil)
        let notesBefore = try home.notes()
        // A note in Recently Deleted goes along, and comes back there, its revision as it was.
        let trashed = try home.harness.json(NoteSummary.self, ["note", "new", "--json"], input: "\(home.marked("trashed-title"))\nGone for now\n")
        try expectSucceeded(home.harness.tresor(["note", "delete", trashed.id]))
        let trashedBefore = try #require(try home.harness.json([NoteSummary].self, ["note", "trash", "list"]).first { $0.id == trashed.id })
        let file = home.harness.root.appendingPathComponent("notes.tresor-backup")
        let created = try home.backup(to: file)
        #expect(created.count(.note, .backedUp) == 5)
        #expect(created.count(.account, .backedUp) == 2)
        #expect(created.entries.contains { $0.kind == .attachment && $0.reason == .excludedFromBackup && $0.description == "excluded-attachment" })

        let other = try BackupHome(web: true, name: "b")
        other.harness.secrets += home.harness.secrets
        let (result, restored) = try other.restore(file, passphrase: home.backupPassphrase, arguments: ["--allow-web-account", "bea"])
        try expectSucceeded(result)
        let report = try #require(restored)
        #expect(report.count(.note, .restored) == 5)
        let trashedAfter = try #require(try other.harness.json([NoteSummary].self, ["note", "trash", "list"]).first { $0.id == trashed.id })
        #expect(trashedAfter.deleted == trashedBefore.deleted && trashedAfter.revision == trashedBefore.revision)
        #expect(try other.notes()[trashed.title] == nil, "still in Recently Deleted, not among the notes")
        #expect(report.count(.attachment, .restored) == 2)
        #expect(report.entries.contains { $0.kind == .attachment && $0.outcome == .skipped && $0.reason == .excludedFromBackup })
        // Notes are staged in batches on two threads, yet reported in the backup's order: each
        // attachment right after its note (or the note's other attachments).
        let noteOfAttachment = ["plain-attachment": "plain", "locked-attachment": "locked", "excluded-attachment": "plain"]
        for (index, entry) in report.entries.enumerated() where entry.kind == .attachment {
            let noteName = try #require(noteOfAttachment[entry.description])
            let owner = try #require(home.noteIDs[noteName])
            let before = report.entries[..<index].last { $0.kind != .attachment }
            #expect(before?.kind == .note && before?.id == owner, "\(entry.description) follows its note")
        }

        let notesAfter = try other.notes()
        for (title, note) in notesBefore {
            let back = try #require(notesAfter[title], "\(title) restored")
            #expect(back.id == note.id && back.created == note.created && back.modified == note.modified)
            #expect(back.isPinned == note.isPinned && back.folder == note.folder && back.isLocked == note.isLocked)
        }
        let plain = try other.harness.json(OpenedNote.self, ["note", "show", try #require(home.noteIDs["plain"])])
        #expect(plain.body == home.bodies["plain"])
        #expect(plain.attachments.map(\.name) == ["plain-attachment"], "the excluded attachment stays out")
        // The restored home has no passphrase of its own: the backup's is its current one.
        let lockedID = try #require(home.noteIDs["locked"])
        #expect(!(try other.harness.tresor(["note", "show", lockedID, "--json"], input: "")).succeeded, "locked, no session open")
        let locked = try other.harness.json(OpenedNote.self, ["note", "show", lockedID, "--passphrase-stdin"], input: home.notesPassphrase + "\n")
        #expect(locked.body == home.bodies["locked"])
        for (name, noteName) in [("plain-attachment", "plain"), ("locked-attachment", "locked")] {
            let out = other.harness.root.appendingPathComponent("exported-\(name)")
            try expectSucceeded(
                other.harness.tresor([
                    "note", "export-attachment", try #require(home.noteIDs[noteName]), try #require(home.attachmentIDs[name]), "--out", out.path,
                ]))
            #expect(try Data(contentsOf: out) == home.attachmentBytes[name], "\(name) byte for byte")
        }
        let apple = try #require(notesAfter["Encrypted title"])
        #expect(apple.isLocked && apple.lock?.source == .appleNotes)
        let appleOpened = try other.harness.json(OpenedNote.self, ["note", "show", apple.id, "--passphrase-stdin"], input: "password\n")
        #expect(appleOpened.body == "# Encrypted title\n\nEncrypted body", "Apple's title paragraph as a title, as the import makes it")
        // The web account, with its password hash, and its note.
        var otherBrowser = WebBrowser(try #require(other.web))
        #expect(try otherBrowser.signIn("bea", webPassword).status == 200)
        let listed = try otherBrowser.get("/api/notes").json?["notes"] as? [[String: Any]] ?? []
        #expect(listed.count == 1, "bea's note, and only hers")
    }

    /// Restoring the same file twice adds nothing; an item changed since is a conflict, kept as
    /// it is unless `--on-conflict replace`.
    @Test func restoringTheSameFileTwiceAddsNothingAndAConflictIsReportedThenReplacedOnRequest() throws {
        let home = try BackupHome()
        let secret = home.marked("secret")
        try expectSucceeded(
            home.harness.tresor(
                ["item", "add", "--service", "bk.twice", "--account", "ada", "--readable-by-scripts", "--secret-stdin"], input: secret))
        try home.newNote("twice")
        let file = home.harness.root.appendingPathComponent("twice.tresor-backup")
        _ = try home.backup(to: file)

        let other = try BackupHome(name: "b")
        other.harness.secrets += home.harness.secrets
        let first = try #require(try other.restore(file, passphrase: home.backupPassphrase).1)
        #expect(first.count(.item, .restored) == 1 && first.count(.note, .restored) == 1)
        let second = try #require(try other.restore(file, passphrase: home.backupPassphrase).1)
        #expect(second.count(.item, .restored) == 0 && second.count(.item, .alreadyPresent) == 1)
        #expect(second.count(.note, .restored) == 0 && second.count(.note, .alreadyPresent) == 1)
        #expect(try other.harness.json([KeychainItem].self, ["item", "find", "--service", "bk.twice"]).count == 1)
        #expect(try other.harness.json([NoteSummary].self, ["note", "list"]).count == 1)

        let changed = other.marked("changed")
        try expectSucceeded(other.harness.tresor(["item", "update", "--service", "bk.twice", "--account", "ada", "--secret-stdin"], input: changed))
        let third = try #require(try other.restore(file, passphrase: home.backupPassphrase).1)
        #expect(third.count(.item, .conflict) == 1)
        // The text report (which asks the daemon only for what was not restored or present) names it.
        let text = try other.harness.tresor(
            ["backup", "restore", file.path, "--passcode-stdin"], input: "\(other.passcode)\n\(home.backupPassphrase)\n")
        #expect(
            text.succeeded && text.stdout.contains("In conflict, kept as they are: 1 item") && text.stdout.contains("the home holds another version"))
        #expect(
            try other.harness.tresor(["item", "get", "--service", "bk.twice", "--account", "ada"]).stdout == changed, "a conflict keeps the home's")
        let replaced = try #require(try other.restore(file, passphrase: home.backupPassphrase, arguments: ["--on-conflict", "replace"]).1)
        #expect(replaced.count(.item, .replaced) == 1)
        #expect(try other.harness.tresor(["item", "get", "--service", "bk.twice", "--account", "ada"]).stdout == secret)
        #expect(try other.harness.json([KeychainItem].self, ["item", "find", "--service", "bk.twice"]).count == 1)
    }

    /// Items of a created keychain go into a backup with the login keychain's; they restore into
    /// a keychain of that name — skipped, and said so, until the home has one and it is unlocked.
    /// A backup or restore that left something out for now exits 2, saying what to run: a
    /// nightly script notices that the keychain is not in its backup.
    @Test func itemsOfACreatedKeychainRestoreIntoAKeychainOfThatNameOnceItExistsAndIsUnlocked() throws {
        let home = try BackupHome()
        let workPasscode = home.marked("work-passcode")
        home.harness.secrets.append(workPasscode)
        try expectSucceeded(home.harness.tresor(["keychain", "create", "work", "--passcode-stdin"], input: workPasscode + "\n"))
        let secret = home.marked("work-secret")
        try expectSucceeded(
            home.harness.tresor(
                ["item", "add", "--keychain", "work", "--service", "vpn", "--account", "ada", "--readable-by-scripts", "--secret-stdin"],
                input: secret))
        let file = home.harness.root.appendingPathComponent("work.tresor-backup")
        try expectSucceeded(home.harness.tresor(["lock", "--keychain", "work"]))
        let create = home.createCommand(out: file.path)
        let partial = try home.harness.tresor(create.arguments, input: create.input)
        #expect(partial.status == 2, "\(partial.stderr)")
        #expect(
            partial.stderr.contains("Not everything was backed up") && partial.stderr.contains("`tresor unlock --keychain work`"), "\(partial.stderr)"
        )
        try expectSucceeded(home.harness.tresor(["unlock", "--keychain", "work", "--passcode-stdin"], input: workPasscode + "\n"))
        let created = try home.backup(to: file)
        #expect(created.count(.item, .backedUp) == 1)

        let other = try BackupHome(name: "b")
        other.harness.secrets += home.harness.secrets
        let (missingRun, missingReport) = try other.restore(file, passphrase: home.backupPassphrase)
        let missing = try #require(missingReport)
        #expect(missing.entries.contains { $0.keychain == "work" && $0.reason == .keychainMissing })
        #expect(missingRun.status == 2 && missingRun.stderr.contains("`tresor keychain create work`"), "\(missingRun.stderr)")
        try expectSucceeded(other.harness.tresor(["keychain", "create", "work", "--passcode-stdin"], input: workPasscode + "\n"))
        try expectSucceeded(other.harness.tresor(["lock", "--keychain", "work"]))
        let locked = try #require(try other.restore(file, passphrase: home.backupPassphrase).1)
        #expect(locked.entries.contains { $0.keychain == "work" && $0.reason == .keychainLocked })
        try expectSucceeded(other.harness.tresor(["unlock", "--keychain", "work", "--passcode-stdin"], input: workPasscode + "\n"))
        let (restoredRun, restoredReport) = try other.restore(file, passphrase: home.backupPassphrase)
        let restored = try #require(restoredReport)
        #expect(restored.count(.item, .restored) == 1 && restoredRun.status == 0, "\(restoredRun.stderr)")
        #expect(try other.harness.tresor(["item", "get", "--keychain", "work", "--service", "vpn", "--account", "ada"]).stdout == secret)
    }

    /// A wrong backup passphrase is a clear error; the target home is left byte for byte.
    @Test func aWrongBackupPassphraseIsAClearErrorAndWritesNothing() throws {
        let home = try BackupHome()
        try home.newNote("wrong")
        let file = home.harness.root.appendingPathComponent("wrong.tresor-backup")
        _ = try home.backup(to: file)
        let before = try home.homeSnapshot()
        let wrong = home.marked("not-the-passphrase")
        home.harness.secrets.append(wrong)
        let result = try home.harness.tresor(["backup", "restore", file.path, "--passcode-stdin"], input: "\(home.passcode)\n\(wrong)\n")
        #expect(!result.succeeded)
        #expect(result.stderr.contains("backup passphrase does not open this file"), "\(result.stderr)")
        #expect(try home.homeSnapshot() == before)
        let verify = try home.harness.tresor(["backup", "verify", file.path, "--passphrase-stdin"], input: wrong + "\n")
        #expect(!verify.succeeded && verify.stderr.contains("passphrase"))
    }

    /// A work factor outside 14–20 is refused before anything is written: below, a guess costs
    /// next to nothing; above, age's readers (Tresor's too) refuse the file.
    @Test(arguments: [13, 21]) func aWorkFactorOutsideTheRangeIsRefusedAndWritesNothing(workFactor: Int) throws {
        let home = try BackupHome()
        let file = home.harness.root.appendingPathComponent("range.tresor-backup")
        let create = home.createCommand(out: file.path, workFactor: workFactor)
        let result = try home.harness.tresor(create.arguments, input: create.input)
        #expect(!result.succeeded && result.stderr.contains("the work factor is log2(N), 14 to 20"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    /// What a damaged file can be. Each is refused with a clear error before the home changes.
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case truncated, lastBytesCut, chunkSwapped, bitFlipped, empty, notAgeAtAll
        var testDescription: String { rawValue }
    }

    @Test(arguments: Damage.allCases)
    func aDamagedFileIsRefusedAndTheHomeIsLeftByteForByte(damage: Damage) throws {
        let home = try BackupHome()
        try home.newNote("source")
        try home.attach("a", to: try #require(home.noteIDs["source"]), kind: "file", size: 400_000)
        let good = home.harness.root.appendingPathComponent("good.tresor-backup")
        _ = try home.backup(to: good)
        // The target: another home with content of its own.
        let target = try BackupHome(name: "target")
        target.harness.secrets += home.harness.secrets
        try target.newNote("own")
        let bytes = try Data(contentsOf: good)
        let damaged = target.harness.root.appendingPathComponent("damaged.tresor-backup")
        switch damage {
        case .truncated: try bytes.prefix(bytes.count / 2).write(to: damaged)
        case .lastBytesCut: try bytes.dropLast(1).write(to: damaged)
        case .chunkSwapped:
            // The payload's chunks are 64 KiB + 16; the header ends at the first "\n---" line.
            let headerEnd = try #require(bytes.range(of: Data("\n--- ".utf8))).upperBound
            let payload = try #require(bytes[headerEnd...].firstIndex(of: 0x0A)) + 1 + 16
            let size = 65_536 + 16
            var swapped = bytes
            swapped.replaceSubrange(payload..<(payload + size), with: bytes[(payload + size)..<(payload + 2 * size)])
            swapped.replaceSubrange((payload + size)..<(payload + 2 * size), with: bytes[payload..<(payload + size)])
            try swapped.write(to: damaged)
        case .bitFlipped:
            var flipped = bytes
            flipped[flipped.count - 5000] ^= 0x20
            try flipped.write(to: damaged)
        case .empty: try Data().write(to: damaged)
        case .notAgeAtAll: try Data("PK\u{03}\u{04} a zip file, say".utf8).write(to: damaged)
        }
        let before = try target.homeSnapshot()
        let (result, _) = try target.restore(damaged, passphrase: home.backupPassphrase)
        #expect(!result.succeeded, "\(damage) restored")
        let words = ["cut short", "changed", "not an age file", "not a Tresor backup", "damaged", "extra bytes"]
        #expect(words.contains { result.stdout.contains($0) }, "\(damage): \(result.stdout)")
        #expect(result.stdout.count < 2000)
        let after = try target.homeSnapshot()
        #expect(after == before, "\(damage): the home changed: \(BackupHome.differences(before, after))")
        #expect(!FileManager.default.fileExists(atPath: target.harness.paths.home.appendingPathComponent("restore-staging").path))
        // Verify says the same, and the good file still restores.
        let verify = try target.harness.tresor(["backup", "verify", damaged.path, "--passphrase-stdin"], input: home.backupPassphrase + "\n")
        #expect(!verify.succeeded)
        try expectSucceeded(target.restore(good, passphrase: home.backupPassphrase).0)
        #expect(try target.notes().count == 2)
    }

    /// A backup needs the user: without the passcode (and no terminal to ask on) nothing is written;
    /// a wrong passcode is refused and counted.
    @Test func aBackupNeedsThePasscodeAndAnExistingFileIsReplacedWholeOrNotAtAll() throws {
        let home = try BackupHome()
        try home.newNote("presence")
        let file = home.harness.root.appendingPathComponent("presence.tresor-backup")
        let old = Data("an older backup".utf8)
        try old.write(to: file)
        let withoutPasscode = try home.harness.run(
            URL(fileURLWithPath: "/usr/bin/setsid"),
            [
                "--wait", Harness.binaries.appendingPathComponent("tresor").path,
                "backup", "create", "--out", file.path, "--passphrase-stdin", "--work-factor", "14",
            ],
            input: "\(home.backupPassphrase)\n\(home.backupPassphrase)\n")
        #expect(!withoutPasscode.succeeded && withoutPasscode.stderr.contains("passcode"), "\(withoutPasscode.stderr)")
        #expect(try Data(contentsOf: file) == old)
        let wrongPasscode = home.marked("wrong-passcode")
        home.harness.secrets.append(wrongPasscode)
        let wrong = try home.harness.tresor(
            ["backup", "create", "--out", file.path, "--passcode-stdin", "--work-factor", "14"],
            input: "\(wrongPasscode)\n\(home.backupPassphrase)\n\(home.backupPassphrase)\n")
        #expect(!wrong.succeeded && wrong.stderr.contains("wrong passcode"), "\(wrong.stderr)")
        #expect(try Data(contentsOf: file) == old)
        #expect(try home.harness.status().failedAttempts == 1)
        _ = try home.backup(to: file)
        // A restore checks the passcode beside the passphrase's KDF: a wrong one is refused with
        // the right passphrase, counted, and nothing is staged.
        let notesBefore = try home.notes().count
        let wrongRestore = try home.harness.tresor(
            ["backup", "restore", file.path, "--passcode-stdin"], input: "\(wrongPasscode)\n\(home.backupPassphrase)\n")
        #expect(!wrongRestore.succeeded && wrongRestore.stderr.contains("wrong passcode"), "\(wrongRestore.stderr)")
        #expect(try home.harness.status().failedAttempts == 1, "counted anew since the backup's right passcode")
        #expect(try home.notes().count == notesBefore)
        #expect(!FileManager.default.fileExists(atPath: home.harness.paths.home.appendingPathComponent("restore-staging").path))
        #expect(try Data(contentsOf: file) != old)
        #expect(!FileManager.default.fileExists(atPath: file.path + ".partial"))
        try expectSucceeded(home.harness.tresor(["backup", "verify", file.path, "--passphrase-stdin"], input: home.backupPassphrase + "\n"))
        // A locked home is neither backed up nor restored into.
        try expectSucceeded(home.harness.tresor(["lock"]))
        let locked = try home.harness.tresor(
            ["backup", "restore", file.path, "--passcode-stdin"], input: "\(home.passcode)\n\(home.backupPassphrase)\n")
        #expect(!locked.succeeded && locked.stderr.contains("locked"))
    }

    /// No marker of any secret, title, body or attachment in the backup file, in either home after
    /// a restore, or in either daemon's log; no passcode or passphrase in any command's output.
    @Test func noSecretTitleBodyOrAttachmentAppearsInTheBackupFileTheHomesOrTheLogs() throws {
        let home = try BackupHome()
        try home.addEveryItem()
        try home.addNotes()
        let file = home.harness.root.appendingPathComponent("scan.tresor-backup")
        _ = try home.backup(to: file)
        let other = try BackupHome(name: "b")
        other.harness.secrets += home.harness.secrets
        try expectSucceeded(other.restore(file, passphrase: home.backupPassphrase).0)
        let marker = Data(BackupHome.marker.utf8)
        #expect(try Data(contentsOf: file).range(of: marker) == nil, "a marker in the backup file")
        for harness in [home.harness, other.harness] {
            for (url, data) in try harness.homeFiles() {
                #expect(data.range(of: marker) == nil, "a marker in \(url.path)")
            }
            #expect(!harness.daemonLog.contains(BackupHome.marker), "a marker in the daemon log")
            try harness.expectNoSecretLeaked()
        }
    }
}
