import Foundation
import Testing
import TresorBackup
import TresorCrypto
import TresorKit
import TresorNotes
import TresorProtocol
import TresorTestSupport

/// Backups someone else made, handed to the user (docs/SECURITY.md, "Restoring a handed backup";
/// docs/FORMAT.md, "Restoring"): a restore plants no application, no web login and no note in
/// another account without the user's consent to each, never gives a generic client (an
/// interpreter, secret-tool, a name the configuration adds) another application's groups, reports
/// each record as it is, and refuses what the format forbids.
///
/// Each hostile backup is a real backup of an attacker's home (`tresor backup create`), its
/// records rewritten where the attack needs it and written again with the project's own
/// ``RecordStreamWriter``.
///
/// The backups that plant applications, and those whose records are dropped or forbidden, are
/// restored by a daemon running as an unprivileged user (``TestUser``), as a user's daemon runs —
/// a daemon running as root identifies no executable by its path — and the planted interpreter is
/// then run as that user against it. The web accounts' and a team account's backups run as the
/// test runner: the embedded web server answers its owner's uid only, and the team's application
/// is the test runner itself.
@Suite(.blocksItsThread, .serialized) struct HostileBackupTests {
    /// The interpreter the attack registers: python3's real file (a symlink's hash is its target's).
    static let python = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path
    /// The secret-dispensing client the attack registers.
    static let secretTool = URL(fileURLWithPath: "/usr/bin/secret-tool").resolvingSymlinksInPath().path

    @Test(.enabled(if: TestUser.available, "needs root, to run the daemons and clients as an unprivileged user"))
    func aBackupRegistersNoApplicationWithoutConsentAndNeverAnInterpreterWithAnotherApplicationsGroups() throws {
        let user = try TestUser.shared.get()
        let victim = try BackupHome(name: "victim", user: user)
        try expectSucceeded(
            victim.harness.tresor(
                ["app", "register", "--id", "VICT.tool", "--team", "VICT", "--exe", "/bin/true", "--group", "VICT.shared", "--passcode-stdin"],
                input: victim.passcode + "\n"))
        // What the attack is after: the victim's secret in the group it shares.
        let shared = victim.marked("shared")
        try expectSucceeded(
            victim.harness.tresor(
                ["item", "add", "--service", "vict.example", "--account", "ada", "--group", "VICT.shared", "--secret-stdin", "--passcode-stdin"],
                input: victim.passcode + "\n" + shared))
        let attacker = try BackupHome(name: "mallory", user: user)
        let file = try Self.handedBackup(
            registering: ["--id", "VICT.py", "--team", "VICT", "--exe", Self.python, "--group", "VICT.shared"], from: attacker, to: victim)

        // The dry run lists each application by executable and groups, and restores none unasked.
        let dryRun = try victim.harness.tresor(
            ["backup", "restore", file.path, "--passcode-stdin", "--dry-run"], input: "\(victim.passcode)\n\(attacker.backupPassphrase)\n")
        try expectSucceeded(dryRun)
        #expect(
            dryRun.stdout.contains(Self.python) && dryRun.stdout.contains("VICT.shared") && dryRun.stdout.contains("/usr/bin/env"),
            "each application by executable and groups: \(dryRun.stdout)")
        #expect(dryRun.stdout.contains("--allow-applications"), "says how to consent: \(dryRun.stdout)")
        let (plain, plainReport) = try victim.restore(file, passphrase: attacker.backupPassphrase)
        try expectSucceeded(plain)
        let unasked = try #require(plainReport)
        #expect(unasked.count(.application, .restored) == 0)
        #expect(unasked.entries.filter { $0.kind == .application && $0.reason == .needsConsent }.count == 2)
        #expect(try victim.harness.json([Application].self, ["app", "list"]).map(\.applicationID) == ["VICT.tool"])

