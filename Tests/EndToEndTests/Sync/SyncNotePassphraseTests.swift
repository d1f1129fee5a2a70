import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// The notes passphrase travels (docs/SYNC.md, "Notes"): which generation is current and its
/// hint go from the device that set or changed it to the server and the other device — with no
/// locked note to carry them — so a note the other device locks afterwards is locked with the
/// new passphrase, and opens with it everywhere.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncNotePassphraseTests {
    static func hint(_ device: Harness) throws -> String? {
        struct Answer: Decodable { var hint: String? }
        return try device.json(Answer.self, ["note", "passphrase", "hint"]).hint
    }

    @Test func aPassphraseItsChangeAndItsHintReachTheOtherDevice() async throws {
        let (cluster, browser, laptop, phone) = try await SyncE2E.twoJoinedDevicesAndBrowser()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let first = "e2e-first-passphrase-" + UUID().uuidString.prefix(8)
        let second = "e2e-second-passphrase-" + UUID().uuidString.prefix(8)
        let set = try laptop.tresor(["note", "passphrase", "set", "--hint", "--passphrase-stdin"], input: "\(first)\n\(first)\ne2e hint one\n")
        #expect(set.succeeded, "\(set.stderr)")
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)
        #expect(try Self.hint(phone) == "e2e hint one", "the passphrase and its hint travel without a locked note")
        // The web client has it as the account's current passphrase too (its hint shows there
        // after wrong entries only).
        let onWeb = try browser.get("/api/passphrase")
        #expect(onWeb.status == 200 && onWeb.json?["isSet"] as? Bool == true, "\(onWeb.text)")

        // Changed on the laptop, with a new hint: the phone's current passphrase is the new one.
        let changed = try laptop.tresor(
            ["note", "passphrase", "change", "--hint", "--passphrase-stdin"], input: "\(first)\n\(second)\n\(second)\ne2e hint two\n")
        #expect(changed.succeeded, "\(changed.stderr)")
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)
        #expect(try Self.hint(phone) == "e2e hint two")
        let note = try SyncNotesE2ETests.newNote(phone, "Letters\ne2e-passphrase-marker")
        let locked = try phone.tresor(["note", "lock", note.id, "--passphrase-stdin"], input: second + "\n")
        #expect(locked.succeeded, "the phone locks with the laptop's new passphrase: \(locked.stderr)")

        // And the laptop opens that note with it.
        _ = try SyncNotesE2ETests.syncNow(phone)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        let onLaptop = try #require(try laptop.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Letters" })
        #expect(onLaptop.isLocked)
        let opened = try laptop.json(OpenedNote.self, ["note", "show", onLaptop.id, "--passphrase-stdin"], input: second + "\n")
        #expect(opened.body == "Letters\ne2e-passphrase-marker")

        // A hint replaced on the phone reaches the laptop; nothing more goes once both agree.
        let rehinted = try phone.tresor(["note", "passphrase", "hint", "--set", "--passphrase-stdin"], input: "e2e hint three\n\(second)\n")
        #expect(rehinted.succeeded, "\(rehinted.stderr)")
        _ = try SyncNotesE2ETests.syncNow(phone)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        #expect(try Self.hint(laptop) == "e2e hint three")
        for device in [laptop, phone] {
            #expect(!device.daemonLog.contains(first) && !device.daemonLog.contains(second) && !device.daemonLog.contains("e2e hint"))
        }
    }

    /// Both devices change the notes passphrase while the server is stopped: the change the
    /// server receives first is current on both, and the device whose change was overtaken is
    /// told so — the passphrase its user just set is no longer the current one — while its note
    /// locked with it still opens with it.
    @Test func aPassphraseChangeOvertakenByAnotherDevicesIsSaidSo() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }
        let server = cluster.harnesses[0], port = cluster.servers[0].port
        let first = "e2e-shared-passphrase", onPhone = "e2e-phone-passphrase", onLaptop = "e2e-laptop-passphrase"
        for device in [laptop, phone] { device.secrets += [first, onPhone, onLaptop] }
        #expect(try laptop.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(first)\n\(first)\n").succeeded)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)

        server.stopDaemon()
        for (device, new) in [(phone, onPhone), (laptop, onLaptop)] {
            let changed = try device.tresor(["note", "passphrase", "change", "--passphrase-stdin"], input: "\(first)\n\(new)\n\(new)\n")
            #expect(changed.succeeded, "\(changed.stderr)")
        }
        let note = try SyncNotesE2ETests.newNote(laptop, "Laptop PIN\ne2e-overtaken-marker")
        #expect(try laptop.tresor(["note", "lock", note.id, "--passphrase-stdin"], input: onLaptop + "\n").succeeded)
        _ = try server.startWebDaemon(
            passcode: ServerInstances.passcode, extraArguments: ["--database", cluster.databaseURL, "--server-key-file", cluster.keyFile.path],
            port: port)

        #expect(try SyncNotesE2ETests.syncNow(phone).passphraseOvertaken == nil, "the phone's change came first")
        let told = try laptop.tresor(["sync", "now"])
        #expect(told.succeeded && told.stdout.contains("the one set here was overtaken"), "\(told.stdout) \(told.stderr)")
        #expect(try SyncNotesE2ETests.syncNow(laptop).passphraseOvertaken == nil, "said once")
        // The phone's passphrase is current on the laptop; the laptop's note still opens with its own.
        let shown = try laptop.json(OpenedNote.self, ["note", "show", note.id, "--passphrase-stdin"], input: onLaptop + "\n")
        #expect(shown.body == "Laptop PIN\ne2e-overtaken-marker")
        let other = try SyncNotesE2ETests.newNote(laptop, "After\nbody")
        #expect(try laptop.tresor(["note", "lock", other.id, "--passphrase-stdin"], input: onPhone + "\n").succeeded)
    }

    /// A note locked under an earlier passphrase shows that passphrase's hint on the other
    /// device and in the web client too: the hint travels with the note's sealed record and
    /// fills the generation where it has none.
    @Test func theHintOfAnEarlierPassphraseTravelsWithTheNotesLockedUnderIt() async throws {
        let (cluster, browser, laptop, phone) = try await SyncE2E.twoJoinedDevicesAndBrowser()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let first = "e2e-earlier-passphrase-" + UUID().uuidString.prefix(8)
        let second = "e2e-current-passphrase-" + UUID().uuidString.prefix(8)
        let set = try laptop.tresor(["note", "passphrase", "set", "--hint", "--passphrase-stdin"], input: "\(first)\n\(first)\ne2e earlier hint\n")
        #expect(set.succeeded, "\(set.stderr)")
        let note = try SyncNotesE2ETests.newNote(laptop, "Old letters\ne2e-earlier-marker")
        let locked = try laptop.tresor(["note", "lock", note.id, "--passphrase-stdin"], input: first + "\n")
        #expect(locked.succeeded, "\(locked.stderr)")
        // Reset before the first sync: the earlier passphrase never travels as the current one.
        let reset = try laptop.tresor(
            ["note", "passphrase", "reset", "--passcode-stdin", "--hint"], input: "\(SyncE2E.passcode)\n\(second)\n\(second)\ne2e current hint\n")
        #expect(reset.succeeded, "\(reset.stderr)")
        let onLaptop = try #require(try laptop.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Old letters" }?.lock)
        #expect(onLaptop.isCurrent == false && onLaptop.hint == "e2e earlier hint", "\(onLaptop)")

        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Old letters" })
        let lock = try #require(onPhone.lock)
        #expect(!lock.isCurrent && lock.hint == "e2e earlier hint", "the earlier passphrase's hint reaches the other device: \(lock)")
        #expect(try Self.hint(phone) == "e2e current hint", "the current one's is still the current one's")
        let opened = try phone.json(OpenedNote.self, ["note", "show", onPhone.id, "--passphrase-stdin"], input: first + "\n")
        #expect(opened.body == "Old letters\ne2e-earlier-marker")
        // The web client shows it for that note as well.
        let onWeb = try browser.get("/api/notes")
        let webNote = try #require((onWeb.json?["notes"] as? [[String: Any]])?.first { $0["title"] as? String == "Old letters" }, "\(onWeb.text)")
        #expect((webNote["lock"] as? [String: Any])?["hint"] as? String == "e2e earlier hint", "\(webNote)")
        for device in [laptop, phone] {
            #expect(!device.daemonLog.contains("e2e earlier hint") && !device.daemonLog.contains(first))
        }
    }
}
