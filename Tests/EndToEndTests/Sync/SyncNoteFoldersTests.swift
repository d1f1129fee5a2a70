import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// Folders travel, empty ones too (docs/SYNC.md, "Notes"): made or deleted on one device or in
/// the web client, they are made or deleted on the others; a folder deleted on one device while
/// another put a note in it outlives the deletion.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncNoteFoldersTests {
    static func folders(_ device: Harness) throws -> Set<String> {
        struct Listed: Decodable { var name: String }
        return Set(try device.json([Listed].self, ["note", "folder", "list"]).map(\.name))
    }

    static func folder(_ device: Harness, _ verb: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        // The name on standard input: a folder's name is confidential, off the command line.
        let result = try device.tresor(["note", "folder", verb, "-"], input: name + "\n")
        #expect(result.succeeded, "\(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test func emptyFoldersMadeAndDeletedAnywhereReachTheOthers() async throws {
        let (cluster, browser, laptop, phone) = try await SyncE2E.twoJoinedDevicesAndBrowser()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        try Self.folder(laptop, "create", "Ideas")
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)
        #expect(try Self.folders(phone) == ["Ideas"])
        let onWeb = try browser.get("/api/folders")
        #expect(onWeb.status == 200 && onWeb.text.contains("\"Ideas\""), "\(onWeb.text)")

        // Deleted on the phone: gone from the laptop and the web client.
        try Self.folder(phone, "delete", "Ideas")
        _ = try SyncNotesE2ETests.syncNow(phone)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        #expect(try Self.folders(laptop).isEmpty)
        #expect(!(try browser.get("/api/folders").text.contains("\"Ideas\"")))

        // Made in the web client: on both devices.
        let made = try browser.post("/api/folders", ["name": "Web folder"])
        #expect(made.status == 201, "\(made.text)")
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)
        #expect(try Self.folders(laptop) == ["Web folder"] && Self.folders(phone) == ["Web folder"])

        // Deleted on the phone while the laptop put a note in it: the folder outlives the
        // deletion, with the note, on both.
        try Self.folder(phone, "delete", "Web folder")
        let note = try SyncNotesE2ETests.newNote(laptop, "Filed\ne2e-folder-marker")
        let moved = try laptop.tresor(["note", "edit", note.id, "--folder", "-"], input: "Web folder\n")
        #expect(moved.succeeded, "\(moved.stderr)")
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        for device in [laptop, phone] {
            #expect(try Self.folders(device) == ["Web folder"])
            #expect(try device.json([NoteSummary].self, ["note", "list", "--folder", "-"], input: "Web folder\n").map(\.title) == ["Filed"])
        }
    }
}