        // With consent: the other application comes, python never with VICT.tool's group.
        let (allowed, allowedReport) = try victim.restore(file, passphrase: attacker.backupPassphrase, arguments: ["--allow-applications"])
        try expectSucceeded(allowed)
        let report = try #require(allowedReport)
        let pythonEntry = try #require(report.entries.first { $0.kind == .application && $0.id == "VICT.py" })
        #expect(pythonEntry.outcome == .skipped && pythonEntry.reason == .genericClientGroups, "\(pythonEntry)")
        #expect(pythonEntry.description.contains(Self.python) && pythonEntry.description.contains("VICT.shared"))
        #expect(try victim.harness.json([Application].self, ["app", "list"]).map(\.applicationID) == ["MAL.env", "VICT.tool"])
        // Any Python script of the user asks for the shared secret: it is not VICT.py.
        let read = try Self.pythonSearch(victim.harness, service: "vict.example", group: "VICT.shared", revealing: shared)
        #expect(!read.contains(Data(shared.utf8).base64EncodedString()), "a Python script read another application's secret after the restore")
        #expect(read.hasPrefix("403 ") || read.hasPrefix("404 "), "refused: \(read.prefix(200))")

        // Consent to one application by its id leaves the others out.
        let other = try BackupHome(name: "other")
        other.harness.secrets += attacker.harness.secrets
        let (one, oneReport) = try other.restore(file, passphrase: attacker.backupPassphrase, arguments: ["--allow-application", "MAL.env"])
        try expectSucceeded(one)
        #expect(try #require(oneReport).count(.application, .restored) == 1)
        #expect(try other.harness.json([Application].self, ["app", "list"]).map(\.applicationID) == ["MAL.env"])

