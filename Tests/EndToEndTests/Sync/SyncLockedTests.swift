import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// What arrives while a device's keybag is locked (docs/SYNC.md, "While locked"): its daemon
/// pulls it and holds it sealed, applies nothing, and applies it at the unlock with every check
/// of a pull — also when the server is gone by then, and across a `kill -9`; notes sync while
/// locked.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncLockedTests {
    static let items = ["held-one.example.com": "e2e-held-one", "held-two.example.com": "e2e-held-two"]

    static func heldPages(_ device: Harness) -> URL { device.paths.home.appendingPathComponent("sync-held-pages") }

    static func itemsOn(_ device: Harness) throws -> [String: String] {
        var found: [String: String] = [:]
        for service in items.keys { found[service] = try SyncNowTests.secret(device, service: service) }
        return found
    }

    /// Two joined devices; the phone locked; the laptop adds two items of the class `always`
    /// (which a locked keybag still opens: applied, they would show); the phone's daemon pulls
    /// and holds them.
    static func itemsHeldOnALockedPhone() async throws -> (cluster: ServerInstances, laptop: Harness, phone: Harness) {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices(background: true)
        try SyncLiveE2ETests.waitUntilLive(laptop, phone)
        #expect(try phone.tresor(["lock"]).succeeded)
        // One at a time, each held before the next is sent: two pages, the first read as the last.
        for (n, (service, secret)) in items.sorted(by: { $0.key < $1.key }).enumerated() {
            let added = try laptop.tresor(
                [
                    "item", "add", "--service", service, "--account", "ada", "--readable-by-scripts", "--secret-stdin", "--synchronizable",
                    "--accessible", "always",
                ],
                input: secret + "\n")
            #expect(added.succeeded, "\(added.stderr)")
            try await waitUntil("the locked phone holds it") { try SyncLiveE2ETests.status(phone).heldWhileLocked == n + 1 }
        }
        #expect(try itemsOn(phone).isEmpty, "nothing is applied while locked")
        let shown = try phone.tresor(["sync", "status"])
        #expect(shown.stdout.contains("Held:     2 records pulled while locked"), "\(shown.stdout)")
        // Held as they came: sealed, no secret in the clear.
        let file = try Data(contentsOf: heldPages(phone))
        for secret in items.values { #expect(file.range(of: Data(secret.utf8)) == nil) }
        return (cluster, laptop, phone)
    }

    static func unlock(_ device: Harness) throws {
        let unlocked = try device.tresor(["unlock", "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        #expect(unlocked.succeeded, "\(unlocked.stderr)")
    }

    @Test func whatWasHeldWhileLockedIsAppliedAtTheUnlockWithTheServerGone() async throws {
        let (cluster, _, phone) = try await Self.itemsHeldOnALockedPhone()
        defer { withExtendedLifetime(cluster) {} }
        for server in cluster.harnesses { server.stopDaemon() }

        try Self.unlock(phone)
        try await waitUntil("the held items on the phone, with no server") { try Self.itemsOn(phone) == Self.items }
        try await waitUntil("the held pages gone") { try SyncLiveE2ETests.status(phone).heldWhileLocked == 0 }
        #expect(!FileManager.default.fileExists(atPath: Self.heldPages(phone).path))
    }

    @Test func aTamperedHeldPageIsRefusedAtTheUnlockAndReadAgainFromTheServer() async throws {
        let (cluster, _, phone) = try await Self.itemsHeldOnALockedPhone()
        defer { withExtendedLifetime(cluster) {} }
        // One letter of the first record's sealed body, changed to another letter: still JSON,
        // still base64, no longer what its device signed.
        var file = try Data(contentsOf: Self.heldPages(phone))
        let body = try #require(file.range(of: Data("\"body\":\"".utf8)))
        let letter = try #require(file[(body.upperBound + 10)...].firstIndex { (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) })
        file[letter] ^= 0x20
        try file.write(to: Self.heldPages(phone))

        try Self.unlock(phone)
        try await waitUntil("the refusal in sync status") {
            try SyncLiveE2ETests.status(phone).lastError?.contains("held while the keybag was locked") == true
        }
        let status = try SyncLiveE2ETests.status(phone)
        #expect(status.lastError?.contains("sync page refused, nothing of it applied") == true, "\(status.lastError ?? "")")
        #expect(status.heldWhileLocked == 0)
        #expect(try Self.itemsOn(phone).isEmpty, "nothing of the refused page applied")
        let shown = try phone.tresor(["sync", "status"])
        #expect(shown.stdout.contains("Failed:   refused a page held while the keybag was locked"), "\(shown.stdout)")

        // The next sync reads the pages again from the server, and applies them.
        _ = try SyncNowTests.syncNow(phone)
        #expect(try Self.itemsOn(phone) == Self.items)
    }

    @Test func heldPagesSurviveAKillAndApplyAfterTheRestartAndTheUnlock() async throws {
        let (cluster, _, phone) = try await Self.itemsHeldOnALockedPhone()
        defer { withExtendedLifetime(cluster) {} }
        phone.killDaemon()
        // As an append the kill cut: a torn last entry, left out when the pages are read.
        let torn = try FileHandle(forWritingTo: Self.heldPages(phone))
        try torn.seekToEnd()
        try torn.write(contentsOf: Data([0, 0, 9, 0, 0x7b]))
        try torn.close()
        for server in cluster.harnesses { server.stopDaemon() }
        try phone.startDaemon()
        #expect(try SyncLiveE2ETests.status(phone).heldWhileLocked == 2)

        try Self.unlock(phone)
        try await waitUntil("the held items on the phone after the restart") { try Self.itemsOn(phone) == Self.items }
        #expect(try SyncLiveE2ETests.status(phone).heldWhileLocked == 0)
    }

    @Test func notesSyncWhileTheKeybagIsLocked() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices(background: true)
        defer { withExtendedLifetime(cluster) {} }
        try SyncLiveE2ETests.waitUntilLive(laptop, phone)
        #expect(try phone.tresor(["lock"]).succeeded)
        _ = try SyncNotesE2ETests.newNote(laptop, "Arrived while locked\ne2e-note-while-locked")
        // The laptop's background sync may send it first (a note change starts one): either
        // way, once `sync now` returns nothing waits.
        _ = try SyncNotesE2ETests.syncNow(laptop)
        #expect(try SyncLiveE2ETests.status(laptop).notesWaiting == 0)
        // An item's change makes the event the locked phone syncs at.
        try SyncNowTests.add(laptop, service: "event.example.com", secret: "e2e-locked-event")
        try await waitUntil("the note on the locked phone") {
            try SyncNotesE2ETests.notes(phone)["Arrived while locked"]?.body == "Arrived while locked\ne2e-note-while-locked"
        }
        // The note may come with a sync the note's own change started, before the item's: the
        // item is waited for on its own.
        try await waitUntil("the item held, not applied") { try SyncLiveE2ETests.status(phone).heldWhileLocked == 1 }
        #expect(try phone.status().keybag == .locked)
    }

    @Test func pullingWhileLockedStopsAtTheLimitAndSaysSoAndTheUnlockReadsTheRestFromTheServer() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices(background: true)
        defer { withExtendedLifetime(cluster) {} }
        try SyncLiveE2ETests.waitUntilLive(laptop, phone)
        #expect(try phone.tresor(["lock"]).succeeded)
        // 40 records of 512 KiB each (padded): 20 MiB, past the 16 MiB held by more than a page.
        let secrets = (0..<40).map { "e2e-big-\($0)-" + String(repeating: "x", count: 261_000) }
        for (n, secret) in secrets.enumerated() {
            let added = try laptop.tresor(
                [
                    "item", "add", "--service", "big\(n).example.com", "--account", "ada", "--readable-by-scripts", "--secret-stdin",
                    "--synchronizable", "--accessible", "always",
                ],
                input: secret)
            #expect(added.succeeded, "\(added.stderr)")
        }
        try await waitUntil("the laptop sent them", seconds: 180) { try SyncLiveE2ETests.status(laptop).counters?.changesWaiting == 0 }
        try await waitUntil("the limit in the phone's sync status", seconds: 180) {
            try SyncLiveE2ETests.status(phone).lastError?.contains("the most kept") == true
        }
        let held = try #require(try SyncLiveE2ETests.status(phone).heldWhileLocked)
        #expect(held > 0 && held < secrets.count, "\(held) held")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: Self.heldPages(phone).path)[.size] as? Int)
        #expect(size >= 16 << 20 && size < 22 << 20, "\(size) bytes held")
        #expect(try SyncNowTests.secret(phone, service: "big0.example.com") == nil)

        try Self.unlock(phone)
        try await waitUntil("every item on the phone", seconds: 180) {
            try SyncNowTests.secret(phone, service: "big\(secrets.count - 1).example.com") == secrets.last
        }
        for (n, secret) in secrets.enumerated() { #expect(try SyncNowTests.secret(phone, service: "big\(n).example.com") == secret) }
        let status = try SyncLiveE2ETests.status(phone)
        #expect(status.heldWhileLocked == 0 && status.lastError == nil, "\(status.lastError ?? "")")
    }

    @Test func aDeviceThatJoinedWhileLockedIsReadFromTheServerAtTheUnlock() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        let laptop = try SyncE2E.device(password, background: true), phone = try SyncE2E.device(password, background: true)
        let tablet = try SyncE2E.device(password, background: true)
        func admit(_ device: Harness, _ name: String) throws {
            try SyncE2E.joinApproved(device, server, name: name, password: password, by: laptop)
        }
        _ = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        try admit(phone, "phone")
        try SyncLiveE2ETests.waitUntilLive(laptop, phone)
        #expect(try phone.tresor(["lock"]).succeeded)

        // A device the list the phone holds does not name yet.
        try admit(tablet, "tablet")
        try SyncNowTests.add(tablet, service: "tablet.example.com", secret: "e2e-from-the-tablet")
        try await waitUntil("the tablet sent it") { try SyncLiveE2ETests.status(tablet).counters?.changesWaiting == 0 }
        try await waitUntil("the locked phone holds the tablet's record") { try SyncLiveE2ETests.status(phone).heldWhileLocked ?? 0 >= 1 }

        try Self.unlock(phone)
        try await waitUntil("the tablet's item on the phone") {
            try SyncNowTests.secret(phone, service: "tablet.example.com") == "e2e-from-the-tablet"
        }
        let status = try SyncLiveE2ETests.status(phone)
        #expect(status.lastError == nil && status.heldWhileLocked == 0, "\(status.lastError ?? "")")
        #expect(status.trustedDevices.count == 3)
    }

    @Test func aLockedDeviceThatLearnsItWasRemovedForgetsWhatItHeld() async throws {
        let (cluster, laptop, phone) = try await Self.itemsHeldOnALockedPhone()
        defer { withExtendedLifetime(cluster) {} }
        _ = try SyncE2E.sync(laptop, SyncDeviceInfo.self, ["remove", "phone", "--passcode-stdin"], input: SyncE2E.passcode + "\n")

        // Still locked, the phone asks the server and is told it was removed.
        let refused = try phone.tresor(["sync", "devices"])
        #expect(!refused.succeeded && refused.stderr.contains("tresor sync leave"), "\(refused.stderr)")
        let status = try SyncLiveE2ETests.status(phone)
        #expect(status.state == .removed && (status.heldWhileLocked ?? 0) == 0, "\(status)")
        #expect(!FileManager.default.fileExists(atPath: Self.heldPages(phone).path), "the held pages are forgotten")
        try Self.unlock(phone)
        #expect(try Self.itemsOn(phone).isEmpty)
    }

    /// Before the first unlock since its daemon started, a device cannot sign in — its sign-in key
    /// is sealed under `afterFirstUnlockThisDeviceOnly` (docs/SYNC.md, "While locked") — so it
    /// pulls and holds nothing; what another device sent waits on the server, and the first
    /// unlock's sync reads it.
    @Test func beforeTheFirstUnlockSinceStartNothingIsPulledAndTheFirstUnlockReadsIt() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices(background: true)
        defer { withExtendedLifetime(cluster) {} }
        try SyncLiveE2ETests.waitUntilLive(laptop, phone)
        phone.stopDaemon()
        try phone.startDaemon()
        let (service, secret) = try #require(Self.items.sorted(by: { $0.key < $1.key }).first)
        let added = try laptop.tresor(
            [
                "item", "add", "--service", service, "--account", "ada", "--readable-by-scripts", "--secret-stdin", "--synchronizable",
                "--accessible", "always",
            ],
            input: secret + "\n")
        #expect(added.succeeded, "\(added.stderr)")

        let refused = try phone.tresor(["sync", "now"])
        #expect(!refused.succeeded, "no sign-in before the first unlock")
        // Said as what it is, with the way on: nothing came from the server to refuse.
        #expect(refused.stderr.contains("`tresor unlock`") && !refused.stderr.contains("sync server"), "\(refused.stderr)")
        let status = try SyncLiveE2ETests.status(phone)
        #expect(status.live == false && (status.heldWhileLocked ?? 0) == 0, "\(status)")
        #expect(try SyncNowTests.secret(phone, service: service) == nil)

        try Self.unlock(phone)
        try await waitUntil("the item on the phone after its first unlock") { try SyncNowTests.secret(phone, service: service) == secret }
    }
}
