import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// The sync session a device's daemon keeps between syncs (docs/SYNC.md, "A sync with nothing
/// to do"): two device homes, each with its own `tresord`, joined to a real server instance on a
/// throwaway PostgreSQL, whose `sync_sessions` rows the tests read and expire.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncSessionTests {
    /// The server's sessions of `device`, as `token_digest` rows.
    static func sessions(_ cluster: ServerInstances, of device: Harness) async throws -> Int {
        let id = try SyncE2E.sync(device, SyncStatusAnswer.self, ["status"]).deviceID ?? ""
        let counted = try await TestPostgres.texts(
            "SELECT count(*)::text FROM sync_sessions WHERE device_id = '\(id)'", database: cluster.databaseName)
        return Int(counted.first ?? "") ?? -1
    }

    @Test func syncsKeepOneSessionAndARemovedDevicesKeptSessionIsRefusedAtOnce() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }
        try SyncNowTests.add(laptop, service: "kept.example.com", secret: "e2e-kept-session-secret")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 1)
        #expect(try SyncNowTests.syncNow(phone).applied == 1)
        let signedIn = try await Self.sessions(cluster, of: phone)
        for _ in 0..<3 { _ = try SyncNowTests.syncNow(phone) }
        #expect(try await Self.sessions(cluster, of: phone) == signedIn, "three more syncs signed in no more")
        // A change still arrives through the kept session.
        try SyncNowTests.update(laptop, service: "kept.example.com", secret: "e2e-kept-session-secret-2")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 1)
        #expect(try SyncNowTests.syncNow(phone).applied == 1)
        #expect(try SyncNowTests.secret(phone, service: "kept.example.com") == "e2e-kept-session-secret-2")

        // Removed: the phone's next sync, on the session it kept (still valid on the server), is refused.
        _ = try SyncE2E.sync(laptop, SyncDeviceInfo.self, ["remove", "phone", "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        let refused = try phone.tresor(["sync", "now"])
        #expect(!refused.succeeded && refused.stderr.contains("tresor sync leave"), "\(refused.stderr)")
        #expect(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"]).state == .removed)
        // Its status no longer calls it trusted, and says what to do.
        let status = try phone.tresor(["sync", "status"]).stdout
        #expect(!status.contains(", this device") && status.contains("Removed:  another device removed this one"), "\(status)")
        try SyncNowTests.update(laptop, service: "kept.example.com", secret: "e2e-after-the-removal")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 1)
        #expect(!(try phone.tresor(["sync", "now"])).succeeded)
        #expect(try SyncNowTests.secret(phone, service: "kept.example.com") == "e2e-kept-session-secret-2")
    }

    @Test func aSessionTheServerExpiredSignsInAgainAndTheSyncGoesThrough() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }
        _ = try SyncNowTests.syncNow(phone)
        let phoneID = try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"]).deviceID ?? ""
        // The server ends the phone's sessions before the time the phone holds for its own.
        let expired = try await TestPostgres.texts(
            "UPDATE sync_sessions SET expires = 0 WHERE device_id = '\(phoneID)' RETURNING device_id::text", database: cluster.databaseName)
        #expect(!expired.isEmpty)
        try SyncNowTests.add(laptop, service: "expired.example.com", secret: "e2e-expired-session-secret")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 1)
        #expect(try SyncNowTests.syncNow(phone).applied == 1, "the server's 401 made the phone sign in again")
        #expect(try SyncNowTests.secret(phone, service: "expired.example.com") == "e2e-expired-session-secret")
        // The expired ones were swept when it signed in again: its new session is the one left.
        #expect(try await Self.sessions(cluster, of: phone) == 1)
    }
}

/// A sync with nothing to do is the one request that says where the account stands (docs/SYNC.md,
/// "A sync with nothing to do"), and a change anywhere — records, notes, folders, the notes
/// passphrase — still makes the device ask for it: the phone speaks to the server through a
/// proxy that lists what it asks.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncIdleRequestsTests {
    static let state = "GET /v1/sync/state"

    @Test func aSyncWithNothingToDoAsksOnlyWhereTheAccountStands() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }
        let server = cluster.servers[0]
        let (browser, password) = try cluster.registered("ada", on: server)
        let proxy = try CuttingProxy(upstream: server.port, trigger: "no client sends this") {}
        let laptop = try SyncE2E.device(password), phone = try SyncE2E.device(password)
        _ = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        try SyncE2E.joinApproved(phone, proxy.address, name: "phone", password: password, by: laptop)
        try SyncNowTests.add(laptop, service: "idle.example.com", secret: "e2e-idle-secret")
        _ = try SyncNotesE2ETests.newNote(laptop, "Idle\ne2e-idle-note")
        _ = try SyncNowTests.syncNow(laptop)
        _ = try SyncNowTests.syncNow(phone)
        #expect(try SyncNowTests.secret(phone, service: "idle.example.com") == "e2e-idle-secret")

        // Up to date: each sync is the state request alone.
        _ = try SyncNowTests.syncNow(phone)
        proxy.forgetRequests()
        for _ in 0..<2 { _ = try SyncNowTests.syncNow(phone) }
        #expect(proxy.requests == [Self.state, Self.state])

        // A folder made in the web client: the phone asks for the folders, and has it.
        #expect(try browser.post("/api/folders", ["name": "Made on the web"]).status == 201)
        proxy.forgetRequests()
        _ = try SyncNowTests.syncNow(phone)
        #expect(proxy.requests.contains("POST /v1/sync/folders"), "\(proxy.requests)")
        #expect(try SyncNoteFoldersTests.folders(phone) == ["Made on the web"])

        // An item and a note changed on the laptop: the phone asks for records and notes.
        try SyncNowTests.update(laptop, service: "idle.example.com", secret: "e2e-idle-secret-2")
        _ = try SyncNotesE2ETests.newNote(laptop, "Second\ne2e-idle-note-2")
        _ = try SyncNowTests.syncNow(laptop)
        proxy.forgetRequests()
        _ = try SyncNowTests.syncNow(phone)
        #expect(proxy.requests.contains("GET /v1/sync/records") && proxy.requests.contains("GET /v1/sync/notes"), "\(proxy.requests)")
        #expect(try SyncNowTests.secret(phone, service: "idle.example.com") == "e2e-idle-secret-2")

        // And then nothing again.
        _ = try SyncNowTests.syncNow(phone)
        proxy.forgetRequests()
        _ = try SyncNowTests.syncNow(phone)
        #expect(proxy.requests == [Self.state])
    }
}
