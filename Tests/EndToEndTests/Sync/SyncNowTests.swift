import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// `tresor sync now` (docs/SYNC.md, "What syncs", "Conflicts and deletions"): two device homes,
/// each with its own `tresord`, joined to a real server instance; items made with the CLI on one
/// reach the other through the daemon's sync engine.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncNowTests {
    static func add(_ device: Harness, service: String, secret: String, synchronizable: Bool = true) throws {
        let added = try device.tresor(
            ["item", "add", "--service", service, "--account", "ada", "--readable-by-scripts", "--secret-stdin"]
                + (synchronizable ? ["--synchronizable"] : []),
            input: secret + "\n")
        #expect(added.succeeded, "\(added.stderr)")
    }

    static func update(_ device: Harness, service: String, secret: String) throws {
        let updated = try device.tresor(["item", "update", "--service", service, "--synchronizable", "--secret-stdin"], input: secret + "\n")
        #expect(updated.succeeded, "\(updated.stderr)")
    }

    /// The item's secret as `tresor item get` prints it, or nil when there is no such item.
    static func secret(_ device: Harness, service: String, synchronizable: Bool = true) throws -> String? {
        let found = try device.tresor(["item", "get", "--service", service, "--account", "ada"] + (synchronizable ? ["--synchronizable"] : []))
        return found.succeeded ? found.stdout : nil
    }

    static func syncNow(_ device: Harness, sourceLocation: SourceLocation = #_sourceLocation) throws -> SyncNowAnswer {
        try SyncE2E.sync(device, SyncNowAnswer.self, ["now"], sourceLocation: sourceLocation)
    }

    @Test func aSynchronizableItemReachesTheOtherDeviceAndItsUpdateAndDeletionFollow() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        try Self.add(laptop, service: "mail.example.com", secret: "e2e-sync-mail-secret")
        try Self.add(laptop, service: "local.example.com", secret: "e2e-stays-on-the-laptop", synchronizable: false)

        let sent = try Self.syncNow(laptop)
        #expect(sent.pushed == 1, "the synchronizable item only: \(sent)")
        let received = try Self.syncNow(phone)
        #expect(received.applied == 1 && received.pushed == 0, "\(received)")
        #expect(try Self.secret(phone, service: "mail.example.com") == "e2e-sync-mail-secret")
        #expect(try Self.secret(phone, service: "local.example.com", synchronizable: false) == nil)
        #expect(try Self.secret(phone, service: "local.example.com") == nil)
        #expect(!phone.daemonLog.contains("e2e-sync-mail-secret") && !laptop.daemonLog.contains("e2e-sync-mail-secret"))

        try Self.update(laptop, service: "mail.example.com", secret: "e2e-sync-mail-secret-2")
        #expect(try Self.syncNow(laptop).pushed == 1)
        #expect(try Self.syncNow(phone).applied == 1)
        #expect(try Self.secret(phone, service: "mail.example.com") == "e2e-sync-mail-secret-2")

        let deleted = try laptop.tresor(["item", "delete", "--service", "mail.example.com", "--synchronizable"])
        #expect(deleted.succeeded, "\(deleted.stderr)")
        #expect(try Self.syncNow(laptop).pushed == 1)
        let deletion = try Self.syncNow(phone)
        #expect(deletion.applied == 1 && deletion.heldDeletions == 0, "\(deletion)")
        #expect(try Self.secret(phone, service: "mail.example.com") == nil)
        // Up to date: a further sync does nothing.
        #expect(
            try Self.syncNow(phone)
                == SyncNowAnswer(
                    recorded: 0, pushed: 0, applied: 0, conflictsKept: 0, held: 0, heldDeletions: 0,
                    notes: SyncNowNotes(sent: 0, applied: 0, conflictCopies: 0, waiting: 0)))
    }

    @Test func ofTwoConcurrentEditsTheLaterWinsOnBothDevicesAndTheOtherIsKept() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        try Self.add(laptop, service: "vpn.example.com", secret: "e2e-first")
        _ = try Self.syncNow(laptop)
        _ = try Self.syncNow(phone)
        #expect(try Self.secret(phone, service: "vpn.example.com") == "e2e-first")

        try Self.update(laptop, service: "vpn.example.com", secret: "e2e-from-the-laptop")
        try Self.update(phone, service: "vpn.example.com", secret: "e2e-from-the-phone")
        _ = try Self.syncNow(laptop)  // the server takes the laptop's edit first
        let phoneSync = try Self.syncNow(phone)  // then the phone's: the later one
        #expect(phoneSync.pushed == 1 && phoneSync.conflictsKept == 1, "the laptop's edit is kept on the phone: \(phoneSync)")
        let laptopSync = try Self.syncNow(laptop)
        #expect(laptopSync.conflictsKept == 1, "the laptop's own edit is kept on the laptop: \(laptopSync)")
        for device in [laptop, phone] {
            #expect(try Self.secret(device, service: "vpn.example.com") == "e2e-from-the-phone")
        }

        // The laptop's edit is listed (its attributes, never its secret), counted, and restored.
        let kept = try SyncE2E.sync(laptop, SyncConflictsAnswer.self, ["conflicts"]).conflicts
        #expect(kept.count == 1 && kept.first?.attributes?.service == "vpn.example.com", "\(kept)")
        let listed = try laptop.tresor(["sync", "conflicts", "--json"])
        #expect(!listed.stdout.contains("e2e-from-the-laptop"))
        let status = try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"])
        // This daemon was started without background sync: status says so, rather than promise syncs.
        #expect(status.inBackground == false && status.live == nil)
        let statusText = try laptop.tresor(["sync", "status"]).stdout
        #expect(statusText.contains("syncs only at tresor sync now"))
        let synced = statusText.split(separator: "\n").first { $0.hasPrefix("Synced:") } ?? ""
        #expect(synced.contains("T") && synced.hasSuffix("Z"), "an ISO 8601 date, as everywhere: \(synced)")
        let keptLine = try laptop.tresor(["sync", "conflicts", "ls"]).stdout
        #expect(keptLine.contains(kept.first?.id ?? "?"), "ls lists, as item ls and note ls do")
        let changed = try #require(kept.first?.attributes?.modificationDate)
        #expect(keptLine.contains("vpn.example.com") && keptLine.contains("changed \(changed.formatted(.iso8601))"), "\(keptLine)")
        let before = try #require(status.counters)
        #expect(before.conflictsKept == 1 && before.changesWaiting == 0 && before.lastSync != nil, "\(before)")
        let id = try #require(kept.first?.id)
        // An item readable by scripts: its kept version is shown and restored as it is read, without the passcode.
        // Named by the start of its id, in any case.
        let shown = try laptop.tresor(["sync", "conflicts", "show", String(id.prefix(6)).lowercased()])
        #expect(shown.succeeded && shown.stdout == "e2e-from-the-laptop", "\(shown.stderr)")
        // On a terminal, a line end follows it, as after item get's: the prompt is not glued to it.
        let onScreen = try laptop.onTerminal(["sync", "conflicts", "show", id])
        #expect(onScreen.status == 0 && onScreen.text.hasSuffix("e2e-from-the-laptop\r\n"), "\(onScreen.text)")
        #expect(try SyncE2E.sync(laptop, SyncConflictSecretAnswer.self, ["conflicts", "show", id]).secret == Data("e2e-from-the-laptop".utf8))
        #expect(try SyncE2E.sync(laptop, SyncConflictsAnswer.self, ["conflicts", "restore", id]).conflicts.isEmpty)
        #expect(try Self.secret(laptop, service: "vpn.example.com") == "e2e-from-the-laptop")
        let after = try #require(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).counters)
        #expect(after.conflictsKept == 0 && after.changesWaiting == 1, "\(after)")
        #expect(try Self.syncNow(laptop).pushed == 1)
        _ = try Self.syncNow(phone)
        #expect(try Self.secret(phone, service: "vpn.example.com") == "e2e-from-the-laptop")
        let unknown = try laptop.tresor(["sync", "conflicts", "restore", "no-such-conflict"])
        #expect(unknown.status == 1, "\(unknown.stderr)")

        // An item not readable by scripts: its kept version's secret is shown, and the version
        // restored, only with the user present, as the item's would be; discarding it, like
        // deleting the tool's own item, needs no passcode.
        let passcode = SyncE2E.passcode + "\n"
        for (device, secret) in [(laptop, "e2e-wifi-laptop"), (phone, "e2e-wifi-phone")] {
            let added = try device.tresor(
                ["item", "add", "--service", "wifi.example.com", "--account", "ada", "--synchronizable", "--secret-stdin"], input: secret + "\n")
            #expect(added.succeeded, "\(added.stderr)")
            _ = try Self.syncNow(device)
        }
        _ = try Self.syncNow(laptop)
        let wifi = try #require(
            try SyncE2E.sync(laptop, SyncConflictsAnswer.self, ["conflicts"]).conflicts.first { $0.attributes?.service == "wifi.example.com" }?.id)
        for action in ["show", "restore"] {
            let unattended = try laptop.tresor(["sync", "conflicts", action, wifi])
            #expect(!unattended.succeeded && unattended.stderr.contains("passcode"), "\(action): \(unattended.stderr)")
            #expect(!unattended.stdout.contains("e2e-wifi-laptop"))
        }
        let wifiShown = try laptop.tresor(["sync", "conflicts", "show", wifi, "--passcode-stdin"], input: passcode)
        #expect(wifiShown.succeeded && wifiShown.stdout == "e2e-wifi-laptop", "\(wifiShown.stderr)")
        let discarded = try SyncE2E.sync(laptop, SyncConflictsAnswer.self, ["conflicts", "discard", wifi])
        #expect(!discarded.conflicts.contains { $0.id == wifi })
        let item = try laptop.tresor(
            ["item", "get", "--service", "wifi.example.com", "--account", "ada", "--synchronizable", "--passcode-stdin"], input: passcode)
        #expect(item.stdout == "e2e-wifi-phone", "the item stays the winner's: \(item.stderr)")
        #expect(try laptop.tresor(["sync", "conflicts", "show", wifi, "--passcode-stdin"], input: passcode).status == 1, "gone")

        // Locked: a clear error, and nothing sent.
        try Self.update(laptop, service: "vpn.example.com", secret: "e2e-while-locked")
        #expect(try laptop.tresor(["lock"]).succeeded)
        let locked = try laptop.tresor(["sync", "now"])
        #expect(locked.status == 1 && locked.stderr.contains("locked"), "\(locked.stderr)")
        #expect(try Self.syncNow(phone).applied == 0)
        #expect(try Self.secret(phone, service: "vpn.example.com") == "e2e-from-the-laptop")
    }

    @Test func aMassDeletionWaitsForAllowDeletions() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }
        for index in 0..<20 { try Self.add(laptop, service: "svc\(index).example.com", secret: "e2e-mass-\(index)") }
        #expect(try Self.syncNow(laptop).pushed == 20)
        #expect(try Self.syncNow(phone).applied == 20)
        for index in 0..<6 {
            let deleted = try laptop.tresor(["item", "delete", "--service", "svc\(index).example.com", "--synchronizable"])
            #expect(deleted.succeeded, "\(deleted.stderr)")
        }
        #expect(try Self.syncNow(laptop).pushed == 6)

        // 6 of 20 synced items: more than a quarter, held; `sync now` says so by its status.
        let held = try phone.tresor(["sync", "now", "--json"])
        #expect(held.status == 2, "\(held.stdout) \(held.stderr)")
        let answer = try CLIJSON.decode(SyncNowAnswer.self, from: Data(held.stdout.utf8))
        #expect(answer.heldDeletions == 6 && answer.applied == 0, "\(answer)")
        #expect(try Self.secret(phone, service: "svc0.example.com") == "e2e-mass-0")
        let counters = try #require(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"]).counters)
        #expect(counters.deletionsHeld == 6, "\(counters)")
        // What would be deleted is listed before the user lets it through.
        let listed = Set(counters.heldDeletions.compactMap { $0.attributes?.service })
        #expect(listed == Set((0..<6).map { "svc\($0).example.com" }), "\(counters.heldDeletions)")
        let text = try phone.tresor(["sync", "status"])
        #expect(text.stdout.contains("Deleting: these items") && text.stdout.contains("svc3.example.com"), "\(text.stdout)")
        // One of them changed here since: its change wins, so its deletion is no longer counted.
        try Self.update(phone, service: "svc5.example.com", secret: "e2e-mass-5-kept")
        let after = try #require(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"]).counters)
        #expect(after.deletionsHeld == 5 && !after.heldDeletions.contains { $0.attributes?.service == "svc5.example.com" }, "\(after)")

        let allowed = try SyncE2E.sync(phone, SyncNowAnswer.self, ["now", "--allow-deletions"])
        #expect(allowed.heldDeletions == 0, "\(allowed)")
        #expect(try Self.secret(phone, service: "svc0.example.com") == nil)
        #expect(try Self.secret(phone, service: "svc5.example.com") == "e2e-mass-5-kept")
        #expect(try Self.secret(phone, service: "svc6.example.com") == "e2e-mass-6")
        #expect(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"]).counters?.deletionsHeld == 0)
    }

    @Test func aDeviceInNoSyncAccountIsToldSo() throws {
        let device = try SyncE2E.device("e2e-sync-now-unused-password")
        let answer = try device.tresor(["sync", "now"])
        #expect(answer.status == 1 && answer.stderr.contains("tresor sync join"), "\(answer.stderr)")
    }
}