        // Consent to what the backup does not hold is a typo, or the wrong file: refused, saying
        // what it holds, with nothing restored — a dry run says so too.
        let typo = try BackupHome(name: "typo")
        typo.harness.secrets += attacker.harness.secrets
        let before = try typo.homeSnapshot()
        for dryRun in [["--dry-run"], []] {
            let (refused, _) = try typo.restore(
                file, passphrase: attacker.backupPassphrase, arguments: ["--allow-application", "MAL.evn", "--allow-web-account", "nobody"] + dryRun)
            #expect(refused.status == 1, "\(refused.stdout)")
            #expect(
                refused.stdout.contains("the backup holds no application MAL.evn (it holds: ") && refused.stdout.contains("MAL.env")
                    && refused.stdout.contains("no web account nobody") && refused.stdout.contains("nothing was restored"), "\(refused.stdout)")
        }
        #expect(try typo.homeSnapshot() == before, "a refused restore changed the home")
    }

    /// Secret-dispensing clients are generic clients as interpreters are: `secret-tool lookup`
    /// run by any process of the user hands out whatever its groups hold, and a registered
    /// application on the Secret Service is never put to the user. So a backup never gives
    /// secret-tool, nor a program the user's config.json lists among the generic clients, another
    /// application's groups — even with consent to every application.
    @Test(.enabled(if: TestUser.available, "needs root, to run the daemons and clients as an unprivileged user"))
    func aBackupNeverGivesSecretToolOrAConfiguredGenericClientAnotherApplicationsGroups() throws {
        let user = try TestUser.shared.get()
        let victim = try BackupHome(name: "victim", user: user, configuration: #"{"secretServiceGenericClients": ["keeper"]}"#)
        try expectSucceeded(
            victim.harness.tresor(
                ["app", "register", "--id", "VICT.tool", "--team", "VICT", "--exe", "/bin/true", "--group", "VICT.shared", "--passcode-stdin"],
                input: victim.passcode + "\n"))
        let attacker = try BackupHome(name: "mallory", user: user)
        // A program no table knows by its contents, under the name the victim's configuration lists.
        let keeper = attacker.harness.root.appendingPathComponent("keeper")
        try FileManager.default.copyItem(atPath: "/bin/echo", toPath: keeper.path)
        for options in [
            ["--id", "VICT.st", "--team", "VICT", "--exe", Self.secretTool, "--group", "VICT.shared"],
            ["--id", "VICT.keeper", "--team", "VICT", "--exe", keeper.path, "--group", "VICT.shared"],
        ] {
            try expectSucceeded(attacker.harness.tresor(["app", "register"] + options + ["--passcode-stdin"], input: attacker.passcode + "\n"))
        }
        let made = try Self.handedBackup(registering: ["--id", "MAL.py", "--team", "MAL", "--exe", Self.python], from: attacker, to: victim)
        // No daemon registers a generic client for the Secret Service: the attacker writes the file so.
        let file = try HostileBackup.rewrite(made, passphrase: attacker.backupPassphrase) { record in
            guard case .application(var application) = record, application.applicationID.hasPrefix("VICT.") else { return [record] }
            application.usesSecretService = true
            return [.application(application)]
        }

        let (allowed, allowedReport) = try victim.restore(file, passphrase: attacker.backupPassphrase, arguments: ["--allow-applications"])
        try expectSucceeded(allowed)
        let report = try #require(allowedReport)
        for (id, executable) in [("VICT.st", Self.secretTool), ("VICT.keeper", keeper.path)] {
            let entry = try #require(report.entries.first { $0.kind == .application && $0.id == id })
            #expect(entry.outcome == .skipped && entry.reason == .genericClientGroups, "\(entry)")
            #expect(entry.description.contains(executable) && entry.description.contains("VICT.shared"), "\(entry)")
        }
        #expect(try victim.harness.json([Application].self, ["app", "list"]).map(\.applicationID) == ["MAL.env", "MAL.py", "VICT.tool"])
        // The dry run and the text report say why, executable by executable.
        let dryRun = try victim.harness.tresor(
            ["backup", "restore", file.path, "--passcode-stdin", "--dry-run", "--allow-applications"],
            input: "\(victim.passcode)\n\(attacker.backupPassphrase)\n")
        try expectSucceeded(dryRun)
        let refusals = dryRun.stdout.split(separator: "\n").filter { $0.contains("never given another application's groups") }
        #expect(refusals.count == 2, "\(dryRun.stdout)")
        #expect(refusals.contains { $0.contains(Self.secretTool) } && refusals.contains { $0.contains(keeper.path) }, "\(dryRun.stdout)")
    }

    /// On a terminal, with no `--allow-…` option, the CLI checks the file first and asks about
    /// each application, one by one; only those the user says yes to are registered.
    @Test(.enabled(if: TestUser.available, "needs root, to run the daemons and clients as an unprivileged user"))
    func onATerminalEachApplicationIsAskedAboutOneByOne() throws {
        let user = try TestUser.shared.get()
        let victim = try BackupHome(name: "victim", user: user)
        let attacker = try BackupHome(name: "mallory", user: user)
        let file = try Self.handedBackup(registering: ["--id", "MAL.py", "--team", "MAL", "--exe", Self.python], from: attacker, to: victim)

        // The passcode and the backup passphrase typed at their prompts; each "Register it?" answered
        // yes only for MAL.env.
        let screen = try victim.harness.onTerminal(
            ["backup", "restore", file.path],
            prompts: [
                Terminal.Prompt(endingWith: "Passcode:", send: victim.passcode),
                Terminal.Prompt(endingWith: "passphrase:", send: attacker.backupPassphrase),
                Terminal.Prompt(endingWith: "[y/N]", showing: "MAL.env", send: "y"),
                Terminal.Prompt(endingWith: "[y/N]", send: "n"),
            ], timeout: 180)
        #expect(screen.status == 0, "\(screen.text)")
        #expect(screen.text.contains("Register it? [y/N]") && screen.text.contains(Self.python), "asked about each: \(screen.text)")
        #expect(try victim.harness.json([Application].self, ["app", "list"]).map(\.applicationID) == ["MAL.env"], "only the one allowed")
    }

    @Test func aBackupCreatesNoWebLoginWithoutConsentAndPutsNoNoteIntoAnAccountItDoesNotHold() throws {
        let victim = try BackupHome(web: true, name: "victim")
        var bea = WebBrowser(try #require(victim.web))
        let beaPassword = victim.marked("bea-password")
        victim.harness.secrets.append(beaPassword)
        #expect(try bea.register("bea", beaPassword).status == 201)
        let beaID = try #require(bea.accountID)

        let attacker = try BackupHome(web: true, name: "mallory")
        var mallory = WebBrowser(try #require(attacker.web))
        let malloryPassword = attacker.marked("mallory-password")
        attacker.harness.secrets.append(malloryPassword)
        #expect(try mallory.register("mallory", malloryPassword).status == 201)
        try attacker.newNote("planted")
        let made = attacker.harness.root.appendingPathComponent("made.tresor-backup")
        _ = try attacker.backup(to: made)
        victim.harness.secrets += attacker.harness.secrets

        // The web login: listed by its login name, not restored unasked; mallory cannot sign in.
        let dryRun = try victim.harness.tresor(
            ["backup", "restore", made.path, "--passcode-stdin", "--dry-run"], input: "\(victim.passcode)\n\(attacker.backupPassphrase)\n")
        #expect(dryRun.succeeded && dryRun.stdout.contains("mallory") && dryRun.stdout.contains("--allow-web-accounts"), "\(dryRun.stdout)")
        let (plain, plainReport) = try victim.restore(made, passphrase: attacker.backupPassphrase)
        try expectSucceeded(plain)
        let plainEntries = try #require(plainReport).entries
        let account = try #require(plainEntries.first { $0.kind == .account && $0.description.contains("mallory") })
        #expect(account.outcome == .skipped && account.reason == .needsConsent, "\(account)")
        var intruder = WebBrowser(try #require(victim.web))
        #expect(try intruder.signIn("mallory", malloryPassword).status != 200, "no web login planted")

        // The planted note rewritten into bea's account, and shared with her from the local one:
        // neither reaches her, even with consent to web accounts.
        let planted = try #require(attacker.noteIDs["planted"])
        let hostile = try HostileBackup.rewrite(made, passphrase: attacker.backupPassphrase) { record in
            guard case .note(var note) = record, note.id == planted else { return [record] }
            var shared = note
            shared.id = UUID().uuidString.lowercased()
            shared.participants = [try JSONDecoder().decode(BackedUpParticipant.self, from: Data(#"{"account": "\#(beaID)", "added": 1}"#.utf8))]
            note.account = beaID
            return [.note(note), .note(shared)]
        }
        let (into, intoReport) = try victim.restore(hostile, passphrase: attacker.backupPassphrase, arguments: ["--allow-web-accounts"])
        try expectSucceeded(into)
        let notes = try #require(intoReport).entries.filter { $0.kind == .note }
        let intoBea = try #require(notes.first { $0.id == planted })
        #expect(intoBea.outcome == .skipped && intoBea.reason == .accountNotInBackup, "\(intoBea)")
        let listed = try bea.get("/api/notes").json?["notes"] as? [[String: Any]] ?? []
        #expect(listed.isEmpty, "nothing reaches bea: \(listed)")
    }

    /// A team's notes account (`team:ID`) has no login, and is the notes of that team's
    /// registered applications: a handed backup that names one the home holds puts nothing into
    /// it unless the user allows that account, by its id; the home's own backup restores into it
    /// unasked.
    @Test func aBackupPutsNoNoteIntoAnApplicationsNotesAccountWithoutConsent() throws {
        let victim = try BackupHome(name: "victim")
        try victim.harness.registerTestRunner(id: "VICT.app", team: "VICT", groups: ["VICT.notes"], passcode: victim.passcode)
        let application = Notes(client: try TresorKitClient.connect(victim.harness))
        let ownBody = victim.marked("team-body")
        victim.harness.secrets.append(ownBody)
        let own = try application.create(title: victim.marked("team-title"), body: ownBody)

        // The home's own backup: its team's note, deleted for good since, comes back unasked.
        let ownFile = victim.harness.root.appendingPathComponent("own.tresor-backup")
        _ = try victim.backup(to: ownFile)
        try application.delete(own.id)
        try application.deleteForGood(own.id)
        let (mine, mineReport) = try victim.restore(ownFile, passphrase: victim.backupPassphrase)
        try expectSucceeded(mine)
        let mineEntries = try #require(mineReport).entries
        #expect(!mineEntries.contains { $0.reason == .needsConsent }, "\(mineEntries)")
        #expect(mineEntries.first { $0.kind == .note && $0.id == own.id }?.outcome == .restored, "\(mineEntries)")
        #expect(try application.list().map(\.id) == [own.id])

        // A backup someone else made, its note moved into an account record for team:VICT.
        let attacker = try BackupHome(name: "mallory")
        let planted = try attacker.newNote("planted")
        let made = attacker.harness.root.appendingPathComponent("made.tresor-backup")
        _ = try attacker.backup(to: made)
        victim.harness.secrets += attacker.harness.secrets
        let teamAccount = try JSONDecoder().decode(
            BackedUpAccount.self, from: Data(#"{"id": "team:VICT", "name": "team:VICT", "keychainUnlock": false, "created": 1}"#.utf8))
        var added = false
        let hostile = try HostileBackup.rewrite(made, passphrase: attacker.backupPassphrase) { record in
            switch record {
            case .account:
                defer { added = true }
                return added ? [record] : [record, .account(teamAccount)]
            case .note(var note) where note.id == planted:
                note.account = teamAccount.id
                return [.note(note)]
            default:
                return [record]
            }
        }

        // The dry run lists the account and says how to allow it; a restore puts nothing into it.
        let dryRun = try victim.harness.tresor(
            ["backup", "restore", hostile.path, "--passcode-stdin", "--dry-run"], input: "\(victim.passcode)\n\(attacker.backupPassphrase)\n")
        try expectSucceeded(dryRun)
        #expect(dryRun.stdout.split(separator: "\n").contains { $0.contains("team:VICT") && $0.contains("not allowed") }, "\(dryRun.stdout)")
        #expect(dryRun.stdout.contains("--allow-web-account"), "says how to allow it: \(dryRun.stdout)")
        let (plain, plainReport) = try victim.restore(hostile, passphrase: attacker.backupPassphrase)
        try expectSucceeded(plain)
        let plainEntries = try #require(plainReport).entries
        let account = try #require(plainEntries.first { $0.kind == .account && $0.id == teamAccount.id })
        #expect(account.outcome == .skipped && account.reason == .needsConsent, "\(account)")
        let note = try #require(plainEntries.first { $0.kind == .note && $0.id == planted })
        #expect(note.outcome == .skipped, "\(note)")
        #expect(try application.list().map(\.id) == [own.id], "nothing planted in the team's notes")
        // On a terminal the account is asked about, by its id and what allowing it does; a no keeps it out.
        let screen = try victim.harness.onTerminal(
            ["backup", "restore", hostile.path],
            prompts: [
                Terminal.Prompt(endingWith: "Passcode:", send: victim.passcode),
                Terminal.Prompt(endingWith: "passphrase:", send: attacker.backupPassphrase),
                Terminal.Prompt(endingWith: "[y/N]", showing: "team:VICT", send: "n"),
            ], timeout: 180)
        #expect(screen.status == 0, "\(screen.text)")
        #expect(screen.text.contains("this home holds that account") && screen.text.contains("Allow it? [y/N]"), "\(screen.text)")
        #expect(try application.list().map(\.id) == [own.id], "a no plants nothing")

        // Allowed by its id, the account takes the backup's note.
        let (into, intoReport) = try victim.restore(
            hostile, passphrase: attacker.backupPassphrase, arguments: ["--allow-web-account", teamAccount.id])
        try expectSucceeded(into)
        #expect(try #require(intoReport).entries.first { $0.kind == .note && $0.id == planted }?.outcome == .restored)
        #expect(Set(try application.list().map(\.id)) == [own.id, planted])
    }

    @Test(.enabled(if: TestUser.available, "needs root, to run the daemons and clients as an unprivileged user"))
    func duplicatesAndAnAttachmentIDInUseAreReportedSkippedNotRestored() throws {
        let user = try TestUser.shared.get()
        let attacker = try BackupHome(name: "mallory", user: user)
        let note = try attacker.newNote("duplicated")
        try attacker.attach("duplicated-attachment", to: note, kind: "file", size: 2_000)
        let made = attacker.harness.root.appendingPathComponent("made.tresor-backup")
        _ = try attacker.backup(to: made)
        let victim = try BackupHome(name: "victim", user: user)
        victim.harness.secrets += attacker.harness.secrets
        let ownNote = try victim.newNote("own")
        try victim.attach("own-attachment", to: ownNote, kind: "file", size: 1_000)
        let ownAttachment = try #require(victim.attachmentIDs["own-attachment"])

        // The note twice, its attachment twice, and a second attachment under the id of the
        // victim's own attachment (of another note).
        var attachmentRecords: [BackupRecord] = []
        let hostile = try HostileBackup.rewrite(made, passphrase: attacker.backupPassphrase) { record in
            switch record {
            case .note: return [record, record]
            case .attachment, .piece: attachmentRecords.append(record); return [record]
            case .attachmentEnd:
                attachmentRecords.append(record)
                var taken = attachmentRecords
                if case .attachment(var attachment) = taken[0] {
                    attachment.id = ownAttachment
                    taken[0] = .attachment(attachment)
                }
                return [record] + attachmentRecords + taken
            default: return [record]
            }
        }
        let (result, restored) = try victim.restore(hostile, passphrase: attacker.backupPassphrase)
        try expectSucceeded(result)
        let report = try #require(restored)
        let notes = report.entries.filter { $0.kind == .note }
        #expect(notes.map(\.outcome) == [.restored, .skipped] && notes[1].reason == .duplicate, "\(notes)")
        let attachments = report.entries.filter { $0.kind == .attachment }
        #expect(attachments.map(\.outcome) == [.restored, .skipped, .skipped], "\(attachments)")
        #expect(attachments.count == 3 && attachments[1].reason == .duplicate && attachments[2].reason == .idInUse, "\(attachments)")
        #expect(report.count(.attachment, .restored) == 1 && report.count(.note, .restored) == 1)
        // The victim's attachment is as it was.
        let out = victim.harness.root.appendingPathComponent("own-out")
        try expectSucceeded(victim.harness.tresor(["note", "export-attachment", ownNote, ownAttachment, "--out", out.path]))
        #expect(try Data(contentsOf: out) == victim.attachmentBytes["own-attachment"])
    }

    @Test(
        .enabled(if: TestUser.available, "needs root, to run the daemons and clients as an unprivileged user"),
        arguments: [HostileBackup.Forbidden.thisDeviceOnlyPlainItem, .itemIDNotARowID, .noteIDNotAnID, .attachmentIDNotAnID])
    func whatTheFormatForbidsIsRefusedWithAClearErrorAndTheHomeUnchanged(_ forbidden: HostileBackup.Forbidden) throws {
        let user = try TestUser.shared.get()
        let attacker = try BackupHome(name: "mallory", user: user)
        try expectSucceeded(
            attacker.harness.tresor(
                ["item", "add", "--service", "bk.forbidden", "--account", "ada", "--secret-stdin"],
                input: attacker.marked("secret")))
        let note = try attacker.newNote("forbidden")
        try attacker.attach("forbidden-attachment", to: note, kind: "file", size: 1_000)
        let made = attacker.harness.root.appendingPathComponent("made.tresor-backup")
        _ = try attacker.backup(to: made)
        let hostile = try HostileBackup.rewrite(made, passphrase: attacker.backupPassphrase, forbidden.rewrite)

        let victim = try BackupHome(name: "victim", user: user)
        victim.harness.secrets += attacker.harness.secrets
        let before = try victim.homeSnapshot()
        let (result, _) = try victim.restore(hostile, passphrase: attacker.backupPassphrase)
        #expect(!result.succeeded, "refused")
        // With --json the error is the JSON answer on standard output.
        #expect((result.stdout + result.stderr).contains(forbidden.error), "\(result.stdout)\(result.stderr)")
        #expect(BackupHome.differences(before, try victim.homeSnapshot()).isEmpty, "the home is unchanged")
        let verify = try victim.harness.tresor(["backup", "verify", hostile.path, "--passphrase-stdin"], input: attacker.backupPassphrase + "\n")
        #expect(!verify.succeeded && verify.stderr.contains(forbidden.error), "verify refuses it too: \(verify.stderr)")
    }

    /// `attacker`'s backup of its applications — Python, registered with `python`'s options, and
    /// `MAL.env` — handed to `victim`, whose secret scan looks for the attacker's secrets too.
    static func handedBackup(registering python: [String], from attacker: BackupHome, to victim: BackupHome) throws -> URL {
        for options in [python, ["--id", "MAL.env", "--team", "MAL", "--exe", "/usr/bin/env"]] {
            try expectSucceeded(attacker.harness.tresor(["app", "register"] + options + ["--passcode-stdin"], input: attacker.passcode + "\n"))
        }
        let file = attacker.harness.root.appendingPathComponent("handed.tresor-backup")
        _ = try attacker.backup(to: file)
        victim.harness.secrets += attacker.harness.secrets
        return file
    }

    /// A Python script, run as `harness`'s user, asking its daemon's socket for the secret of the
    /// item `service` in `group`: what it got, as "STATUS BODY".
    static func pythonSearch(_ harness: Harness, service: String, group: String, revealing secret: String) throws -> String {
        let query: [String: Any] = [
            "query": [
                "itemClass": "genp", "attributes": ["service": service, "accessGroup": group], "limit": "one", "returnData": true,
                "returnAttributes": false,
            ]
        ]
        let body = String(decoding: try JSONSerialization.data(withJSONObject: query), as: UTF8.self)
        let answer = try #require(try harness.pythonRequests("/v1/items/search", [body], revealing: [secret]).first)
        return "\(answer.status) \(answer.body)"
    }
}

/// A real backup's records rewritten (the attack) and written again with the project's writer.
enum HostileBackup {
    /// Reads the backup at `url`, hands each record but the trailer to `rewrite`, and writes what
    /// it returns into a new backup of the same passphrase (the writer adds the trailer).
    static func rewrite(_ url: URL, passphrase: String, _ rewrite: (BackupRecord) throws -> [BackupRecord]) throws -> URL {
        var remaining = try Data(contentsOf: url)[...]
        var reader = try RecordStreamReader(passphrase: SecretText(passphrase)) { count in
            let next = remaining.prefix(count)
            remaining = remaining.dropFirst(next.count)
            return Data(next)
        }
        var file = Data()
        var writer = try RecordStreamWriter(passphrase: SecretText(passphrase), workFactor: 10) { file += $0 }
        while let record = try reader.next() {
            if case .trailer = record { continue }
            for written in try rewrite(record) { try writer.write(written) }
        }
        _ = try writer.finish()
        let hostile = url.deletingLastPathComponent().appendingPathComponent("hostile-\(UUID().uuidString.prefix(8)).tresor-backup")
        try file.write(to: hostile)
        return hostile
    }

    /// A record the format does not allow, and the words of its refusal.
    enum Forbidden: String, CaseIterable, Sendable {
        case thisDeviceOnlyPlainItem, itemIDNotARowID, noteIDNotAnID, attachmentIDNotAnID

        func rewrite(_ record: BackupRecord) -> [BackupRecord] {
            switch (self, record) {
            case (.thisDeviceOnlyPlainItem, .item(var item)):
                item.item.attributes.accessible = .whenUnlockedThisDeviceOnly
                return [.item(item)]
            case (.itemIDNotARowID, .item(var item)):
                item.item.id = "+" + item.item.id
                return [.item(item)]
            case (.noteIDNotAnID, .note(var note)):
                note.id = "../\(note.id)"
                return [.note(note)]
            case (.attachmentIDNotAnID, .attachment(var attachment)):
                attachment.id = "../\(attachment.id)"
                return [.attachment(attachment)]
            default:
                return [record]
            }
        }

        var error: String {
            switch self {
            case .thisDeviceOnlyPlainItem: "ThisDeviceOnly"
            case .itemIDNotARowID: "row id"
            case .noteIDNotAnID, .attachmentIDNotAnID: "not an id"
            }
        }
    }
}
