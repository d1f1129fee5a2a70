import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// What wakes a device's background sync (docs/SYNC.md, "Live updates"): every change another
/// device or the web client makes that it must act on — a device approved or gone, the web's
/// folders and passphrase — and never its own push. Device homes whose `tresord` sync by
/// themselves (no `tresor sync now`), real server instances; arrival is polled for 10 s, which
/// the five-minute fallback sync cannot pass.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncEventsTests {
    static let state = "GET /v1/sync/state"

    /// Three devices, the phone and the tablet on a second instance: a join approved on the
    /// laptop is in the phone's list, and once the tablet leaves, the laptop and the phone roll
    /// the circle key — within seconds, nobody running `tresor sync now`.
    @Test func aJoinAndALeaveReachTheOtherDevicesAndTheKeyRollsWithinSeconds() async throws {
        let cluster = try await ServerInstances(count: 2, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let (_, password) = try cluster.registered("ada", on: cluster.servers[0])
        let laptop = try SyncE2E.device(password, background: true), phone = try SyncE2E.device(password, background: true)
        let tablet = try SyncE2E.device(password, background: true)
        _ = try SyncE2E.join(laptop, cluster.servers[0], name: "laptop", password: password)
        let phoneRequest = try #require(try SyncE2E.join(phone, cluster.servers[1], name: "phone", password: password).requestID)
        _ = try SyncE2E.sync(laptop, SyncRequestsAnswer.self, ["approve", phoneRequest, "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        #expect(try SyncE2E.sync(phone, SyncJoinAnswer.self, ["join", cluster.servers[1].origin, "--account", "ada", "--no-wait"]).state == .trusted)
        try SyncLiveE2ETests.waitUntilLive(laptop, phone)

        let tabletRequest = try #require(try SyncE2E.join(tablet, cluster.servers[1], name: "tablet", password: password).requestID)
        _ = try SyncE2E.sync(laptop, SyncRequestsAnswer.self, ["approve", tabletRequest, "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        try await waitUntil("the approved tablet in the phone's list", seconds: 10) {
            try SyncLiveE2ETests.status(phone).trustedDevices.map(\.name).sorted() == ["laptop", "phone", "tablet"]
        }
        #expect(
            try SyncE2E.sync(tablet, SyncJoinAnswer.self, ["join", cluster.servers[1].origin, "--account", "ada", "--no-wait"]).state == .trusted)
        try SyncLiveE2ETests.waitUntilLive(tablet)
        let before = try #require(try SyncLiveE2ETests.status(laptop).epoch)

        let left = try tablet.tresor(["sync", "leave"])
        #expect(left.succeeded, "\(left.stderr)")
        try await waitUntil("the key rolled on the laptop and the phone", seconds: 10) {
            let epochs = try [laptop, phone].map { try SyncLiveE2ETests.status($0).epoch ?? 0 }
            return epochs[0] > before && epochs[0] == epochs[1]
        }
        for device in [laptop, phone] {
            #expect(try SyncLiveE2ETests.status(device).trustedDevices.map(\.name).sorted() == ["laptop", "phone"])
        }
        // What the circle writes now travels under the new key.
        try SyncNowTests.add(laptop, service: "rolled.example.com", secret: "e2e-after-the-roll")
        try await waitUntil("the laptop's item on the phone", seconds: 10) {
            try SyncNowTests.secret(phone, service: "rolled.example.com") == "e2e-after-the-roll"
        }
        for device in [laptop, phone] {
            try await waitUntil("no error left", seconds: 10) { try SyncLiveE2ETests.status(device).lastError == nil }
        }
    }

    /// The phone speaks to the server through a proxy that lists its requests: an item, a note, a
    /// folder, a passphrase or a hint it makes starts one sync by itself, and costs it that one
    /// sync — one state request — though the server tells the laptop.
    @Test func aDevicesOwnChangeCostsItNoSecondSync() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        let proxy = try CuttingProxy(upstream: server.port, trigger: "no client sends this") {}
        let laptop = try SyncE2E.device(password, background: true), phone = try SyncE2E.device(password, background: true)
        _ = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        try SyncE2E.joinApproved(phone, proxy.address, name: "phone", password: password, by: laptop)
        try SyncLiveE2ETests.waitUntilLive(laptop, phone)

        let passphrase = "e2e-own-passphrase-" + UUID().uuidString.prefix(8)
        // Each change: the phone's one sync sends it, the laptop has it, and the phone asks nothing more.
        let changes: [(String, () throws -> Void, () throws -> Bool)] = [
            (
                "an item", { try SyncNowTests.add(phone, service: "own.example.com", secret: "e2e-own-item") },
                { try SyncNowTests.secret(laptop, service: "own.example.com") == "e2e-own-item" }
            ),
            (
                "a note", { _ = try SyncNotesE2ETests.newNote(phone, "Own\ne2e-own-note") },
                { try SyncNotesE2ETests.notes(laptop)["Own"]?.body == "Own\ne2e-own-note" }
            ),
            (
                "a folder", { try SyncNoteFoldersTests.folder(phone, "create", "Own folder") },
                { try SyncNoteFoldersTests.folders(laptop) == ["Own folder"] }
            ),
            (
                "a passphrase",
                {
                    let set = try phone.tresor(
                        ["note", "passphrase", "set", "--hint", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\ne2e own hint\n")
                    #expect(set.succeeded, "\(set.stderr)")
                },
                { (try? SyncNotePassphraseTests.hint(laptop)) == "e2e own hint" }
            ),
            (
                "a hint",
                {
                    let hinted = try phone.tresor(
                        ["note", "passphrase", "hint", "--set", "--passphrase-stdin"], input: "e2e own hint 2\n\(passphrase)\n")
                    #expect(hinted.succeeded, "\(hinted.stderr)")
                },
                { (try? SyncNotePassphraseTests.hint(laptop)) == "e2e own hint 2" }
            ),
        ]
        for (what, make, arrived) in changes {
            usleep(1_500_000)  // whatever the phone still had to do (the join's syncs) is done
            proxy.forgetRequests()
            try make()
            try await waitUntil("\(what) of the phone on the laptop", seconds: 10, arrived)
            usleep(1_500_000)  // time for a second sync, were the phone woken by its own change
            #expect(proxy.requests.filter { $0 == Self.state }.count == 1, "\(what): \(proxy.requests)")
        }
        #expect(try SyncLiveE2ETests.status(phone).live == true)
    }

    /// The web client on the first instance, the phone on the second: a folder made and deleted,
    /// and a passphrase with its hint set there, reach the devices with no `tresor sync now`.
    @Test func theWebsFoldersAndPassphraseReachADeviceWithoutSyncNow() async throws {
        let (cluster, browser, laptop, phone) = try await SyncE2E.twoJoinedDevicesAndBrowser(background: true, instances: 2)
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        try SyncLiveE2ETests.waitUntilLive(laptop, phone)

        let made = try browser.post("/api/folders", ["name": "Made on the web"])
        #expect(made.status == 201, "\(made.text)")
        try await waitUntil("the web's folder on the phone", seconds: 10) {
            try SyncNoteFoldersTests.folders(phone) == ["Made on the web"]
        }
        let id = try #require(made.json?["id"] as? String)
        #expect(try browser.delete("/api/folders/\(id)").status == 204)
        try await waitUntil("the web's deletion on the phone", seconds: 10) { try SyncNoteFoldersTests.folders(phone).isEmpty }

        let iterations = try #require(try browser.get("/api/passphrase").json?["minimumIterations"] as? Int)
        let material = try WebLockedNotesTests.Material("e2e-web-passphrase", iterations: iterations, hint: "e2e web hint")
        #expect(try browser.post("/api/passphrase", material.json).status == 200)
        try await waitUntil("the web's passphrase and hint on the phone", seconds: 10) {
            (try? SyncNotePassphraseTests.hint(phone)) == "e2e web hint"
        }
        try await waitUntil("and on the laptop", seconds: 10) { (try? SyncNotePassphraseTests.hint(laptop)) == "e2e web hint" }
    }
}
