import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// Auto-lock fires after the configured idle time, and not while a hold is active; a hold
/// ends when its client disconnects.
@Suite(.blocksItsThread, .serialized) struct AutoLockTests {
    @Test func autoLockFiresAfterIdleButNotWhileHeld() throws {
        let harness = try Harness(configuration: #"{"autoLockSeconds": 2}"#)
        harness.secrets = ["e2e-autolock-passcode"]
        try harness.startDaemon()
        let beforeInit = Date()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: "e2e-autolock-passcode\n").succeeded)
        #expect(try harness.status().autoLockSeconds == 2)
        // Timed from the event, not with a fixed sleep: a loaded machine may notice late, never early.
        try waitUntil("auto-lock after 2 s idle") { try harness.status().keybag == .locked }
        #expect(Date().timeIntervalSince(beforeInit) >= 2, "locked before 2 s idle")
        #expect(harness.daemonLog.contains("auto-locked"))

        // The hold is taken before unlocking: no slow step between the two can let it lock first.
        var holder: TresorClient? = try TresorClient.connect(paths: harness.paths, startDaemon: false)
        let hold = try holder!.holdAutoLock(reason: "copying a large file for the test")
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: "e2e-autolock-passcode\n").succeeded)
        sleep(3)
        let held = try harness.status()
        #expect(held.keybag == .unlocked, "a hold keeps the keybag unlocked past the idle time")
        #expect(held.holds.map(\.reason) == ["copying a large file for the test"])
        #expect(held.holds.first?.id == hold.id)
        #expect(held.holds.first?.client.pid == getpid())
        #expect(try harness.tresor(["status"]).stdout.contains("copying a large file for the test"))

        holder = nil  // the connection closes: the hold ends with it
        try waitUntil("the hold ends with its connection") { try harness.status().holds.isEmpty }
        try waitUntil("auto-lock once the hold is gone") { try harness.status().keybag == .locked }
        try harness.expectNoSecretLeaked()
    }

    /// A keybag the user locked stays locked for the user's reason: the idle periods that pass
    /// afterwards lock nothing more, so `tresor status` keeps saying who locked it and when.
    @Test func anAutoLockOfALockedKeybagKeepsWhyItWasLocked() throws {
        let harness = try Harness(configuration: #"{"autoLockSeconds": 1}"#)
        harness.secrets = ["e2e-autolock-passcode"]
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: "e2e-autolock-passcode\n").succeeded)
        #expect(try harness.tresor(["lock"]).succeeded)
        let locked = try harness.status()
        let reason = try #require(locked.lockReason)
        #expect(reason.contains("asked by"), "\(reason)")
        sleep(4)  // several idle periods
        let later = try harness.status()
        #expect(later.keybag == .locked)
        #expect(later.lockReason == reason && later.lockedAt == locked.lockedAt, "\(later.lockReason ?? "")")
    }

    @Test func holdsNeedAReasonAndEndByRelease() throws {
        let harness = try Harness(configuration: #"{"autoLockSeconds": 60}"#)
        try harness.startDaemon()
        let client = try TresorClient.connect(paths: harness.paths, startDaemon: false)
        #expect(throws: APIError.self) { try client.holdAutoLock(reason: "   ") }
        let hold = try client.holdAutoLock(reason: "backup")
        #expect(try client.status().holds.count == 1)
        // Another connection cannot end it.
        let other = try TresorClient.connect(paths: harness.paths, startDaemon: false)
        #expect(throws: APIError.self) { try other.releaseHold(hold) }
        try client.releaseHold(hold)
        #expect(try client.status().holds.isEmpty)
    }
}
