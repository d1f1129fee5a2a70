import Foundation
import Testing
import TresorKeybag
import TresorKeychain
import TresorSyncEngine
import TresorSyncProtocol
import TresorTestSupport

/// Changes that wait: for an unlock (the item's class locked), or for the user (a mass deletion).
@Suite("Sync engine: held changes", .enabled(if: TestPostgres.shouldRun))
struct HeldChangesTests {
    /// A `whenUnlocked` item arriving while the desktop is locked is kept sealed and applied at
    /// the next unlock, with a later change of it after it; an `afterFirstUnlock` one applies at once.
    @Test func aChangeArrivingWhileLockedIsAppliedAtTheNextUnlock() async throws {
        let world = try await SyncWorld.make()
        let laptop = world.devices[0], desktop = world.devices[1]
        desktop.keybag.lock()
        desktop.keychain.dropUnavailableKeys()
        try laptop.add("mail", "one")
        try laptop.add("bank", "pin", accessible: .afterFirstUnlock)
        try await laptop.engine.sync()
        var summary = try await desktop.engine.sync()
        #expect(summary.held == 1 && summary.applied == 1)
        try laptop.update("mail", "second-held-value")
        try await laptop.engine.sync()
        summary = try await desktop.engine.sync()
        #expect(summary.held == 2)
        #expect(try desktop.engine.waiting().changes == 2)
        #expect(!desktop.filesContain("second-held-value"), "held changes are kept sealed")
        try desktop.keybag.unlock(passcode: try Passcode(TestDevice.passcode))
        summary = try desktop.engine.applyHeld()
        #expect(summary.applied == 2 && summary.held == 0)
        #expect(try desktop.items() == ["mail": "second-held-value", "bank": "pin"])
        #expect(try desktop.conflicts().isEmpty)
    }

    /// 51 deletions arriving at once wait for the user; allowing deletions lets them through.
    @Test func aMassDeletionWaitsForTheUser() async throws {
        let world = try await SyncWorld.make()
        let laptop = world.devices[0], desktop = world.devices[1]
        for index in 0..<240 { try laptop.add("item\(index)", "s") }
        try await laptop.engine.sync()
        try await desktop.engine.sync()
        #expect(try desktop.items().count == 240)
        for index in 0..<51 { try laptop.delete("item\(index)") }
        try await laptop.engine.sync()
        let summary = try await desktop.engine.sync()
        #expect(summary.heldDeletions == 51)
        #expect(try desktop.items().count == 240)
        try await desktop.engine.sync(allowDeletions: true)
        #expect(try desktop.items().count == 189)
        #expect(try desktop.engine.waiting().changes == 0)
    }

    /// A device catching up on the account's history (a new one) receives items and their
    /// deletions one after the other: those deletions take nothing it held, so they neither wait
    /// nor count toward the next ones — its first deletion afterwards applies like any other.
    @Test func aDeviceCatchingUpCountsNoDeletionOfWhatItNeverHeld() async throws {
        let world = try await SyncWorld.make(["laptop", "desktop", "phone"])
        let laptop = world.devices[0], phone = world.devices[2]
        for index in 0..<200 { try laptop.add("item\(index)", "s") }
        try await laptop.engine.sync()
        for index in 0..<110 { try laptop.delete("item\(index)") }
        try await laptop.engine.sync()
        func itemsOnThePhone() throws -> Int { try phone.items().keys.filter { $0.hasPrefix("item") }.count }
        // The phone's first sync: 200 items and 110 deletions of them, over several pages.
        var summary = try await phone.engine.sync()
        #expect(summary.heldDeletions == 0)
        #expect(try itemsOnThePhone() == 90)
        // One deletion now is one deletion, not the 111th in a day.
        try laptop.delete("item110")
        try await laptop.engine.sync()
        summary = try await phone.engine.sync()
        #expect(summary.heldDeletions == 0)
        #expect(try itemsOnThePhone() == 89)
        // What it holds is protected as on any device: 51 deletions at once wait.
        for index in 111..<162 { try laptop.delete("item\(index)") }
        try await laptop.engine.sync()
        #expect(try await phone.engine.sync().heldDeletions == 51)
        #expect(try itemsOnThePhone() == 89)
    }

    /// Deletions spread over several syncs add up within 24 hours: 30, then 21 more, wait; the
    /// window ends 24 hours after the user's confirmation. The desktop's clock is a day ahead of
    /// the laptop's: that changes nothing.
    @Test func deletionsSpreadOverSeveralSyncsAddUp() async throws {
        let desktopClock = TestClock(Date().addingTimeInterval(86_400))  // a day ahead: changes nothing
        let world = try await SyncWorld.make(clocks: [TestClock(), desktopClock])
        let laptop = world.devices[0], desktop = world.devices[1]
        for index in 0..<240 { try laptop.add("item\(index)", "s") }
        try await laptop.engine.sync()
        try await desktop.engine.sync()
        for index in 0..<30 { try laptop.delete("item\(index)") }
        try await laptop.engine.sync()
        #expect(try await desktop.engine.sync().heldDeletions == 0)
        #expect(try desktop.items().count == 210)
        for index in 30..<51 { try laptop.delete("item\(index)") }
        try await laptop.engine.sync()
        desktopClock.advance(by: 23 * 3600)
        #expect(try await desktop.engine.sync().heldDeletions == 21)
        #expect(try desktop.items().count == 210)
        // While deletions wait for the user, further ones wait with them.
        for index in 51..<60 { try laptop.delete("item\(index)") }
        try await laptop.engine.sync()
        #expect(try await desktop.engine.sync().heldDeletions == 30)
        try await desktop.engine.sync(allowDeletions: true)
        #expect(try desktop.items().count == 180)
        // The confirmation starts a window: 30 deletions pass, and 30 more 25 hours later.
        for index in 60..<90 { try laptop.delete("item\(index)") }
        try await laptop.engine.sync()
        #expect(try await desktop.engine.sync().heldDeletions == 0)
        desktopClock.advance(by: 25 * 3600)
        for index in 90..<120 { try laptop.delete("item\(index)") }
        try await laptop.engine.sync()
        #expect(try await desktop.engine.sync().heldDeletions == 0)
        #expect(try desktop.items().count == 120)
    }
}
