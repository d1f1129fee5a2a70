import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// Notes sync by themselves and live (docs/SYNC.md, "Background sync" and "Live updates"): two
/// device homes whose `tresord` sync in the background — no `tresor sync now` — through real
/// server instances; a note written on one, or in the server's web client, is on the other.
/// Arrival is polled for 10 s (the five-minute fallback sync cannot pass); how fast it is, the
/// benchmark harness measures.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncNotesLiveE2ETests {
    /// Waits up to 10 s until `device` holds a note titled `title` whose body is `body`.
    static func waitForNote(_ device: Harness, _ title: String, body: String, _ what: String) throws {
        try waitUntil(what, seconds: 10) { try SyncNotesE2ETests.notes(device)[title]?.body == body }
    }

    @Test func aNoteMadeOnOneDeviceIsOnTheOtherWithoutSyncNow() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices(background: true)
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        try SyncLiveE2ETests.waitUntilLive(laptop, phone)

        let made = try SyncNotesE2ETests.newNote(laptop, "Live list\ne2e-live-note milk")
        try Self.waitForNote(phone, "Live list", body: "Live list\ne2e-live-note milk", "the laptop's note on the phone")
        // And back: the phone's edit reaches the laptop's own note.
        let onPhone = try #require(try SyncNotesE2ETests.notes(phone)["Live list"])
        try SyncNotesE2ETests.edit(phone, onPhone.id, body: "Live list\ne2e-live-note milk\neggs")
        try Self.waitForNote(laptop, "Live list", body: "Live list\ne2e-live-note milk\neggs", "the phone's edit on the laptop")
        #expect(try SyncNotesE2ETests.notes(laptop)["Live list"]?.id == made.id)
        // Several changes close together all arrive.
        for n in 0..<3 { _ = try SyncNotesE2ETests.newNote(laptop, "Burst \(n)\ne2e-live-note \(n)") }
        try Self.waitForNote(phone, "Burst 2", body: "Burst 2\ne2e-live-note 2", "the last of a burst on the phone")
        #expect(try SyncNotesE2ETests.notes(phone).keys.filter { $0.hasPrefix("Burst") }.count == 3)

        for device in [laptop, phone] {
            try await waitUntil("nothing waiting", seconds: 10) { try SyncLiveE2ETests.status(device).notesWaiting == 0 }
            let status = try SyncLiveE2ETests.status(device)
            #expect(status.lastError == nil, "\(status.lastError ?? "")")
            #expect(!device.daemonLog.contains("e2e-live-note"))
        }
    }

    @Test func devicesOnTwoServerInstancesStillSyncNotesLive() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices(background: true, instances: 2)
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        #expect(try SyncLiveE2ETests.status(laptop).server != (try SyncLiveE2ETests.status(phone).server), "each device on its own instance")
        try SyncLiveE2ETests.waitUntilLive(laptop, phone)

        _ = try SyncNotesE2ETests.newNote(laptop, "Instance A\ne2e-live-instance-a")
        try Self.waitForNote(phone, "Instance A", body: "Instance A\ne2e-live-instance-a", "the laptop's note, through the other instance")
        _ = try SyncNotesE2ETests.newNote(phone, "Instance B\ne2e-live-instance-b")
        try Self.waitForNote(laptop, "Instance B", body: "Instance B\ne2e-live-instance-b", "the phone's note on the laptop")
    }

    @Test func aBrowsersNoteAndEditReachADeviceWithoutSyncNow() async throws {
        let (cluster, browser, laptop, phone) = try await SyncE2E.twoJoinedDevicesAndBrowser(background: true, instances: 2)
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        try SyncLiveE2ETests.waitUntilLive(laptop, phone)

        // Made in the web client on the first instance: on the phone, signed in to the second.
        let id = try browser.createNote(title: "Web made", body: "Web made\ne2e-live-web")
        try Self.waitForNote(phone, "Web made", body: "Web made\ne2e-live-web", "the browser's note on the phone")
        let edited = try browser.patch("/api/notes/\(id)", ["body": "Web made\ne2e-live-web\nedited in the browser"])
        #expect(edited.status == 200, "\(edited.text)")
        try Self.waitForNote(phone, "Web made", body: "Web made\ne2e-live-web\nedited in the browser", "the browser's edit on the phone")
        try Self.waitForNote(laptop, "Web made", body: "Web made\ne2e-live-web\nedited in the browser", "the browser's edit on the laptop")
    }
}
